import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Agent, request } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import {
  FIXTURE_PIE,
  KEY,
  startTestEmulator,
  submitFixturePie,
  type TestEmulator,
  useEmulator,
} from '../helpers/emulator.ts'

const HOUR = 3_600_000
const START = Date.parse('2030-01-01T00:00:00.000Z')

describe('simulated clock', () => {
  let emulator: TestEmulator
  const clock = () => emulator.clock
  beforeEach(async () => {
    emulator = await startTestEmulator({ clock: simulatedClock(START), timing: { receivedMs: 60_000, stepMs: HOUR } })
  })
  afterEach(async () => {
    await emulator.close()
  })
  const read = async (id: string) =>
    (await emulator.call('GET', `/docs/proving-query/${id}`, { headers: { 'api-key': KEY } })).body.provingQuery

  it('moves a query through its steps as time is advanced, with no timers', async () => {
    const id = await submitFixturePie(emulator)
    expect(await read(id)).toMatchObject({
      status: 'RECEIVED',
      step: null,
      steps: [],
      createdAt: '2030-01-01T00:00:00.000Z',
    })
    clock().advance(59_999)
    expect((await read(id)).status).toBe('RECEIVED')
    clock().advance(1)
    expect(await read(id)).toMatchObject({
      status: 'IN_PROGRESS',
      step: 'TRACE_GENERATION',
      steps: ['TRACE_GENERATION'],
    })
    clock().advance(HOUR)
    expect(await read(id)).toMatchObject({
      status: 'IN_PROGRESS',
      step: 'PROOF_GENERATION',
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION'],
    })
    const advanced = await emulator.control('POST', '/clock/advance', { ms: 2 * HOUR })
    expect(advanced.now).toBe('2030-01-01T03:01:00.000Z')
    expect(await read(id)).toMatchObject({
      status: 'DONE',
      step: 'PROOF_VERIFICATION_ON_L2',
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L2'],
      completedAt: '2030-01-01T03:01:00.000Z',
    })
  })

  it('lets a client wait hours in milliseconds (its sleeps advance the emulator clock)', async () => {
    const id = await submitFixturePie(emulator)
    const client = emulator.client(KEY, { clock: clientClockFor(clock()) })
    const seen: string[] = []
    // Three simulated hours pass within the test's timeout only if the client's sleeps advance
    // the emulator's clock (no wall-time bound here: that would judge the machine's speed).
    const { provingQuery } = await client.waitForQuery(id, {
      timeoutMs: 24 * HOUR,
      onProgress: ({ status, step }) => seen.push(`${status}/${step}`),
    })
    expect(provingQuery.status).toBe('DONE')
    expect(clock().now() - START).toBeGreaterThanOrEqual(3 * HOUR + 60_000)
    expect(seen).toEqual([
      'RECEIVED/null',
      'IN_PROGRESS/TRACE_GENERATION',
      'IN_PROGRESS/PROOF_GENERATION',
      'IN_PROGRESS/PROOF_VERIFICATION_ON_L2',
      'DONE/PROOF_VERIFICATION_ON_L2',
    ])
    // The poll interval grows with elapsed time: far fewer requests than hours / 1 s.
    const polls = emulator.requests().filter((entry) => entry.path.startsWith('/docs/proving-query/'))
    expect(polls.length).toBeLessThan(500)
  })

  it('fails a query at a chosen step; fail/complete refuse finished or passed queries', async () => {
    const id = await submitFixturePie(emulator)
    expect(
      await emulator.call('POST', `/_emulator/queries/${id}/fail`, { json: { retriable: true, step: 'NO_SUCH_STEP' } }),
    ).toMatchObject({ status: 400 })
    await emulator.control('POST', `/queries/${id}/fail`, { retriable: true, step: 'PROOF_GENERATION' })
    clock().advance(60_000 + HOUR)
    expect((await read(id)).status).toBe('IN_PROGRESS')
    clock().advance(HOUR)
    const failed = await read(id)
    expect(failed).toMatchObject({
      status: 'FAILED',
      step: 'PROOF_GENERATION',
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION'],
      completedAt: null,
    })
    expect(failed.errorReason).toMatch(/PROOF_GENERATION/)
    expect(await emulator.call('POST', `/_emulator/queries/${id}/fail`, { json: { retriable: false } })).toMatchObject({
      status: 409,
    })
    expect(await emulator.call('POST', `/_emulator/queries/${id}/complete`)).toMatchObject({ status: 409 })
    expect(await emulator.call('POST', '/_emulator/queries/unknown/complete')).toMatchObject({
      status: 404,
      body: { message: 'PROVING_QUERY_NOT_FOUND' },
    })

    const second = await submitFixturePie(emulator)
    clock().advance(60_000 + HOUR)
    const passed = await emulator.call('POST', `/_emulator/queries/${second}/fail`, {
      json: { retriable: true, step: 'TRACE_GENERATION' },
    })
    expect(passed.status).toBe(409)
  })

  it('fails a query now, wherever it stands, with the given reason', async () => {
    const id = await submitFixturePie(emulator)
    clock().advance(60_000)
    const answer = await emulator.control('POST', `/queries/${id}/fail`, { retriable: false, reason: 'out of memory' })
    expect(answer.provingQuery).toMatchObject({
      status: 'FAILED',
      step: 'TRACE_GENERATION',
      errorReason: 'out of memory',
    })
    clock().advance(10 * HOUR)
    expect((await read(id)).status).toBe('FAILED')
  })

  it('next-query plans apply to the next submissions, in order', async () => {
    await emulator.control('POST', '/next-query', { outcome: 'done' })
    await emulator.control('POST', '/next-query', {
      outcome: 'fail',
      retriable: true,
      atStep: 'TRACE_GENERATION',
      reason: 'flaky',
    })
    const instant = await submitFixturePie(emulator)
    const failing = await submitFixturePie(emulator)
    const normal = await submitFixturePie(emulator)
    expect((await read(instant)).status).toBe('DONE')
    clock().advance(60_000 + HOUR)
    expect(await read(failing)).toMatchObject({ status: 'FAILED', errorReason: 'flaky', step: 'TRACE_GENERATION' })
    expect((await read(normal)).status).toBe('IN_PROGRESS')
    expect(await emulator.call('POST', '/_emulator/next-query', { json: { outcome: 'maybe' } })).toMatchObject({
      status: 400,
    })
  })

  it('a timing change applies to new runs; running queries keep theirs', async () => {
    const before = await submitFixturePie(emulator)
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 1 })
    const after = await submitFixturePie(emulator)
    clock().advance(10)
    expect((await read(after)).status).toBe('DONE')
    expect((await read(before)).status).toBe('RECEIVED')
    expect(await emulator.call('PUT', '/_emulator/timing', { json: { stepMs: -1 } })).toMatchObject({ status: 400 })
  })
})

describe('control API', () => {
  const emulator = useEmulator({ timing: { receivedMs: 1_000, stepMs: 1_000 } })

  it('refuses to advance a real clock (409)', async () => {
    expect(await emulator().call('POST', '/_emulator/clock/advance', { json: { ms: 1000 } })).toMatchObject({
      status: 409,
    })
  })

  it('GET /_emulator/state summarises queries and buckets; reset forgets everything', async () => {
    const id = await submitFixturePie(emulator())
    await emulator().call('POST', '/buckets', { headers: { 'api-key': KEY }, json: { aggregatorVersion: 'v1' } })
    await emulator().control('PUT', '/timing', { receivedMs: 5, stepMs: 5 })
    const state = await emulator().control('GET', '/state')
    expect(state).toMatchObject({
      clock: 'real',
      persistent: false,
      timing: { receivedMs: 5, stepMs: 5 },
      queries: [{ id, status: 'RECEIVED', endpoint: 'l2-pie', retryCount: 0 }],
      buckets: [{ status: 'OPEN', leaves: 0 }],
    })
    expect(await readdir(emulator().uploadsDir)).toContain(id)

    await emulator().control('POST', '/reset')
    const empty = await emulator().control('GET', '/state')
    expect(empty).toMatchObject({ queries: [], buckets: [], timing: { receivedMs: 1_000, stepMs: 1_000 } })
    expect(await readdir(emulator().uploadsDir)).toEqual([])
    expect((await emulator().control('GET', '/requests')).requests).toEqual([])
  })
})

describe('state kept on disk', () => {
  let stateDir: string
  beforeEach(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'emulator-state-'))
  })
  afterEach(async () => {
    await rm(stateDir, { recursive: true, force: true })
  })

  it('a restarted emulator still knows the query, its upload and its bucket, and the query finishes', async () => {
    const timing = { receivedMs: 200, stepMs: 200 }
    const first = await startTestEmulator({ stateDir, timing })
    const id = await submitFixturePie(first)
    const { provingBucket } = (
      await first.call('POST', '/buckets', { headers: { 'api-key': KEY }, json: { aggregatorVersion: 'v1' } })
    ).body
    await first.close()
    const saved = JSON.parse(await readFile(join(stateDir, 'state.json'), 'utf8'))
    expect(Object.keys(saved.queries)).toEqual([id])
    expect(JSON.stringify(saved)).not.toContain(KEY)

    const second = await startTestEmulator({ stateDir, timing })
    try {
      expect(second.port).not.toBe(0)
      const { provingQuery } = await second.client().waitForQuery(id, { schedule: { minIntervalMs: 50 } })
      expect(provingQuery.status).toBe('DONE')
      const { metadataUrls } = (await second.call('GET', `/proving-query/${id}`)).body
      const pie = await request(metadataUrls[1])
      expect(Buffer.from(await pie.body.arrayBuffer()).equals(await readFile(FIXTURE_PIE))).toBe(true)
      const closed = await second.call('POST', '/buckets/close', {
        headers: { 'api-key': KEY },
        query: { bucketId: provingBucket.id },
      })
      expect(closed).toMatchObject({ status: 200, body: { provingBucket: { id: provingBucket.id } } })
    } finally {
      await second.close()
    }
  })

  it('a restart mid-wait: the client keeps polling and sees the query finish', async () => {
    const timing = { receivedMs: 300, stepMs: 300 }
    const first = await startTestEmulator({ stateDir, timing })
    const id = await submitFixturePie(first)
    const port = first.port
    // The client's own connection pool: it outlives the first emulator.
    const agent = new Agent({ keepAliveTimeout: 4_000 })
    const client = new ProvingClient({
      baseUrl: first.url,
      apiKey: KEY,
      dispatcher: agent,
      retry: { maxAttempts: 10, baseDelayMs: 50 },
    })
    const waiting = client.waitForQuery(id, { schedule: { minIntervalMs: 100 } })
    await new Promise((resolve) => setTimeout(resolve, 250))
    await first.close()
    const second = await startTestEmulator({ stateDir, timing, port })
    try {
      const { provingQuery } = await waiting
      expect(provingQuery.status).toBe('DONE')
    } finally {
      await second.close()
      await agent.close()
    }
  })
})
