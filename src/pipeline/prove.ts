/**
 * The host-independent steps of proving a PIE, shared by the CLI and the GitHub Action: get a
 * pie.zip (packing a directory), make sure it is a valid PIE before anything is uploaded, and
 * after the service is done, check what it says it proved against the PIE. Hosts pass how to
 * report progress and the signal that cancels; nothing here prints or exits.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { InvalidInputError, InvalidPieError } from '../core/errors.ts'
import type { FactCheckResult, PieInspection, QueryFacts } from '../pie/index.ts'

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
   * Also compute what the PIE proves (program hashes, output, facts) in the validation pass;
   * needed to check the service's facts afterwards. Off: validation and the SHA-256 only.
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
  /** With `inspect`: what the PIE proves. */
  inspection: PieInspection | undefined
  /** Removes what was packed into a temporary folder (nothing otherwise). */
  cleanup: () => Promise<void>
}

/** Packs a PIE directory, then validates the zip: a broken PIE is never uploaded. */
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
  let zipPath = resolve(path)
  let packed = false
  let sha256: string | undefined
  let sizeBytes = info.size
  let cleanup = async () => {}
  if (info.isDirectory()) {
    let folder: string
    if (options.packDir) {
      folder = options.packDir
      await mkdir(folder, { recursive: true })
    } else {
      folder = await mkdtemp(join(tmpdir(), 'proving-pack-'))
      cleanup = () => rm(folder, { recursive: true, force: true })
    }
    zipPath = resolve(folder, 'pie.zip')
    try {
      const result = await pie.packPie(path, zipPath, { signal: options.signal })
      sha256 = result.sha256
      sizeBytes = result.sizeBytes
      packed = true
    } catch (error) {
      await cleanup()
      throw namedPackError(error, name)
    }
    progress(`Packed ${path} into a ${formatBytes(sizeBytes)} pie.zip (sha256 ${sha256}).`)
  } else if (!info.isFile()) {
    throw new InvalidInputError(`${name}: ${path} is neither a file nor a directory; give a pie.zip or a PIE directory.`, {
      input: name,
    })
  }
  let inspection: PieInspection | undefined
  try {
    if (options.inspect) {
      inspection = await pie.inspectPie(zipPath, { signal: options.signal, sha256: sha256 === undefined })
      sha256 ??= inspection.sha256 ?? undefined
    } else {
      const [validation, digest] = await Promise.all([
        pie.validatePie(zipPath, { signal: options.signal }),
        sha256 === undefined ? sha256File(zipPath, options.signal) : Promise.resolve(sha256),
      ])
      if (!validation.valid) throw pie.invalidPieError(validation.problems, path)
      sha256 = digest
    }
  } catch (error) {
    await cleanup()
    if (error instanceof InvalidPieError) {
      throw new InvalidPieError(`${name}: ${path} is not a valid Cairo PIE (${countProblems(error.problems)}); nothing was uploaded.`, {
        input: name,
        problems: error.problems,
      })
    }
    throw error
  }
  progress(`Validated ${path}.`)
  return { zipPath, packed, sha256: sha256!, sizeBytes, inspection, cleanup }
}

/**
 * After DONE: the program hash and facts the service reports against the local computation.
 * Reuses the inspection made before the upload when there is one.
 */
export async function checkFacts(record: QueryFacts, prepared: Pick<PreparedPie, 'zipPath' | 'inspection'>): Promise<FactCheckResult> {
  const pie = await import('../pie/index.ts')
  return prepared.inspection
    ? pie.compareQueryFacts(record, prepared.inspection)
    : pie.checkQueryFacts(record, prepared.zipPath)
}

export async function sha256File(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024, signal })) hash.update(chunk as Buffer)
  return hash.digest('hex')
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
