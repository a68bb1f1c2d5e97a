import { createHash } from 'node:crypto'
import { InvalidPieError } from '../../core/errors.ts'
import { PieBudgetError } from '../../pie/validate/index.ts'
import { BOOTLOADER_PROGRAM_HASH as BOOTLOADER, inspectPie, toHex } from '../../pie/index.ts'

/**
 * What the emulator says was proved for an uploaded pie.zip: its program hash, the SHARP and
 * Integrity facts, its output and its step count, all computed from the PIE by the project's
 * own inspector (src/pie), so the emulator answers what the real service would. Everything the
 * emulator needs from a PIE goes through `computePieFacts`.
 */

export type PieFacts = {
  programHash: string
  sharpFactHash: string
  integrityFactHash: string
  /** Output words as 0x hex (exact; felts exceed 2^53). */
  output: string[]
  nSteps: number
}

/**
 * What the emulator says was proved for a query it has no PIE of (a proof file, a program, a
 * program hash): it runs nothing, so the hashes are stand-ins, digests of `seed` (the program
 * hash given is kept). A real service reports the facts it proved, and a gate refuses a DONE
 * proof without them: the emulator reports some, so such a query can pass.
 */
export function standInFacts(
  seed: string,
  programHash: string | null,
): Pick<PieFacts, 'programHash' | 'sharpFactHash' | 'integrityFactHash'> {
  // 62 hex digits: below the Stark prime, like a felt.
  const felt = (label: string) =>
    `0x${createHash('sha256')
      .update(`${seed}\n${label}`)
      .digest('hex')
      .slice(0, 62)
      .replace(/^0+(?=.)/, '')}`
  return {
    programHash: programHash ?? felt('program-hash'),
    sharpFactHash: felt('sharp-fact'),
    integrityFactHash: felt('integrity-fact'),
  }
}

/** The bootloader the service proves every PIE inside (Integrity fact). */
export const BOOTLOADER_PROGRAM_HASH = toHex(BOOTLOADER)

/** How many problem lines a 400 quotes; the rest would drown the first. */
const PROBLEMS_QUOTED = 3

/**
 * Inspecting a PIE costs a few hundred milliseconds of hashing; tests and benches upload the
 * same file again and again. Facts depend only on the bytes, so they are kept by the upload's
 * sha256 (the multipart reader computes it on the way in), a bounded number of them.
 */
const CACHE_SIZE = 256
const cache = new Map<string, PieFacts | { invalid: string }>()

/**
 * The facts the emulator reports for an uploaded pie.zip: its program hash, SHARP and Integrity
 * facts, as the real service would. Cached by the upload's SHA-256.
 *
 * @param zipPath The pie.zip.
 * @param options.sha256 The file's SHA-256, when known: the cache key.
 * @returns The facts, or `{ invalid }` with the first problems when the PIE is not valid.
 * @example
 * ```ts
 * import { computePieFacts } from 'proving-kit/emulator'
 *
 * const facts = await computePieFacts('build/pie.zip')
 * if ('invalid' in facts) throw new Error(facts.invalid)
 * console.log(facts.programHash, facts.sharpFactHash)
 * ```
 */
export async function computePieFacts(
  zipPath: string,
  options: { sha256?: string } = {},
): Promise<PieFacts | { invalid: string }> {
  const key = options.sha256
  const cached = key === undefined ? undefined : cache.get(key)
  if (cached) return cached
  const facts = await inspect(zipPath)
  if (key !== undefined) {
    cache.set(key, facts)
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!)
  }
  return facts
}

async function inspect(zipPath: string): Promise<PieFacts | { invalid: string }> {
  try {
    const inspection = await inspectPie(zipPath, { sha256: false, maxProblems: PROBLEMS_QUOTED + 1 })
    return {
      programHash: inspection.programHash,
      sharpFactHash: inspection.sharpFactHash,
      integrityFactHash: inspection.integrityFactHash,
      output: inspection.output,
      nSteps: inspection.nSteps,
    }
  } catch (error) {
    // Problem lines name the file; the upload's temporary name means nothing to the caller.
    const name = zipPath.split('/').at(-1) ?? ''
    // Past a parsing budget (a zip bomb, a sparse memory.bin): refused like any invalid PIE.
    if (error instanceof PieBudgetError)
      return { invalid: error.shortMessage.replaceAll(zipPath, 'pieFile').replaceAll(name, 'pieFile') }
    if (!(error instanceof InvalidPieError)) throw error
    const problems = error.problems.slice(0, PROBLEMS_QUOTED).map((line) => line.replaceAll(name, 'pieFile'))
    return { invalid: problems.join('; ') }
  }
}
