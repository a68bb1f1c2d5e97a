/**
 * The host-independent steps of proving a PIE, shared by the CLI and the GitHub Action: get a
 * pie.zip (packing a directory), make sure it is a valid PIE before anything is uploaded, and
 * after the service is done, check what it says it proved against the PIE. Hosts pass how to
 * report progress and the signal that cancels; nothing here prints or exits.
 */
import { sha256File } from '../pie/shared/index.ts'
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { ByteChannel } from '../core/channel.ts'
import { AbortedError, InvalidInputError, InvalidPieError, ProvingKitError } from '../core/errors.ts'
import type { FactCheckResult, PieInspection, QueryFacts } from '../pie/index.ts'

/** The name of the zip a PIE directory is packed into. */
const PACKED_ZIP_NAME = 'pie.zip'

export type PreparePieOptions = {
  /** The input's name as the user wrote it, for messages: `<pie>` (CLI), `pie` (action). */
  inputName: string
  signal?: AbortSignal | undefined
  /** Progress lines for a person. */
  onProgress?: ((line: string) => void) | undefined
  /**
   * Where to pack a directory: the zip is written to `<packDir>/pie.zip` and kept (the caller
   * owns the folder). By default a new temporary folder, removed by `cleanup()`.
   */
  packDir?: string | undefined
  /**
   * Kept for callers that ask for it: the validation pass always yields the inspection now
   * (output, program, job size), since its program hashes are computed only when read.
   */
  inspect?: boolean | undefined
}

export type PreparedPie = {
  /** The pie.zip to upload, absolute. */
  zipPath: string
  /** Whether `zipPath` was packed here from a directory. */
  packed: boolean
  sha256: string
  sizeBytes: number
  /** What the PIE proves (its program hashes computed when first read). */
  inspection: PieInspection | undefined
  /** Removes what was packed into a temporary folder (nothing otherwise). */
  cleanup: () => Promise<void>
  /** Set by `computeFactsAhead`: the program hash being computed. */
  factsAhead?: Promise<void> | undefined
}

/**
 * Validates and inspects the PIE, packing a directory in the same go: the directory's
 * validation (and what the facts need: output, program) runs alongside the parallel deflate,
 * and the zip is renamed into place only once the PIE is known valid, so a broken PIE is never
 * uploaded and never leaves a zip behind. A pie.zip is validated as it is. The program hashes
 * are not computed here (see `computeFactsAhead`).
 */
export async function preparePie(path: string, options: PreparePieOptions): Promise<PreparedPie> {
  const name = options.inputName
  const progress = options.onProgress ?? (() => {})
  let info
  try {
    info = await stat(path)
  } catch {
    throw new InvalidInputError(`${name}: nothing at ${path}; give a pie.zip or a PIE directory.`, { input: name })
  }
  const pie = await import('../pie/index.ts')
  const zipPath = resolve(path)
  let sha256: string | undefined
  let inspection: PieInspection | undefined
  if (info.isDirectory()) {
    const prepared = await packDirectory(path, options)
    progress(`Packed ${path} into a ${formatBytes(prepared.sizeBytes)} pie.zip (sha256 ${prepared.sha256}).`)
    progress(`Validated ${path}.`)
    return prepared
  } else if (!info.isFile()) {
    throw new InvalidInputError(
      `${name}: ${path} is neither a file nor a directory; give a pie.zip or a PIE directory.`,
      {
        input: name,
      },
    )
  } else {
    try {
      const [inspected, digest] = await Promise.all([
        pie.inspectPie(zipPath, { signal: options.signal, sha256: false }),
        sha256File(zipPath, options.signal),
      ])
      inspection = inspected
      sha256 = digest
    } catch (error) {
      // Stopped before the validation's own check (the digest, the zip's directory): the signal's
      // bare reason is a cancellation, not an "unexpected failure" (exit 130, not 3).
      if (options.signal?.aborted && !(error instanceof ProvingKitError)) {
        throw new AbortedError('Validating the PIE was aborted', { cause: options.signal.reason })
      }
      throw invalidPie(error, path, name)
    }
  }
  progress(`Validated ${path}.`)
  return { zipPath, packed: false, sha256: sha256!, sizeBytes: info.size, inspection, cleanup: async () => {} }
}

function invalidPie(error: unknown, path: string, name: string, outcome = 'nothing was uploaded'): unknown {
  if (!(error instanceof InvalidPieError)) return error
  return new InvalidPieError(
    `${name}: ${path} is not a valid Cairo PIE (${countProblems(error.problems)}); ${outcome}.`,
    {
      input: name,
      problems: error.problems,
    },
  )
}

/**
 * Packs a PIE directory in one pass (pie/inspect/pack-checked.ts: read once, validated and inspected
 * while it is packed) into `<packDir>/pie.zip`, or a new temporary folder. `onOutput` gets the
 * zip's bytes as they are written. A PIE found invalid leaves no zip and no temporary folder.
 */
async function packDirectory(
  path: string,
  options: PreparePieOptions,
  stream?: { onOutput: (chunk: Uint8Array) => Promise<void> | void; onFilesValid: () => void; outcome: string },
): Promise<PreparedPie> {
  const name = options.inputName
  let folder: string
  let cleanup = async () => {}
  if (options.packDir) {
    folder = options.packDir
    await mkdir(folder, { recursive: true })
  } else {
    folder = await mkdtemp(join(tmpdir(), 'proving-pack-'))
    cleanup = () => rm(folder, { recursive: true, force: true })
  }
  // Not `resolve(folder, 'pie.zip')`: ncc's asset relocator rewrites that into a path of the
  // build's own folder (scripts/build-dist.ts refuses such a bundle).
  const zipPath = join(resolve(folder), PACKED_ZIP_NAME)
  try {
    const { packChecked } = await import('../pie/inspect/index.ts')
    const result = await packChecked(path, zipPath, {
      signal: options.signal,
      onOutput: stream?.onOutput,
      onFilesValid: stream?.onFilesValid,
    })
    return {
      zipPath,
      packed: true,
      sha256: result.packed.sha256,
      sizeBytes: result.packed.sizeBytes,
      inspection: result.inspection,
      cleanup,
    }
  } catch (error) {
    await cleanup()
    throw error instanceof InvalidPieError
      ? invalidPie(error, path, name, stream?.outcome)
      : namedPackError(error, name)
  }
}

/** A PIE directory being packed while its zip's bytes are handed on (to an upload). */
export type PieStream = {
  /**
   * The zip's bytes as they are written. The iteration ends only after the PIE is known valid
   * and `release()` was called: its last bytes (the zip's end record) are held back until then.
   * It throws, so an upload fed from it is cut before its end, when the PIE is invalid, the
   * packing fails, or `abandon()` is called.
   */
  bytes: AsyncIterable<Uint8Array>
  /**
   * Resolves once the directory is found to hold the PIE's files and its JSON files are valid
   * (only memory.bin is left to check): the time to start the upload. Never resolves for a PIE
   * refused before that (`prepared` rejects).
   */
  ready: Promise<void>
  /** The packed, validated pie.zip (kept in `packDir`), or the reason there is none. */
  prepared: Promise<PreparedPie>
  /** Lets the last bytes go (once `prepared` has resolved and nothing else stands in the way). */
  release(): void
  /** Ends `bytes` with `reason`, before its last bytes. */
  abandon(reason: unknown): void
}

/** How far the upload may trail the packer before the packer waits for it. */
const STREAM_AHEAD_BYTES = 8 * 1024 * 1024

/**
 * Packs a PIE directory as `preparePie` does, handing the zip's bytes on as they are written so
 * the upload runs alongside the packing. What is sent is what is written to the kept pie.zip,
 * byte for byte.
 */
export function streamPie(dir: string, options: PreparePieOptions): PieStream {
  const channel = new ByteChannel({ limitBytes: STREAM_AHEAD_BYTES })
  let release!: () => void
  let abandon!: (reason: unknown) => void
  const gate = new Promise<void>((resolve, reject) => {
    release = resolve
    abandon = reject
  })
  gate.catch(() => {})
  async function* bytes(): AsyncGenerator<Uint8Array> {
    // Always one chunk behind: the last one goes only once the gate opens.
    let held: Uint8Array | undefined
    for await (const chunk of channel) {
      if (held) yield held
      held = chunk
    }
    await gate
    if (held) yield held
  }
  let filesValid!: () => void
  const ready = new Promise<void>((resolve) => (filesValid = resolve))
  const prepared = packDirectory(dir, options, {
    // The zip's bytes are the upload's to keep (PackTaps.output): no copy.
    onOutput: (chunk) => channel.put(chunk),
    onFilesValid: () => filesValid(),
    outcome: 'the upload was stopped before its end: nothing was submitted',
  }).then(
    (pie) => {
      channel.end()
      options.onProgress?.(
        `Packed ${dir} into a ${formatBytes(pie.sizeBytes)} pie.zip (sha256 ${pie.sha256}) and validated it.`,
      )
      return pie
    },
    (error: unknown) => {
      channel.fail(error)
      throw error
    },
  )
  return {
    bytes: bytes(),
    ready,
    prepared,
    release: () => release(),
    abandon: (reason) => {
      abandon(reason)
      channel.fail(reason)
    },
  }
}

/**
 * Starts computing the program hash the fact check will need (Pedersen, the service's default)
 * without holding the thread, e.g. while the query is waited on; `checkFacts` awaits it.
 */
export function computeFactsAhead(prepared: PreparedPie, signal?: AbortSignal): void {
  if (!prepared.inspection || prepared.factsAhead) return
  const inspection = prepared.inspection
  prepared.factsAhead = import('../pie/index.ts')
    .then((pie) => pie.prepareProgramHash(inspection, 'pedersen', signal))
    .then(() => {})
  prepared.factsAhead.catch(() => {})
}

/**
 * After DONE: the program hash and facts the service reports against the local computation.
 * Reuses the inspection made before the upload when there is one.
 */
export async function checkFacts(
  record: QueryFacts,
  prepared: Pick<PreparedPie, 'zipPath' | 'inspection' | 'factsAhead'>,
): Promise<FactCheckResult> {
  const pie = await import('../pie/index.ts')
  // A failed computation ahead (aborted) is simply done again here.
  await prepared.factsAhead?.catch(() => {})
  return prepared.inspection
    ? pie.compareQueryFacts(record, prepared.inspection)
    : pie.checkQueryFacts(record, prepared.zipPath)
}

/** The packer knows files, not inputs: its refusals get the input's name and what to do. */
export function namedPackError(error: unknown, name: string, label = name): unknown {
  if (!(error instanceof InvalidInputError) || error.input !== undefined) return error
  const fix = error.metaMessages?.length ? '; fix what is listed below' : ''
  return new InvalidInputError(`${label}: ${error.shortMessage.replace(/\.$/, '')}${fix}.`, {
    input: name,
    metaMessages: error.metaMessages,
    cause: error,
  })
}

function countProblems(problems: readonly string[]): string {
  return problems.length === 1 ? '1 problem' : `${problems.length} problems`
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`
}
