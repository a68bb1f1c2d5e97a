/**
 * A generator of large, valid synthetic PIE directories (benchmarks, tests, `npm run gen:pie`).
 */
export {
  CAIRO1_BUILTINS,
  generatePie,
  parseByteSize,
  PIE_SHAPES,
  type GeneratedPie,
  type GeneratePieOptions,
  type PieShape,
} from './generate.ts'
