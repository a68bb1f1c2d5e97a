/**
 * What a PIE proves, computed locally: the program hash (all three variants), the output, the
 * step count and job size, the SHARP and Integrity facts, and the SHA-256 of the zip that
 * would be uploaded. The PIE is validated in the same streaming pass; an invalid PIE throws
 * InvalidPieError, since facts of a PIE the prover would reject mean nothing.
 */
import { stat } from 'node:fs/promises'
import type { JobSize } from '../schemas/proving.ts'
import { sha256Bytes, sha256File } from './digest.ts'
import { computeIntegrityFact, computeSharpFact, factTopologyFromAdditionalData, type FactTopology } from './facts.ts'
import { computeProgramHashes, type ProgramHashVariant } from './hash.ts'
import { toHex } from './hex.ts'
import { jobSizeForSteps } from './job-size.ts'
import { canonicalZipDigest } from './pack.ts'
import type { PieInput } from './source.ts'
import { analysePie, invalidPieError, type PieSummary, type ValidatePieOptions } from './validate.ts'

export type PieInspection = {
  /** The Pedersen program hash (what SHARP uses by default), lowercase 0x hex. */
  programHash: string
  programHashes: Record<ProgramHashVariant, string>
  /** The program output, each word as lowercase 0x hex without leading zeros (exact). */
  output: string[]
  nSteps: number
  builtins: string[]
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
  summary: PieSummary
}

export type InspectPieOptions = ValidatePieOptions & {
  /** Compute `sha256` (default true). */
  sha256?: boolean
}

async function sha256Of(input: PieInput, signal: AbortSignal | undefined): Promise<string> {
  if (typeof input !== 'string') return sha256Bytes(input)
  const info = await stat(input)
  if (info.isDirectory()) return (await canonicalZipDigest(input, { signal })).sha256
  return sha256File(input, signal)
}

export async function inspectPie(pie: PieInput, options: InspectPieOptions = {}): Promise<PieInspection> {
  const digest = options.sha256 === false ? Promise.resolve(null) : sha256Of(pie, options.signal)
  // The digest runs alongside the validation pass; never leave its rejection unhandled.
  digest.catch(() => {})
  const analysis = await analysePie(pie, options)
  if (!analysis.valid || !analysis.metadata || analysis.summary.nSteps === undefined) {
    throw invalidPieError(analysis.problems, typeof pie === 'string' ? pie : undefined)
  }
  const program = analysis.metadata.program
  const hashes = computeProgramHashes(program)
  const output = analysis.output
  const factTopology = factTopologyFromAdditionalData(output.length, analysis.outputBuiltin)
  return {
    programHash: toHex(hashes.pedersen),
    programHashes: { pedersen: toHex(hashes.pedersen), poseidon: toHex(hashes.poseidon), blake: toHex(hashes.blake) },
    output: output.map(toHex),
    nSteps: analysis.summary.nSteps,
    builtins: program.builtins,
    jobSize: jobSizeForSteps(analysis.summary.nSteps),
    sharpFactHash: toHex(computeSharpFact(hashes.pedersen, output, factTopology)),
    integrityFactHash: toHex(computeIntegrityFact(hashes.pedersen, output)),
    factTopology,
    sha256: await digest,
    summary: analysis.summary,
  }
}
