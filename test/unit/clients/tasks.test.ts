import nock from 'nock'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TaskClient } from '../../../src/clients/tasks.ts'
import {
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  RemoteFailureError,
  ServiceError,
  UnknownStatusError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { BAD_DECOMMITMENT_BODIES, BAD_TASK_BODIES, decommitmentBody, dpOutput, taskBody } from '../../helpers/tasks.ts'

/** TaskClient against nock: headers, paths, parameters, checks before sending, the wait. */

const BASE = 'https://tasks.test'
const KEY = 'dp_test_key_7f3a9c21'

let clock: FakeClock
let requests: { method: string; url: URL; headers: Headers; body: string }[]

function client(options: { apiKey?: string | undefined } = { apiKey: KEY }) {
  return new TaskClient({ baseUrl: BASE, apiKey: options.apiKey, clock, retry: { maxAttempts: 1 } })
}

function status(value: string, errorMessage = '') {
  return { status: value, taskId: 't-1', updatedAt: '2025-06-01T12:00:00.000Z', errorMessage }
}

beforeEach(() => {
  nock.disableNetConnect()
  clock = new FakeClock()
  requests = []
  // Every request that reaches the (fake) network is recorded, answered or not.
  nock.emitter.on('no match', (request: Request) => {
    requests.push({ method: request.method, url: new URL(request.url), headers: request.headers, body: '' })
  })
})

afterEach(() => {
  nock.emitter.removeAllListeners('no match')
  nock.cleanAll()
  nock.enableNetConnect()
})

function recorded(scope: nock.Scope) {
  scope.on('request', (request: Request, _interceptor: unknown, body: string) => {
    requests.push({ method: request.method, url: new URL(request.url), headers: request.headers, body })
  })
  return scope
}

describe('submissions', () => {
  it('scheduleTask POSTs the checked body to /tasks with X-API-KEY', async () => {
    const scope = recorded(nock(BASE).post('/tasks').reply(200, { message: 'Task has been queued', uuid: 'u-1' }))
    const response = await client().scheduleTask(taskBody({ webhook_url: 'https://hooks.example.com/dp' }))
    expect(response).toEqual({ message: 'Task has been queued', uuid: 'u-1' })
    expect(scope.isDone()).toBe(true)
    const [request] = requests
    expect(request!.headers.get('x-api-key')).toBe(KEY)
    expect(request!.headers.get('content-type')).toBe('application/json')
    expect(request!.headers.get('api-key')).toBeNull()
    expect(JSON.parse(request!.body)).toEqual(taskBody({ webhook_url: 'https://hooks.example.com/dp' }))
  })

  it('task_inputs is sent as [] when omitted (its default)', async () => {
    recorded(nock(BASE).post('/tasks').reply(200, { message: 'Task has been queued', uuid: 'u-1' }))
    const { task_inputs: _omitted, ...body } = taskBody()
    await client().scheduleTask(body)
    expect(JSON.parse(requests[0]!.body).task_inputs).toEqual([])
  })

  it('submitDecommitment POSTs to /tasks/decommitment with X-API-KEY; dp_output and program_hash optional', async () => {
    recorded(
      nock(BASE)
        .post('/tasks/decommitment')
        .times(2)
        .reply(200, { message: 'Decommitment-only task has been queued', uuid: 'u-2' }),
    )
    await client().submitDecommitment(decommitmentBody())
    await client().submitDecommitment(decommitmentBody({ dp_output: dpOutput(), program_hash: '0xabc' }))
    expect(requests.map((request) => request.headers.get('x-api-key'))).toEqual([KEY, KEY])
    expect(JSON.parse(requests[0]!.body)).toEqual({ proving_query_id: 'q-123', destination_chain_id: '0xaa36a7' })
    expect(JSON.parse(requests[1]!.body).dp_output).toEqual(dpOutput())
  })

  it('without an API key nothing is sent', async () => {
    await expect(client({ apiKey: undefined }).scheduleTask(taskBody())).rejects.toThrow(
      /needs an API key \(sent as X-API-KEY\)/,
    )
    await expect(client({ apiKey: '  ' }).submitDecommitment(decommitmentBody())).rejects.toBeInstanceOf(
      InvalidInputError,
    )
    expect(requests).toEqual([])
  })

  for (const { name, body, problem } of BAD_TASK_BODIES) {
    it(`scheduleTask rejects ${name} before any request, naming the field`, async () => {
      const error = await client()
        .scheduleTask(body as never)
        .catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(InvalidInputError)
      expect((error as InvalidInputError).message).toMatch(problem)
      expect(requests).toEqual([])
    })
  }

  for (const { name, body, problem } of BAD_DECOMMITMENT_BODIES) {
    it(`submitDecommitment rejects ${name} before any request, naming the field`, async () => {
      const error = await client()
        .submitDecommitment(body as never)
        .catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(InvalidInputError)
      expect((error as InvalidInputError).message).toMatch(problem)
      expect(requests).toEqual([])
    })
  }

  it('the message is the example of the issue, and `input` names the field', async () => {
    const error = (await client()
      .scheduleTask(taskBody({ destination_chain_id: '11155111' }))
      .catch((caught: unknown) => caught)) as InvalidInputError
    expect(error.shortMessage).toBe('destination_chain_id must be 0x-prefixed hex, got "11155111".')
    expect(error.input).toBe('destination_chain_id')
  })

  it('several problems are all listed', async () => {
    const error = (await client()
      .scheduleTask(taskBody({ destination_chain_id: '1', program_hash: '2', webhook_url: 'x' }))
      .catch((caught: unknown) => caught)) as InvalidInputError
    expect(error.shortMessage).toMatch(/and 2 more problems in the task body/)
    expect(error.metaMessages).toHaveLength(3)
  })

  it('a 400 { error } and a 401 come back as ServiceError with the body', async () => {
    nock(BASE).post('/tasks').reply(400, { error: 'Invalid destination_chain_id format' })
    nock(BASE).post('/tasks/decommitment').reply(401, { error: 'Missing X-API-KEY header' })
    const bad = (await client()
      .scheduleTask(taskBody())
      .catch((caught: unknown) => caught)) as ServiceError
    expect(bad).toBeInstanceOf(ServiceError)
    expect(bad.status).toBe(400)
    expect(bad.details).toBe('Invalid destination_chain_id format')
    const unauthorized = (await client()
      .submitDecommitment(decommitmentBody())
      .catch((caught: unknown) => caught)) as ServiceError
    expect(unauthorized.status).toBe(401)
    expect(unauthorized.body).toEqual({ error: 'Missing X-API-KEY header' })
  })

  it('a 500 after the body went out is ambiguous and is not sent again', async () => {
    const scope = recorded(
      nock(BASE).post('/tasks').reply(500, { error: 'Internal', details: 'd', message: 'm', taskId: '' }),
    )
    const error = await new TaskClient({ baseUrl: BASE, apiKey: KEY, clock })
      .scheduleTask(taskBody())
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(scope.isDone()).toBe(true)
    expect(requests).toHaveLength(1)
  })

  it('the API key never appears in an error message', async () => {
    nock(BASE)
      .post('/tasks')
      .reply(403, { error: `key ${KEY} is not allowed` })
    const error = (await client()
      .scheduleTask(taskBody())
      .catch((caught: unknown) => caught)) as ServiceError
    expect(error.message).not.toContain(KEY)
  })
})

describe('reads', () => {
  it('status and MMRs are GETs without any API key', async () => {
    recorded(nock(BASE).get('/tasks/u-1/status').reply(200, status('ProvingStarted')))
    recorded(
      nock(BASE)
        .get('/tasks/u-1/mmrs')
        .reply(200, {
          mmrs: [{ chain_id: '0xaa36a7', hashing_function: 'poseidon', id: '0x1', root: '0x2', size: '0x3' }],
          taskId: 'u-1',
        }),
    )
    expect((await client().getTaskStatus('u-1')).status).toBe('ProvingStarted')
    expect((await client().getTaskMmrs('u-1')).mmrs).toHaveLength(1)
    for (const request of requests) {
      expect(request.headers.get('x-api-key')).toBeNull()
      expect(request.headers.get('api-key')).toBeNull()
    }
  })

  it('a task uuid is checked before any request', async () => {
    await expect(client().getTaskStatus('')).rejects.toThrow(/uuid is empty/)
    await expect(client().getTaskMmrs('a/b')).rejects.toThrow(/holds a space, "\/"/)
    await expect(client().waitForTask(' ')).rejects.toBeInstanceOf(InvalidInputError)
    expect(requests).toEqual([])
  })

  it('listTasks sends the dp_tasks_* parameters', async () => {
    recorded(
      nock(BASE)
        .get('/tasks')
        .query(true)
        .reply(200, { tasks: [], pagination: { page: 2, perPage: 50, total: 0, totalPages: 0 } }),
    )
    await client().listTasks({ page: 2, perPage: 50, search: 'abc', status: 'ProvingFailed', clientId: 'c-9' })
    expect(Object.fromEntries(requests[0]!.url.searchParams)).toEqual({
      dp_tasks_page: '2',
      dp_tasks_per_page: '50',
      dp_tasks_search: 'abc',
      dp_tasks_status: 'ProvingFailed',
      dp_tasks_client_id: 'c-9',
    })
    expect(requests[0]!.headers.get('x-api-key')).toBeNull()
  })

  it('listTasks refuses out-of-range pages, per-page above 100 and unknown statuses before sending', async () => {
    await expect(client().listTasks({ perPage: 101 })).rejects.toThrow(
      /perPage must be a whole number from 1 to 100; got 101/,
    )
    await expect(client().listTasks({ perPage: 0 })).rejects.toBeInstanceOf(InvalidInputError)
    await expect(client().listTasks({ page: 0 })).rejects.toThrow(/page must be a whole number from 1/)
    await expect(client().listTasks({ page: 1.5 })).rejects.toBeInstanceOf(InvalidInputError)
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    await expect(client().listTasks({ status: 'Done' })).rejects.toThrow(
      /status must be one of Received, .*; got "Done"/,
    )
    expect(requests).toEqual([])
  })

  it('iterateTasks reads every page, 100 per request, and yields each task once', async () => {
    const task = (n: number) => ({
      uuid: `u-${n}`,
      status: 'Received',
      destinationChainId: '0x1',
      programHash: '0x2',
      clientId: 'c',
      createdAt: 'a',
      updatedAt: 'b',
    })
    const pages = [
      [1, 2, 3],
      [3, 4, 5], // u-3 moved to the next page while reading
      [6],
    ]
    for (const [index, uuids] of pages.entries()) {
      recorded(
        nock(BASE)
          .get('/tasks')
          .query({ dp_tasks_page: String(index + 1), dp_tasks_per_page: '100', dp_tasks_status: 'Received' })
          .reply(200, {
            tasks: uuids.map(task),
            pagination: { page: index + 1, perPage: 100, total: 7, totalPages: 3 },
          }),
      )
    }
    const seen: string[] = []
    for await (const item of client().iterateTasks({ status: 'Received' })) seen.push(item.uuid)
    expect(seen).toEqual(['u-1', 'u-2', 'u-3', 'u-4', 'u-5', 'u-6'])
    expect(requests).toHaveLength(3)
  })

  it('iterateTasks stops at an empty page even when totalPages says more', async () => {
    nock(BASE)
      .get('/tasks')
      .query(true)
      .reply(200, { tasks: [], pagination: { page: 1, perPage: 100, total: 5, totalPages: 9 } })
    const seen = []
    for await (const item of client().iterateTasks()) seen.push(item)
    expect(seen).toEqual([])
  })
})

describe('waitForTask', () => {
  function answer(statuses: ReturnType<typeof status>[]) {
    for (const record of statuses) nock(BASE).get('/tasks/t-1/status').reply(200, record)
  }

  it('follows every stage to TaskDecommitmentCompleted, reporting each change once', async () => {
    const pipeline = [
      'Received',
      'Received',
      'DryRunStarted',
      'DryRunCompleted',
      'ChainProofsFetchStarted',
      'ChainProofsFetchCompleted',
      'TraceGenStarted',
      'TraceGenCompleted',
      'ProvingStarted',
      'ProvingStarted',
      'ProvingCompleted',
      'TaskDecommitmentStarted',
      'TaskDecommitmentCompleted',
    ]
    answer(pipeline.map((value) => status(value)))
    const seen: string[] = []
    const record = await client().waitForTask('t-1', {
      onProgress: (progress) => seen.push(`${progress.stage}:${progress.status}`),
    })
    expect(record.status).toBe('TaskDecommitmentCompleted')
    expect(seen).toEqual([
      'received:Received',
      'dry-run:DryRunStarted',
      'dry-run:DryRunCompleted',
      'chain-proofs-fetch:ChainProofsFetchStarted',
      'chain-proofs-fetch:ChainProofsFetchCompleted',
      'trace-generation:TraceGenStarted',
      'trace-generation:TraceGenCompleted',
      'proving:ProvingStarted',
      'proving:ProvingCompleted',
      'decommitment:TaskDecommitmentStarted',
      'decommitment:TaskDecommitmentCompleted',
    ])
    // The polling discipline of pollUntil: 1 s at first, growing with the time spent.
    expect(clock.sleeps.every((ms) => ms >= 900 && ms <= 33_000)).toBe(true)
  })

  it('any *Failed ends the wait with the service’s error message', async () => {
    answer([status('DryRunStarted'), status('TraceGenFailed', 'trace generation ran out of memory')])
    const error = (await client()
      .waitForTask('t-1')
      .catch((caught: unknown) => caught)) as RemoteFailureError
    expect(error).toBeInstanceOf(RemoteFailureError)
    expect(error.shortMessage).toBe(
      'Task t-1 failed at trace generation (TraceGenFailed): trace generation ran out of memory',
    )
    expect(error.code).toBe('TraceGenFailed')
    expect((error.record as { status: string }).status).toBe('TraceGenFailed')
  })

  it('an unknown status ending in Failed also ends it', async () => {
    answer([status('AggregationFailed', 'boom')])
    await expect(client().waitForTask('t-1')).rejects.toThrow(/failed \(AggregationFailed\): boom/)
  })

  it('an unknown status is tolerated for a while, then ends the wait with UnknownStatusError', async () => {
    nock(BASE).get('/tasks/t-1/status').times(1_000).reply(200, status('Paused'))
    const error = await client()
      .waitForTask('t-1', { unknownStatusGraceMs: 60_000 })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(UnknownStatusError)
    expect(clock.slept).toBeGreaterThanOrEqual(60_000)
    expect(clock.slept).toBeLessThan(120_000)
  })

  it('the stuck warning shows a status as one line (a line break in it cannot forge a line of the log)', async () => {
    nock(BASE).get('/tasks/t-1/status').times(1_000).reply(200, status('Paused\n::warning::forged'))
    const warnings: string[] = []
    const logger = {
      debug: () => {},
      info: () => {},
      warn: (message: string) => warnings.push(message),
      error: () => {},
    }
    const tasks = new TaskClient({ baseUrl: BASE, apiKey: KEY, clock, logger, retry: { maxAttempts: 1 } })
    await tasks.waitForTask('t-1', { stuckAfterMs: 5_000, unknownStatusGraceMs: 60_000 }).catch(() => undefined)
    const stuck = warnings.filter((message) => message.includes('longer than expected'))
    expect(stuck).toHaveLength(1)
    expect(stuck[0]).toContain('Paused\\n::warning::forged')
    expect(warnings.every((message) => !message.includes('\n'))).toBe(true)
  })

  it('an unknown intermediate status that moves on does not end the wait', async () => {
    answer([
      status('Received'),
      status('QueuedForProving'),
      status('ProvingStarted'),
      status('TaskDecommitmentCompleted'),
    ])
    expect((await client().waitForTask('t-1')).status).toBe('TaskDecommitmentCompleted')
  })

  it('times out with WaitTimeoutError, the last record seen and the task it waited for', async () => {
    nock(BASE).get('/tasks/t-1/status').times(1_000).reply(200, status('ProvingStarted'))
    const error = (await client()
      .waitForTask('t-1', { timeoutMs: 90_000 })
      .catch((caught: unknown) => caught)) as WaitTimeoutError
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect(error.shortMessage).toBe('Timed out after 1m 30s waiting for task t-1.')
    expect(error.waitedFor).toEqual({ kind: 'task', id: 't-1' })
    expect((error.lastSeen as { status: string }).status).toBe('ProvingStarted')
  })

  it('a 404 ends the wait at once; a 503 does not', async () => {
    nock(BASE).get('/tasks/t-1/status').reply(503, {})
    nock(BASE).get('/tasks/t-1/status').reply(200, status('TaskDecommitmentCompleted'))
    expect((await client().waitForTask('t-1')).status).toBe('TaskDecommitmentCompleted')
    nock(BASE)
      .get('/tasks/t-2/status')
      .reply(404, { error: 'Not Found', details: 'no task', message: 'Task not found', taskId: 't-2' })
    const error = (await client()
      .waitForTask('t-2')
      .catch((caught: unknown) => caught)) as ServiceError
    expect(error.status).toBe(404)
  })
})
