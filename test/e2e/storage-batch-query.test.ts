import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { ServiceError } from '../../src/core/errors.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import type { BatchQueryBody } from '../../src/schemas/storage-proof.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, OTHER_KEY, startTestEmulator, type TestEmulator, useEmulator } from '../helpers/emulator.ts'

const ACCOUNT = '0x75cec1db9dceb703200eaa6595f66885c962b920'

function body(): BatchQueryBody {
  return {
    destinationChainId: '11155111',
    fee: '0',
    data: {
      '11155111': {
        'block:5382810': { accounts: { [ACCOUNT]: { props: ['BALANCE', 'NONCE'], slots: ['0x0'] } } },
        'block:5382811': { accounts: { [ACCOUNT]: { props: ['BALANCE'], slots: [] } } },
      },
    },
  }
}

const submit = (emulator: TestEmulator, json: unknown, apiKey: string | undefined = KEY) =>
  emulator.call('POST', '/batch-query', { json, headers: apiKey ? { 'api-key': apiKey } : {} })
const status = (emulator: TestEmulator, id: string, apiKey: string | undefined = KEY) =>
  emulator.call('GET', `/batch-query/${id}/status`, { headers: apiKey ? { 'api-key': apiKey } : {} })

describe('POST /batch-query and its status (emulator, raw HTTP)', () => {
  const emulator = useEmulator({ clock: simulatedClock(Date.parse('2025-06-01T12:00:00Z')) })

  it('200 { internalId }, then RECEIVED -> IN_PROGRESS -> DONE with the configured timing', async () => {
    await emulator().control('PUT', '/storage-proof/timing', { receivedMs: 1_000, inProgressMs: 5_000 })
    const answer = await submit(emulator(), body())
    expect(answer.status).toBe(200)
    expect(Object.keys(answer.body)).toEqual(['internalId'])
    const id = answer.body.internalId as string
    const seen = []
    for (const advance of [0, 999, 1, 4_999, 1]) {
      emulator().clock.advance(advance)
      const reply = await status(emulator(), id)
      expect(reply.status).toBe(200)
      seen.push(reply.body.queryStatus)
    }
    expect(seen).toEqual(['RECEIVED', 'RECEIVED', 'IN_PROGRESS', 'IN_PROGRESS', 'DONE'])
  })

  it("401 { error } without a key, and for another key's query the id is not found (404)", async () => {
    const missing = await submit(emulator(), body(), '')
    expect(missing.status).toBe(401)
    expect(typeof missing.body.error).toBe('string')
    const id = (await submit(emulator(), body())).body.internalId
    expect((await status(emulator(), id, '')).status).toBe(401)
    expect(await status(emulator(), id, OTHER_KEY)).toMatchObject({
      status: 404,
      body: { error: 'BATCH_QUERY_NOT_FOUND' },
    })
    expect((await status(emulator(), 'no-such-id')).status).toBe(404)
    expect((await status(emulator(), 'constructor')).status).toBe(404)
  })

  it.each([
    [
      'a missing fee',
      (() => {
        const b: Record<string, unknown> = body()
        delete b.fee
        return b
      })(),
      /fee/,
    ],
    ['a hex chain id', { ...body(), destinationChainId: '0xaa36a7' }, /destinationChainId: must be a decimal chain id/],
    ['a bad block key', { ...body(), data: { '1': { 'block-1': { accounts: {} } } } }, /must be "block:<number>"/],
    [
      'a bad address',
      { ...body(), data: { '1': { 'block:1': { accounts: { '0xZZ12': { props: ['BALANCE'], slots: [] } } } } } },
      /0x-prefixed hex address/,
    ],
    [
      'props not an array',
      { ...body(), data: { '1': { 'block:1': { accounts: { [ACCOUNT]: { props: 'BALANCE', slots: [] } } } } } },
      /props/,
    ],
    ['an array body', [body()], /expected object/i],
  ])('400 { error } naming the problem: %s', async (_name, json, message) => {
    const answer = await submit(emulator(), json)
    expect(answer.status).toBe(400)
    expect(Object.keys(answer.body)).toContain('error')
    expect(answer.body.error).toMatch(message)
  })

  it('400 for a body that is not JSON', async () => {
    const answer = await emulator().call('POST', '/batch-query', {
      body: '{"destinationChainId": ',
      headers: { 'api-key': KEY, 'content-type': 'application/json' },
    })
    expect(answer.status).toBe(400)
    expect(typeof answer.body.error).toBe('string')
  })

  it('a timing change applies to new batch queries only', async () => {
    await emulator().control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 10_000 })
    const before = (await submit(emulator(), body())).body.internalId
    await emulator().control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 1_000 })
    const after = (await submit(emulator(), body())).body.internalId
    emulator().clock.advance(1_000)
    expect((await status(emulator(), before)).body.queryStatus).toBe('IN_PROGRESS')
    expect((await status(emulator(), after)).body.queryStatus).toBe('DONE')
    expect(await emulator().control('GET', '/storage-proof/timing')).toEqual({
      timing: { receivedMs: 0, inProgressMs: 1_000 },
    })
  })

  it('the control API fails a running batch query (409 once it has ended) and lists them', async () => {
    const id = (await submit(emulator(), body())).body.internalId
    expect(await emulator().control('POST', `/storage-proof/batch-queries/${id}/fail`, { reason: 'RPC down' })).toEqual(
      {
        internalId: id,
        queryStatus: 'FAILED',
      },
    )
    expect((await status(emulator(), id)).body.queryStatus).toBe('FAILED')
    expect(
      (await emulator().call('POST', `/_emulator/storage-proof/batch-queries/${id}/fail`, { json: {} })).status,
    ).toBe(409)
    const listed = await emulator().control('GET', '/storage-proof/batch-queries')
    expect(listed.batchQueries).toMatchObject([
      { internalId: id, queryStatus: 'FAILED', destinationChainId: '11155111', chains: ['11155111'] },
    ])
    expect(JSON.stringify(listed)).not.toContain(KEY)
  })

  it('a reset forgets batch queries and their timing', async () => {
    await emulator().control('PUT', '/storage-proof/timing', { inProgressMs: 1 })
    const id = (await submit(emulator(), body())).body.internalId
    await emulator().control('POST', '/reset')
    expect((await status(emulator(), id)).status).toBe(404)
    expect((await emulator().control('GET', '/storage-proof/timing')).timing).toEqual({
      receivedMs: 300,
      inProgressMs: 600,
    })
  })
})

describe('state on disk', () => {
  it('a restarted emulator on the same stateDir still knows its batch queries and their timing', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'storage-state-'))
    try {
      const first = await startTestEmulator({ stateDir })
      await first.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 3_600_000 })
      const id = (await submit(first, body())).body.internalId
      await first.close()
      const second = await startTestEmulator({ stateDir })
      try {
        expect((await status(second, id)).body.queryStatus).toBe('IN_PROGRESS')
        expect((await second.control('GET', '/storage-proof/timing')).timing.inProgressMs).toBe(3_600_000)
      } finally {
        await second.close()
      }
    } finally {
      await rm(stateDir, { recursive: true, force: true })
    }
  })
})

describe('an allow-list', () => {
  const emulator = useEmulator({ apiKeys: [KEY] })

  it('a key that is not on it is refused with 401', async () => {
    expect((await submit(emulator(), body(), OTHER_KEY)).status).toBe(401)
    expect((await submit(emulator(), body(), KEY)).status).toBe(200)
  })
})

describe('StorageProofClient against the emulator', () => {
  const emulator = useEmulator({ clock: simulatedClock(Date.parse('2025-06-01T12:00:00Z')) })
  const client = (apiKey = KEY) =>
    new StorageProofClient({
      baseUrl: emulator().url,
      apiKey,
      dispatcher: emulator().agent,
      clock: clientClockFor(emulator().clock),
    })

  it('submits and waits: a 20-minute batch query ends DONE in a few polls of simulated time', async () => {
    await emulator().control('PUT', '/storage-proof/timing', { receivedMs: 60_000, inProgressMs: 20 * 60_000 })
    const storage = client()
    const { internalId } = await storage.submitBatchQuery(body())
    const statuses: string[] = []
    const result = await storage.waitForBatchQuery(internalId, {
      onProgress: (progress) => statuses.push(progress.queryStatus),
    })
    expect(result).toEqual({ internalId, queryStatus: 'DONE' })
    expect(statuses).toEqual(['RECEIVED', 'IN_PROGRESS', 'DONE'])
    const polls = emulator()
      .requests()
      .filter((request) => request.path.endsWith('/status'))
    // interval = elapsed / 8 (1 s to 30 s): about 60 polls for 21 minutes, not 1,260.
    expect(polls.length).toBeLessThan(90)
  })

  it('FAILED is returned as the result', async () => {
    await emulator().control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 60_000 })
    const storage = client()
    const { internalId } = await storage.submitBatchQuery(body())
    await emulator().control('POST', `/storage-proof/batch-queries/${internalId}/fail`, {})
    expect((await storage.waitForBatchQuery(internalId)).queryStatus).toBe('FAILED')
  })

  it("the emulator's 400 reaches the caller as a ServiceError when the client's own check is bypassed", async () => {
    const answer = await client()
      .http.request({
        method: 'POST',
        path: '/batch-query',
        headers: { 'api-key': KEY },
        json: { ...body(), fee: '-1' },
      })
      .catch((error: unknown) => error)
    expect(answer).toBeInstanceOf(ServiceError)
    expect((answer as ServiceError).status).toBe(400)
  })
})

describe('proving storage query / status (CLI against the emulator)', () => {
  let emulator: TestEmulator
  let dir: string
  let queryFile: string
  let badFile: string
  const API_KEY = 'pk_cli_storage_9f8e7d6c5b'

  beforeAll(async () => {
    emulator = await startTestEmulator()
    await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 100, inProgressMs: 200 })
    dir = await mkdtemp(join(tmpdir(), 'storage-cli-'))
    queryFile = join(dir, 'query.json')
    badFile = join(dir, 'bad.json')
    await writeFile(queryFile, JSON.stringify(body()))
    await writeFile(badFile, JSON.stringify({ ...body(), fee: 'lots' }))
  })
  afterAll(async () => {
    await emulator.close()
    await rm(dir, { recursive: true, force: true })
  })
  afterEach(async () => {
    await emulator.call('DELETE', '/_emulator/requests')
  })

  const env = () => ({ PROVING_STORAGE_PROOF_URL: emulator.url, PROVING_API_KEY: API_KEY })

  it('query --json prints { internalId }; status --json follows it', async () => {
    const submitted = await runCli(['storage', 'query', queryFile, '--json'], { env: env() })
    expect(submitted.code).toBe(0)
    expect(submitted.stderr).toBe('')
    const output = JSON.parse(submitted.stdout)
    expect(Object.keys(output)).toEqual(['internalId'])
    const shown = await runCli(['storage', 'status', output.internalId, '--json'], { env: env() })
    expect(shown.code).toBe(0)
    expect(JSON.parse(shown.stdout)).toEqual({
      internalId: output.internalId,
      queryStatus: expect.stringMatching(/RECEIVED|IN_PROGRESS|DONE/),
    })
  })

  it('query --wait ends DONE with exit 0, a progress line per status on stderr', async () => {
    const result = await runCli(['storage', 'query', queryFile, '--wait'], { env: env() })
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/batch query \S+: DONE/)
    expect(result.stderr).toMatch(/Submitted: batch query/)
    expect(result.stderr).toMatch(/DONE/)
    expect(result.stdout + result.stderr).not.toContain(API_KEY)
  })

  it('the flag takes precedence over the environment variable; the query can come from stdin', async () => {
    const { Readable } = await import('node:stream')
    const result = await runCli(['storage', 'query', '-', '--json', '--storage-proof-url', emulator.url], {
      env: { PROVING_STORAGE_PROOF_URL: 'http://127.0.0.1:1', PROVING_API_KEY: API_KEY },
      stdin: Readable.from([JSON.stringify(body())]),
    })
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).internalId).toMatch(/\S/)
  })

  it('status --wait of a failed batch query exits 1', async () => {
    const { internalId } = JSON.parse((await runCli(['storage', 'query', queryFile, '--json'], { env: env() })).stdout)
    await emulator.control('POST', `/storage-proof/batch-queries/${internalId}/fail`, {})
    const result = await runCli(['storage', 'status', internalId, '--wait', '--json'], { env: env() })
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stdout)).toEqual({ internalId, queryStatus: 'FAILED' })
  })

  it('a malformed query file exits 2 naming the problem, and nothing is sent', async () => {
    const result = await runCli(['storage', 'query', badFile], { env: env() })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/fee: must be a numeric string/)
    expect(emulator.requests().filter((request) => request.path === '/batch-query')).toHaveLength(0)
  })

  it('no address or no key: exit 2 with the flag and variable to set', async () => {
    const noUrl = await runCli(['storage', 'query', queryFile], { env: { PROVING_API_KEY: API_KEY } })
    expect(noUrl.code).toBe(2)
    expect(noUrl.stderr).toMatch(/--storage-proof-url <url> or set PROVING_STORAGE_PROOF_URL/)
    const noKey = await runCli(['storage', 'status', 'x'], { env: { PROVING_STORAGE_PROOF_URL: emulator.url } })
    expect(noKey.code).toBe(2)
    expect(noKey.stderr).toMatch(/PROVING_API_KEY/)
  })

  it('an unknown id is a 404: exit 2', async () => {
    const result = await runCli(['storage', 'status', 'no-such-id'], { env: env() })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/404/)
  })
})
