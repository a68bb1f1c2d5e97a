import nock from 'nock'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  StorageProofClient,
  type BatchQueryProgress,
  type StorageProofClientOptions,
} from '../../../src/clients/storage-proof.ts'
import {
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  ServiceError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { VERSION } from '../../../src/core/version.ts'
import type { BatchQueryBody } from '../../../src/schemas/storage-proof.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { failure } from '../../helpers/failure.ts'

const BASE = 'https://storage.test'
const KEY = 'pk_storage_unit_7d41c0ffee'
const ACCOUNT = '0x75cec1db9dceb703200eaa6595f66885c962b920'

let clock: FakeClock
let logs: { level: string; message: string }[]

const logger: Logger = {
  debug: (message) => logs.push({ level: 'debug', message }),
  info: (message) => logs.push({ level: 'info', message }),
  warn: (message) => logs.push({ level: 'warn', message }),
  error: (message) => logs.push({ level: 'error', message }),
}

function body(): BatchQueryBody {
  return {
    destinationChainId: '11155111',
    fee: '0',
    data: { '11155111': { 'block:5382810': { accounts: { [ACCOUNT]: { props: ['BALANCE'], slots: [] } } } } },
  }
}

function client(apiKey: StorageProofClientOptions['apiKey'] = KEY) {
  return new StorageProofClient({ baseUrl: BASE, apiKey, logger, clock })
}

function service(reqheaders: Record<string, string> = { 'api-key': KEY }) {
  const scope = nock(BASE, { reqheaders: { 'user-agent': `proving-kit/${VERSION}`, ...reqheaders } })
  const seen: { method: string; path: string; body: string }[] = []
  scope.on('request', (request: Request, _interceptor: unknown, requestBody: string) => {
    seen.push({ method: request.method, path: new URL(request.url).pathname, body: requestBody })
  })
  return { scope, seen }
}

beforeEach(() => {
  nock.disableNetConnect()
  clock = new FakeClock()
  logs = []
})

afterEach(() => {
  nock.cleanAll()
  nock.enableNetConnect()
})

describe('submitBatchQuery', () => {
  it('POST /batch-query with the api-key header and the JSON body; internalId back', async () => {
    const { scope } = service()
    let received: unknown
    scope.post('/batch-query', (sent) => ((received = sent), true)).reply(200, { internalId: 'bq-1' })
    expect(await client().submitBatchQuery(body())).toEqual({ internalId: 'bq-1' })
    expect(received).toEqual(body())
    expect(scope.isDone()).toBe(true)
  })

  it('a malformed body is refused before anything is sent, every problem listed', async () => {
    const scope = nock(BASE)
      .post(() => true)
      .reply(599)
      .persist()
    const bad = { ...body(), fee: 'free', destinationChainId: '0x1' } as BatchQueryBody
    const error = await failure(client().submitBatchQuery(bad))
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(error.message).toMatch(/fee: must be a numeric string/)
    expect(error.message).toMatch(/destinationChainId: must be a decimal chain id/)
    expect(scope.pendingMocks()).toHaveLength(1)
  })

  it('400 { error } is a ServiceError carrying the service message; sent once', async () => {
    const { scope, seen } = service()
    scope.post('/batch-query').times(2).reply(400, { error: 'Unsupported chain 5' })
    const error = await failure(client().submitBatchQuery(body()))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.status).toBe(400)
    expect(error.message).toContain('Unsupported chain 5')
    expect(seen).toHaveLength(1)
  })

  it('401 is a ServiceError 401 and the key is not in the message', async () => {
    const { scope } = service()
    scope.post('/batch-query').reply(401, { error: `Unknown api key ${KEY}` })
    const error = await failure(client().submitBatchQuery(body()))
    expect(error.status).toBe(401)
    expect(error.message).not.toContain(KEY)
    expect(error.message).toContain('***')
  })

  it('a 500 after the body went out is ambiguous: not sent again', async () => {
    const { scope, seen } = service()
    scope.post('/batch-query').times(3).reply(500, { error: 'boom' })
    const error = await failure(client().submitBatchQuery(body()))
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(seen).toHaveLength(1)
  })

  it('a 429 is refused before processing: tried again, then succeeds', async () => {
    const { scope, seen } = service()
    scope.post('/batch-query').reply(429, { error: 'Rate limit exceeded' }, { 'retry-after': '1' })
    scope.post('/batch-query').reply(200, { internalId: 'bq-2' })
    expect((await client().submitBatchQuery(body())).internalId).toBe('bq-2')
    expect(seen).toHaveLength(2)
    expect(clock.sleeps).toEqual([1000])
  })

  it('without a key: InvalidInputError, nothing sent', async () => {
    const error = await failure(new StorageProofClient({ baseUrl: BASE }).submitBatchQuery(body()))
    expect(error).toBeInstanceOf(InvalidInputError)
  })
})

describe('getBatchQueryStatus', () => {
  it('GET /batch-query-status?batchQueryId= (contract.md) with the api-key header', async () => {
    const { scope } = service()
    scope.get('/batch-query-status').query({ batchQueryId: 'bq:1' }).reply(200, { queryStatus: 'IN_PROGRESS' })
    expect(await client().getBatchQueryStatus('bq:1')).toEqual({ queryStatus: 'IN_PROGRESS' })
  })

  it('a service without that route is read on GET /batch-query/{id}/status (the id path-encoded), and stays there', async () => {
    // A slash or question mark cannot be part of an id: refused before sending.
    await expect(client().getBatchQueryStatus('bq/1?')).rejects.toBeInstanceOf(InvalidInputError)
    const { scope, seen } = service()
    scope.get('/batch-query-status').query(true).reply(404, 'Cannot GET /batch-query-status')
    scope.get('/batch-query/bq%3A1/status').times(2).reply(200, { queryStatus: 'IN_PROGRESS' })
    const storage = client()
    expect(await storage.getBatchQueryStatus('bq:1')).toEqual({ queryStatus: 'IN_PROGRESS' })
    expect(await storage.getBatchQueryStatus('bq:1')).toEqual({ queryStatus: 'IN_PROGRESS' })
    expect(seen).toHaveLength(3)
    // The service's own 404 (no such batch query) is an answer, not a missing route.
    nock.cleanAll()
    const notFound = service()
    notFound.scope.get('/batch-query-status').query(true).reply(404, { error: 'BATCH_QUERY_NOT_FOUND' })
    const error = await failure(client().getBatchQueryStatus('bq-9'))
    expect(error).toMatchObject({ status: 404, code: 'BATCH_QUERY_NOT_FOUND' })
    expect(notFound.seen).toHaveLength(1)
  })

  it('a provider is asked for the key before each request', async () => {
    const keys = ['pk_rotating_key_one', 'pk_rotating_key_two']
    let asked = 0
    const provider = async () => keys[asked++]!
    nock(BASE, { reqheaders: { 'api-key': keys[0]! } })
      .get('/batch-query-status')
      .query({ batchQueryId: 'bq-1' })
      .reply(200, { queryStatus: 'RECEIVED' })
    nock(BASE, { reqheaders: { 'api-key': keys[1]! } })
      .get('/batch-query-status')
      .query({ batchQueryId: 'bq-1' })
      .reply(401, { error: `bad ${keys[1]}` })
    const storage = client(provider)
    await storage.getBatchQueryStatus('bq-1')
    const error = await failure(storage.getBatchQueryStatus('bq-1'))
    expect(asked).toBe(2)
    // A key that came from a provider is masked like a configured one.
    expect(error.message).not.toContain(keys[1])
  })
})

describe('waitForBatchQuery', () => {
  it('follows RECEIVED -> IN_PROGRESS -> DONE, one progress call per change, polling from 1 s', async () => {
    const { scope } = service()
    const statuses = ['RECEIVED', 'RECEIVED', 'IN_PROGRESS', 'IN_PROGRESS', 'DONE']
    for (const queryStatus of statuses)
      scope.get('/batch-query-status').query({ batchQueryId: 'bq-1' }).reply(200, { queryStatus })
    const progress: BatchQueryProgress[] = []
    const result = await client().waitForBatchQuery('bq-1', { onProgress: (p) => progress.push(p) })
    expect(result).toEqual({ internalId: 'bq-1', queryStatus: 'DONE' })
    expect(progress.map((p) => p.queryStatus)).toEqual(['RECEIVED', 'IN_PROGRESS', 'DONE'])
    expect(clock.sleeps).toHaveLength(4)
    for (const sleep of clock.sleeps) expect(sleep).toBeGreaterThanOrEqual(900)
  })

  it('FAILED ends the wait as a result, not an exception', async () => {
    const { scope } = service()
    scope.get('/batch-query-status').query({ batchQueryId: 'bq-1' }).reply(200, { queryStatus: 'FAILED' })
    expect(await client().waitForBatchQuery('bq-1')).toEqual({ internalId: 'bq-1', queryStatus: 'FAILED' })
  })

  it('an unknown status is not terminal (contract.md): one warning, and the wait goes on', async () => {
    const { scope } = service()
    for (const queryStatus of ['PROVING', 'PROVING', 'PROVING', 'DONE'])
      scope.get('/batch-query-status').query({ batchQueryId: 'bq-1' }).reply(200, { queryStatus })
    expect((await client().waitForBatchQuery('bq-1')).queryStatus).toBe('DONE')
    expect(logs.filter((log) => log.level === 'warn' && log.message.includes('"PROVING"'))).toHaveLength(1)
  })

  it('times out with the last status and the batch query it waited for (the CLI says how to resume)', async () => {
    const { scope } = service()
    scope
      .get('/batch-query-status')
      .query({ batchQueryId: 'bq-1' })
      .reply(200, { queryStatus: 'IN_PROGRESS' })
      .persist()
    const error = await failure(client().waitForBatchQuery('bq-1', { timeoutMs: 10_000 }))
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect((error as WaitTimeoutError).lastSeen).toBe('IN_PROGRESS')
    expect((error as WaitTimeoutError).waitedFor).toEqual({ kind: 'batch query', id: 'bq-1' })
    expect(error.message).not.toContain('proving storage')
  })

  it('a transient 503 does not end the wait', async () => {
    const { scope } = service()
    scope.get('/batch-query-status').query({ batchQueryId: 'bq-1' }).times(6).reply(503, { error: 'down' })
    scope.get('/batch-query-status').query({ batchQueryId: 'bq-1' }).reply(200, { queryStatus: 'DONE' })
    expect((await client().waitForBatchQuery('bq-1')).queryStatus).toBe('DONE')
  })
})
