import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { generatedPie } from '../helpers/example-pie.ts'

/**
 * What a run costs in requests and time, whatever its size: one index of the key's queries per
 * run (the list is read once, not once per PIE, inside the one request budget), and one deadline
 * (`--timeout` bounds the reuse lookup and the waits, not only the waits). Counted from the
 * emulator's own request log.
 */

let emulator: TestEmulator
let journal: string

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 20 } })
  journal = await mkdtemp(join(tmpdir(), 'statement-budget-'))
  // A key with a history: 250 earlier queries (three pages of the list).
  await Promise.all(Array.from({ length: 250 }, () => submitFixturePie(emulator)))
})
afterAll(async () => {
  await emulator.close()
  await rm(journal, { recursive: true, force: true })
})

const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, PROVING_JOURNAL_DIR: journal })
const listRequests = async () =>
  ((await emulator.control('GET', '/requests')).requests as { method: string; path: string }[]).filter(
    (entry) => entry.method === 'GET' && /proving-queries(\?|$)/.test(entry.path),
  ).length

describe("one index of the key's queries per run", () => {
  it.each([2, 12])(
    'a batch of %i new PIEs reads the list as far as it goes, once: three pages, not three a PIE',
    async (count) => {
      const pies = await Promise.all(
        Array.from({ length: count }, (_, index) => generatedPie({ seed: 900 + count * 100 + index })),
      )
      await emulator.control('DELETE', '/requests')
      const run = await runCli(['prove', ...pies.map((pie) => pie.zip), '--json'], { env: env() })
      expect(run.code, run.stderr).toBe(0)
      expect(await listRequests()).toBe(3)
    },
    60_000,
  )
})

describe("--timeout is the command's", () => {
  const submissions = async () => (await emulator.control('GET', '/state')).counters.submissions

  it('a list answering 429 with a Retry-After of an hour is not waited out: it is given up, said once, and the PIE proved within the timeout', async () => {
    const { zip } = await generatedPie({ seed: 990 })
    await emulator.control('POST', '/faults', {
      method: 'GET',
      path: '/docs/proving-queries',
      status: 429,
      headers: { 'retry-after': '3600' },
      body: { error: 'slow down' },
      times: 1000,
    })
    try {
      await emulator.control('DELETE', '/requests')
      const run = await runCli(['prove', zip, '--wait', '--timeout', '5s'], { env: env() })
      expect(run.code, run.stderr).toBe(0)
      expect(run.stderr.match(/could not be listed/g)).toHaveLength(1)
      expect(await listRequests()).toBe(1)
    } finally {
      await emulator.control('DELETE', '/faults')
    }
  }, 20_000)

  it('a list that never answers: the command ends at its timeout, exit 4, nothing submitted', async () => {
    const { zip } = await generatedPie({ seed: 991 })
    const before = await submissions()
    await emulator.control('POST', '/faults', {
      method: 'GET',
      path: '/docs/proving-queries',
      kind: 'delay',
      delayMs: 600_000,
      times: 1000,
    })
    try {
      const run = await runCli(['prove', zip, '--wait', '--timeout', '1s'], { env: env() })
      expect(run.code, run.stderr).toBe(4)
      expect(run.stderr).toMatch(/timeout \(1s\) passed before .* was submitted; nothing was sent/)
      expect(await submissions()).toBe(before)
    } finally {
      await emulator.control('DELETE', '/faults')
    }
  }, 20_000)
})
