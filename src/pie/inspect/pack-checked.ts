/**
 * One pass over a PIE directory: the packer reads each file once, and memory.bin's blocks go
 * both to the deflate workers and, in the same order, to the validation (`inspectPie`), which
 * scans each block before the packer reuses its buffer. The zip is renamed into place only once
 * the PIE is known valid; a PIE found invalid (or past a parsing budget) stops the packing at
 * once and leaves neither the zip nor a temporary file, and an existing zip untouched.
 */
import { ByteChannel } from '../../core/channel.ts'
import { AbortedError } from '../../core/errors.ts'
import { MEMORY } from '../shared/index.ts'
import { packPie, type PackPieOptions, type PackPieResult } from '../pack/index.ts'
import { inspectPie, type PieInspection } from './inspect.ts'

export type PackCheckedOptions = Omit<PackPieOptions, 'beforeRename' | 'taps'> & {
  /** The zip's bytes as they are written (see PackTaps.output). */
  onOutput?: ((chunk: Uint8Array) => void | Promise<void>) | undefined
  /** Called when the JSON files are found valid: only memory.bin is left to check. */
  onFilesValid?: (() => void) | undefined
}

export type PackChecked = { packed: PackPieResult; inspection: PieInspection }

/**
 * Packs `dir` into `out` while validating and inspecting it. Throws InvalidPieError (every
 * problem line) or PieBudgetError when the PIE is not valid: nothing is written then.
 */
export async function packChecked(dir: string, out: string, options: PackCheckedOptions = {}): Promise<PackChecked> {
  const { onOutput, onFilesValid, signal, ...packOptions } = options
  const memory = new ByteChannel({ limitBytes: 0 })
  // A PIE found invalid stops the packing; the caller's signal stops both.
  const stop = new AbortController()
  const both = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal
  const inspecting = inspectPie(dir, {
    signal,
    sha256: false,
    memoryChunks: memory,
    beforeMemory: (problems) => {
      if (problems === 0) onFilesValid?.()
    },
  })
  let refusal: { error: unknown } | undefined
  inspecting.then(
    () => memory.close(),
    (error: unknown) => {
      refusal = { error }
      memory.close()
      stop.abort(error)
    },
  )
  let packed: PackPieResult
  try {
    packed = await packPie(dir, out, {
      ...packOptions,
      signal: both,
      taps: {
        input: (name, chunk) => {
          if (name !== MEMORY) return
          if (chunk) return memory.put(chunk)
          memory.end()
        },
        output: onOutput,
      },
      beforeRename: () => inspecting.then(() => {}),
    })
  } catch (error) {
    memory.fail(error)
    await inspecting.catch(() => {})
    // Stopped because the PIE is invalid: that is the reason to give, not the abort.
    if (refusal && !signal?.aborted && (error instanceof AbortedError || error === refusal.error)) throw refusal.error
    throw error
  }
  return { packed, inspection: await inspecting }
}
