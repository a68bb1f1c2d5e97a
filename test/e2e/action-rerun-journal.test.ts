import { mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { zstdDecompressSync, gunzipSync } from 'node:zlib'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { run as runMain } from '../../src/action/actions/main.ts'
import { run as runPost } from '../../src/action/actions/post.ts'
import { type CacheServiceStandIn, startCacheService } from '../helpers/cache-service.ts'
import { runPost as runPostProcess, startAction } from '../helpers/run-action.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { generatedPie } from '../helpers/example-pie.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * "Re-run jobs" knows what the earlier attempt started: the root action's journal (RUNNER_TEMP,
 * emptied after every job) is saved to the Actions cache when the step ends, or by the post
 * step, and read back by the next attempt (src/action/steps/journal-cache.ts). Two attempts of
 * one run, each with RUNNER_TEMP emptied as the runner empties it, through @actions/cache itself
 * against a local stand-in of the runner's cache service and its blob storage
 * (test/helpers/cache-service.ts); the queries counted by the emulator's own state.
 */

let emulator: TestEmulator
let cache: CacheServiceStandIn
let root: string
let seed = 900
let runs = 0

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 60 } })
  cache = await startCacheService()
  root = await mkdtemp(join(tmpdir(), 'rerun-journal-'))
})
afterAll(async () => {
  await emulator.close()
  await cache.close()
  await rm(root, { recursive: true, force: true })
})
beforeEach(() => {
  const write = process.stdout.write.bind(process.stdout)
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    // @actions/cache's own lines (workflow commands, tar's command line): not printed.
    if (/^(::|\[command\]|Cache |Received |Sent |Failed |Attempt )/m.test(String(chunk))) return true
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
  })
})
afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllEnvs()
})

const counters = async (): Promise<{ submissions: number; retries: number }> =>
  (await emulator.control('GET', '/state')).counters

type Run = { id: string; temp: string; workspace: string; token: string }

/** One workflow run of a job on a branch: its RUNNER_TEMP keeps its path, emptied before each attempt. */
async function newRun(options: { ref?: string } = {}): Promise<Run> {
  const id = String(5100 + ++runs)
  const temp = join(root, `run-${id}`, '_temp')
  const workspace = join(root, `run-${id}`, 'workspace')
  await mkdir(workspace, { recursive: true })
  return { id, temp, workspace, token: cache.tokenFor({ ref: options.ref ?? 'refs/heads/release' }) }
}

type Attempt = { io: RecordingIO; post: RecordingIO }

/**
 * Attempt `number` of the run: main step, then its post step, as the runner runs them. `stopAt`
 * cancels the main step when its log says so (the runner's SIGINT); `withCache: false` is a
 * runner whose step gets no cache variables.
 */
async function attempt(
  run: Run,
  number: number,
  inputs: Record<string, string>,
  options: { stopAt?: RegExp; onLine?: (line: string) => void; withCache?: boolean } = {},
): Promise<Attempt> {
  await rm(run.temp, { recursive: true, force: true })
  await mkdir(run.temp, { recursive: true })
  const cacheEnv = options.withCache === false ? {} : cache.env(run.token)
  // @actions/cache reads the process's environment (on the runner, the step's): the same values.
  for (const [name, value] of Object.entries({ ...cacheEnv, RUNNER_TEMP: run.temp, GITHUB_WORKSPACE: run.workspace }))
    vi.stubEnv(name, value)
  const {
    ACTIONS_RESULTS_URL: _,
    ACTIONS_RUNTIME_TOKEN: __,
    ACTIONS_CACHE_SERVICE_V2: ___,
    ...context
  } = runnerEnv(run, number)
  const env = { ...cacheEnv, ...context, RUNNER_TEMP: run.temp, GITHUB_WORKSPACE: run.workspace }
  const all = { 'base-url': emulator.url, 'api-key': KEY, 'timeout-minutes': '1', ...inputs }
  const io = new RecordingIO(all)
  io.env = env
  const controller = new AbortController()
  for (const method of ['info', 'startGroup'] as const) {
    const write = io[method].bind(io)
    io[method] = (line: string) => {
      write(line)
      options.onLine?.(line)
      if (options.stopAt?.test(line)) controller.abort(new Error('cancelled'))
    }
  }
  await runMain(io, { signal: controller.signal })
  const post = new RecordingIO(all)
  post.env = env
  post.state = { ...io.state }
  await runPost(post)
  return { io, post }
}

const log = (io: RecordingIO) => io.logs.join('\n')

/** The runner's variables for attempt `number` of the run, as `attempt` gives them. */
function runnerEnv(run: Run, number: number): Record<string, string> {
  return {
    ...cache.env(run.token),
    GITHUB_REPOSITORY: 'acme/widgets',
    GITHUB_WORKFLOW: 'release',
    GITHUB_JOB: 'prove',
    GITHUB_ACTION: '__proving-kit_proving-kit',
    GITHUB_RUN_ID: run.id,
    GITHUB_RUN_ATTEMPT: String(number),
  }
}

/** Queries submitted meanwhile run for longer than any wait here, until completed. */
async function slowly<T>(work: () => Promise<T>): Promise<T> {
  await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 600_000 })
  try {
    return await work()
  } finally {
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 60 })
  }
}

/** A query of another PIE of the same program, of the same key, still running. */
async function neighbourStillRunning(): Promise<string> {
  const { zip } = await generatedPie({ seed: seed++ })
  return slowly(async () => (await emulator.client().submitPie({ pieZip: zip })).provingQueryId)
}

/** Completes the query the step starts waiting for (the line its wait opens with). */
const completeWhenWaited = (line: string) => {
  const waited = /^Waiting for query (\S+)/.exec(line)
  if (waited) void emulator.control('POST', `/queries/${waited[1]}/complete`).catch(() => {})
}

/** Every file of every archive the stand-in holds, as text (zstd or gzip, then tar). */
function archivesText(): string {
  return cache
    .entries()
    .filter((entry) => entry.blob)
    .map((entry) => {
      const blob = entry.blob!
      const tar = blob[0] === 0x1f && blob[1] === 0x8b ? gunzipSync(blob) : zstdDecompressSync(blob)
      return tar.toString('latin1')
    })
    .join('\n')
}

describe('the root action, "Re-run jobs" with the journal in the Actions cache', () => {
  it('attempt 2 follows exactly the query attempt 1 left running; another PIE of the same program still running does not hold it up', async () => {
    const run = await newRun()
    const neighbour = await neighbourStillRunning()
    const { zip } = await generatedPie({ seed: seed++ })
    const before = await counters()
    // Cancelled while it waits (the runner's SIGINT): the step saves its journal as it ends.
    const one = await slowly(() => attempt(run, 1, { pie: zip }, { stopAt: /^Waiting for query/ }))
    const queryId = one.io.outputs['query-id']!
    expect(queryId).toBeTruthy()
    expect(one.io.failed).toBeDefined()
    expect(log(one.io)).toMatch(
      /Saved the journal to the Actions cache for a re-run of this job: 1 entry \(proving-kit-journal-\d+-[0-9a-f]{32}-1\)/,
    )
    // The post step finds it saved: nothing saved twice.
    expect(cache.entries().filter((entry) => entry.finalized && entry.key.includes(`-${run.id}-`))).toHaveLength(1)

    // Still running: attempt 2 follows it (and it is completed once attempt 2 waits for it).
    const two = await attempt(run, 2, { pie: zip }, { onLine: completeWhenWaited })
    expect(two.io.failed, log(two.io)).toBeUndefined()
    expect(two.io.outputs).toMatchObject({ 'query-id': queryId, status: 'DONE', 'facts-verified': 'true' })
    expect(log(two.io)).toContain(
      `Read back the journal of attempt 1 of this step from the Actions cache: 1 entry (query ${queryId})`,
    )
    expect(log(two.io)).toMatch(new RegExp(`Following query ${queryId}, submitted by an earlier run`))
    // Nothing was looked up, so nothing waited for the neighbour, which still runs.
    expect(log(two.io)).not.toMatch(/This is a re-run: \d+ quer/)
    expect((await emulator.client().readQuery(neighbour)).provingQuery.status).toBe('IN_PROGRESS')
    await emulator.control('POST', `/queries/${neighbour}/complete`)
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(1)
    // The journal holds no API key: not in any archive the cache keeps, nor in a key.
    expect(archivesText()).toContain(queryId)
    expect(archivesText()).not.toContain(KEY)
    expect(
      cache
        .entries()
        .map((entry) => entry.key)
        .join('\n'),
    ).not.toContain(KEY)
  })

  it("attempt 1's query FAILED with a retriable error: attempt 2 retries it instead of paying for a new one", async () => {
    const run = await newRun()
    const { zip } = await generatedPie({ seed: seed++ })
    // The case that held every re-run for its whole timeout: nothing of this PIE runs, another PIE of its program does.
    const neighbour = await neighbourStillRunning()
    await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: true })
    const before = await counters()
    const one = await attempt(run, 1, { pie: zip })
    expect(one.io.failed).toBeDefined()
    const failed = one.io.outputs['query-id']!
    expect(one.io.outputs.status).toBe('FAILED')
    const two = await attempt(run, 2, { pie: zip })
    expect(two.io.failed, log(two.io)).toBeUndefined()
    expect(two.io.outputs).toMatchObject({ 'query-id': failed, status: 'DONE' })
    expect(log(two.io)).toMatch(
      new RegExp(`Query ${failed} failed with a retriable error \\(.+\\); retried it \\(retry 1 of 3\\)`),
    )
    expect(two.io.summary).toContain('Earlier attempt')
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(1)
    expect(after.retries - before.retries).toBe(1)
    expect(log(two.io)).not.toMatch(/This is a re-run: \d+ quer/)
    expect((await emulator.client().readQuery(neighbour)).provingQuery.status).toBe('IN_PROGRESS')
    await emulator.control('POST', `/queries/${neighbour}/complete`)
  })

  it('a main step whose save fails (the service refuses it) is saved by the post step; the step itself is not failed by it', async () => {
    const run = await newRun()
    const { zip } = await generatedPie({ seed: seed++ })
    cache.failNext('CreateCacheEntry', { status: 401, code: 'unauthenticated', msg: 'token expired' })
    const one = await attempt(run, 1, { pie: zip, wait: 'false' })
    expect(one.io.failed, log(one.io)).toBeUndefined()
    expect(log(one.io)).toMatch(/warning: The journal could not be saved to the Actions cache/)
    expect(log(one.post)).toMatch(
      /Saved the journal to the Actions cache for a re-run of this job: 1 entry \(proving-kit-journal-\d+-[0-9a-f]{32}-1-post\)/,
    )
    const before = await counters()
    const two = await attempt(run, 2, { pie: zip, wait: 'false' })
    expect(two.io.failed, log(two.io)).toBeUndefined()
    expect(two.io.outputs['query-id']).toBe(one.io.outputs['query-id'])
    expect((await counters()).submissions - before.submissions).toBe(0)
  })

  it('a main step killed (SIGKILL) while it waits: the post step saves the journal, and attempt 2 follows the query', {
    timeout: 60_000,
  }, async () => {
    const run = await newRun()
    const { zip } = await generatedPie({ seed: seed++ })
    await rm(run.temp, { recursive: true, force: true })
    await mkdir(run.temp, { recursive: true })
    const inputs = { pie: zip, 'base-url': emulator.url, 'api-key': KEY, 'timeout-minutes': '1' }
    const started = { inputs, env: runnerEnv(run, 1), runnerTemp: run.temp, workspace: run.workspace, fromSource: true }
    const before = await counters()
    const main = await slowly(async () => {
      const step = startAction('', started)
      await step.waitFor(/Waiting for query/, 30_000)
      return step
    })
    main.child.kill('SIGKILL')
    const killed = await main.done
    expect(killed.state['journal-carry']).toBeTruthy()
    expect(killed.state['journal-saved']).toBeUndefined()
    const post = await runPostProcess('', killed, started)
    expect(post.code, post.stdout + post.stderr).toBe(0)
    expect(post.stdout).toMatch(
      /Saved the journal to the Actions cache for a re-run of this job: 1 entry \(proving-kit-journal-\d+-[0-9a-f]{32}-1-post\)/,
    )
    expect(post.stdout + post.stderr).not.toContain(KEY)
    const queryId = killed.state['query-id']!
    const two = await attempt(run, 2, { pie: zip }, { onLine: completeWhenWaited })
    expect(two.io.failed, log(two.io)).toBeUndefined()
    expect(two.io.outputs).toMatchObject({ 'query-id': queryId, status: 'DONE' })
    expect(log(two.io)).toContain(
      `Read back the journal of attempt 1 of this step from the Actions cache: 1 entry (query ${queryId})`,
    )
    expect(log(two.io)).not.toMatch(/This is a re-run: \d+ quer/)
    expect((await counters()).submissions - before.submissions).toBe(1)
  })

  it('where nothing was saved (a lost runner) or there is no cache, the re-run looks up the queries still running, as before', async () => {
    // Attempt 1 ran on a runner that was lost: its step got no cache, nothing was saved.
    const run = await newRun()
    const { zip } = await generatedPie({ seed: seed++ })
    // Still running when attempt 2 looks (completed once the lookup waits for it).
    const one = await slowly(() => attempt(run, 1, { pie: zip, wait: 'false' }, { withCache: false }))
    const queryId = one.io.outputs['query-id']!
    expect(log(one.io)).not.toMatch(/Saved the journal/)
    const before = await counters()
    const completeWhenLookedUp = (line: string) => {
      if (line.startsWith('This is a re-run:') && line.includes(queryId))
        void emulator.control('POST', `/queries/${queryId}/complete`).catch(() => {})
    }
    const two = await attempt(run, 2, { pie: zip }, { onLine: completeWhenLookedUp })
    expect(two.io.failed, log(two.io)).toBeUndefined()
    expect(log(two.io)).toContain('No journal of an earlier attempt of this step in the Actions cache')
    expect(log(two.io)).toMatch(new RegExp(`This is a re-run: \\d+ quer.+ still running \\(.*${queryId}`))
    expect(two.io.outputs).toMatchObject({ 'query-id': queryId, reused: 'query' })
    expect((await counters()).submissions - before.submissions).toBe(0)
  })

  it("nothing saved, attempt 1's query FAILED with a retriable error: the lookup retries that FAILED query, follows it and pays nothing new", async () => {
    const run = await newRun()
    const { zip } = await generatedPie({ seed: seed++ })
    await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: true })
    const one = await attempt(run, 1, { pie: zip }, { withCache: false })
    const failed = one.io.outputs['query-id']!
    expect(one.io.outputs.status).toBe('FAILED')
    const before = await counters()
    const two = await attempt(run, 2, { pie: zip })
    expect(two.io.failed, log(two.io)).toBeUndefined()
    expect(log(two.io)).toMatch(
      new RegExp(
        `This is a re-run: Query ${failed} failed with a retriable error \\(.+\\); retried it \\(retry 1 of 3\\)`,
      ),
    )
    expect(two.io.outputs).toMatchObject({ 'query-id': failed, status: 'DONE', 'facts-verified': 'true' })
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(0)
    expect(after.retries - before.retries).toBe(1)
  })

  it("attempt 3 after a lost attempt 2 reads attempt 1's journal and still looks up what attempt 2 may have left", async () => {
    const run = await newRun()
    const { zip } = await generatedPie({ seed: seed++ })
    const one = await attempt(run, 1, { pie: zip, wait: 'false' })
    expect(log(one.io)).toMatch(/Saved the journal/)
    // Attempt 2's runner was lost before it saved anything.
    const three = await attempt(run, 3, { pie: zip })
    expect(three.io.failed, log(three.io)).toBeUndefined()
    expect(log(three.io)).toMatch(
      /Read back the journal of attempt 1 of this step .*\nAttempt 2 left none, so the queries of the key still running/s,
    )
    expect(three.io.outputs['query-id']).toBe(one.io.outputs['query-id'])
    // Passed on the query it reused: attempt 1's entry is settled, and what attempt 3 saves says so.
    expect(log(three.io)).toMatch(
      /Saved the journal to the Actions cache for a re-run of this job: 0 entries \(proving-kit-journal-\d+-[0-9a-f]{32}-3\)/,
    )
  })
})
