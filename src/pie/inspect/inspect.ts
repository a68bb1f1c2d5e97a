/**
 * What a PIE proves, computed locally: the program hash (all three variants), the output, the
 * step count and job size, the SHARP and Integrity facts, and the SHA-256 of the zip that
 * would be uploaded. The PIE is validated in the same streaming pass; an invalid PIE throws
 * InvalidPieError, since facts of a PIE the prover would reject mean nothing.
 *
 * The program hashes and the facts built on them are computed when first read (and cached by
 * the program's digest): a long program's Pedersen hash takes seconds, and most callers need
 * one variant, the one the service reports. `prepareProgramHash` computes one ahead without
 * holding the thread, e.g. while the PIE uploads.
 */
import { stat } from 'node:fs/promises'
import type { JobSize } from '../../schemas/proving-constants.ts'
import { sha256Bytes, sha256File, toHex, type FactTopology } from '../shared/index.ts'
import type { PieInput } from '../read/index.ts'
import {
  analysePie,
  factTopologyFromAdditionalData,
  invalidPieError,
  type PieSummary,
  type ValidatePieOptions,
} from '../validate/index.ts'
import {
  computeProgramHash,
  computeProgramHashAsync,
  programDigest,
  PROGRAM_HASH_VARIANTS,
  type ProgramForHash,
  type ProgramHashVariant,
} from '../hash/index.ts'
import { computeIntegrityFact, computeSharpFact } from '../facts/index.ts'
import { canonicalZipDigest } from '../pack/index.ts'
import { jobSizeForSteps } from './job-size.ts'

/** What a valid PIE proves: its program hashes, output, steps, builtins, job size, facts and SHA-256. */
export type PieInspection = {
  /** The Pedersen program hash (what SHARP uses by default), lowercase 0x hex. */
  programHash: string
  /** Each computed when first read. */
  programHashes: Record<ProgramHashVariant, string>
  /** SHA-256 of the program hash chain's words: what the hashes are cached under. */
  programDigest: string
  /** The program output, each word as lowercase 0x hex without leading zeros (exact). */
  output: string[]
  /** The Cairo steps the run took. */
  nSteps: number
  /** The builtins the program uses, in order. */
  builtins: string[]
  /** The job size the proving service expects for `nSteps`. */
  jobSize: JobSize
  /** keccak(programHash, outputRoot) with the Pedersen program hash, 0x hex. */
  sharpFactHash: string
  /** The bootloaded fact the Integrity verifier registers, 0x hex. */
  integrityFactHash: string
  /** The output's page layout for the SHARP fact (one page unless the PIE declares more). */
  factTopology: FactTopology
  /**
   * SHA-256 (64 hex digits) of the zip: of the file for a pie.zip, of the zip bytes given, or of
   * the canonical zip packPie would write for a directory (computed without writing it; for a
   * directory above 16 MiB this compresses the large files twice). Null with `sha256: false`.
   */
  sha256: string | null
  /** What validation found: the files, segments, sizes. */
  summary: PieSummary
}

/** How {@link inspectPie} reads a PIE: the validation's options, and whether to compute its SHA-256. */
export type InspectPieOptions = ValidatePieOptions & {
  /**
   * Compute `sha256`.
   * @default true
   */
  sha256?: boolean
}

async function sha256Of(input: PieInput, signal: AbortSignal | undefined): Promise<string> {
  if (typeof input !== 'string') return sha256Bytes(input)
  const info = await stat(input)
  if (info.isDirectory()) return (await canonicalZipDigest(input, { signal })).sha256
  return sha256File(input, signal)
}

/**
 * Validates a PIE and says what it proves: its program hashes, output, steps, builtins, job size,
 * SHARP and Integrity facts, and the SHA-256 of its zip.
 *
 * @param pie A pie.zip path, a PIE directory, or a zip's bytes.
 * @param options The validation's options, and `sha256`.
 * @returns The inspection (program hashes other than Pedersen are computed when first read).
 * @throws {InvalidPieError} When the PIE is not valid (every problem in `problems`).
 * @throws {InvalidInputError} When the path cannot be read.
 * @example
 * ```ts
 * import { inspectPie } from 'proving-kit'
 *
 * const { programHash, nSteps, jobSize, sharpFactHash } = await inspectPie('build/pie.zip')
 * ```
 */
export async function inspectPie(pie: PieInput, options: InspectPieOptions = {}): Promise<PieInspection> {
  const digest = options.sha256 === false ? Promise.resolve(null) : sha256Of(pie, options.signal)
  // The digest runs alongside the validation pass; never leave its rejection unhandled.
  digest.catch(() => {})
  const analysis = await analysePie(pie, options)
  if (!analysis.valid || !analysis.metadata || analysis.summary.nSteps === undefined) {
    throw invalidPieError(analysis.problems, typeof pie === 'string' ? pie : undefined)
  }
  const program = analysis.metadata.program
  const digestOfProgram = programDigest(program)
  const hash = (variant: ProgramHashVariant) => computeProgramHash(program, variant, digestOfProgram)
  const output = analysis.output
  const factTopology = factTopologyFromAdditionalData(output.length, analysis.outputBuiltin)
  const programHashes = {} as Record<ProgramHashVariant, string>
  for (const variant of PROGRAM_HASH_VARIANTS) {
    Object.defineProperty(programHashes, variant, {
      enumerable: true,
      get: () => toHex(hash(variant)),
    })
  }
  const inspection = {
    programHashes,
    programDigest: digestOfProgram,
    output: output.map(toHex),
    nSteps: analysis.summary.nSteps,
    builtins: program.builtins,
    jobSize: jobSizeForSteps(analysis.summary.nSteps),
    factTopology,
    sha256: await digest,
    summary: analysis.summary,
  } as PieInspection
  Object.defineProperties(inspection, {
    programHash: { enumerable: true, get: () => toHex(hash('pedersen')) },
    sharpFactHash: {
      enumerable: true,
      get: () => toHex(computeSharpFact(hash('pedersen'), output, factTopology)),
    },
    integrityFactHash: {
      enumerable: true,
      get: () => toHex(computeIntegrityFact(hash('pedersen'), output)),
    },
  })
  programs.set(inspection, program)
  return inspection
}

const programs = new WeakMap<PieInspection, ProgramForHash>()

/**
 * Computes an inspection's program hash ahead, letting the event loop run meanwhile (Pedersen in
 * batches of a few tens of milliseconds); reading it afterwards is immediate.
 *
 * @param inspection The inspection.
 * @param variant The hash.
 * @param signal Stops the computation between batches (an AbortedError).
 * @returns The program hash, as `0x` hex.
 * @default variant 'pedersen'
 * @example
 * ```ts
 * import { inspectPie, prepareProgramHash } from 'proving-kit/pie'
 *
 * const inspection = await inspectPie('build/pie.zip', { sha256: false })
 * await prepareProgramHash(inspection, 'poseidon')
 * console.log(inspection.programHashes.poseidon)
 * ```
 */
export async function prepareProgramHash(
  inspection: PieInspection,
  variant: ProgramHashVariant = 'pedersen',
  signal?: AbortSignal,
): Promise<string> {
  const program = programs.get(inspection)
  if (!program) return inspection.programHashes[variant]
  return toHex(
    await computeProgramHashAsync(program, variant, {
      digest: inspection.programDigest,
      signal,
    }),
  )
}
