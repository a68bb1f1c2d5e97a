/**
 * The PIE toolkit: validate, pack, inspect a Cairo PIE; program hashes and facts; checking a
 * query's facts against the PIE; a generator of large valid PIEs for benchmarks.
 */
export {
  validatePie,
  assertValidPie,
  invalidPieError,
  type PieSummary,
  type PieValidationResult,
  type ValidatePieOptions,
} from './validate.ts'
export { packPie, canonicalZipDigest, type PackPieOptions, type PackPieResult, type PackedEntry } from './pack.ts'
export { inspectPie, prepareProgramHash, type InspectPieOptions, type PieInspection } from './inspect.ts'
export {
  checkQueryFacts,
  assertQueryFacts,
  compareQueryFacts,
  factMismatchError,
  type FactCheckResult,
  type FactField,
  type FactMismatch,
  type QueryFacts,
} from './check.ts'
export {
  computeProgramHash,
  computeProgramHashAsync,
  computeProgramHashes,
  programDigest,
  programHashChain,
  programFromCompiled,
  pedersenHashChain,
  blakeHashFelts,
  shortString,
  PROGRAM_HASH_VARIANTS,
  type ProgramForHash,
  type ProgramHashVariant,
} from './hash.ts'
export {
  computeSharpFact,
  computeIntegrityFact,
  computeOutputRoot,
  computeVerificationHash,
  BOOTLOADER_PROGRAM_HASH,
  type VerifierSettings,
} from './facts.ts'
export { factTopologyFromAdditionalData } from './topology.ts'
export type { FactTopology } from './fact-tree.ts'
export { jobSizeForSteps } from './job-size.ts'
export { toHex, parseFeltText } from './hex.ts'
export { CAIRO1_BUILTINS, generatePie, parseByteSize, PIE_SHAPES, type GeneratePieOptions, type GeneratedPie, type PieShape } from './generate.ts'
export type { PieInput } from './source.ts'
export { BUILTIN_ORDER, PIE_ENTRY_ORDER, STARK_PRIME } from './format.ts'
