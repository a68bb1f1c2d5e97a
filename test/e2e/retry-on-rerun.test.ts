import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../src/action/actions/main.ts'
import { sha256File } from '../../src/pie/shared/index.ts'
import { SubmissionJournal } from '../../src/pipeline/journal.ts'
import { spawnCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * Retry before paying again (issue 32, 4): a re-run that finds its earlier query FAILED with a
 * retriable error, fewer than 3 retries used, calls the retry endpoint and follows that query;
 * a non-retriable failure, or one past the limit, is submitted anew. Counted by the emulator's
 * own control API (GET /_emulator/state: its submissions and retries), not by the client.
 */

let emulator: TestEmulator

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 150 } })
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(async () => {
  await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 400 })
})

/** What the emulator itself counts: submissions (new, paid queries) and retries. */
const counters = async (): Promise<{ submissions: number; retries: number }> =>
  (await emulator.control('GET', '/state')).counters
const env = (journal: string) => ({
  PROVING_BASE_URL: emulator.url,
  PROVING_API_KEY: KEY,
  PROVING_JOURNAL_DIR: journal,
})
const newJournal = () => mkdtemp(join(tmpdir(), 'journal-retry-'))

describe('CLI, L2 endpoint (the journal finds the earlier query)', () => {
  /** A first run killed during its wait, its query then failed as asked: the query id. */
  const killedThenFailed = async (journal: string, retriable: boolean): Promise<string> => {
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait', '--reuse', 'never'], { env: env(journal) })
    const id = (await first.waitForOutput(/Submitted: query (\S+)/))[1]!
    first.child.kill('SIGKILL')
    await first.done
    await emulator.control('POST', `/queries/${id}/fail`, { retriable })
    return id
  }

  it('a retriable failure: the re-run retries the same query (retry 1 of 3), follows it to DONE and submits nothing', async () => {
    const journal = await newJournal()
    const failed = await killedThenFailed(journal, true)
    const before = await counters()
    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait', '--json', '--reuse', 'never'], { env: env(journal) })
      .done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(
      new RegExp(`Query ${failed} failed with a retriable error \\(.+\\); retried it \\(retry 1 of 3\\)`),
    )
    const result = JSON.parse(again.stdout)
    expect(result.provingQuery.id).toBe(failed)
    expect(result.provingQuery.status).toBe('DONE')
    expect(result.gate.ok).toBe(true)
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(0)
    expect(after.retries - before.retries).toBe(1)
    await rm(journal, { recursive: true, force: true })
  }, 60_000)

  it('a non-retriable failure: no retry, one new query, and the re-run says why', async () => {
    const journal = await newJournal()
    const failed = await killedThenFailed(journal, false)
    const before = await counters()
    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait', '--json', '--reuse', 'never'], { env: env(journal) })
      .done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`earlier query ${failed} FAILED`)
    expect(again.stderr).toMatch(
      /cannot be retried \(its error is not retriable .*\); submitting it again, as a new query/,
    )
    expect(JSON.parse(again.stdout).provingQuery.id).not.toBe(failed)
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(1)
    expect(after.retries - before.retries).toBe(0)
    await rm(journal, { recursive: true, force: true })
  }, 60_000)

  it('the retry limit: a query retried 3 times is not retried a fourth time; one new query instead', async () => {
    const journal = await newJournal()
    // Fails retriably on its first run and on every retry.
    await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: true, times: 4 })
    const first = await spawnCli(['prove', FIXTURE_PIE, '--json', '--reuse', 'never'], { env: env(journal) }).done
    expect(first.code, first.stderr).toBe(0)
    const id = JSON.parse(first.stdout).provingQueryId as string
    const client = emulator.client()
    for (let retry = 1; retry <= 3; retry++) {
      await client.waitForQuery(id, { timeoutMs: 30_000 })
      expect((await client.retryQuery(id)).provingQuery.retryCount).toBe(retry)
    }
    expect((await client.waitForQuery(id, { timeoutMs: 30_000 })).provingQuery.status).toBe('FAILED')
    // The first run's entry is gone once it reported the id; a killed run leaves one: write it back.
    const store = new SubmissionJournal(journal)
    const parts = {
      pieDigest: await sha256File(FIXTURE_PIE),
      service: new URL(emulator.url).origin,
      endpoint: 'l2-pie' as const,
      params: { layout: 'auto', prover: 'svc_sharp', mockFactHash: false },
    }
    const key = store.keyOf(parts)
    await store.open()
    await store.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitted', provingQueryId: id })
    const before = await counters()
    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait', '--json', '--reuse', 'never'], { env: env(journal) })
      .done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(
      /cannot be retried \(the retry limit is reached \(3 of 3 retries used\)\); submitting it again, as a new query/,
    )
    expect(JSON.parse(again.stdout).provingQuery.id).not.toBe(id)
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(1)
    expect(after.retries - before.retries).toBe(0)
    await rm(journal, { recursive: true, force: true })
  }, 90_000)
})

describe('general submission (the dedupId finds the earlier query)', () => {
  it('CLI: a retriable failure is retried under the same dedupId, not submitted under the next one', async () => {
    const journal = await newJournal()
    const args = ['prove', FIXTURE_PIE, '--result', 'PROOF_GENERATION', '--wait', '--json', '--reuse', 'never']
    const first = spawnCli(args, { env: env(journal) })
    const failed = (await first.waitForOutput(/Submitted: query (\S+)/))[1]!
    await emulator.control('POST', `/queries/${failed}/fail`, { retriable: true })
    expect((await first.done).code).toBe(1)
    const before = await counters()
    const again = await spawnCli(args, { env: env(journal) }).done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(
      new RegExp(`Query ${failed} failed with a retriable error \\(.+\\); retried it \\(retry 1 of 3\\)`),
    )
    expect(JSON.parse(again.stdout).provingQuery.id).toBe(failed)
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(0)
    expect(after.retries - before.retries).toBe(1)
    await rm(journal, { recursive: true, force: true })
  }, 60_000)

  it('action, "Re-run jobs": the FAILED attempt\'s query is retried and followed to a passing gate; the summary says so', async () => {
    const attempt = async (number: number) => {
      const io = new RecordingIO({
        pie: FIXTURE_PIE,
        'base-url': emulator.url,
        'api-key': KEY,
        result: 'PROOF_GENERATION',
        reuse: 'never',
        'timeout-minutes': '1',
      })
      io.env = {
        RUNNER_TEMP: await mkdtemp(join(tmpdir(), 'runner-temp-')),
        GITHUB_REPOSITORY: 'proving-kit/proving-kit',
        GITHUB_WORKFLOW: 'release',
        GITHUB_JOB: 'prove',
        GITHUB_RUN_ID: '3232',
        GITHUB_RUN_ATTEMPT: String(number),
      }
      await run(io)
      return io
    }
    await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: true })
    const one = await attempt(1)
    expect(one.failed).toBeDefined()
    const failed = one.outputs['query-id']!
    const before = await counters()
    const two = await attempt(2)
    expect(two.failed, two.logs.join('\n')).toBeUndefined()
    expect(two.outputs['query-id']).toBe(failed)
    expect(two.outputs['dedup-id']).toBe(one.outputs['dedup-id'])
    expect(two.logs.join('\n')).toMatch(
      new RegExp(`Query ${failed} failed with a retriable error \\(.+\\); retried it \\(retry 1 of 3\\)`),
    )
    expect(two.summary).toMatch(/FAILED with a retriable error; retried it \(retry 1 of 3\), nothing new was paid for/)
    const after = await counters()
    expect(after.submissions - before.submissions).toBe(0)
    expect(after.retries - before.retries).toBe(1)
  }, 60_000)
})
