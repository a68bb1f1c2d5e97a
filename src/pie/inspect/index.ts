/**
 * The whole PIE at once, where the earlier folders meet: `inspectPie` (validated, then what it
 * proves: program hashes, output, facts, job size, the zip's SHA-256), `packChecked` (a directory
 * packed and inspected in one reading) and the check of a query's facts against an inspection.
 */
export { jobSizeForSteps } from './job-size.ts'
export { inspectPie, prepareProgramHash, type InspectPieOptions, type PieInspection } from './inspect.ts'
export {
  assertQueryFacts,
  checkQueryFacts,
  compareQueryFacts,
  factMismatchError,
  type FactCheckResult,
  type FactField,
  type FactMismatch,
  type QueryFacts,
} from './check.ts'
export { packChecked } from './pack-checked.ts'
