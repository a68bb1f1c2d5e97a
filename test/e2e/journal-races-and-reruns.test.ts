import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { run } from '../../src/action/actions/main.ts'
import { simulatedClock } from '../../src/emulator/index.ts'
import { runCli, spawnCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * Never pay twice, round three (issue 24, and issue 23 item 5): the same PIE several times in
 * one batch; two runs of one PIE at once, as real processes sharing a journal; a journal folder
 * that cannot be written; the re-run window measured in the service's own time; re-runs after a
 * FAILED query, through the CLI's journal and the action's derived dedup-id. The emulator's
 * state counts the queries. Races are run many times in one test.
 */

const L2 = '/v1/l2/proving-query/proof-generation-verification'
/** Each race runs ROUNDS times: 2 in npm test (its five minutes); PROVING_RACE_ROUNDS for more (the scheduled deep run: 10). */
const ROUNDS = Math.max(1, Number(process.env.PROVING_RACE_ROUNDS ?? 2))
let emulator: TestEmulator

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 150 } })
})
afterAll(async () => {
  await emulator.close()
})

const queryCount = () => Object.keys(emulator.state.queries).length
const env = (journal: string) => ({
  PROVING_BASE_URL: emulator.url,
  PROVING_API_KEY: KEY,
  PROVING_REUSE: 'never',
  PROVING_JOURNAL_DIR: journal,
})
const newJournal = () => mkdtemp(join(tmpdir(), 'journal-3-'))

describe('the same PIE twice in one batch (issue 24, 1)', () => {
  it(`three spellings of its path and two copies matched by a glob: one query, reported on every row (${ROUNDS} runs)`, async () => {
    const copies = await mkdtemp(join(tmpdir(), 'copies-'))
    await copyFile(FIXTURE_PIE, join(copies, 'copy-1.zip'))
    await copyFile(FIXTURE_PIE, join(copies, 'copy-2.zip'))
    for (let round = 0; round < ROUNDS; round++) {
      const journal = await newJournal()
      const before = queryCount()
      const args = [
        'prove',
        'examples/fib/pie.zip',
        './examples/fib/pie.zip',
        'examples//fib/pie.zip',
        join(copies, 'copy-*.zip'),
        '--concurrency',
        '2',
        '--wait',
        '--json',
      ]
      const batch = await spawnCli(args, { env: env(journal) }).done
      expect(batch.code, batch.stderr).toBe(0)
      const rows = JSON.parse(batch.stdout) as { provingQueryId: string; status: string; facts: string }[]
      expect(rows).toHaveLength(5)
      expect(new Set(rows.map((row) => row.provingQueryId)).size).toBe(1)
      expect(rows.every((row) => row.status === 'DONE' && row.facts === 'match')).toBe(true)
      expect(queryCount()).toBe(before + 1)
      expect(batch.stderr).toMatch(/the same PIE as another in this batch/)
      // No temporary file, entry or lock left behind.
      expect(await readdir(journal)).toEqual([])
      await rm(journal, { recursive: true, force: true })
    }
    await rm(copies, { recursive: true, force: true })
  }, 120_000)
})

describe('the same PIE twice in one step of the action (issue 24, 1)', () => {
  it(`two lines naming it and a copy: one query, on every row of \`results\` (${ROUNDS} runs)`, async () => {
    const copies = await mkdtemp(join(tmpdir(), 'copies-'))
    await copyFile(FIXTURE_PIE, join(copies, 'copy.zip'))
    for (let round = 0; round < ROUNDS; round++) {
      const before = queryCount()
      const io = new RecordingIO({
        pie: [FIXTURE_PIE, FIXTURE_PIE.replace('/fib/', '//fib/'), join(copies, 'copy.zip')].join('\n'),
        'base-url': emulator.url,
        'api-key': KEY,
        concurrency: '2',
        reuse: 'never',
      })
      io.env = { RUNNER_TEMP: await mkdtemp(join(tmpdir(), 'runner-temp-')) }
      await run(io)
      expect(io.failed, io.logs.join('\n')).toBeUndefined()
      const rows = JSON.parse(io.outputs.results!) as { queryId: string; status: string; facts: string }[]
      expect(rows).toHaveLength(3)
      expect(new Set(rows.map((row) => row.queryId)).size).toBe(1)
      expect(rows.every((row) => row.status === 'DONE' && row.facts === 'match')).toBe(true)
      expect(queryCount()).toBe(before + 1)
    }
    await rm(copies, { recursive: true, force: true })
  }, 120_000)
})

describe('two runs of one PIE at the same time (issue 24, 2)', () => {
  it(`the second waits for the live first one and follows its query: one query per pair (${ROUNDS} pairs of processes)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const journal = await newJournal()
      const before = queryCount()
      // The first upload is held 2 s before the service takes it: the other process starts meanwhile.
      await emulator.control('POST', '/faults', { method: 'POST', path: L2, kind: 'delay', delayMs: 2_000 })
      const [first, second] = await Promise.all([
        spawnCli(['prove', FIXTURE_PIE, '--json'], { env: env(journal) }).done,
        spawnCli(['prove', FIXTURE_PIE, '--json'], { env: env(journal) }).done,
      ])
      expect(first.code, first.stderr).toBe(0)
      expect(second.code, second.stderr).toBe(0)
      expect(JSON.parse(first.stdout).provingQueryId).toBe(JSON.parse(second.stdout).provingQueryId)
      expect(`${first.stderr}${second.stderr}`).toMatch(/Another run \(pid \d+ on .*\) is submitting this PIE/)
      expect(queryCount()).toBe(before + 1)
      // Without --wait the outcome is not seen: the entry stays, with the query id, for the same command again (issue 32).
      const [entry] = await readdir(journal)
      expect(JSON.parse(await readFile(join(journal, entry!), 'utf8'))).toMatchObject({
        state: 'submitted',
        provingQueryId: JSON.parse(first.stdout).provingQueryId,
      })
      await rm(journal, { recursive: true, force: true })
    }
  }, 120_000)

  it('a run started while another is live (its query created, its answer held) follows that query instead of refusing or paying', async () => {
    const journal = await newJournal()
    const before = queryCount()
    await emulator.control('POST', '/faults', { method: 'POST', path: L2, kind: 'delay-body', delayMs: 3_000 })
    const first = spawnCli(['prove', FIXTURE_PIE, '--json'], { env: env(journal) })
    for (let i = 0; i < 400 && queryCount() === before; i++) await new Promise((resolve) => setTimeout(resolve, 25))
    expect(queryCount()).toBe(before + 1)
    const second = await spawnCli(['prove', FIXTURE_PIE, '--json'], { env: env(journal) }).done
    const done = await first.done
    expect(done.code, done.stderr).toBe(0)
    expect(second.code, second.stderr).toBe(0)
    expect(JSON.parse(second.stdout).provingQueryId).toBe(JSON.parse(done.stdout).provingQueryId)
    // Still live when the second looked: waited for; already ended (a busy machine): its kept entry followed.
    expect(second.stderr).toMatch(
      /waiting for its query instead of paying twice|Following query \S+, submitted by an earlier run/,
    )
    expect(second.stderr).not.toContain('Submitted: query')
    expect(queryCount()).toBe(before + 1)
    await rm(journal, { recursive: true, force: true })
  }, 60_000)
})

describe('a journal folder that cannot be written (issue 24, 3)', () => {
  it('is a warning naming the folder and PROVING_JOURNAL_DIR; the PIE is proved, once', async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'no-journal-'))
    const file = join(scratch, 'a-file')
    await writeFile(file, 'not a folder')
    for (const journalEnv of [
      { PROVING_JOURNAL_DIR: join(file, 'journal') },
      { PROVING_JOURNAL_DIR: undefined, XDG_CACHE_HOME: undefined, HOME: file },
    ]) {
      const before = queryCount()
      const result = await runCli(['prove', FIXTURE_PIE, '--wait'], {
        env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, PROVING_REUSE: 'never', ...journalEnv },
      })
      expect(result.code, result.stderr).toBe(0)
      expect(result.stderr).toMatch(
        /warning: The submission journal folder .*a-file.* cannot be used \(ENOTDIR\): without it, a re-run cannot tell .*PROVING_JOURNAL_DIR/,
      )
      expect(result.stderr).not.toMatch(/unexpected failure/)
      expect(queryCount()).toBe(before + 1)
    }
    await rm(scratch, { recursive: true, force: true })
  }, 60_000)
})

describe("the re-run window, in the service's time (issue 24, 8)", () => {
  let skewed: TestEmulator
  beforeAll(async () => {
    // The service's clock runs two minutes behind this machine's.
    skewed = await startTestEmulator({ apiKeys: [KEY], clock: simulatedClock(Date.now() - 120_000) })
  })
  afterAll(async () => {
    await skewed.close()
  })

  it('queries created before the ambiguous upload began are not candidates: the re-run submits once and says so', async () => {
    const count = () => Object.keys(skewed.state.queries).length
    const answer = await skewed.call('GET', '/is-alive')
    expect(answer.headers.date).toBe(new Date(skewed.clock.now()).toUTCString())
    // Two queries of this key, a minute (service time) before the upload.
    const client = skewed.client()
    for (let i = 0; i < 2; i++) await client.submitPie({ pieZip: FIXTURE_PIE, layout: 'auto', prover: 'svc_sharp' })
    skewed.clock.advance(60_000)
    const journal = await newJournal()
    const skewedEnv = {
      PROVING_BASE_URL: skewed.url,
      PROVING_API_KEY: KEY,
      PROVING_REUSE: 'never',
      PROVING_JOURNAL_DIR: journal,
    }
    // The upload reaches the service and the connection is reset before it is processed; the client dies too.
    await skewed.control('POST', '/faults', { method: 'POST', path: L2, kind: 'drop-after-body', delayMs: 1_500 })
    const first = spawnCli(['prove', FIXTURE_PIE], { env: skewedEnv })
    for (let i = 0; i < 400 && ((await skewed.control('GET', '/faults')).faults as unknown[]).length > 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    first.child.kill('SIGKILL')
    await first.done
    expect(count()).toBe(2)
    const again = await spawnCli(['prove', FIXTURE_PIE], { env: skewedEnv }).done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(
      /lists no query since the upload began \(by its own clock\), so it is submitted now, once/,
    )
    expect(count()).toBe(3)
    await rm(journal, { recursive: true, force: true })
  }, 60_000)
})

describe('re-runs after a FAILED query (issue 23, 5)', () => {
  beforeEach(async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 600 })
  })

  it('CLI, L2 endpoint: killed during the wait, the query then FAILED: the re-run submits anew, says so, and reports the new query', async () => {
    const journal = await newJournal()
    const before = queryCount()
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env(journal) })
    const failed = (await first.waitForOutput(/Submitted: query (\S+)/))[1]!
    first.child.kill('SIGKILL')
    await first.done
    await emulator.control('POST', `/queries/${failed}/fail`, { retriable: false })
    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait', '--json'], { env: env(journal) }).done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`earlier query ${failed} FAILED`)
    expect(again.stderr).toMatch(/submitting it again, as a new query/)
    const result = JSON.parse(again.stdout)
    expect(result.provingQuery.id).not.toBe(failed)
    expect(result.provingQuery.status).toBe('DONE')
    expect(queryCount()).toBe(before + 2)
    await rm(journal, { recursive: true, force: true })
  }, 60_000)

  it('CLI, general submission: the re-run gets a new dedupId and a new query; a re-run after that success finds it', async () => {
    const journal = await newJournal()
    const before = queryCount()
    const args = ['prove', FIXTURE_PIE, '--result', 'PROOF_GENERATION', '--wait', '--json']
    const first = spawnCli(args, { env: env(journal) })
    const failed = (await first.waitForOutput(/Submitted: query (\S+)/))[1]!
    await emulator.control('POST', `/queries/${failed}/fail`, { retriable: false })
    const firstDone = await first.done
    expect(firstDone.code).toBe(1)
    const failedDedupId = emulator.state.queries[failed]!.dedupId

    const again = await spawnCli(args, { env: env(journal) }).done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(
      `Query ${failed} with this PIE and these parameters FAILED; submitting it again as a new query`,
    )
    const replacement = JSON.parse(again.stdout).provingQuery
    expect(replacement.id).not.toBe(failed)
    expect(replacement.status).toBe('DONE')
    expect(emulator.state.queries[replacement.id]!.dedupId).not.toBe(failedDedupId)
    expect(queryCount()).toBe(before + 2)

    const third = await spawnCli(args, { env: env(journal) }).done
    expect(third.code, third.stderr).toBe(0)
    expect(JSON.parse(third.stdout).provingQuery.id).toBe(replacement.id)
    expect(queryCount()).toBe(before + 2)
    await rm(journal, { recursive: true, force: true })
  }, 90_000)

  it('action, "Re-run jobs": after a FAILED attempt the dedup-id differs and a new query is submitted; after a good one, the same query', async () => {
    const before = queryCount()
    const attempt = async (number: number) => {
      const io = new RecordingIO({
        pie: FIXTURE_PIE,
        'base-url': emulator.url,
        'api-key': KEY,
        result: 'PROOF_GENERATION',
        wait: 'false',
        reuse: 'never',
      })
      io.env = {
        RUNNER_TEMP: await mkdtemp(join(tmpdir(), 'runner-temp-')),
        GITHUB_REPOSITORY: 'proving-kit/proving-kit',
        GITHUB_WORKFLOW: 'release',
        GITHUB_JOB: 'prove',
        GITHUB_RUN_ID: '9090',
        GITHUB_RUN_ATTEMPT: String(number),
      }
      await run(io)
      expect(io.failed).toBeUndefined()
      return io
    }
    const one = await attempt(1)
    const failed = one.outputs['query-id']!
    await emulator.control('POST', `/queries/${failed}/fail`, { retriable: false })
    const two = await attempt(2)
    expect(two.outputs['query-id']).not.toBe(failed)
    expect(two.outputs['dedup-id']).not.toBe(one.outputs['dedup-id'])
    expect(two.logs.join('\n')).toContain(
      `Query ${failed} of an earlier attempt FAILED; submitting the PIE again as a new query`,
    )
    expect(queryCount()).toBe(before + 2)
    const three = await attempt(3)
    expect(three.outputs['query-id']).toBe(two.outputs['query-id'])
    expect(three.outputs['dedup-id']).toBe(two.outputs['dedup-id'])
    expect(queryCount()).toBe(before + 2)
  }, 60_000)
})
