/**
 * Why a PIE is refused, one class per problem (docs/pie-validation.md gives each rule's): the
 * service may load a PIE with cairo-lang (Python) or cairo-vm (Rust), so a PIE `validate` passes
 * must load in both and read the same in both, and one it refuses says which reader refuses it,
 * or why it is refused though both would load it.
 */
import type { JsonObject, JsonValue } from './json.ts'

export const REFUSAL_REASONS = [
  'cairo-lang',
  'cairo-vm',
  'ambiguous',
  'ambiguous-container',
  'unprovable',
  'budget',
] as const

/**
 * - `cairo-lang`: cairo-lang's `CairoPie.from_file` or `run_validity_checks` refuses it (cairo-vm
 *   may too).
 * - `cairo-vm`: cairo-vm's `CairoPie::read_zip_file` or `run_validity_checks` refuses it, though
 *   cairo-lang loads it.
 * - `ambiguous`: both may load it, but not as the same PIE (they read a byte or a value differently).
 * - `ambiguous-container`: the zip (or the PIE directory) can be read as more than one set of
 *   files: readers of it (Python's zipfile of one version or another, cairo-vm's zip crate, unzip,
 *   a streaming reader) may take different bytes from it, or one may refuse it, whatever
 *   cairo-lang's own zipfile does.
 * - `unprovable`: both load it the same way, but the bootloader refuses it or its SHARP fact
 *   cannot be computed, after the upload is paid for.
 * - `budget`: past what proving-kit reads of one PIE (memory and time bounds, docs/reliability.md).
 */
export type RefusalReason = (typeof REFUSAL_REASONS)[number]

/** One problem of a refused PIE and its reason class. */
export type PieRefusal = { problem: string; reason: RefusalReason }

const SAYS: Readonly<Record<RefusalReason, string>> = {
  'cairo-lang': 'cairo-lang refuses it',
  'cairo-vm': 'cairo-vm refuses it',
  ambiguous: 'ambiguous: cairo-lang and cairo-vm would not read the same PIE',
  'ambiguous-container': 'ambiguous container: zip readers could take different files from it',
  unprovable: 'unprovable: the bootloader or the fact computation fails on it',
  budget: 'budget: past what proving-kit reads of one PIE',
}

/** A problem line ending in its reason class, as every refusal is shown. */
export function withReason(line: string, reason: RefusalReason): string {
  return `${line} [${SAYS[reason]}]`
}

/**
 * What cairo-lang reads where an integer belongs: marshmallow's non-strict Integer field turns
 * the string "61" and the numbers 72.0 and 72.5 into integers (cairo-vm's serde refuses all
 * three). Undefined for what it refuses too (null, an object, "abc").
 */
export function coercedInteger(value: JsonValue | undefined): bigint | undefined {
  if (typeof value === 'bigint') return value
  // Python's int() truncates: marshmallow reads 73.5 as 73.
  if (typeof value === 'number') return Number.isFinite(value) ? BigInt(Math.trunc(value)) : undefined
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return BigInt(value.trim())
  return undefined
}

/** Why a value that is not a JSON integer is refused: cairo-vm's when cairo-lang coerces it. */
export function notIntegerReason(value: JsonValue | undefined): RefusalReason {
  return coercedInteger(value) === undefined ? 'cairo-lang' : 'cairo-vm'
}

/** Reports every key of `object` outside `known`: cairo-lang's schemas (marshmallow, unknown=RAISE) refuse them. */
export function checkKnownKeys(
  object: JsonObject,
  known: readonly string[],
  where: string,
  report: (line: string) => void,
): void {
  const unknown = [...object.keys()].filter((key) => !known.includes(key))
  if (unknown.length) {
    report(
      `${where} has unknown key${unknown.length === 1 ? '' : 's'} ${unknown.map((key) => JSON.stringify(key)).join(', ')}; cairo-lang's schema allows only ${known.join(', ')}`,
    )
  }
}
