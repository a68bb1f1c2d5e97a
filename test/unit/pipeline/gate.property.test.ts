import fc from 'fast-check'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import {
  computeIntegrityFact,
  computeSharpFact,
  compareQueryFacts,
  type FactCheckResult,
  inspectPie,
  type PieInspection,
} from '../../../src/pie/index.ts'
import { type ExpectedQueries, judgeBucket } from '../../../src/pipeline/bucket.ts'
import {
  afterOnChainCheck,
  ANY_PROOF,
  evaluateGate,
  type ExpectedResult,
  expectResult,
  expectsProof,
  type GateRecord,
  type GateRefusal,
} from '../../../src/pipeline/gate.ts'
import { visibleName } from '../../../src/core/service-text.ts'
import type { BucketDetailsResponse, QueryRecordWithStatus } from '../../../src/schemas/proving.ts'
import { KNOWN_STEPS, RESULTS } from '../../../src/schemas/proving-constants.ts'
import { clientClockFor, simulatedClock } from '../../../src/testing.ts'
import { EXAMPLE_PIE, generatedPie } from '../../helpers/example-pie.ts'

/**
 * Issue 31: the gate's invariant as a property, over the whole record space, against real PIEs
 * and their locally computed facts. The gate passes exactly when the record is DONE, of the
 * kind the request asked for (its `result` and `step` claim nothing else), carries every fact
 * that kind carries, each well formed and equal to the local computation, with the mock state
 * false (or allowed, or settled by a registration on chain) and the on-chain check passed when
 * asked. The oracle below is written from that sentence, not from the gate's code. Every field
 * of the record is drawn absent, null, of another type, in odd spellings and unknown values.
 *
 * A failure prints fast-check's seed and path; PROVING_FC_SEED and PROVING_FC_RUNS replay or
 * explore further than the fixed run.
 */
const SEED = Number(process.env.PROVING_FC_SEED ?? 20261127)
const RUNS = Number(process.env.PROVING_FC_RUNS ?? 3000)

type Truth = { path: string; inspection: PieInspection; programHash: bigint; sharp: bigint; integrity: bigint }
let pies: Truth[]

/** What a PIE proves, computed here from its inspection (Pedersen program hash, SHARP's default). */
async function truthOf(path: string): Promise<Truth> {
  const inspection = await inspectPie(path, { sha256: false })
  const programHash = BigInt(inspection.programHashes.pedersen)
  const output = inspection.output.map((word) => BigInt(word))
  return {
    path,
    inspection,
    programHash,
    sharp: computeSharpFact(programHash, output, inspection.factTopology),
    integrity: computeIntegrityFact(programHash, output),
  }
}

beforeAll(async () => {
  // The example (the public fibonacci program) and a generated PIE of another program and output.
  pies = [await truthOf(EXAMPLE_PIE), await truthOf((await generatedPie({ seed: 5 })).zip)]
  expect(pies[0]!.sharp).not.toBe(pies[1]!.sharp)
}, 60_000)

// --- The record space ----------------------------------------------------------------------

const OTHER_TYPE = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.constant(['0x1']),
  fc.double(),
)
/** Absent is a key left out (fc.record with no required keys); these are the values a key may hold. */
const oddSpellings = (values: readonly string[]) =>
  fc.oneof(
    fc.constantFrom(...values),
    fc.constantFrom(...values).map((value) => value.toLowerCase()),
    fc.constantFrom(...values).map((value) => ` ${value} `),
    fc.constantFrom(...values).map((value) => value.replace(/_/g, '-')),
  )
const status = fc.oneof(
  { weight: 6, arbitrary: fc.constant('DONE') },
  oddSpellings(['DONE', 'FAILED', 'IN_PROGRESS', 'RECEIVED']),
  fc.constant(null),
  OTHER_TYPE,
)
const result = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...RESULTS, 'TRACE_AND_METADATA_GENERATION') },
  oddSpellings(RESULTS),
  fc.constantFrom(
    'PROOF_VERIFICATION_ON_MOON',
    'PROOF_VERIFICATION_ON_SOME_NEW_CHAIN',
    'PROOF_VERIFICATION_ON_',
    'PROOF_GENERATION_V2',
    '',
  ),
  { weight: 2, arbitrary: fc.constant(null) },
  OTHER_TYPE,
)
const step = fc.oneof(
  oddSpellings(KNOWN_STEPS),
  fc.constantFrom('SOME_NEW_STEP', ''),
  { weight: 2, arbitrary: fc.constant(null) },
  OTHER_TYPE,
)
const prover = fc.oneof(
  fc.constantFrom(
    'stone',
    'Stone',
    'stwo',
    'STWO',
    'stwoHerodotus',
    'halo',
    'nostwo',
    'stwo_v2',
    'st\u043ene',
    'stone ',
  ),
  fc.constant(null),
  OTHER_TYPE,
)
const mocked = fc.oneof(
  { weight: 4, arbitrary: fc.constant(false) },
  fc.constant(true),
  fc.constant(null),
  fc.constantFrom('false', 0),
  OTHER_TYPE,
)

/** A 0x hash in the spellings a service may use for the same number: case, leading zeros. */
const spelled = (value: bigint) =>
  fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 3 })).map(([upper, zeros]) => {
    const digits = value.toString(16)
    const padded = '0'.repeat(Math.min(zeros, 64 - digits.length)) + digits
    return `0x${upper ? padded.toUpperCase() : padded}`
  })
/** A fact field: the PIE's value (spelled), another PIE's, a wrong one, malformed, null, another type. */
const factValue = (pick: (truth: Truth) => bigint) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.integer({ min: 0, max: 1 }).chain((index) => spelled(pick(pies[index]!))) },
    fc.bigInt({ min: 1n, max: (1n << 252n) - 1n }).chain(spelled),
    fc.constantFrom('0x', 'zz0x5a1', '0x5a1 and more', `0x${'1'.repeat(65)}`, '0X5A1', '5a1', 'not\u001b[31m hex'),
    { weight: 2, arbitrary: fc.constant(null) },
    OTHER_TYPE,
  )

const FIELDS = {
  status,
  result,
  step,
  sharpProver: prover,
  isFactMocked: mocked,
  programHash: factValue((truth) => truth.programHash),
  sharpFactHash: factValue((truth) => truth.sharp),
  integrityFactHash: factValue((truth) => truth.integrity),
  errorReason: fc.oneof(fc.string(), fc.constant(null), OTHER_TYPE),
}
type Field = keyof typeof FIELDS

/** Anything: each field absent or drawn from its whole space. */
const anyRecord = fc.record(FIELDS, { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>
/** A record that proves one of the PIEs: what an honest service says. */
const honestRecord = fc.integer({ min: 0, max: 1 }).chain((index) =>
  fc.record({
    status: fc.constant('DONE'),
    result: fc.constantFrom(null, 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L1', 'PROOF_VERIFICATION_ON_L2'),
    step: fc.constantFrom(null, 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L2', 'FACT_HASH_REGISTRATION'),
    sharpProver: fc.constantFrom(null, 'stone', 'stwo'),
    isFactMocked: fc.constant(false),
    programHash: spelled(pies[index]!.programHash),
    sharpFactHash: spelled(pies[index]!.sharp),
    integrityFactHash: spelled(pies[index]!.integrity),
  }),
) as fc.Arbitrary<Record<string, unknown>>
/** An honest record with one or two fields changed, or left out: the line between pass and refusal. */
const nearlyHonest = fc
  .tuple(
    honestRecord,
    fc.uniqueArray(fc.constantFrom(...(Object.keys(FIELDS) as Field[])), { minLength: 1, maxLength: 2 }),
    fc.boolean(),
  )
  .chain(([record, fields, remove]) =>
    (remove ? fc.constant({}) : fc.record(Object.fromEntries(fields.map((field) => [field, FIELDS[field]])))).map(
      (changes) => {
        const changed: Record<string, unknown> = { ...record, ...changes }
        if (remove) for (const field of fields) delete changed[field]
        return changed
      },
    ),
  )
const recordArbitrary = () =>
  fc.oneof(
    { weight: 2, arbitrary: anyRecord },
    { weight: 2, arbitrary: honestRecord },
    { weight: 4, arbitrary: nearlyHonest },
  )

const expectedArbitrary = fc.oneof(fc.constantFrom(...RESULTS).map(expectResult), fc.constant(ANY_PROOF))

// --- The oracle: the invariant, from its sentence ------------------------------------------------

const HASH = /^0x[0-9a-fA-F]{1,64}$/
/** The provers interface.md and production.md name, folded to lower case: stone, stwo, stwoHerodotus. */
const KNOWN_PROVERS = ['stone', 'stwo', 'stwoherodotus']
const TRACE_STEPS = ['TRACE_GENERATION', 'TRACE_AND_METADATA_GENERATION']
const wellFormed = (value: unknown): value is string => typeof value === 'string' && HASH.test(value)
const present = (value: unknown) => value !== null && value !== undefined

/** Whether the record claims only what was asked for. */
function ofExpectedKind(record: Record<string, unknown>, expected: ExpectedResult): boolean {
  const newChain =
    expectsProof(expected) &&
    expected.kinds.length > 1 &&
    typeof record.result === 'string' &&
    /^PROOF_VERIFICATION_ON_[A-Z0-9]+(_[A-Z0-9]+)*$/.test(record.result)
  if (
    present(record.result) &&
    !newChain &&
    !(typeof record.result === 'string' && expected.kinds.includes(record.result))
  )
    return false
  if (!present(record.step)) return true
  if (typeof record.step !== 'string') return false
  const spelled = record.step.trim().toUpperCase()
  const known = (KNOWN_STEPS as readonly string[]).includes(spelled)
  return expectsProof(expected) ? !TRACE_STEPS.includes(spelled) : !known || TRACE_STEPS.includes(spelled)
}

/** Every fact the asked kind carries, each fact given well formed, and equal to the PIE's when one is given. */
function carriesItsFacts(record: Record<string, unknown>, expected: ExpectedResult, truth: Truth | undefined): boolean {
  const kind =
    expected.kinds.length === 1
      ? expected.kinds[0]
      : typeof record.result === 'string' && expected.kinds.includes(record.result)
        ? record.result
        : undefined
  // A prover is one of the known names in any letter case (ASCII letters folded, nothing else).
  const named = record.sharpProver
  const prover =
    typeof named === 'string'
      ? KNOWN_PROVERS.find((name) => name === named.replace(/[A-Z]/g, (letter) => letter.toLowerCase()))
      : undefined
  const fields = ['programHash', 'sharpFactHash', 'integrityFactHash'] as const
  if (!fields.every((field) => !present(record[field]) || wellFormed(record[field]))) return false
  if (!present(record.programHash)) return false
  let required: boolean
  if (kind === 'PROOF_VERIFICATION_ON_L1') required = present(record.sharpFactHash)
  // On L2 the prover decides the fact; one the record names that is not known decides nothing, and is refused.
  else if (kind === 'PROOF_VERIFICATION_ON_L2' && present(record.sharpProver) && prover === undefined) return false
  else if (kind === 'PROOF_VERIFICATION_ON_L2' && prover === 'stone') required = present(record.integrityFactHash)
  else if (kind === 'PROOF_VERIFICATION_ON_L2' && prover !== undefined) required = present(record.sharpFactHash)
  else required = present(record.sharpFactHash) || present(record.integrityFactHash)
  if (!required) return false
  if (!truth) return true
  const values = { programHash: truth.programHash, sharpFactHash: truth.sharp, integrityFactHash: truth.integrity }
  return fields.every((field) => !present(record[field]) || BigInt(record[field] as string) === values[field])
}

type Case = {
  record: Record<string, unknown>
  expected: ExpectedResult
  allowMockedFact: boolean
  /** The PIE the host compares with (the root action, `prove --wait`, `wait` with `pie`), or none. */
  pie: number | null
  expectedProgramHash: 'none' | 'truth' | 'other'
  onChain: 'not asked' | 'registered' | 'not registered'
}

function oracle(c: Case): boolean {
  const { record, expected } = c
  const truth = c.pie === null ? undefined : pies[c.pie]
  if (record.status !== 'DONE') return false
  if (!ofExpectedKind(record, expected)) return false
  const proves = expectsProof(expected)
  if (proves && !carriesItsFacts(record, expected, truth)) return false
  if (c.expectedProgramHash !== 'none') {
    const wanted = c.expectedProgramHash === 'truth' ? pies[0]!.programHash : 0x1234n
    if (!wellFormed(record.programHash) || BigInt(record.programHash) !== wanted) return false
  }
  const registered = c.onChain === 'registered'
  const mockOk =
    record.isFactMocked === false ||
    c.allowMockedFact ||
    (proves && typeof record.isFactMocked !== 'boolean' && registered) ||
    (!proves && record.isFactMocked !== true)
  if (!mockOk) return false
  return c.onChain === 'not asked' || registered
}

/**
 * The local fact check (compareQueryFacts, a Poseidon hash or three each: milliseconds), kept
 * per PIE and per value of each field as a number, so that thousands of cases fit in seconds.
 * Only the spelling of a mismatch in a message may differ from a fresh check's.
 */
const checks = new Map<string, FactCheckResult>()
function localCheck(record: GateRecord, pie: number): FactCheckResult {
  const key = [
    pie,
    ...(['programHash', 'sharpFactHash', 'integrityFactHash'] as const).map((field) => {
      const value: unknown = record[field]
      return wellFormed(value) ? BigInt(value).toString(16) : typeof value === 'string' ? JSON.stringify(value) : '-'
    }),
  ].join('|')
  let check = checks.get(key)
  if (!check) {
    check = compareQueryFacts(record, pies[pie]!.inspection)
    checks.set(key, check)
  }
  return check
}

/** The gate as the hosts run it: the local check where a proof was asked and a PIE is given, then the on-chain check. */
function hostGate(c: Case): GateRefusal[] {
  const record = c.record as GateRecord
  const factCheck =
    record.status === 'DONE' && expectsProof(c.expected) && c.pie !== null ? localCheck(record, c.pie) : undefined
  const expectedProgramHash =
    c.expectedProgramHash === 'none'
      ? undefined
      : c.expectedProgramHash === 'truth'
        ? `0x${pies[0]!.programHash.toString(16)}`
        : '0x1234'
  const gated = evaluateGate(record, factCheck, {
    allowMockedFact: c.allowMockedFact,
    expectedProgramHash,
    expected: c.expected,
  })
  // The root action's order: the chain is read only when nothing but an unknown mock state stands.
  const firm = gated.filter((refusal) => refusal.kind !== 'mock-state-unknown')
  const asked = c.onChain !== 'not asked' && record.status === 'DONE' && firm.length === 0
  const onChain =
    asked && c.onChain === 'not registered' ? [{ kind: 'not-on-chain' as const, message: 'not registered' }] : []
  return afterOnChainCheck(gated, { refusals: onChain, registered: asked && c.onChain === 'registered' })
}

const caseArbitrary = () =>
  fc.record({
    record: recordArbitrary(),
    expected: expectedArbitrary,
    allowMockedFact: fc.boolean(),
    pie: fc.constantFrom(null, 0, 1),
    expectedProgramHash: fc.constantFrom('none', 'none', 'truth', 'other'),
    onChain: fc.constantFrom('not asked', 'not asked', 'registered', 'not registered'),
  }) as fc.Arbitrary<Case>

describe('the release gate, as a property over the whole record space (issue 31)', () => {
  it('passes exactly the records the invariant allows; refuses everything else, never throwing', () => {
    let passed = 0
    fc.assert(
      fc.property(caseArbitrary(), (c) => {
        const refusals = hostGate(c)
        // Plain checks, not expect(): thousands of cases (fast-check reports the case and its seed).
        const forged = refusals.find((refusal) => /[\r\n\u001b]/.test(refusal.message))
        if (forged) throw new Error(`a refusal is not one line of data: ${JSON.stringify(forged.message)}`)
        const passes = refusals.length === 0
        if (passes) passed++
        if (passes !== oracle(c))
          throw new Error(
            `the gate ${passes ? 'passed' : 'refused'}, the invariant says otherwise: ${JSON.stringify(refusals)}`,
          )
      }),
      { numRuns: RUNS, seed: SEED },
    )
    // The space is searched on both sides of the line: a run that never passes proves nothing.
    expect(passed).toBeGreaterThan(RUNS / 100)
  })

  it('a DONE record that claims a trace never passes where a proof was asked for, whatever else it says', () => {
    fc.assert(
      fc.property(caseArbitrary(), fc.constantFrom('TRACE_GENERATION', 'TRACE_AND_METADATA_GENERATION'), (c, trace) => {
        const expected = c.expected.kinds.length === 1 && !expectsProof(c.expected) ? ANY_PROOF : c.expected
        const refusals = hostGate({
          ...c,
          expected,
          allowMockedFact: true,
          record: { ...c.record, status: 'DONE', result: trace },
        })
        const named = refusals.find((refusal) => refusal.kind === 'wrong-kind')
        // Naming both: what was asked and what the record claims.
        if (!named?.message.includes(trace) || !named.message.includes(expected.label))
          throw new Error(`not refused as the wrong kind: ${JSON.stringify(refusals)}`)
      }),
      { numRuns: Math.ceil(RUNS / 5), seed: SEED + 1 },
    )
  })
})

// --- The bucket gate ------------------------------------------------------------------------

type BucketCase = {
  listing: string[]
  leaves: number | null | undefined
  bucketStatus: string | undefined
  records: Record<string, Record<string, unknown>>
  /** Ids whose read answers with another query's record. */
  misread: string[]
  expected: ExpectedQueries | undefined
  pies: number[] | undefined
  allowMockedFact: boolean
}

const POOL = ['q-a', 'q-b', 'q-c', 'q-d']
/**
 * The bucket a query's own record names: this one (`b-1`, most often), another, lookalikes of
 * this one (case, blanks, a hyphen that is not U+002D, a Cyrillic letter), none, another type.
 */
const recordBucket = fc.oneof(
  { weight: 8, arbitrary: fc.constant('b-1') },
  fc.constantFrom('b-2', 'B-1', ' b-1', 'b-1 ', 'b\u20101', '\u044c-1', 'b-1\u200b', ''),
  fc.constant(null),
  fc.constant(undefined),
  OTHER_TYPE,
)
/** A record of the bucket's listing: any record, and the bucket it names (absent when drawn undefined). */
const bucketRecord = fc
  .tuple(recordArbitrary(), recordBucket)
  .map(([record, bucketId]) => (bucketId === undefined ? record : { ...record, bucketId }))

const bucketCaseArbitrary = () =>
  fc
    .record({
      listing: fc.oneof(
        fc.uniqueArray(fc.constantFrom(...POOL), { maxLength: 4 }),
        fc.array(fc.constantFrom(...POOL), { maxLength: 6 }),
      ),
      leaves: fc.oneof(fc.integer({ min: 0, max: 6 }), fc.constant(null), fc.constant(undefined), fc.constant(100)),
      bucketStatus: fc.constantFrom('DONE', 'DONE', 'FAILED', 'IN_PROGRESS', 'done', undefined),
      records: fc.record(Object.fromEntries(POOL.map((id) => [id, bucketRecord]))),
      misread: fc.oneof({ weight: 4, arbitrary: fc.constant<string[]>([]) }, fc.subarray(POOL, { maxLength: 1 })),
      expectedKind: fc.constantFrom('none', 'ids', 'count'),
      expectedIds: fc.subarray([...POOL, 'q-never']),
      count: fc.integer({ min: 1, max: 5 }),
      pies: fc.constantFrom<number[] | undefined>(undefined, undefined, [0], [1], [0, 1]),
      allowMockedFact: fc.boolean(),
    })
    .map(
      ({ expectedKind, expectedIds, count, ...rest }): BucketCase => ({
        ...rest,
        expected:
          expectedKind === 'ids' && expectedIds.length
            ? { ids: expectedIds }
            : expectedKind === 'count'
              ? { count }
              : undefined,
      }),
    )

/** The bucket invariant, from its sentence: a listing the gate can read, of exactly the expected queries, each in this bucket by its own record and a passing proof. */
function bucketOracle(c: BucketCase): boolean {
  const distinct = [...new Set(c.listing)]
  if (distinct.length !== c.listing.length || distinct.length === 0) return false
  if (typeof c.leaves === 'number' && distinct.length > c.leaves) return false
  if (
    c.expected &&
    'ids' in c.expected &&
    (distinct.length !== c.expected.ids.length || !c.expected.ids.every((id) => distinct.includes(id)))
  )
    return false
  if (c.expected && 'count' in c.expected && distinct.length !== c.expected.count) return false
  if (c.bucketStatus !== undefined && c.bucketStatus !== 'DONE') return false
  if (distinct.some((id) => c.misread.includes(id))) return false
  // A leaf of this bucket by its own record, exactly: the listing's word is not the query's.
  if (distinct.some((id) => c.records[id]!.bucketId !== 'b-1')) return false
  const fits = (id: string, pie: number) =>
    oracle({
      record: c.records[id]!,
      expected: ANY_PROOF,
      allowMockedFact: true,
      pie,
      expectedProgramHash: 'none',
      onChain: 'not asked',
    })
  for (const id of distinct) {
    const each = {
      record: c.records[id]!,
      expected: ANY_PROOF,
      allowMockedFact: c.allowMockedFact,
      expectedProgramHash: 'none' as const,
      onChain: 'not asked' as const,
    }
    if (
      !(c.pies ? c.pies.some((pie) => fits(id, pie)) && oracle({ ...each, pie: null }) : oracle({ ...each, pie: null }))
    )
      return false
  }
  return !c.pies || c.pies.every((pie) => distinct.some((id) => fits(id, pie)))
}

/** A client that answers each read from the case (the bucket gate's only use of it). */
function clientOf(c: BucketCase): ProvingClient {
  const read = async (id: string) => {
    const answered = c.misread.includes(id) ? POOL.find((other) => other !== id)! : id
    return {
      provingQuery: { ...c.records[answered], id: answered } as unknown as QueryRecordWithStatus,
      metadataUrls: [],
    }
  }
  return { readQuery: read, http: { clock: clientClockFor(simulatedClock()) } } as unknown as ProvingClient
}

describe('the bucket gate, as a property over listings and records (issue 31)', () => {
  it("names the service's ids and status in its refusals as one line of data each", async () => {
    const forged = 'q-x\nGate passed: all queries are DONE\u001b[31m'
    const records: Record<string, Record<string, unknown>> = {
      [forged]: { status: 'IN_PROGRESS' },
      'q-a': { status: 'DONE' },
    }
    const client = {
      // The read of the forged id answers with another query's record: a misread, named.
      readQuery: async (id: string) => ({
        provingQuery: { ...records[id], id: id === forged ? 'q-a' : id } as unknown as QueryRecordWithStatus,
        metadataUrls: [],
      }),
      http: { clock: clientClockFor(simulatedClock()) },
    } as unknown as ProvingClient
    const judge = (queries: string[], expected?: ExpectedQueries) =>
      judgeBucket(
        client,
        {
          bucket: { id: 'b-1\n- forged', status: 'FAILED\nDONE', leaves: null },
          queries: queries.map((id) => ({ id })),
        } as unknown as BucketDetailsResponse,
        { allowMockedFact: true, expected },
      )
    const verdicts = [await judge([forged, forged]), await judge([forged, 'q-a'], { ids: ['q-a', 'q-b'] })]
    const refusals = verdicts.flatMap((verdict) => verdict.refusals)
    expect(refusals.length).toBeGreaterThanOrEqual(5)
    for (const refusal of refusals) expect(refusal).not.toMatch(/[\r\n\u001b]/)
    expect(refusals.join(' ')).toContain('q-x\\nGate passed')
  })

  it('passes exactly a readable listing of the expected queries, each in the bucket by its own record and a proof that passes the gate', async () => {
    let passed = 0
    await fc.assert(
      fc.asyncProperty(bucketCaseArbitrary(), async (c) => {
        const details = {
          bucket: { id: 'b-1', status: c.bucketStatus, leaves: c.leaves },
          queries: c.listing.map((id) => ({ id })),
        } as unknown as BucketDetailsResponse
        const verdict = await judgeBucket(clientOf(c), details, {
          allowMockedFact: c.allowMockedFact,
          expected: c.expected,
          pies: c.pies?.map((index) => ({ path: pies[index]!.path, inspection: pies[index]!.inspection })),
        })
        if (verdict.ok) passed++
        if (verdict.ok !== bucketOracle(c))
          throw new Error(
            `the bucket gate ${verdict.ok ? 'passed' : 'refused'}, the invariant says otherwise: ${JSON.stringify(verdict.refusals)}`,
          )
        if (verdict.ok !== (verdict.refusals.length === 0)) throw new Error('ok and refusals disagree')
        // A query read whose record names another bucket, or none, is refused naming both.
        for (const row of verdict.rows) {
          const named: unknown = c.records[row.queryId]?.bucketId
          if (c.misread.includes(row.queryId) || named === 'b-1') continue
          const shown =
            typeof named === 'string'
              ? /^[\x21-\x7e]+$/.test(named)
                ? `in bucket ${named} `
                : `in bucket ${visibleName(named)} `
              : 'in no bucket ('
          if (
            !row.problems.some(
              (problem) =>
                problem.includes(`is ${shown}`) && problem.includes('not in bucket b-1, whose listing names it'),
            )
          ) {
            throw new Error(
              `${row.queryId} names bucket ${JSON.stringify(named)}, not refused naming both: ${JSON.stringify(row.problems)}`,
            )
          }
        }
      }),
      { numRuns: Math.ceil(RUNS / 3), seed: SEED + 2 },
    )
    expect(passed).toBeGreaterThan(0)
  })
})
