import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { requestBudgetFor } from '../../../src/core/budget.ts'
import { withBound } from '../../../src/core/deadline.ts'
import { RequestTimeoutError } from '../../../src/core/errors.ts'
import { DEADLINE_CODE } from '../../../src/core/http/failures.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { inspectPie, type PieInspection } from '../../../src/pie/index.ts'
import {
  findReusableQuery,
  type InFlightOptions,
  l2ReuseRequest,
  RerunNothingSentError,
  type ReuseRequest,
} from '../../../src/pipeline/reuse.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../../helpers/emulator.ts'
import { EXAMPLE_PIE } from '../../helpers/example-pie.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

/**
 * A re-run (an earlier attempt stopped after it may have paid, its journal gone) against the
 * emulator over HTTP: the queries of this PIE's program it left running are waited for and
 * judged, a FAILED one retried and judged, before anything is paid again; what cannot be
 * followed to its end is a refusal that names what to follow, never a second payment.
 */

let emulator: TestEmulator
let inspection: PieInspection

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY] })
  inspection = await inspectPie(EXAMPLE_PIE, { sha256: false })
})
afterAll(() => emulator.close())
beforeEach(async () => {
  await emulator.control('POST', '/reset')
  // Running until a test ends them (complete, fail) or a step of 60 s passes.
  await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 60_000 })
})

const L2 = l2ReuseRequest({ layout: 'auto', prover: 'svc_sharp', mockFactHash: false, allowMockedFact: false })
const IN_FLIGHT: InFlightOptions = { timeoutMs: 30_000, sinceMs: 3_600_000 }

/** `onInfo`: called with each line, so a test acts when the re-run says it waits (never on a timer). */
function recorder(onInfo?: (line: string) => void): Logger & { infos: string[] } {
  const infos: string[] = []
  const info = (line: string) => {
    infos.push(line)
    onInfo?.(line)
  }
  return { infos, debug: () => {}, info, warn: () => {}, error: () => {} }
}

function find(
  options: {
    request?: ReuseRequest
    inFlight?: InFlightOptions | undefined
    logger?: Logger
    signal?: AbortSignal
  } = {},
) {
  return findReusableQuery(emulator.client(), inspection, options.request ?? L2, {
    logger: options.logger ?? recorder(),
    inFlight: 'inFlight' in options ? options.inFlight : IN_FLIGHT,
    signal: options.signal,
  })
}

/** Ends a running query now: DONE (with the PIE's facts, unless told otherwise) or FAILED. */
const complete = (id: string) => emulator.control('POST', `/queries/${id}/complete`)
const fail = (id: string, retriable: boolean) => emulator.control('POST', `/queries/${id}/fail`, { retriable })
const otherFacts = (id: string) =>
  emulator.control('POST', `/queries/${id}/record`, { sharpFactHash: '0x1234', integrityFactHash: '0x5678' })

describe("a re-run that finds this PIE's program still running", () => {
  it("waits for the query and takes it once it ends DONE with the PIE's facts; says so first", async () => {
    const id = await submitFixturePie(emulator)
    const logger = recorder(() => void complete(id))
    expect(await find({ logger })).toMatchObject({
      reused: true,
      record: { id, status: 'DONE' },
      factCheck: { ok: true },
      scanned: 1,
    })
    expect(logger.infos).toEqual([
      `This is a re-run: 1 query of this key with this PIE's program and settings was still running (${id}); waiting for it to end to compare the facts before paying again.`,
    ])
  })

  it('none ends proving it: submitted, and the reason says they were waited for', async () => {
    const a = await submitFixturePie(emulator)
    const b = await submitFixturePie(emulator)
    await otherFacts(a)
    await otherFacts(b)
    const logger = recorder(() => void Promise.all([complete(a), fail(b, false)]))
    expect(await find({ logger })).toEqual({
      reused: false,
      scanned: 2,
      reason:
        'none of the 2 queries of this key proves it; the 2 still running when this re-run began ended without proving it',
    })
    expect(logger.infos).toEqual([
      expect.stringMatching(
        new RegExp(
          `^This is a re-run: 2 queries of this key .* were still running \\(${b}, ${a}\\); waiting for them to end`,
        ),
      ),
    ])
  })

  it('waits for the newest candidates only, as many as its limit', async () => {
    const ids = [await submitFixturePie(emulator), await submitFixturePie(emulator), await submitFixturePie(emulator)]
    for (const id of ids) await otherFacts(id)
    const logger = recorder(() => void Promise.all(ids.map(complete)))
    expect(await find({ logger, inFlight: { ...IN_FLIGHT, limit: 2 } })).toMatchObject({
      reused: false,
      reason: expect.stringMatching(/the 2 still running when this re-run began ended without proving it$/),
    })
    expect(logger.infos[0]).toContain(`(${ids[2]}, ${ids[1]})`)
  })

  it('one that cannot be followed to its end: refused, nothing submitted, naming the query to follow', async () => {
    const id = await submitFixturePie(emulator)
    const error = await find({ inFlight: { ...IN_FLIGHT, timeoutMs: 100 } }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RerunNothingSentError)
    const refusal = error as RerunNothingSentError
    expect(refusal.shortMessage).toBe(
      `This re-run could not follow a running query of this PIE's program to the end (${id}): nothing was submitted.`,
    )
    expect(refusal.metaMessages).toEqual([
      expect.stringMatching(new RegExp(`^Following ${id} failed: Timed out `)),
      "One may be this PIE's, submitted by an earlier attempt: submitting again could pay twice.",
    ])
    expect(refusal.nextStep).toEqual({ kind: 'follow-candidates', ids: [id] })
    expect(refusal.name).toBe('RerunNothingSentError')
    // Two that cannot be followed: both named.
    const other = await submitFixturePie(emulator)
    const both = (await find({ inFlight: { ...IN_FLIGHT, timeoutMs: 100 } }).catch(
      (caught: unknown) => caught,
    )) as RerunNothingSentError
    expect(both.shortMessage).toMatch(
      new RegExp(
        `^This re-run could not follow 2 running queries of this PIE's program to the end \\((${other}, ${id}|${id}, ${other})\\)`,
      ),
    )
  })

  it('a list that cannot be read on a re-run: refused (a query it left running may be there), saying to look for it', async () => {
    await emulator.control('POST', '/faults', {
      method: 'GET',
      path: '/docs/proving-queries',
      status: 401,
      body: { error: 'UNAUTHORIZED' },
      times: 10,
    })
    const error = (await find().catch((caught: unknown) => caught)) as RerunNothingSentError
    expect(error).toBeInstanceOf(RerunNothingSentError)
    expect(error.shortMessage).toMatch(
      /^This re-run could not list this key's queries to look for one an earlier attempt left running \(.+\); nothing was submitted\.$/,
    )
    expect(error.nextStep).toEqual({ kind: 'look-for-query', thenSubmitAnew: true })
  })

  it('cancelled while listing: the cancellation, not a list that could not be read', async () => {
    const controller = new AbortController()
    const client = {
      listQueries: async () => {
        controller.abort(new Error('Ctrl-C'))
        throw new Error('socket closed')
      },
    } as never
    await expect(
      findReusableQuery(client, inspection, L2, { logger: recorder(), signal: controller.signal }),
    ).rejects.toThrow('socket closed')
  })

  it('cancelled while it waits: the cancellation, not a refusal', async () => {
    await submitFixturePie(emulator)
    const controller = new AbortController()
    const reason = new Error('Ctrl-C')
    const found = find({ signal: controller.signal, logger: recorder(() => controller.abort(reason)) })
    await expect(found).rejects.toBe(reason)
  })

  it("only this submission's result kind and settings, created within the window, of this PIE's program are candidates", async () => {
    // Listed as a service may list them (crafted: the emulator shows no program hash before DONE),
    // newest first; a plan names the candidates without waiting for them.
    const now = Date.parse('2026-11-28T00:00:00.000Z')
    const at = (ms: number) => new Date(now - ms).toISOString()
    const pieHash = `0x00${BigInt(inspection.programHashes.pedersen).toString(16).toUpperCase()}`
    const running = (id: string, fields: Record<string, unknown> = {}) => ({
      id,
      status: 'IN_PROGRESS',
      result: 'PROOF_VERIFICATION_ON_L2',
      layout: 'auto',
      createdAt: at(60_000),
      ...fields,
    })
    const listed = [
      running('other-layout', { layout: 'small' }),
      running('other-result', { result: 'PROOF_GENERATION' }),
      running('other-program', { programHash: '0x1234' }),
      running('unreadable-program', { programHash: 'not a hash' }),
      running('too-old', { createdAt: at(3_600_001) }),
      running('undated', { createdAt: null }),
      running('received', { status: 'RECEIVED', programHash: '' }),
      running('this-program', { programHash: pieHash }),
      running('at-the-edge', { createdAt: at(3_600_000) }),
      running('failed-other-facts', { status: 'FAILED', sharpFactHash: '0x1234' }),
      running('failed-other-integrity', { status: 'FAILED', integrityFactHash: '0x5678' }),
      running('failed-own-facts', { status: 'FAILED', sharpFactHash: inspection.sharpFactHash, integrityFactHash: '' }),
      running('failed-older', { status: 'FAILED', createdAt: at(120_000) }),
    ]
    const client = { listQueries: async () => ({ provingQueries: listed, total: listed.length }) } as never
    const inFlight = { ...IN_FLIGHT, now: () => now }
    const named = await findReusableQuery(client, inspection, L2, { logger: recorder(), inFlight, dryRun: true })
    expect(named).toMatchObject({
      reused: false,
      scanned: listed.length,
      running: ['received', 'this-program', 'at-the-edge'],
    })
    // Without running ones, the newest FAILED candidate is the one a run would retry.
    const failedOnly = listed.filter((record) => record.status !== 'IN_PROGRESS' && record.status !== 'RECEIVED')
    const failedClient = {
      listQueries: async () => ({ provingQueries: failedOnly, total: failedOnly.length }),
    } as never
    expect(
      await findReusableQuery(failedClient, inspection, L2, { logger: recorder(), inFlight, dryRun: true }),
    ).toMatchObject({ reused: false, retriable: 'failed-own-facts' })
  })

  it('a first run (no re-run) never waits for a running query', async () => {
    await submitFixturePie(emulator)
    expect(await find({ inFlight: undefined })).toEqual({
      reused: false,
      scanned: 1,
      reason: 'none of the 1 queries of this key proves it',
    })
  })
})

describe("a re-run that finds this PIE's program FAILED", () => {
  it("retries it and takes it once it ends DONE with the PIE's facts", async () => {
    const id = await submitFixturePie(emulator)
    await fail(id, true)
    // The retry's run is quick (timing applies to runs started from now on).
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 20 })
    const logger = recorder()
    expect(await find({ logger })).toMatchObject({ reused: true, record: { id, status: 'DONE' }, scanned: 1 })
    expect((await emulator.client().getQuery(id)).provingQuery.retryCount).toBe(1)
    expect(logger.infos).toEqual([
      expect.stringMatching(
        new RegExp(
          `^This is a re-run: .*${id}[^.]* \\(it may be this PIE's: its facts are compared once it ends\\)\\.$`,
        ),
      ),
    ])
  })

  it('one that cannot be retried: submitted, saying why', async () => {
    const id = await submitFixturePie(emulator)
    await fail(id, false)
    const found = await find()
    expect(found).toMatchObject({ reused: false, scanned: 1 })
    expect(found.reused === false && found.reason).toMatch(
      new RegExp(
        `^none of the 1 queries of this key proves it; query ${id} of this PIE's program FAILED and cannot be retried \\(its error is not retriable \\(.+\\)\\)$`,
      ),
    )
  })

  it("retried, it ends with another PIE's facts: submitted, saying so", async () => {
    const id = await submitFixturePie(emulator)
    await fail(id, true)
    await otherFacts(id)
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 20 })
    // FAILED, its facts are not shown yet: it may be this PIE's.
    const found = await find()
    expect(found).toMatchObject({
      reused: false,
      reason: `none of the 1 queries of this key proves it; query ${id}, FAILED and retried, ended without proving it`,
    })
  })

  it('a retry whose outcome is unknown, or a retried query that cannot be followed: refused, naming the query', async () => {
    const id = await submitFixturePie(emulator)
    await fail(id, true)
    await emulator.control('POST', '/faults', {
      method: 'POST',
      path: `/proving-queries/${id}/retry`,
      status: 500,
      times: 1,
    })
    const lost = (await find().catch((caught: unknown) => caught)) as RerunNothingSentError
    expect(lost).toBeInstanceOf(RerunNothingSentError)
    expect(lost.shortMessage).toMatch(
      new RegExp(
        `^This re-run retried FAILED query ${id} of this PIE's program \\(.+\\); it may be this PIE's, submitted by an earlier attempt, so nothing was submitted\\.$`,
      ),
    )
    expect(lost.nextStep).toEqual({ kind: 'follow-candidates', ids: [id] })
    // The retry went through this time; its wait ends before the query does.
    const unfollowed = (await find({ inFlight: { ...IN_FLIGHT, timeoutMs: 100 } }).catch(
      (caught: unknown) => caught,
    )) as RerunNothingSentError
    expect(unfollowed).toBeInstanceOf(RerunNothingSentError)
    expect(unfollowed.shortMessage).toMatch(
      new RegExp(`^This re-run could not follow to its end the retried query ${id} of this PIE's program`),
    )
  })
})

describe('findReusableQuery, what it refuses before and while it lists', () => {
  it('a result kind without a fact proves nothing: not listed at all', async () => {
    const trace = { ...L2, result: 'TRACE_GENERATION' }
    expect(await find({ request: trace, inFlight: undefined })).toEqual({
      reused: false,
      scanned: 0,
      reason: "a TRACE_GENERATION query proves nothing: there is no fact to compare with the PIE's",
    })
  })

  it('an empty list: nothing was listed', async () => {
    expect(await find({ inFlight: undefined })).toEqual({
      reused: false,
      scanned: 0,
      reason: 'no query of this key was listed',
    })
  })

  it("the run's deadline while listing is the run's timeout, not a list that could not be read", async () => {
    const clock = new FakeClock(Date.parse('2100-01-01T00:00:00.000Z'))
    expect(await requestBudgetFor(clock).take(clock.now())).toBe(true)
    const client = emulator.client(KEY, { clock })
    const error = await withBound(clock.now() + 50, () =>
      findReusableQuery(client, inspection, L2, { logger: recorder() }),
    ).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(RequestTimeoutError)
    expect((error as RequestTimeoutError).code).toBe(DEADLINE_CODE)
  })
})
