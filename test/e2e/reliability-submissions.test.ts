import { writeFile, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { TaskClient } from '../../src/clients/tasks.ts'
import { SubmissionOutcomeUnknownError, type ProvingKitError } from '../../src/core/errors.ts'
import type { LoggedRequest } from '../../src/emulator/index.ts'
import { findSecret, useCatalogue } from '../helpers/catalogue.ts'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { fakeIO, REPO_ROOT } from '../helpers/run-action.ts'
import { taskBody } from '../helpers/tasks.ts'

/**
 * Fault catalogue, submissions: what happens to a POST whose answer is lost, refused or cut, over
 * real HTTP against the emulator, with the emulator's own state as the judge.
 *
 * - General submission (`POST /proving-query`, dedupId): after an ambiguous failure the client
 *   looks its dedupId up and resubmits only when the service has no such query: exactly one
 *   query exists, whether the lost request was processed or not.
 * - The L2 endpoints, tasks and batch queries (no dedupId): never sent again once the body may
 *   have been processed; the error says so and how to check. Sent again only when the service
 *   refused the request before processing it (429, 503 with Retry-After, connection refused).
 */

const { catalogue, row } = useCatalogue('fault catalogue: submissions')

const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
const L2_PROOF = '/v1/l2/proving-query/proof-verification'
const RETRY = { maxAttempts: 5, baseDelayMs: 50, maxDelayMs: 200, budgetMs: 20_000 }

let emulator: TestEmulator
let dir: string
let proofFile: string
const logs: string[] = []
const logger = {
  debug: (message: string) => void logs.push(message),
  info: (message: string) => void logs.push(message),
  warn: (message: string) => void logs.push(message),
  error: (message: string) => void logs.push(message),
}

const proving = () =>
  new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent, retry: RETRY, logger })
const tasks = () =>
  new TaskClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent, retry: RETRY, logger })
const storage = () =>
  new StorageProofClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent, retry: RETRY, logger })
const BATCH_QUERY = {
  destinationChainId: '11155111',
  fee: '0',
  data: {
    '11155111': {
      'block:5382810': {
        accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
      },
    },
  },
}

beforeAll(async () => {
  emulator = await startTestEmulator({ timing: { receivedMs: 200, stepMs: 200 } })
  dir = await mkdtemp(join(tmpdir(), 'reliability-submissions-'))
  proofFile = join(dir, 'proof.json')
  await writeFile(proofFile, JSON.stringify({ proof: 'emulated' }))
})
afterAll(async () => {
  await emulator?.close()
  await rm(dir, { recursive: true, force: true })
})
beforeEach(async () => {
  await emulator.control('POST', '/reset')
  logs.length = 0
})

/** Down for 300 ms: a client whose retries span longer than that gets through. */
const restart = () => emulator.call('POST', '/_emulator/restart', { json: { downMs: 300 } })
const patient = () =>
  new ProvingClient({
    baseUrl: emulator.url,
    apiKey: KEY,
    dispatcher: emulator.agent,
    retry: { maxAttempts: 12, baseDelayMs: 200, maxDelayMs: 400, budgetMs: 20_000 },
    logger,
  })
const fault = (spec: Record<string, unknown>) => emulator.control('POST', '/faults', spec)
const posts = (path: string): LoggedRequest[] =>
  emulator.requests().filter((request) => request.method === 'POST' && request.path.split('?')[0] === path)
const queries = () => Object.values(emulator.state.queries)

async function failure(promise: Promise<unknown>): Promise<ProvingKitError> {
  try {
    await promise
  } catch (error) {
    return error as ProvingKitError
  }
  throw new Error('expected a failure')
}

function assertNoLeak(name: string, texts: Record<string, string> = {}): void {
  const found = findSecret({ ...texts, logs: logs.join('\n'), requestLog: JSON.stringify(emulator.requests()) }, [KEY])
  if (found) catalogue.leak(name, found)
}

/** The SubmissionOutcomeUnknownError's promise: what happened, that nothing was resent, how to check. */
function expectAmbiguous(error: ProvingKitError, check: RegExp): void {
  expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
  expect(error.shortMessage).toMatch(/may or may not have .*; it was not sent again/)
  expect(error.metaMessages?.join('\n')).toMatch(check)
}

describe('general submission (POST /proving-query) with dedupId: exactly one query', () => {
  const cases: { name: string; fault: Record<string, unknown>; created: boolean }[] = [
    { name: 'answer lost after processing (drop-after)', fault: { kind: 'drop-after' }, created: true },
    {
      name: 'reset after the body was read, before processing (drop-after-body)',
      fault: { kind: 'drop-after-body' },
      created: false,
    },
    { name: 'reset before the body was read (drop)', fault: { kind: 'drop' }, created: false },
    { name: 'answer cut halfway after processing (truncate)', fault: { kind: 'truncate' }, created: true },
    { name: 'HTML 502 from a gateway', fault: { kind: 'html-502' }, created: false },
    { name: '500 from the service', fault: { kind: 'error' }, created: false },
  ]
  for (const spec of cases) {
    const name = `POST /proving-query: ${spec.name}`
    row(name, async () => {
      await fault({ method: 'POST', path: '/proving-query', ...spec.fault })
      const result = await proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE })
      expect(queries()).toHaveLength(1)
      expect(queries()[0]!.id).toBe(result.provingQueryId)
      expect(result.deduplicated).toBe(spec.created)
      // First the lost POST, then the lookup; a second POST only when the lookup found nothing.
      const lookups = emulator.requests().filter((request) => request.path.startsWith('/proving-query-by-dedup-id'))
      expect(lookups.map((request) => request.status)).toEqual([spec.created ? 200 : 404])
      expect(posts('/proving-query')).toHaveLength(spec.created ? 1 : 2)
      expect(logs.join('\n')).toMatch(/looking up dedupId pk-[0-9a-f]{40} before sending again/)
      assertNoLeak(name)
    })
  }

  row(
    'POST /proving-query: 503 with Retry-After is sent again without a lookup (refused before processing)',
    async () => {
      await fault({
        method: 'POST',
        path: '/proving-query',
        kind: 'status',
        status: 503,
        headers: { 'retry-after': '0' },
        times: 2,
      })
      const result = await proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE })
      expect(queries().map((query) => query.id)).toEqual([result.provingQueryId])
      expect(posts('/proving-query').map((request) => request.status)).toEqual([503, 503, 201])
      expect(emulator.requests().some((request) => request.path.startsWith('/proving-query-by-dedup-id'))).toBe(false)
    },
  )

  row('POST /proving-query: the dedupId lookup itself fails once (503), is retried, finds the query', async () => {
    await fault({ method: 'POST', path: '/proving-query', kind: 'drop-after' })
    await fault({ method: 'GET', path: '/proving-query-by-dedup-id', kind: 'status', status: 503 })
    const result = await proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE })
    expect(result.deduplicated).toBe(true)
    expect(queries()).toHaveLength(1)
    expect(posts('/proving-query')).toHaveLength(1)
  })

  row('POST /proving-query: the same job run twice (a re-run of the workflow) makes one query', async () => {
    const first = await proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE })
    const second = await proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE })
    expect(second.provingQueryId).toBe(first.provingQueryId)
    expect(queries()).toHaveLength(1)
    // Other parameters are another job: the derived dedupId differs.
    await proving().submitQuery({ declaredJobSize: 'S', pieZip: FIXTURE_PIE })
    expect(queries()).toHaveLength(2)
  })

  row('POST /proving-query: sent while the emulator restarts (connection refused): retried, one query', async () => {
    await restart()
    const result = await patient().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE })
    expect(queries().map((query) => query.id)).toEqual([result.provingQueryId])
    expect(posts('/proving-query')).toHaveLength(1)
  })
})

describe('L2 endpoints (no dedupId): never sent again once the body may have been processed', () => {
  const ambiguous: { name: string; path: string; fault: Record<string, unknown>; created: boolean }[] = [
    { name: 'answer lost after processing (drop-after)', path: L2_PIE, fault: { kind: 'drop-after' }, created: true },
    {
      name: 'reset after the body was read (drop-after-body)',
      path: L2_PIE,
      fault: { kind: 'drop-after-body' },
      created: false,
    },
    { name: 'reset before the body was read (drop)', path: L2_PIE, fault: { kind: 'drop' }, created: false },
    { name: 'answer cut halfway (truncate)', path: L2_PIE, fault: { kind: 'truncate' }, created: true },
    { name: 'HTML 502 from a gateway', path: L2_PIE, fault: { kind: 'html-502' }, created: false },
    { name: '500 from the service', path: L2_PIE, fault: { kind: 'error' }, created: false },
    {
      name: '503 without Retry-After (a gateway may have passed the body on)',
      path: L2_PIE,
      fault: { kind: 'status', status: 503 },
      created: false,
    },
    {
      name: 'proof verification: answer lost after processing',
      path: L2_PROOF,
      fault: { kind: 'drop-after' },
      created: true,
    },
  ]
  for (const spec of ambiguous) {
    const name = `POST ${spec.path === L2_PIE ? 'L2 PIE' : 'L2 proof'}: ${spec.name}`
    row(name, async () => {
      await fault({ method: 'POST', path: spec.path, ...spec.fault, times: 5 })
      const submit =
        spec.path === L2_PIE
          ? proving().submitPie({ pieZip: FIXTURE_PIE })
          : proving().submitProofVerification({
              proof: proofFile,
              stoneVersion: 'stone6',
              memoryVerification: 'relaxed',
            })
      const error = await failure(submit)
      expectAmbiguous(
        error,
        /Look for a new query among your queries \(ProvingClient.listQueries\) before submitting again/,
      )
      expect(posts(spec.path)).toHaveLength(1)
      expect(queries()).toHaveLength(spec.created ? 1 : 0)
      assertNoLeak(name, { message: error.message })
    })
  }

  const refused: { name: string; fault: Record<string, unknown> }[] = [
    { name: '503 with Retry-After', fault: { kind: 'status', status: 503, headers: { 'retry-after': '0' } } },
    {
      name: '429 with Retry-After',
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '0' }, body: { error: 'Rate limit exceeded' } },
    },
  ]
  for (const spec of refused) {
    row(`POST L2 PIE: ${spec.name}: refused before processing, so sent again; one query`, async () => {
      await fault({ method: 'POST', path: L2_PIE, ...spec.fault, times: 2 })
      const { provingQueryId } = await proving().submitPie({ pieZip: FIXTURE_PIE })
      expect(queries().map((query) => query.id)).toEqual([provingQueryId])
      expect(posts(L2_PIE)).toHaveLength(3)
    })
  }

  row('POST L2 PIE: sent while the emulator restarts (connection refused): retried, one query', async () => {
    await restart()
    const { provingQueryId } = await patient().submitPie({ pieZip: FIXTURE_PIE })
    expect(queries().map((query) => query.id)).toEqual([provingQueryId])
    expect(posts(L2_PIE)).toHaveLength(1)
  })

  row('CLI prove: answer lost: exit 3, the ambiguity and how to check, one POST', async () => {
    await fault({ method: 'POST', path: L2_PIE, kind: 'drop-after' })
    const result = await runCli(['prove', FIXTURE_PIE, '--wait'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY },
    })
    expect(result.code).toBe(3)
    const lines = result.stderr
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('proving: '))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toBe(
      'proving: The submission may or may not have reached the proving service; it was not sent again, to avoid paying twice.',
    )
    expect(result.stderr).toContain('`proving query list`')
    expect(result.stderr).not.toMatch(/\n\s+at /)
    expect(posts(L2_PIE)).toHaveLength(1)
    expect(queries()).toHaveLength(1)
    assertNoLeak('CLI prove: answer lost', { stdout: result.stdout, stderr: result.stderr })
  })

  row('action prove: answer lost: the step fails with the ambiguity, no query-id output, one POST', async () => {
    await fault({ method: 'POST', path: L2_PIE, kind: 'drop-after' })
    const { run } = await import('../../src/action/actions/main.ts')
    const io = fakeIO(
      { pie: FIXTURE_PIE, 'api-key': KEY, 'base-url': emulator.url },
      { env: { GITHUB_WORKSPACE: REPO_ROOT } },
    )
    await run(io)
    expect(io.failed).toMatch(/may or may not have reached the proving service; it was not sent again/)
    expect(io.summary).toMatch(/list of queries for a new one before running this step again/)
    expect(io.outputs['query-id']).toBeUndefined()
    expect(posts(L2_PIE)).toHaveLength(1)
    expect(queries()).toHaveLength(1)
    const found = findSecret(
      {
        failed: io.failed ?? '',
        summary: io.summary,
        outputs: JSON.stringify(io.outputs),
        logs: JSON.stringify(io.logs),
      },
      [KEY],
    )
    if (found) catalogue.leak('action prove: answer lost', found)
  })
})

describe('task and storage-proof submissions (no dedupId): never sent again', () => {
  const taskList = async () => (await emulator.control('GET', '/tasks')).tasks as unknown[]
  const batchQueries = async () =>
    (await emulator.control('GET', '/storage-proof/batch-queries')).batchQueries as unknown[]

  row('POST /tasks: answer lost after processing: ambiguous, one task, how to check', async () => {
    await fault({ method: 'POST', path: '/tasks', kind: 'drop-after' })
    const error = await failure(tasks().scheduleTask(taskBody()))
    expectAmbiguous(error, /Look for a new task among your tasks \(TaskClient.listTasks\)/)
    expect(posts('/tasks')).toHaveLength(1)
    expect(await taskList()).toHaveLength(1)
  })

  row('POST /tasks: 502 from a gateway: ambiguous, sent once', async () => {
    await fault({ method: 'POST', path: '/tasks', kind: 'html-502', times: 3 })
    const error = await failure(tasks().scheduleTask(taskBody()))
    expectAmbiguous(error, /Look for a new task among your tasks \(TaskClient.listTasks\)/)
    expect((error.cause as ProvingKitError).metaMessages?.join('\n')).toMatch(/a proxy or gateway answered/)
    expect(posts('/tasks')).toHaveLength(1)
  })

  row('POST /tasks: throttled (429 with Retry-After): sent again, one task', async () => {
    await emulator.control('POST', '/tasks/throttle', { times: 2 })
    const { uuid } = await tasks().scheduleTask(taskBody())
    expect(posts('/tasks').map((request) => request.status)).toEqual([429, 429, 200])
    expect(((await taskList()) as { uuid: string }[]).map((task) => task.uuid)).toEqual([uuid])
  })

  row('POST /tasks/decommitment: answer lost after processing: ambiguous, sent once', async () => {
    const { provingQueryId } = await proving().submitPie({ pieZip: FIXTURE_PIE })
    await fault({ method: 'POST', path: '/tasks/decommitment', kind: 'drop-after' })
    const error = await failure(
      tasks().submitDecommitment({ proving_query_id: provingQueryId, destination_chain_id: '0xaa36a7' }),
    )
    expectAmbiguous(error, /Look for a new task among your tasks \(TaskClient.listTasks\)/)
    expect(posts('/tasks/decommitment')).toHaveLength(1)
    expect(await taskList()).toHaveLength(1)
  })

  row('POST /batch-query: answer lost after processing: ambiguous, one batch query', async () => {
    await fault({ method: 'POST', path: '/batch-query', kind: 'drop-after' })
    const error = await failure(storage().submitBatchQuery(BATCH_QUERY))
    expectAmbiguous(error, /dashboard explorer/)
    expect(posts('/batch-query')).toHaveLength(1)
    expect(await batchQueries()).toHaveLength(1)
  })

  row('POST /batch-query: reset before the body was read: ambiguous (the client cannot tell), sent once', async () => {
    await fault({ method: 'POST', path: '/batch-query', kind: 'drop', times: 3 })
    const error = await failure(storage().submitBatchQuery(BATCH_QUERY))
    expectAmbiguous(error, /dashboard explorer/)
    expect(posts('/batch-query')).toHaveLength(1)
    expect(await batchQueries()).toHaveLength(0)
  })

  row('CLI task submit: answer lost: exit 3 and how to check', async () => {
    await fault({ method: 'POST', path: '/tasks', kind: 'drop-after' })
    const file = join(dir, 'task.json')
    await writeFile(file, JSON.stringify(taskBody()))
    const result = await runCli(['task', 'submit', file], {
      env: { PROVING_TASKS_URL: emulator.url, PROVING_API_KEY: KEY },
    })
    expect(result.code).toBe(3)
    expect(result.stderr).toMatch(/^proving: The task may or may not have been queued/)
    expect(result.stderr).toContain('`proving task list`')
    expect(posts('/tasks')).toHaveLength(1)
  })
})
