import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { AccountClient } from '../../src/clients/account.ts'
import { ProvingClient } from '../../src/clients/proving.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { TaskClient } from '../../src/clients/tasks.ts'
import { WaitTimeoutError } from '../../src/core/errors.ts'
import type { Logger } from '../../src/core/runtime.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import { findSecret, useCatalogue } from '../helpers/catalogue.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { fakeIO, REPO_ROOT } from '../helpers/run-action.ts'
import { taskBody } from '../helpers/tasks.ts'

/**
 * Fault catalogue, waits: an emulator restart in the middle of a wait (the wait carries on and
 * finishes: state kept on disk, connections dropped, the port refusing for a while), a query or
 * task stuck in one step far longer than expected (a warning, then the overall timeout, with the
 * id and how to resume), and a session token expiring during a long wait (refreshed once).
 *
 * Also covered elsewhere and listed in docs/reliability.md: many refreshes over a 90-minute wait
 * and single-flight refresh (test/e2e/account-refresh.test.ts), a restart by close-and-start on
 * the same port (test/e2e/emulator-time.test.ts).
 */

// Each row has its own emulator: they run side by side.
const { row } = useCatalogue('fault catalogue: waits', { concurrent: true })

const HOUR = 3_600_000
const MINUTE = 60_000
const recorder = () => {
  const lines: string[] = []
  const logger: Logger = {
    debug: (message) => void lines.push(`debug ${message}`),
    info: (message) => void lines.push(`info ${message}`),
    warn: (message) => void lines.push(`warn ${message}`),
    error: (message) => void lines.push(`error ${message}`),
  }
  return { lines, logger }
}

let stateDir: string
beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'reliability-waits-'))
})
afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true })
})

async function withEmulator(
  options: Parameters<typeof startTestEmulator>[0],
  test: (emulator: TestEmulator) => Promise<void>,
): Promise<void> {
  const emulator = await startTestEmulator(options)
  try {
    await test(emulator)
  } finally {
    await emulator.close()
  }
}

/**
 * Restarts the emulator once it has answered a poll (a GET) made from now on: the wait is under
 * way, whatever the machine's speed (an event, not a fixed delay). Then it answers, drops every
 * connection, refuses for `downMs`, and reloads from disk.
 */
async function restartOncePolled(emulator: TestEmulator, downMs: number): Promise<unknown> {
  const since = Date.now()
  const deadline = since + 20_000
  while (!emulator.requests().some((request) => request.method === 'GET' && Date.parse(request.at) >= since)) {
    if (Date.now() > deadline) throw new Error('no poll came to restart during')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return emulator.call('POST', '/_emulator/restart', { json: { downMs } })
}

const dirFor = async (name: string) => {
  const dir = join(stateDir, name)
  await rm(dir, { recursive: true, force: true })
  return dir
}

describe('an emulator restart during a wait: the wait carries on and finishes', () => {
  row(
    'CLI query wait: restart with state reloaded from disk, down 1.5 s',
    async () => {
      await withEmulator(
        { stateDir: await dirFor('cli-query'), timing: { receivedMs: 600, stepMs: 600 } },
        async (emulator) => {
          const id = await submitFixturePie(emulator)
          const restarted = restartOncePolled(emulator, 1_500)
          const result = await runCli(['query', 'wait', id, '--json'], {
            env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY },
          })
          expect(await restarted).toMatchObject({ status: 202, body: { restarting: true, stateReloaded: true } })
          expect(result.code, result.stderr).toBe(0)
          expect(JSON.parse(result.stdout).provingQuery).toMatchObject({ id, status: 'DONE' })
          // The polls that met the restart failed and were retried: the log shows the gap.
          expect(
            emulator
              .requests()
              .filter((request) => request.path.startsWith('/docs/proving-query/'))
              .at(-1)!.status,
          ).toBe(200)
          expect(findSecret({ stdout: result.stdout, stderr: result.stderr }, [KEY])).toBeUndefined()
        },
      )
    },
    30_000,
  )

  row(
    'library waitForQuery: two restarts in a row',
    async () => {
      await withEmulator(
        { stateDir: await dirFor('lib-query'), timing: { receivedMs: 500, stepMs: 500 } },
        async (emulator) => {
          const id = await submitFixturePie(emulator)
          const client = new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent })
          const first = restartOncePolled(emulator, 500)
          const second = first.then(() => restartOncePolled(emulator, 500))
          const { provingQuery } = await client.waitForQuery(id, {
            schedule: { minIntervalMs: 100, maxIntervalMs: 300 },
          })
          await second
          expect(provingQuery.status).toBe('DONE')
          expect(Object.keys(emulator.state.queries)).toEqual([id])
        },
      )
    },
    30_000,
  )

  row(
    'CLI task wait: restart with the task state reloaded from disk',
    async () => {
      await withEmulator(
        { stateDir: await dirFor('cli-task'), timing: { receivedMs: 300, stepMs: 150 } },
        async (emulator) => {
          const { uuid } = await new TaskClient({
            baseUrl: emulator.url,
            apiKey: KEY,
            dispatcher: emulator.agent,
          }).scheduleTask(taskBody())
          const restarted = restartOncePolled(emulator, 1_000)
          const result = await runCli(['task', 'wait', uuid, '--json'], { env: { PROVING_TASKS_URL: emulator.url } })
          await restarted
          expect(result.code, result.stderr).toBe(0)
          expect(JSON.parse(result.stdout)).toMatchObject({ taskId: uuid, status: 'TaskDecommitmentCompleted' })
        },
      )
    },
    30_000,
  )

  row(
    'library waitForBatchQuery: restart with the batch query reloaded from disk',
    async () => {
      await withEmulator({ stateDir: await dirFor('lib-storage') }, async (emulator) => {
        await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 300, inProgressMs: 1_500 })
        const storage = new StorageProofClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent })
        const { internalId } = await storage.submitBatchQuery({
          destinationChainId: '11155111',
          fee: '0',
          data: {
            '11155111': {
              'block:1': {
                accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
              },
            },
          },
        })
        const restarted = restartOncePolled(emulator, 800)
        const result = await storage.waitForBatchQuery(internalId, {
          schedule: { minIntervalMs: 100, maxIntervalMs: 300 },
        })
        await restarted
        expect(result).toEqual({ internalId, queryStatus: 'DONE' })
      })
    },
    30_000,
  )

  row(
    'action wait (in-process): restart mid-wait, the step passes the gate',
    async () => {
      await withEmulator(
        { stateDir: await dirFor('action-wait'), timing: { receivedMs: 500, stepMs: 500 } },
        async (emulator) => {
          const id = await submitFixturePie(emulator)
          const restarted = restartOncePolled(emulator, 1_000)
          const { run } = await import('../../src/action/actions/wait.ts')
          const io = fakeIO(
            { 'query-id': id, 'api-key': KEY, 'base-url': emulator.url },
            { env: { GITHUB_WORKSPACE: REPO_ROOT } },
          )
          await run(io)
          await restarted
          expect(io.failed).toBeUndefined()
          expect(io.outputs).toMatchObject({ 'query-id': id, status: 'DONE' })
        },
      )
    },
    30_000,
  )
})

describe('a query or task stuck in one step: a warning, then the overall timeout', () => {
  row('library waitForQuery: 10 h in one step (simulated time): one warning at 30 min, timeout at 3 h', async () => {
    await withEmulator(
      { clock: simulatedClock(Date.parse('2030-01-01T00:00:00Z')), timing: { receivedMs: MINUTE, stepMs: 10 * HOUR } },
      async (emulator) => {
        const id = await submitFixturePie(emulator)
        const { lines, logger } = recorder()
        const stuck: { step: string | null; stepElapsedMs: number }[] = []
        const client = new ProvingClient({
          baseUrl: emulator.url,
          apiKey: KEY,
          dispatcher: emulator.agent,
          clock: clientClockFor(emulator.clock),
          logger,
        })
        const error = await client
          .waitForQuery(id, {
            timeoutMs: 3 * HOUR,
            onStuck: ({ step, stepElapsedMs }) => stuck.push({ step, stepElapsedMs }),
          })
          .then(
            () => undefined,
            (caught: unknown) => caught,
          )
        expect(error).toBeInstanceOf(WaitTimeoutError)
        const timeout = error as WaitTimeoutError
        // The library's words for every caller; the CLI adds its command (below).
        expect(timeout.shortMessage).toBe(`Timed out after 3h waiting for query ${id}.`)
        expect(timeout.lastSeen).toMatchObject({ id, status: 'IN_PROGRESS', step: 'TRACE_GENERATION' })
        const warnings = lines.filter((line) => line.startsWith('warn ') && line.includes('far longer than expected'))
        expect(warnings).toHaveLength(1)
        expect(warnings[0]).toMatch(new RegExp(`Query ${id} has been IN_PROGRESS in step TRACE_GENERATION for 3[01]m`))
        expect(stuck).toHaveLength(1)
        expect(stuck[0]!.stepElapsedMs).toBeGreaterThan(30 * MINUTE)
        // Polls back off to 30 s: about 3 h / 30 s polls, not thousands.
        const polls = emulator.requests().filter((request) => request.path.startsWith('/docs/proving-query/')).length
        expect(polls).toBeGreaterThan(300)
        expect(polls).toBeLessThan(500)
      },
    )
  })

  row('library waitForTask: 10 h in one stage (simulated time): one warning, then the timeout', async () => {
    await withEmulator({ clock: simulatedClock(Date.parse('2030-01-01T00:00:00Z')) }, async (emulator) => {
      await emulator.control('PUT', '/tasks/timing', { receivedMs: MINUTE, stageMs: 10 * HOUR, handoffMs: MINUTE })
      const { lines, logger } = recorder()
      const client = new TaskClient({
        baseUrl: emulator.url,
        apiKey: KEY,
        dispatcher: emulator.agent,
        clock: clientClockFor(emulator.clock),
        logger,
      })
      const { uuid } = await client.scheduleTask(taskBody())
      const error = await client.waitForTask(uuid, { timeoutMs: 2 * HOUR }).then(
        () => undefined,
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(WaitTimeoutError)
      expect((error as WaitTimeoutError).shortMessage).toBe(`Timed out after 2h waiting for task ${uuid}.`)
      expect(
        lines.filter((line) => line.startsWith('warn ') && line.includes(`Task ${uuid} has been DryRunStarted`)),
      ).toHaveLength(1)
    })
  })

  row('CLI query wait --timeout 3s on a stuck query: exit 4, the id and how to resume', async () => {
    await withEmulator({ timing: { receivedMs: 0, stepMs: HOUR } }, async (emulator) => {
      const id = await submitFixturePie(emulator)
      const result = await runCli(['query', 'wait', id, '--timeout', '3s'], {
        env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY },
      })
      expect(result.code).toBe(4)
      expect(result.stderr).toContain(
        `proving: Timed out after 3s waiting for query ${id}. Resume with: proving query wait ${id}`,
      )
      expect(result.stderr).not.toMatch(/\n\s+at /)
    })
  })

  row('action wait (in-process) on a stuck query: timed out, query-id and status kept, resume snippet', async () => {
    await withEmulator({ timing: { receivedMs: 0, stepMs: HOUR } }, async (emulator) => {
      const id = await submitFixturePie(emulator)
      const { run } = await import('../../src/action/actions/wait.ts')
      const io = fakeIO(
        { 'query-id': id, 'api-key': KEY, 'base-url': emulator.url, 'timeout-minutes': '0.05' },
        { env: { GITHUB_WORKSPACE: REPO_ROOT } },
      )
      await run(io)
      expect(io.failed).toBe(`Timed out waiting for query ${id}. Resume with the wait sub-action: query-id ${id}.`)
      expect(io.outputs).toMatchObject({ 'query-id': id, status: 'IN_PROGRESS', step: 'TRACE_GENERATION' })
      expect(io.state['query-id']).toBe(id)
      expect(io.summary).toContain(`query-id: ${id}`)
    })
  })
})

describe('a session token expiring during a long wait', () => {
  row(
    'simulated time: a 10-minute token, a 14-minute wait: refreshed exactly once, no sign-in again, no 401',
    async () => {
      await withEmulator({ clock: simulatedClock(Date.parse('2030-01-01T00:00:00Z')) }, async (emulator) => {
        await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 10 * MINUTE })
        await emulator.control('PUT', '/storage-proof/timing', { receivedMs: MINUTE, inProgressMs: 13 * MINUTE })
        const clock = clientClockFor(emulator.clock)
        const account = new AccountClient({
          baseUrl: emulator.url,
          privateKey: generatePrivateKey(),
          clock,
          dispatcher: emulator.agent,
        })
        const storage = new StorageProofClient({
          baseUrl: emulator.url,
          apiKey: account.apiKeyProvider(),
          clock,
          dispatcher: emulator.agent,
        })
        const { internalId } = await storage.submitBatchQuery({
          destinationChainId: '11155111',
          fee: '0',
          data: {
            '11155111': {
              'block:1': {
                accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
              },
            },
          },
        })
        const result = await storage.waitForBatchQuery(internalId, { timeoutMs: HOUR })
        expect(result.queryStatus).toBe('DONE')
        expect(account.stats).toEqual({ signIns: 1, refreshes: 1 })
        expect(
          emulator
            .requests()
            .filter((request) => request.path === '/auth/refresh-token')
            .map((request) => request.status),
        ).toEqual([200])
        expect(emulator.requests().filter((request) => request.status === 401)).toEqual([])
      })
    },
  )
})
