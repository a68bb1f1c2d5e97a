/**
 * The PIE toolkit, all of it offline: validate a Cairo PIE (a pie.zip or a PIE directory) as
 * cairo-lang does, pack it into the canonical pie.zip, inspect it (output, steps, builtins, job
 * size), compute its program hashes and facts, check a query's facts against it, and generate
 * large valid PIEs for benchmarks.
 */
// One folder per concern, in the order a PIE goes through them (test/unit/architecture.test.ts
// keeps one from importing a later one): shared/ (the format, felts as text, SHA-256), read/
// (opening a pie.zip or a directory), validate/, hash/ (program hashes), facts/, pack/ (writing
// the canonical zip), inspect/ (all of them at once; packing while checking; a query's facts
// against the PIE), generate/ (synthetic PIEs).
export { BUILTIN_ORDER, PIE_ENTRY_ORDER, STARK_PRIME, toHex, parseFeltText, type FactTopology } from './shared/index.ts'
export type { PieInput } from './read/index.ts'
export {
  validatePie,
  assertValidPie,
  invalidPieError,
  factTopologyFromAdditionalData,
  type PieRefusal,
  type PieSummary,
  type PieValidationResult,
  type RefusalReason,
  type ValidatePieOptions,
} from './validate/index.ts'
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
} from './hash/index.ts'
export {
  computeSharpFact,
  computeIntegrityFact,
  computeOutputRoot,
  computeVerificationHash,
  BOOTLOADER_PROGRAM_HASH,
  type VerifierSettings,
} from './facts/index.ts'
export { packPie, canonicalZipDigest, type PackPieOptions, type PackPieResult, type PackedEntry } from './pack/index.ts'
export {
  inspectPie,
  prepareProgramHash,
  jobSizeForSteps,
  checkQueryFacts,
  assertQueryFacts,
  compareQueryFacts,
  factMismatchError,
  type InspectPieOptions,
  type PieInspection,
  type FactCheckResult,
  type FactField,
  type FactMismatch,
  type QueryFacts,
} from './inspect/index.ts'
export {
  CAIRO1_BUILTINS,
  generatePie,
  parseByteSize,
  PIE_SHAPES,
  type GeneratePieOptions,
  type GeneratedPie,
  type PieShape,
} from './generate/index.ts'
