/**
 * Validating a PIE against every rule of the Cairo PIE format in one streaming pass over what
 * ../read/ opens: the JSON files parsed within budgets, metadata.json, the output's fact
 * topology, memory.bin's cells. The second step of a PIE's path.
 */
export { PieBudgetError } from './budgets.ts'
export { CELL_SIZE, toWords, writeCell } from './memory.ts'
export type { PieRefusal, RefusalReason } from './reasons.ts'
export { factTopologyFromAdditionalData } from './topology.ts'
export {
  analysePie,
  assertValidPie,
  invalidPieError,
  validatePie,
  type PieSummary,
  type PieValidationResult,
  type ValidatePieOptions,
} from './validate.ts'
