import fc from 'fast-check'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { silentLogger } from '../../../src/testing.ts'
import { inspectPie, type FactCheckResult, type PieInspection } from '../../../src/pie/index.ts'
import { evaluateGate, expectResult } from '../../../src/pipeline/gate.ts'
import {
  findReusableQuery,
  generalReuseRequest,
  judgeCandidate,
  l2ReuseRequest,
  type ReuseRequest,
} from '../../../src/pipeline/reuse.ts'
import { KeyQueries, MAX_INDEXED_QUERIES, QUERY_PAGE_SIZE } from '../../../src/pipeline/key-queries.ts'
import type { QueryRecordWithStatus } from '../../../src/schemas/proving.ts'

const FIXTURE = fileURLToPath(new URL('../../../examples/fib/pie.zip', import.meta.url))

const hash = fc.oneof(
  fc.constantFrom('0x5a1', '0x1e9', '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45'),
  fc.constantFrom('not a hash', '0x', '', '0xZZ'),
  fc.constant(null),
  fc.constant(undefined),
)
const RESULTS = [
  'PROOF_VERIFICATION_ON_L2',
  'PROOF_VERIFICATION_ON_L1',
  'PROOF_GENERATION',
  'TRACE_GENERATION',
] as const
const record = fc.record({
  id: fc.constant('q-1'),
  status: fc.constantFrom('DONE', 'FAILED', 'IN_PROGRESS', 'RECEIVED', 'done'),
  result: fc.oneof(fc.constantFrom(...RESULTS), fc.constant(null)),
  layout: fc.oneof(fc.constantFrom('auto', 'recursive', 'small'), fc.constant(null)),
  isFactMocked: fc.oneof(fc.boolean(), fc.constant(null), fc.constant(undefined)),
  programHash: hash,
  sharpFactHash: hash,
  integrityFactHash: hash,
  createdAt: fc.constant('2026-11-27T10:00:00.000Z'),
}) as fc.Arbitrary<QueryRecordWithStatus>
const factCheck: fc.Arbitrary<FactCheckResult | undefined> = fc.oneof(
  fc.constant(undefined),
  fc.constant({
    ok: true,
    programHashVariant: 'pedersen',
    checked: ['programHash', 'sharpFactHash'],
    mismatches: [],
  } as unknown as FactCheckResult),
  fc.constant({ ok: true, programHashVariant: null, checked: [], mismatches: [] } as unknown as FactCheckResult),
  fc.constant({
    ok: false,
    programHashVariant: null,
    checked: ['sharpFactHash'],
    mismatches: [{ field: 'sharpFactHash', expected: '0x1', actual: '0x2' }],
  } as unknown as FactCheckResult),
)
const request: fc.Arbitrary<ReuseRequest> = fc.record({
  result: fc.constantFrom(...RESULTS),
  settings: fc.record({ layout: fc.constantFrom('auto', 'recursive', undefined) }),
  mockFactHash: fc.boolean(),
  allowMockedFact: fc.boolean(),
  expectedProgramHash: fc.constantFrom(
    undefined,
    '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45',
    '0x1',
  ),
})

/** A request and a record drawn around it: most fields as asked, some not, so that records are taken as well as refused. */
const nearRequest: fc.Arbitrary<[QueryRecordWithStatus, ReuseRequest]> = request.chain((wanted) =>
  fc
    .record({
      near: fc.record({
        status: fc.constantFrom('DONE', 'DONE', 'DONE', 'FAILED'),
        result: fc.oneof(
          fc.constant(wanted.result),
          fc.constant(wanted.result),
          fc.constantFrom(...RESULTS),
          fc.constant(null),
        ),
        layout: fc.oneof(
          fc.constant(wanted.settings.layout ?? 'auto'),
          fc.constant(wanted.settings.layout ?? 'auto'),
          fc.constant(null),
        ),
        isFactMocked: fc.oneof(
          fc.constant(wanted.mockFactHash),
          fc.constant(wanted.mockFactHash),
          fc.boolean(),
          fc.constant(null),
        ),
        programHash: fc.oneof(
          fc.constant(
            wanted.expectedProgramHash ?? '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45',
          ),
          hash,
        ),
      }),
      base: record,
    })
    .map(({ near, base }) => [{ ...base, ...near } as QueryRecordWithStatus, wanted]),
)

describe('judgeCandidate', () => {
  it('property: a record reuse takes is one a fresh gate on the same record passes (with the requested kind, and with the kind the record names)', () => {
    let taken = 0
    fc.assert(
      fc.property(nearRequest, factCheck, ([candidate, wanted], check) => {
        if (judgeCandidate(candidate, check, wanted) !== undefined) return
        taken++
        const options = { allowMockedFact: wanted.allowMockedFact, expectedProgramHash: wanted.expectedProgramHash }
        expect(evaluateGate(candidate, check, { ...options, expected: expectResult(wanted.result) })).toEqual([])
        expect(
          evaluateGate(candidate, check, { ...options, expected: expectResult(candidate.result ?? 'none') }),
        ).toEqual([])
        expect(candidate.status).toBe('DONE')
        expect(check?.ok).toBe(true)
        expect(candidate.result).toBe(wanted.result)
        expect(typeof candidate.isFactMocked).toBe('boolean')
        if (candidate.isFactMocked) expect(wanted.allowMockedFact).toBe(true)
      }),
      { numRuns: 2000 },
    )
    // Not vacuous: some records were taken, and each was checked above.
    expect(taken).toBeGreaterThan(0)
  })

  it('says why a record cannot stand in: status, kind, settings, mock state, facts', () => {
    const done = {
      id: 'q',
      status: 'DONE',
      result: 'PROOF_VERIFICATION_ON_L2',
      layout: 'auto',
      isFactMocked: false,
      programHash: '0x1',
      sharpFactHash: '0x2',
      integrityFactHash: '0x3',
    } as QueryRecordWithStatus
    const ok = {
      ok: true,
      programHashVariant: 'pedersen',
      checked: ['programHash'],
      mismatches: [],
    } as unknown as FactCheckResult
    const l2 = l2ReuseRequest({ layout: 'auto', prover: 'svc_sharp', mockFactHash: false, allowMockedFact: false })
    expect(judgeCandidate(done, ok, l2)).toBeUndefined()
    expect(judgeCandidate({ ...done, status: 'FAILED' }, ok, l2)).toBe('it is FAILED')
    expect(judgeCandidate({ ...done, result: 'PROOF_GENERATION' }, ok, l2)).toBe(
      'its result is PROOF_GENERATION, not PROOF_VERIFICATION_ON_L2',
    )
    expect(judgeCandidate({ ...done, layout: null }, ok, l2)).toBe('its layout is not given, not auto')
    expect(judgeCandidate({ ...done, isFactMocked: null }, ok, l2)).toBe('it does not say whether its fact is mocked')
    expect(judgeCandidate({ ...done, isFactMocked: true }, ok, { ...l2, allowMockedFact: true })).toBe(
      'its fact is mocked',
    )
    expect(judgeCandidate({ ...done, result: null }, ok, l2)).toBe(
      'its result is not given, not PROOF_VERIFICATION_ON_L2',
    )
    expect(judgeCandidate({ ...done, layout: 'small' }, ok, l2)).toBe('its layout is small, not auto')
    expect(judgeCandidate(done, ok, { ...l2, mockFactHash: true, allowMockedFact: true })).toBe(
      'its fact is not mocked, and a mocked one was asked for',
    )
    expect(judgeCandidate({ ...done, isFactMocked: true }, ok, { ...l2, mockFactHash: true })).toBe(
      'its fact is mocked and mocked facts are not allowed',
    )
    expect(judgeCandidate(done, ok, { ...l2, expectedProgramHash: '0x7' })).toBe('the gate refuses it (program-hash)')
    expect(judgeCandidate(done, { ...ok, ok: false }, l2)).toBe("its facts differ from the PIE's")
    expect(judgeCandidate(done, undefined, l2)).toBe("its facts were not compared with the PIE's")
  })

  it('turns reuse off where a record cannot show a setting, for a bucket, a given dedup id', () => {
    expect(
      l2ReuseRequest({ layout: 'auto', prover: 'my_prover', mockFactHash: false, allowMockedFact: false }).blocked,
    ).toMatch(/prover my_prover/)
    const factConditions = { mockFactHash: false, allowMockedFact: false }
    expect(generalReuseRequest({ result: 'PROOF_GENERATION', sharpProver: 'stwo' }, factConditions).blocked).toMatch(
      /sharpProver/,
    )
    expect(generalReuseRequest({ result: 'PROOF_GENERATION', bucketId: 'b' }, factConditions).blocked).toMatch(/bucket/)
    expect(generalReuseRequest({ result: 'PROOF_GENERATION', dedupId: 'd' }, factConditions).blocked).toMatch(
      /dedup id/,
    )
    expect(
      generalReuseRequest({ result: 'PROOF_GENERATION', cairoVersion: 'cairo1' }, factConditions).settings.cairoVersion,
    ).toBe('cairo1')
  })
})

describe('findReusableQuery', () => {
  let inspection: PieInspection
  beforeAll(async () => {
    inspection = await inspectPie(FIXTURE, { sha256: false })
  })
  const matching = (id: string, createdAt: string): QueryRecordWithStatus =>
    ({
      id,
      status: 'DONE',
      result: 'PROOF_VERIFICATION_ON_L2',
      layout: 'auto',
      isFactMocked: false,
      programHash: inspection.programHash,
      sharpFactHash: inspection.sharpFactHash,
      integrityFactHash: inspection.integrityFactHash,
      createdAt,
    }) as QueryRecordWithStatus
  const other = (index: number): QueryRecordWithStatus =>
    ({ ...matching(`other-${index}`, '2026-01-01T00:00:00.000Z'), layout: 'small' }) as QueryRecordWithStatus
  /** A list of `total` queries, newest first, with `found` (if any) at position `at`. */
  const lister = (total: number, found?: { at: number; record: QueryRecordWithStatus }) => {
    const calls: { limit: number | undefined; offset: number | undefined }[] = []
    const client = {
      listQueries: async (options: { limit?: number; offset?: number }) => {
        calls.push({ limit: options.limit, offset: options.offset })
        const offset = options.offset ?? 0
        const page = Array.from({ length: Math.max(0, Math.min(options.limit ?? 10, total - offset)) }, (_, index) =>
          found && offset + index === found.at ? found.record : other(offset + index),
        )
        return { provingQueries: page, total }
      },
    } as unknown as ProvingClient
    return { client, calls }
  }
  const l2 = l2ReuseRequest({ layout: 'auto', prover: 'svc_sharp', mockFactHash: false, allowMockedFact: false })

  it('reads at most 50 pages of 100, newest first, and stops there', async () => {
    const { client, calls } = lister(10_000, {
      at: MAX_INDEXED_QUERIES,
      record: matching('too-old', '2026-01-01T00:00:00.000Z'),
    })
    const found = await findReusableQuery(client, inspection, l2, { logger: silentLogger })
    expect(found.reused).toBe(false)
    const pages = MAX_INDEXED_QUERIES / QUERY_PAGE_SIZE
    expect(calls).toEqual(
      Array.from({ length: pages }, (_, page) => ({ limit: QUERY_PAGE_SIZE, offset: page * QUERY_PAGE_SIZE })),
    )
    expect(found.scanned).toBe(MAX_INDEXED_QUERIES)
    expect(found.reused === false && found.reason).toMatch(/at most 5000 are read/)
  })

  it('one index for many lookups: a second PIE reads no page the first read', async () => {
    const { client, calls } = lister(1_000)
    const queries = new KeyQueries(client)
    for (let pie = 0; pie < 20; pie++) {
      expect((await findReusableQuery(client, inspection, l2, { logger: silentLogger, queries })).reused).toBe(false)
    }
    expect(calls).toHaveLength(10)
  })

  it("takes the matching query within the bound, comparing its facts with the PIE's", async () => {
    const { client, calls } = lister(1000, { at: 250, record: matching('q-found', '2026-11-27T10:00:00.000Z') })
    const found = await findReusableQuery(client, inspection, l2, { logger: silentLogger })
    expect(found).toMatchObject({ reused: true, record: { id: 'q-found' }, factCheck: { ok: true } })
    expect(calls).toHaveLength(3)
  })

  it("never takes a query whose facts are not the PIE's, however well it matches otherwise", async () => {
    const forged = {
      ...matching('forged', '2026-11-27T10:00:00.000Z'),
      sharpFactHash: '0x1234',
    } as QueryRecordWithStatus
    const { client } = lister(3, { at: 0, record: forged })
    expect(await findReusableQuery(client, inspection, l2, { logger: silentLogger })).toMatchObject({
      reused: false,
      scanned: 3,
    })
  })

  it('a list that cannot be read: no reuse, the reason kept for one line after the submission (nothing logged here)', async () => {
    const warnings: string[] = []
    const client = {
      listQueries: async () => Promise.reject(new Error('connection reset')),
    } as unknown as ProvingClient
    const found = await findReusableQuery(client, inspection, l2, {
      logger: { ...silentLogger, warn: (line: string) => warnings.push(line) },
    })
    expect(found).toMatchObject({ reused: false, unreadable: true })
    expect(found.reused === false && found.reason).toMatch(/could not be listed \(connection reset\)/)
    expect(warnings).toEqual([])
  })
})
