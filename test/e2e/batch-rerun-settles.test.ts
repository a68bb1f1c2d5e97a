import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { generatedPie } from '../helpers/example-pie.ts'

/**
 * Issue 35: the re-run of a killed batch settles every row. A batch whose uploads lost their
 * answers leaves its rows `submitting` in the journal, with no query id; meanwhile the key holds
 * queries since those uploads began that no entry recorded: the rows' own, and another run's.
 * Before, a row with more than one such query was refused (exit 3) until a person sorted them
 * out. Now the re-run waits for them to end and compares their facts with each row's PIE: a row
 * follows the query that proves its PIE, and a row none proves (its upload never reached the
 * service) is submitted, once. The counts are the emulator's own.
 */
const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
let emulator: TestEmulator
let journal: string

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 100 } })
  journal = await mkdtemp(join(tmpdir(), 'journal-batch-rerun-'))
})
afterAll(async () => {
  await emulator.close()
  await rm(journal, { recursive: true, force: true })
})

const created = async (): Promise<number> => (await emulator.control('GET', '/state')).counters.submissions
const env = () => ({
  PROVING_BASE_URL: emulator.url,
  PROVING_API_KEY: KEY,
  PROVING_JOURNAL_DIR: journal,
  PROVING_REUSE: 'never',
})

describe('the re-run of a batch whose answers were lost', () => {
  it("each row follows the query whose facts are its PIE's; the row whose upload never arrived is submitted once; another run's query is left alone", async () => {
    const [a, b, c, other] = await Promise.all([51, 52, 53, 54].map((seed) => generatedPie({ seed })))
    // Run 1, one upload at a time: A and B reach the service (their queries are created) and
    // lose their answers; C's connection drops before the service processes it.
    for (const kind of ['drop-after', 'drop-after', 'drop-after-body'])
      await emulator.control('POST', '/faults', { method: 'POST', path: L2_PIE, kind, times: 1 })
    const killed = await runCli(['prove', a!.zip, b!.zip, c!.zip, '--concurrency', '1'], { env: env() })
    expect(killed.code, killed.stderr).toBe(3)
    expect(await created()).toBe(2)
    // Another run of the same key proves another PIE meanwhile: a query no entry recorded either.
    const { provingQueryId: others } = await new ProvingClient({ baseUrl: emulator.url, apiKey: KEY }).submitPie({
      pieZip: other!.zip,
    })
    expect(await created()).toBe(3)

    const rerun = await runCli(['prove', a!.zip, b!.zip, c!.zip, '--concurrency', '1', '--wait', '--json'], {
      env: env(),
    })
    expect(rerun.code, rerun.stderr).toBe(0)
    // One new query: C's. A and B follow the queries run 1 created.
    expect(await created()).toBe(4)
    const rows = JSON.parse(rerun.stdout) as { pie: string; provingQueryId: string; status: string; facts: string }[]
    expect(rows.map((row) => [row.status, row.facts])).toEqual([
      ['DONE', 'match'],
      ['DONE', 'match'],
      ['DONE', 'match'],
    ])
    const ids = rows.map((row) => row.provingQueryId)
    expect(new Set(ids).size).toBe(3)
    expect(ids).not.toContain(others)
    expect(rerun.stderr).toMatch(
      /Following query \S+, submitted by an earlier run whose upload of this PIE ended before its answer .*: its facts are this PIE's/,
    )
    expect(rerun.stderr).toMatch(
      /None of the \d quer(y|ies) since the earlier upload began .* proves this PIE \(other facts, or FAILED\): it is submitted now, once\./,
    )
    // Settled: the journal forgot the rows once gated; a third run (reuse: auto, the default)
    // finds each PIE proven and sends nothing.
    const again = await runCli(['prove', a!.zip, b!.zip, c!.zip, '--concurrency', '1', '--wait'], {
      env: { ...env(), PROVING_REUSE: 'auto' },
    })
    expect(again.code, again.stderr).toBe(0)
    expect(await created()).toBe(4)
  })
})
