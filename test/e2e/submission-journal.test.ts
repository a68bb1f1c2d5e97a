import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { runCli, spawnCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/**
 * Never pay twice without being told (issue 13): `proving prove` killed with SIGKILL (a CI
 * timeout, the OOM killer) during the upload or the wait, then run again with the same PIE and
 * parameters. The local journal settles it: the query it created is followed, or the run is
 * refused naming the candidates until --new; a submission that never reached the service is
 * sent once. The emulator's state counts the queries.
 */

const L2 = '/v1/l2/proving-query/proof-generation-verification'
let emulator: TestEmulator
let journal: string

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 400 } })
})
afterAll(async () => {
  await emulator.close()
})

const queryCount = () => Object.keys(emulator.state.queries).length
/** The journal's entries (a killed run also leaves its lock, `<key>.lock`, beside its entry). */
const entries = async (dir: string) => (await readdir(dir)).filter((name) => name.endsWith('.json'))
const env = () => ({
  PROVING_BASE_URL: emulator.url,
  PROVING_API_KEY: KEY,
  PROVING_REUSE: 'never',
  PROVING_JOURNAL_DIR: journal,
})
async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

// Each case runs two to four real processes: on a loaded machine that takes more than the default 30 s.
describe('kill -9, then the same command again', { timeout: 120_000 }, () => {
  beforeEach(async () => {
    // Each case starts from an emulator with no queries (earlier ones would be candidates).
    await emulator.control('POST', '/reset', {})
  })

  it('killed before the answer, after the service created the query: the re-run follows that query (the only one since the upload began) to DONE, its facts checked; --new pays again, saying so', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    // The emulator creates the query and sends the headers, then holds the body 5 s: the
    // client is killed before it reads the id.
    await emulator.control('POST', '/faults', { method: 'POST', path: L2, kind: 'delay-body', delayMs: 5_000 })
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
    await until(() => queryCount() === before + 1, 'the service to create the query')
    first.child.kill('SIGKILL')
    await first.done
    expect(await entries(journal)).toHaveLength(1)

    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() }).done
    const created = Object.keys(emulator.state.queries).at(-1)!
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`Following query ${created}, submitted by an earlier run whose upload of this PIE`)
    expect(again.stderr).not.toContain('Submitted: query')
    expect(again.stderr).toMatch(/Facts checked locally/)
    expect(queryCount()).toBe(before + 1)
    expect(await readdir(journal)).toEqual([])

    const forced = await spawnCli(['prove', FIXTURE_PIE, '--wait', '--new'], { env: env() }).done
    expect(forced.code, forced.stderr).toBe(0)
    expect(queryCount()).toBe(before + 2)
    expect(await readdir(journal)).toEqual([])
    await rm(journal, { recursive: true, force: true })
  })

  it('interrupted (SIGINT) during the wait: exit 130, the entry kept; the same command again follows that query to DONE, never "Submitted"', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 60_000 })
    try {
      const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
      const id = (await first.waitForOutput(/Submitted: query (\S+)/))[1]!
      await until(
        () => emulator.requests().some((request) => request.path.includes(`/proving-query/${id}`)),
        'the first status read',
      )
      first.child.kill('SIGINT')
      const stopped = await first.done
      expect(stopped.code).toBe(130)
      expect(stopped.stderr).toContain(`Resume with: proving query wait ${id}`)
      expect(await entries(journal)).toHaveLength(1)

      const again = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
      await again.waitForOutput(new RegExp(`Following: query ${id}`))
      await emulator.control('POST', `/queries/${id}/complete`)
      const ended = await again.done
      expect(ended.code, ended.stderr).toBe(0)
      expect(ended.stderr).toContain(`Following query ${id}, submitted by an earlier run`)
      expect(ended.stderr).not.toContain('Submitted: query')
      expect(ended.stdout).toMatch(/status\s+DONE/)
      expect(queryCount()).toBe(before + 1)
      expect(await readdir(journal)).toEqual([])
    } finally {
      await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 400 })
    }
    await rm(journal, { recursive: true, force: true })
  })

  it('a run that saw its query FAILED keeps the entry: the same command again says so and submits anew, once; DONE forgets it', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 60_000 })
    try {
      const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
      const failed = (await first.waitForOutput(/Submitted: query (\S+)/))[1]!
      await emulator.control('POST', `/queries/${failed}/fail`, { retriable: false })
      const ended = await first.done
      expect(ended.code, ended.stderr).toBe(1)
      expect(await entries(journal)).toHaveLength(1)
      await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 400 })
      const again = await spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() }).done
      expect(again.code, again.stderr).toBe(0)
      expect(again.stderr).toContain(`earlier query ${failed} FAILED`)
      expect(queryCount()).toBe(before + 2)
      expect(await readdir(journal)).toEqual([])
    } finally {
      await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 400 })
    }
    await rm(journal, { recursive: true, force: true })
  })

  it('`proving journal list` shows a kept entry (its query); `proving journal clear` forgets it, and the same command then pays anew', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    const first = await runCli(['prove', FIXTURE_PIE], { env: env() })
    expect(first.code, first.stderr).toBe(0)
    const id = /Submitted: query (\S+)/.exec(first.stdout)![1]!
    const listed = await runCli(['journal', 'list', '--json'], { env: env() })
    expect(listed.code, listed.stderr).toBe(0)
    const [entry] = JSON.parse(listed.stdout).entries
    expect(entry).toMatchObject({
      provingQueryId: id,
      state: 'submitted',
      endpoint: 'l2-pie',
      lock: null,
      problem: null,
    })
    const human = await runCli(['journal', 'list'], { env: env() })
    expect(human.stdout).toContain(`${entry.key}  query ${id}  submitted  l2-pie at `)
    expect((await runCli(['journal', 'clear'], { env: env() })).code).toBe(2)
    const cleared = await runCli(['journal', 'clear', entry.key], { env: env() })
    expect(cleared.stdout).toBe(`Removed 1 entry from ${journal}: ${entry.key}.\n`)
    expect(await readdir(journal)).toEqual([])
    const again = await runCli(['prove', FIXTURE_PIE], { env: env() })
    expect(again.stdout).toMatch(/^Submitted: query /)
    expect(queryCount()).toBe(before + 2)
    await rm(journal, { recursive: true, force: true })
  })

  it('killed mid-upload before the service processed anything: the re-run submits, once', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    // The connection is reset once the body arrived: nothing processed; the client dies too.
    await emulator.control('POST', '/faults', { method: 'POST', path: L2, kind: 'drop-after-body', delayMs: 1_500 })
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
    await until(
      async () => ((await emulator.control('GET', '/faults')).faults as unknown[]).length === 0,
      'the upload to arrive',
    )
    first.child.kill('SIGKILL')
    await first.done
    expect(await entries(journal)).toHaveLength(1)
    // Another caller's query created meanwhile would be a candidate; none here.
    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() }).done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toMatch(/lists no query since/)
    expect(queryCount()).toBe(before + 1)
    await rm(journal, { recursive: true, force: true })
  })

  it('killed during the wait: the re-run follows the same query to DONE instead of paying again', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
    const match = await first.waitForOutput(/Submitted: query (\S+)/)
    first.child.kill('SIGKILL')
    await first.done
    const again = await spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() }).done
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toContain(`Following query ${match[1]!}, submitted by an earlier run`)
    // Never announced as this run's own submission.
    expect(again.stderr).not.toContain('Submitted: query')
    expect(again.stderr).toContain(
      `Following: query ${match[1]!} (submitted by an earlier run; nothing was sent again)`,
    )
    expect(again.stdout).toMatch(/status\s+DONE/)
    expect(queryCount()).toBe(before + 1)
    expect(await readdir(journal)).toEqual([])
    await rm(journal, { recursive: true, force: true })
  })

  it('another layout is another submission (the key holds the parameters)', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
    await first.waitForOutput(/Submitted: query (\S+)/)
    first.child.kill('SIGKILL')
    await first.done
    const other = await spawnCli(['prove', FIXTURE_PIE, '--layout', 'recursive'], { env: env() }).done
    expect(other.code, other.stderr).toBe(0)
    expect(other.stderr).not.toMatch(/already submitted/)
    expect(queryCount()).toBe(before + 2)
    await rm(journal, { recursive: true, force: true })
  })
})
