import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { spawnCli } from '../helpers/cli.ts'
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
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, PROVING_REUSE: 'never', PROVING_JOURNAL_DIR: journal })
async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('kill -9, then the same command again', () => {
  beforeEach(async () => {
    // Each case starts from an emulator with no queries (earlier ones would be candidates).
    await emulator.control('POST', '/reset', {})
  })

  it('killed before the answer, after the service created the query: the re-run refuses naming the query; --new pays again, saying so', async () => {
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
    expect(again.code).toBe(3)
    const created = Object.keys(emulator.state.queries).at(-1)!
    expect(again.stderr).toMatch(/did not finish/)
    expect(again.stderr).toContain(created)
    expect(again.stderr).toMatch(/--new/)
    expect(queryCount()).toBe(before + 1)

    const forced = await spawnCli(['prove', FIXTURE_PIE, '--wait', '--new'], { env: env() }).done
    expect(forced.code, forced.stderr).toBe(0)
    expect(forced.stderr).toMatch(/--new: submitting it again/)
    expect(queryCount()).toBe(before + 2)
    expect(await readdir(journal)).toEqual([])
    await rm(journal, { recursive: true, force: true })
  })

  it('killed mid-upload before the service processed anything: the re-run submits, once', async () => {
    journal = await mkdtemp(join(tmpdir(), 'journal-'))
    const before = queryCount()
    // The connection is reset once the body arrived: nothing processed; the client dies too.
    await emulator.control('POST', '/faults', { method: 'POST', path: L2, kind: 'drop-after-body', delayMs: 1_500 })
    const first = spawnCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
    await until(async () => ((await emulator.control('GET', '/faults')).faults as unknown[]).length === 0, 'the upload to arrive')
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
    expect(again.stderr).toMatch(/already submitted .* as query/)
    expect(again.stderr).toContain(match[1]!)
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
