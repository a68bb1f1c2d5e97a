/**
 * Checking what the service says it proved against the PIE that was sent: the query's
 * programHash, sharpFactHash and integrityFactHash (each may be null) against the local
 * computation. Values compare as numbers, so case and leading zeros do not matter. The program
 * hash may match any of the three variants; the facts are then checked with that variant's
 * hash (with every variant when the service gave no program hash). Null fields are not
 * compared, and the result is ok only when a fact was compared and matched.
 */
import { FactMismatchError } from '../../core/errors.ts'
import { parseFeltText, toHex } from '../shared/index.ts'
import type { PieInput } from '../read/index.ts'
import { PROGRAM_HASH_VARIANTS, type ProgramHashVariant } from '../hash/index.ts'
import { computeIntegrityFact, computeSharpFact } from '../facts/index.ts'
import { inspectPie, type InspectPieOptions, type PieInspection } from './inspect.ts'

/** The fact fields of a proving query record (a DONE query has them; any may be null). */
export type QueryFacts = {
  programHash?: string | null | undefined
  sharpFactHash?: string | null | undefined
  integrityFactHash?: string | null | undefined
}

/** A field of a query's record that {@link checkQueryFacts} compares with the PIE. */
export type FactField = 'programHash' | 'sharpFactHash' | 'integrityFactHash'

/** A field whose value the service reported differs from the PIE's. */
export type FactMismatch = {
  field: FactField
  /** What the PIE gives (computed locally), 0x hex. */
  expected: string
  /** What the service reported, as it reported it. */
  actual: string
}

/** What comparing a query's facts with a PIE found. */
export type FactCheckResult = {
  /**
   * Something that binds the output (sharpFactHash or integrityFactHash) was compared, and
   * nothing differs. A record that leaves both facts null is not ok: matching nothing is not
   * matching (the program hash alone is shared by every run of the program).
   */
  ok: boolean
  /** Which program hash the service's matches (or, when it gave none, which one its facts fit). */
  programHashVariant: ProgramHashVariant | null
  mismatches: FactMismatch[]
  /** The fields that were compared (those the record did not leave null). */
  checked: FactField[]
}

function isInspection(value: unknown): value is PieInspection {
  return typeof value === 'object' && value !== null && !(value instanceof Uint8Array) && 'programHashes' in value
}

function same(reported: string, local: bigint): boolean {
  return parseFeltText(reported) === local
}

const MATCH_ORDER: readonly ProgramHashVariant[] = ['blake', 'pedersen', 'poseidon']

/**
 * What an inspection gives, computed once however many records are compared with it (a reuse
 * lookup compares one PIE with thousands of a key's queries): the output as numbers, each
 * variant's program hash and each fact, when first needed.
 */
type Computed = { output: bigint[]; hashes: Map<ProgramHashVariant, bigint>; facts: Map<string, bigint> }
const computedFor = new WeakMap<PieInspection, Computed>()

function computedOf(inspection: PieInspection): Computed {
  let computed = computedFor.get(inspection)
  if (!computed) {
    computed = { output: inspection.output.map((word) => BigInt(word)), hashes: new Map(), facts: new Map() }
    computedFor.set(inspection, computed)
  }
  return computed
}

/**
 * Compares a query's record with a PIE's inspection: the program hash (in whichever variant the
 * service used) and the facts that bind the output. Cheap when repeated: what the inspection gives
 * is computed once however many records are compared with it.
 *
 * @param record The query's `programHash`, `sharpFactHash` and `integrityFactHash`.
 * @param inspection The PIE's inspection ({@link inspectPie}).
 * @returns `{ ok, programHashVariant, mismatches, checked }`: `ok` only when a fact that binds the
 * output was compared and nothing differs.
 * @example
 * ```ts
 * import { compareQueryFacts, inspectPie, ProvingClient } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const inspection = await inspectPie('build/pie.zip')
 * for await (const query of client.iterateQueries()) {
 *   if (compareQueryFacts(query, inspection).ok) console.log(`${query.id} proves this PIE`)
 * }
 * ```
 */
export function compareQueryFacts(record: QueryFacts, inspection: PieInspection): FactCheckResult {
  const { output, hashes: known, facts: computed } = computedOf(inspection)
  // Each variant's hash is computed only when needed (Pedersen's takes seconds for a long program).
  const hashOf = (variant: ProgramHashVariant) => {
    if (!known.has(variant)) known.set(variant, BigInt(inspection.programHashes[variant]))
    return known.get(variant)!
  }
  const sharp = (variant: ProgramHashVariant) => computeSharpFact(hashOf(variant), output, inspection.factTopology)
  const integrity = (variant: ProgramHashVariant) => computeIntegrityFact(hashOf(variant), output)
  const mismatches: FactMismatch[] = []
  const checked: FactField[] = []

  let variant: ProgramHashVariant | null = null
  let candidates: ProgramHashVariant[] = [...PROGRAM_HASH_VARIANTS]
  if (typeof record.programHash === 'string') {
    checked.push('programHash')
    // Blake first: it costs next to nothing and spares the other two when it matches.
    variant = MATCH_ORDER.find((v) => same(record.programHash!, hashOf(v))) ?? null
    if (!variant)
      mismatches.push({ field: 'programHash', expected: toHex(hashOf('pedersen')), actual: record.programHash })
    // A mismatching program hash: judge the facts against SHARP's default, Pedersen.
    candidates = [variant ?? 'pedersen']
  }

  const facts: [FactField, string | null | undefined, (v: ProgramHashVariant) => bigint][] = [
    ['sharpFactHash', record.sharpFactHash, sharp],
    ['integrityFactHash', record.integrityFactHash, integrity],
  ]
  const factOf = (field: FactField, v: ProgramHashVariant, compute: (v: ProgramHashVariant) => bigint) => {
    const key = `${field}:${v}`
    if (!computed.has(key)) computed.set(key, compute(v))
    return computed.get(key)!
  }
  // Without a program hash from the service, pick the variant its facts fit, if any.
  if (candidates.length > 1) {
    const fitting = candidates.find((v) =>
      facts.every(
        ([field, reported, compute]) => typeof reported !== 'string' || same(reported, factOf(field, v, compute)),
      ),
    )
    const anyReported = facts.some(([, reported]) => typeof reported === 'string')
    if (fitting && anyReported) variant = fitting
    candidates = [fitting && anyReported ? fitting : 'pedersen']
  }
  const chosen = candidates[0]!
  for (const [field, reported, compute] of facts) {
    if (typeof reported !== 'string') continue
    checked.push(field)
    const local = factOf(field, chosen, compute)
    if (!same(reported, local)) mismatches.push({ field, expected: toHex(local), actual: reported })
  }
  const boundOutput = checked.some((field) => field !== 'programHash')
  return { ok: mismatches.length === 0 && boundOutput, programHashVariant: variant, mismatches, checked }
}

/**
 * Compares a query's record with a PIE: inspects the PIE (unless an inspection is given), then {@link
 * compareQueryFacts}.
 *
 * @param record The query's `programHash`, `sharpFactHash` and `integrityFactHash`.
 * @param pie A pie.zip path, a PIE directory, a zip's bytes, or an inspection.
 * @param options How the PIE is inspected.
 * @returns `{ ok, programHashVariant, mismatches, checked }`.
 * @throws {InvalidPieError} When the PIE is not valid.
 * @example
 * ```ts
 * import { checkQueryFacts, ProvingClient } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const { provingQuery } = await client.waitForQuery('a1b2c3')
 * const check = await checkQueryFacts(provingQuery, 'build/pie.zip')
 * console.log(check.ok ? 'facts match' : check.mismatches)
 * ```
 */
export async function checkQueryFacts(
  record: QueryFacts,
  pie: PieInput | PieInspection,
  options: InspectPieOptions = {},
): Promise<FactCheckResult> {
  const inspection = isInspection(pie) ? pie : await inspectPie(pie, { sha256: false, ...options })
  return compareQueryFacts(record, inspection)
}

/**
 * Like {@link checkQueryFacts}, but throws when the facts do not match.
 *
 * @param record The query's `programHash`, `sharpFactHash` and `integrityFactHash`.
 * @param pie A pie.zip path, a PIE directory, a zip's bytes, or an inspection.
 * @param options How the PIE is inspected.
 * @returns The comparison, which is `ok`.
 * @throws {FactMismatchError} When a fact differs (each named in `metaMessages`), or the record has no fact to compare.
 * @throws {InvalidPieError} When the PIE is not valid.
 * @example
 * ```ts
 * import { assertQueryFacts, ProvingClient } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const { provingQuery } = await client.waitForQuery('a1b2c3')
 * await assertQueryFacts(provingQuery, 'build/pie.zip')
 * ```
 */
export async function assertQueryFacts(
  record: QueryFacts,
  pie: PieInput | PieInspection,
  options: InspectPieOptions = {},
): Promise<FactCheckResult> {
  const result = await checkQueryFacts(record, pie, options)
  if (!result.ok) throw factMismatchError(result)
  return result
}

/**
 * The error {@link assertQueryFacts} throws for a comparison that is not ok.
 *
 * @param result The comparison.
 * @returns A FactMismatchError naming each fact that differs.
 * @example
 * ```ts
 * import { compareQueryFacts, factMismatchError, inspectPie } from 'proving-kit/pie'
 *
 * const inspection = await inspectPie('build/pie.zip')
 * const result = compareQueryFacts({ sharpFactHash: '0x1' }, inspection)
 * if (!result.ok) throw factMismatchError(result)
 * ```
 */
export function factMismatchError(result: FactCheckResult): FactMismatchError {
  if (result.mismatches.length === 0) {
    return new FactMismatchError(
      'The service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent)',
    )
  }
  const fields = result.mismatches.map((m) => m.field)
  return new FactMismatchError(
    `The service's ${fields.join(' and ')} ${fields.length === 1 ? 'differs' : 'differ'} from the PIE's`,
    {
      metaMessages: result.mismatches.map(
        (m) => `${m.field}: the service says ${m.actual}, the PIE gives ${m.expected}`,
      ),
    },
  )
}
