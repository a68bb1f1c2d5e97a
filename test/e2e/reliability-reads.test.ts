import { generatePrivateKey } from 'viem/accounts'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { AccountClient } from '../../src/clients/account.ts'
import { ProvingClient } from '../../src/clients/proving.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { TaskClient } from '../../src/clients/tasks.ts'
import {
  NetworkError,
  type ProvingKitError,
  RequestTimeoutError,
  ServiceError,
  InvalidResponseError,
} from '../../src/core/errors.ts'
import type { Logger } from '../../src/core/runtime.ts'
import type { LoggedRequest } from '../../src/emulator/index.ts'
import { pathMatches } from '../../src/emulator/router.ts'
import { findSecret, useCatalogue } from '../helpers/catalogue.ts'
import {
  FIXTURE_PIE,
  KEY,
  OTHER_KEY,
  startTestEmulator,
  submitFixturePie,
  type TestEmulator,
} from '../helpers/emulator.ts'
import { taskBody } from '../helpers/tasks.ts'

/**
 * Fault catalogue, reads: every read endpoint of the four services, through the client the
 * product ships, over real HTTP against the emulator with faults injected. Each transient fault
 * (5xx bursts, 429 with Retry-After, resets, truncated or non-JSON answers, headers and body
 * timeouts) is retried within the budget and the read succeeds; a fault that does not go away
 * ends in one clear error after the budgeted attempts. The spec's typed 4xx answers are never
 * retried (one request in the emulator's log). No error message or log line carries the key.
 *
 * The endpoints run concurrently (each has its own path, and its own slice of the request log),
 * so the whole table costs about as long as one endpoint's faults.
 */

const { catalogue, row } = useCatalogue('fault catalogue: reads', { concurrent: true })
const { row: typedRow } = useCatalogue('fault catalogue: typed 4xx never retried')

const RETRY = { maxAttempts: 3, baseDelayMs: 20, maxDelayMs: 80, budgetMs: 30_000 }
// undici checks its timeouts about once a second: 300 ms fires within ~1 s.
const TIMEOUTS = { headersMs: 300, bodyMs: 300 }
const LONG_DELAY_MS = 2_500

let emulator: TestEmulator
let agent: Agent
const logs: string[] = []
const logger: Logger = {
  debug: (message) => void logs.push(message),
  info: (message) => void logs.push(message),
  warn: (message) => void logs.push(message),
  error: (message) => void logs.push(message),
}

type Ids = { queryId: string; dedupId: string; bucketId: string; taskId: string; internalId: string }
let ids: Ids
let account: AccountClient

type Clients = { proving: ProvingClient; tasks: TaskClient; storage: StorageProofClient }
function clients(apiKey = KEY): Clients {
  const common = { baseUrl: emulator.url, dispatcher: agent, retry: RETRY, timeouts: TIMEOUTS, logger }
  return {
    proving: new ProvingClient({ ...common, apiKey }),
    tasks: new TaskClient({ ...common, apiKey }),
    storage: new StorageProofClient({ ...common, apiKey }),
  }
}

type Endpoint = { method: 'GET' | 'POST'; pattern: string; read: (c: Clients) => Promise<unknown> }

/** Every read: the proving service's, the task service's, the storage-proof status, the account reads. */
const ENDPOINTS: Endpoint[] = [
  { method: 'GET', pattern: '/proving-query/:id', read: (c) => c.proving.getQuery(ids.queryId) },
  { method: 'GET', pattern: '/docs/proving-query/:id', read: (c) => c.proving.getQueryDetails(ids.queryId) },
  { method: 'GET', pattern: '/docs/proving-queries', read: (c) => c.proving.listQueries({ limit: 5 }) },
  { method: 'GET', pattern: '/proving-query-by-dedup-id', read: (c) => c.proving.findQueryByDedupId(ids.dedupId) },
  { method: 'GET', pattern: '/buckets/:id', read: (c) => c.proving.getBucket(ids.bucketId) },
  { method: 'GET', pattern: '/is-alive', read: (c) => c.proving.isAlive() },
  { method: 'GET', pattern: '/tasks', read: (c) => c.tasks.listTasks({ perPage: 5 }) },
  { method: 'GET', pattern: '/tasks/:uuid/status', read: (c) => c.tasks.getTaskStatus(ids.taskId) },
  { method: 'GET', pattern: '/tasks/:uuid/mmrs', read: (c) => c.tasks.getTaskMmrs(ids.taskId) },
  { method: 'GET', pattern: '/batch-query-status', read: (c) => c.storage.getBatchQueryStatus(ids.internalId) },
  {
    method: 'GET',
    pattern: '/auth/web3/challenge',
    read: () => account.getChallenge('0x75cec1db9dceb703200eaa6595f66885c962b920'),
  },
  { method: 'GET', pattern: '/api-keys', read: () => account.listApiKeys() },
]

type Fault = {
  name: string
  fault: Record<string, unknown>
  /** How many requests the fault hits before the endpoint answers normally. */
  times: number
  /** The error class when the fault does not go away. */
  error: new (
    ...args: never[]
  ) => ProvingKitError
  check?: (requests: LoggedRequest[]) => void
}

const FAULTS: Fault[] = [
  {
    name: '503 burst',
    fault: { kind: 'status', status: 503, body: { error: 'SERVICE_UNAVAILABLE' } },
    times: 2,
    error: ServiceError,
  },
  { name: '500 burst', fault: { kind: 'error' }, times: 2, error: ServiceError },
  {
    name: '429 with Retry-After',
    fault: { kind: 'status', status: 429, headers: { 'retry-after': '1' }, body: { error: 'Rate limit exceeded' } },
    times: 1,
    error: ServiceError,
    check: (requests) => {
      // Retry-After: 1 is honoured (the jittered backoff alone would retry within 20 ms).
      const gap = Date.parse(requests[1]!.at) - Date.parse(requests[0]!.at)
      expect(gap).toBeGreaterThanOrEqual(900)
    },
  },
  { name: 'reset before the answer', fault: { kind: 'drop' }, times: 2, error: NetworkError },
  { name: 'truncated body', fault: { kind: 'truncate' }, times: 2, error: NetworkError },
  { name: 'HTML 502 page', fault: { kind: 'html-502' }, times: 2, error: ServiceError },
  {
    name: 'non-JSON 200',
    fault: { kind: 'status', status: 200, body: '<html><body>Maintenance</body></html>', contentType: 'text/html' },
    times: 2,
    error: InvalidResponseError,
  },
  { name: 'headers timeout', fault: { kind: 'delay', delayMs: LONG_DELAY_MS }, times: 1, error: RequestTimeoutError },
  { name: 'body timeout', fault: { kind: 'delay-body', delayMs: LONG_DELAY_MS }, times: 1, error: RequestTimeoutError },
]

/** Faults that never go away, per endpoint: the client gives up after its budgeted attempts. */
const PERSISTENT = ['503 burst', 'reset before the answer', 'headers timeout']

function requestsTo(endpoint: Endpoint, since: number): LoggedRequest[] {
  return emulator
    .requests()
    .slice(since)
    .filter(
      (request) => request.method === endpoint.method && pathMatches(endpoint.pattern, request.path.split('?')[0]!),
    )
}

function assertNoLeak(name: string, texts: Record<string, string>): void {
  const found = findSecret({ ...texts, logs: logs.join('\n'), requestLog: JSON.stringify(emulator.requests()) }, [
    KEY,
    OTHER_KEY,
  ])
  if (found) catalogue.leak(name, found)
}

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY, OTHER_KEY] })
  agent = new Agent({ connections: 128, keepAliveTimeout: 4_000 })
  const c = clients()
  ids = {} as Ids
  ids.queryId = await submitFixturePie(emulator)
  ids.dedupId = 'reliability-reads-dedup-1'
  await c.proving.submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE, dedupId: ids.dedupId })
  ids.bucketId = (await c.proving.createBucket({ aggregatorVersion: 'v1' })).id
  ids.taskId = (await c.tasks.scheduleTask(taskBody())).uuid
  ids.internalId = (
    await c.storage.submitBatchQuery({
      destinationChainId: '11155111',
      fee: '0',
      data: {
        '11155111': {
          'block:5382810': {
            accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
          },
        },
      },
    })
  ).internalId
  account = new AccountClient({
    baseUrl: emulator.url,
    privateKey: generatePrivateKey(),
    dispatcher: agent,
    retry: RETRY,
    timeouts: TIMEOUTS,
    logger,
  })
  await account.signIn()
})

afterAll(async () => {
  await emulator?.close()
  await agent?.close()
})

describe('every read survives transient faults, and ends in a clear error when they persist', () => {
  // Faults outer, endpoints inner: neighbouring rows (run together) touch different endpoints.
  for (const fault of FAULTS) {
    for (const endpoint of ENDPOINTS) {
      const name = `${endpoint.method} ${endpoint.pattern}: ${fault.name}, ${fault.times}x, then recovered`
      row(
        name,
        () =>
          exclusive(endpoint, async () => {
            const since = emulator.requests().length
            await emulator.control('POST', '/faults', {
              method: endpoint.method,
              path: endpoint.pattern,
              times: fault.times,
              ...fault.fault,
            })
            await endpoint.read(clients())
            const requests = await settledRequests(endpoint, since, fault.times + 1)
            const kind = fault.fault.kind as string
            expect(requests.filter((request) => request.fault === kind)).toHaveLength(fault.times)
            expect(requests.filter((request) => request.fault === undefined).map((request) => request.status)).toEqual([
              200,
            ])
            fault.check?.(requests)
            assertNoLeak(name, {})
          }),
        60_000,
      )
    }
  }
  for (const persistent of PERSISTENT) {
    const fault = FAULTS.find((candidate) => candidate.name === persistent)!
    for (const endpoint of ENDPOINTS) {
      const name = `${endpoint.method} ${endpoint.pattern}: ${fault.name} that persists, clear error after ${RETRY.maxAttempts} attempts`
      row(
        name,
        () =>
          exclusive(endpoint, async () => {
            const since = emulator.requests().length
            const { fault: injected } = await emulator.control('POST', '/faults', {
              method: endpoint.method,
              path: endpoint.pattern,
              times: 50,
              ...fault.fault,
            })
            let caught: unknown
            try {
              await endpoint.read(clients())
            } catch (error) {
              caught = error
            } finally {
              await emulator.call('DELETE', `/_emulator/faults/${injected.id}`)
            }
            expect(caught).toBeInstanceOf(fault.error)
            const error = caught as ProvingKitError
            // Names the service and the operation; says it tried, and for how long.
            expect(error.shortMessage).toMatch(/(proving|task|storage-proof|account) service/)
            expect(error.metaMessages?.join(' ')).toMatch(
              new RegExp(`Gave up after ${RETRY.maxAttempts} attempts over [\\d.]+ s`),
            )
            expect(error.message).not.toMatch(/\n\s+at /)
            expect(await settledRequests(endpoint, since, RETRY.maxAttempts)).toHaveLength(RETRY.maxAttempts)
            assertNoLeak(name, { message: error.message })
          }),
        60_000,
      )
    }
  }
})

const locks = new Map<string, Promise<void>>()

/** Runs `test` alone on its endpoint: faults are per path, and the rows run concurrently. */
async function exclusive(endpoint: Endpoint, test: () => Promise<void>): Promise<void> {
  const key = `${endpoint.method} ${endpoint.pattern}`
  const before = locks.get(key) ?? Promise.resolve()
  let release!: () => void
  const mine = new Promise<void>((resolve) => (release = resolve))
  locks.set(
    key,
    before.then(() => mine),
  )
  await before
  try {
    await test()
  } finally {
    release()
  }
}

/**
 * This endpoint's requests since `since`, once `count` of them are in the log: a request the
 * client gave up on (a timeout) is logged when the emulator finishes it, after the client moved on.
 */
async function settledRequests(endpoint: Endpoint, since: number, count: number): Promise<LoggedRequest[]> {
  const deadline = Date.now() + LONG_DELAY_MS + 5_000
  for (;;) {
    const requests = requestsTo(endpoint, since)
    if (requests.length >= count || Date.now() > deadline) return requests
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('the typed 4xx answers of the spec are never retried', () => {
  type Typed = {
    name: string
    pattern: string
    method: 'GET' | 'POST'
    status: number
    code?: string
    call: () => Promise<unknown>
  }
  const typed: Typed[] = [
    {
      name: 'GET /proving-query/{id}: 404 PROVING_QUERY_NOT_FOUND',
      pattern: '/proving-query/:id',
      method: 'GET',
      status: 404,
      code: 'PROVING_QUERY_NOT_FOUND',
      call: () => clients().proving.getQuery('no-such-query'),
    },
    {
      name: 'GET /docs/proving-query/{id}: 404 PROVING_QUERY_NOT_FOUND',
      pattern: '/docs/proving-query/:id',
      method: 'GET',
      status: 404,
      code: 'PROVING_QUERY_NOT_FOUND',
      call: () => clients().proving.getQueryDetails('no-such-query'),
    },
    {
      name: 'GET /docs/proving-queries: 401 INVALID_API_KEY (key off the list)',
      pattern: '/docs/proving-queries',
      method: 'GET',
      status: 401,
      code: 'INVALID_API_KEY',
      call: () => clients('key-not-on-the-list').proving.listQueries(),
    },
    {
      name: 'POST /proving-queries/{id}/retry: 404 PROVING_QUERY_NOT_FOUND',
      pattern: '/proving-queries/:id/retry',
      method: 'POST',
      status: 404,
      code: 'PROVING_QUERY_NOT_FOUND',
      call: () => clients().proving.retryQuery('no-such-query'),
    },
    {
      name: "POST /proving-queries/{id}/retry: 403 FORBIDDEN (another key's query)",
      pattern: '/proving-queries/:id/retry',
      method: 'POST',
      status: 403,
      code: 'FORBIDDEN',
      call: () => clients(OTHER_KEY).proving.retryQuery(ids.queryId),
    },
    {
      name: 'POST /proving-queries/{id}/retry: 409 QUERY_NOT_IN_FAILED_STATUS',
      pattern: '/proving-queries/:id/retry',
      method: 'POST',
      status: 409,
      code: 'QUERY_NOT_IN_FAILED_STATUS',
      call: () => clients().proving.retryQuery(ids.queryId),
    },
    {
      name: 'POST /proving-queries/{id}/retry: 400 QUERY_NOT_RETRIABLE',
      pattern: '/proving-queries/:id/retry',
      method: 'POST',
      status: 400,
      code: 'QUERY_NOT_RETRIABLE',
      call: async () => {
        await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: false })
        const id = await submitFixturePie(emulator)
        return clients().proving.retryQuery(id)
      },
    },
    {
      name: 'POST /proving-queries/{id}/retry: 400 MAX_RETRIES_REACHED',
      pattern: '/proving-queries/:id/retry',
      method: 'POST',
      status: 400,
      code: 'MAX_RETRIES_REACHED',
      call: async () => {
        // The first run and the three retries allowed all fail, retriably.
        await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: true, times: 4 })
        const id = await submitFixturePie(emulator)
        for (let retry = 0; retry < 3; retry++) await clients().proving.retryQuery(id)
        return clients().proving.retryQuery(id)
      },
    },
    {
      name: 'POST /buckets/close: 400 {} (bucketId not a bucket id)',
      pattern: '/buckets/close',
      method: 'POST',
      status: 400,
      call: () => clients().proving.closeBucket('not-a-uuid'),
    },
    {
      name: 'POST /buckets/close: 401 UNAUTHORIZED',
      pattern: '/buckets/close',
      method: 'POST',
      status: 401,
      code: 'UNAUTHORIZED',
      call: () => clients('key-not-on-the-list').proving.closeBucket(ids.bucketId),
    },
    {
      name: 'POST /buckets/close: 404 BUCKET_NOT_FOUND',
      pattern: '/buckets/close',
      method: 'POST',
      status: 404,
      code: 'BUCKET_NOT_FOUND',
      call: () => clients().proving.closeBucket('00000000-0000-4000-8000-000000000000'),
    },
    {
      name: 'GET /buckets/{id}: 404',
      pattern: '/buckets/:id',
      method: 'GET',
      status: 404,
      call: () => clients().proving.getBucket('00000000-0000-4000-8000-000000000000'),
    },
    {
      name: 'POST L2 PIE: 401 (key off the list)',
      pattern: '/v1/l2/proving-query/proof-generation-verification',
      method: 'POST',
      status: 401,
      code: 'INVALID_API_KEY',
      call: () => clients('key-not-on-the-list').proving.submitPie({ pieZip: FIXTURE_PIE }),
    },
    {
      name: 'GET /tasks/{uuid}/status: 404 Task not found',
      pattern: '/tasks/:uuid/status',
      method: 'GET',
      status: 404,
      call: () => clients().tasks.getTaskStatus('no-such-task'),
    },
    {
      name: 'GET /tasks/{uuid}/mmrs: 404 Task not found',
      pattern: '/tasks/:uuid/mmrs',
      method: 'GET',
      status: 404,
      call: () => clients().tasks.getTaskMmrs('no-such-task'),
    },
    {
      name: 'POST /tasks: 401 Invalid X-API-KEY',
      pattern: '/tasks',
      method: 'POST',
      status: 401,
      call: () => clients('key-not-on-the-list').tasks.scheduleTask(taskBody()),
    },
    {
      name: 'POST /tasks/decommitment: 404 Proving query not found',
      pattern: '/tasks/decommitment',
      method: 'POST',
      status: 404,
      call: () =>
        clients().tasks.submitDecommitment({ proving_query_id: 'no-such-query', destination_chain_id: '0xaa36a7' }),
    },
    {
      name: 'GET /batch-query-status: 404 BATCH_QUERY_NOT_FOUND',
      pattern: '/batch-query-status',
      method: 'GET',
      status: 404,
      code: 'BATCH_QUERY_NOT_FOUND',
      call: () => clients().storage.getBatchQueryStatus('no-such-batch-query'),
    },
    {
      name: 'POST /batch-query: 401 (key off the list)',
      pattern: '/batch-query',
      method: 'POST',
      status: 401,
      call: () =>
        clients('key-not-on-the-list').storage.submitBatchQuery({
          destinationChainId: '1',
          fee: '0',
          data: {
            '1': {
              'block:1': {
                accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
              },
            },
          },
        }),
    },
    {
      name: 'GET /api-keys: 404 PROJECT_NOT_FOUND',
      pattern: '/api-keys',
      method: 'GET',
      status: 404,
      code: 'PROJECT_NOT_FOUND',
      call: () => account.listApiKeys({ projectId: 'proj_0000000000000000' }),
    },
  ]
  for (const answer of typed) {
    typedRow(answer.name, async () => {
      const endpoint = { method: answer.method, pattern: answer.pattern, read: answer.call }
      const since = emulator.requests().length
      const error = await answer.call().then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ServiceError)
      expect((error as ServiceError).status).toBe(answer.status)
      if (answer.code) expect((error as ServiceError).code).toBe(answer.code)
      expect((error as ServiceError).retryable).toBe(false)
      const requests = requestsTo(endpoint, since).filter((request) => request.status === answer.status)
      expect(requests).toHaveLength(1)
    })
  }
})
