import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runBucketClose } from '../../src/action/actions/bucket-close.ts'
import { run as runMain } from '../../src/action/actions/main.ts'
import { ProvingClient } from '../../src/clients/proving.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { EXAMPLE, EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { control, fakeIO } from '../helpers/run-action.ts'

/**
 * Issue 31's decision: the SHARP fact is a bytes32 on chain, so every output gives it as `0x`
 * and 64 lower-case hex digits, whatever spelling the service chose. The service here answers
 * the example's real fact in another spelling of the same number (upper-case digits): the gate still compares numbers (the facts match), and the CLI's --json
 * records, the root action's `results` rows (several PIEs) and bucket-close's `queries` rows
 * all give the on-chain form. The felts (program hash, Integrity fact) keep their own form.
 */
const API_KEY = 'pk_e2e_FACTFORM_41c2'
const ON_CHAIN = /^0x[0-9a-f]{64}$/
/** The example's fact as a service might spell it: same number, another text. */
const SPELLED = `0x${EXAMPLE.sharpFact.slice(2).toUpperCase()}`

let emulator: RunningEmulator
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' })
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url, reuse: 'never' })
const nextQuerySpellsTheFact = () =>
  control(emulator.url, 'POST', 'next-query', { outcome: 'done', record: { sharpFactHash: SPELLED } })

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 }, apiKeys: [API_KEY] })
})
afterAll(async () => {
  await emulator.close()
})

describe('the SHARP fact in every output: 0x and 64 hex digits', () => {
  it('the spelling differs from the on-chain form (the test would prove nothing otherwise)', () => {
    expect(SPELLED).not.toMatch(ON_CHAIN)
    expect(BigInt(SPELLED)).toBe(BigInt(EXAMPLE.sharpFact))
  })

  it('CLI: prove --wait --json and query get --json print the record with it in on-chain form; the gate passes', async () => {
    await nextQuerySpellsTheFact()
    const proved = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env() })
    expect(proved.code, proved.stderr).toBe(0)
    const record = JSON.parse(proved.stdout).provingQuery
    expect(record.sharpFactHash).toBe(EXAMPLE.sharpFact)
    expect(record.programHash).toBe(EXAMPLE.programHash)
    // The service still answers its own spelling (the library gives the record as it came): the
    // CLI's output is what gives the on-chain form.
    const answered = await new ProvingClient({ baseUrl: emulator.url, apiKey: API_KEY }).getQuery(record.id)
    expect(answered.provingQuery.sharpFactHash).toBe(SPELLED)
    const got = await runCli(['query', 'get', record.id, '--json'], { env: env() })
    expect(JSON.parse(got.stdout).provingQuery.sharpFactHash).toBe(EXAMPLE.sharpFact)
    const human = await runCli(['query', 'get', record.id], { env: env() })
    expect(human.stdout).toMatch(new RegExp(`SHARP fact\\s+${EXAMPLE.sharpFact}`))
  })

  it('root action, several PIEs: each row of `results` has the program hash and both facts, the SHARP one on-chain', async () => {
    await nextQuerySpellsTheFact()
    const io = fakeIO({
      pie: `${EXAMPLE_PIE}\n${EXAMPLE_PIE.replace(/pie\.zip$/, './pie.zip')}`,
      ...service(),
      concurrency: '1',
    })
    await runMain(io)
    expect(io.failed).toBeUndefined()
    const rows = JSON.parse(io.outputs.results!) as {
      sharpFactHash: string | null
      integrityFactHash: string | null
      programHash: string | null
      facts: string
    }[]
    expect(rows).toHaveLength(2)
    for (const row of rows) {
      expect(row).toMatchObject({
        sharpFactHash: EXAMPLE.sharpFact,
        integrityFactHash: EXAMPLE.integrityFact,
        programHash: EXAMPLE.programHash,
        facts: 'match',
      })
    }
  })

  it('bucket-close: each row of `queries` has both facts, the SHARP one on-chain; the CLI --json too', async () => {
    const created = await runCli(['bucket', 'create', '--json'], { env: env() })
    const bucketId = JSON.parse(created.stdout).provingBucket.id as string
    await nextQuerySpellsTheFact()
    const proved = await runCli(['prove', EXAMPLE_PIE, '--bucket-id', bucketId, '--quiet'], { env: env() })
    expect(proved.code, proved.stderr).toBe(0)
    const io = fakeIO({ 'bucket-id': bucketId, ...service(), wait: 'true', pie: EXAMPLE_PIE })
    await runBucketClose(io)
    expect(io.failed).toBeUndefined()
    const rows = JSON.parse(io.outputs.queries!) as {
      sharpFactHash: string
      integrityFactHash: string
      facts: string
    }[]
    expect(rows).toEqual([
      expect.objectContaining({
        sharpFactHash: EXAMPLE.sharpFact,
        integrityFactHash: EXAMPLE.integrityFact,
        facts: 'match',
      }),
    ])
    const cli = await runCli(['bucket', 'close', bucketId, '--wait', '--json', '--pie', EXAMPLE_PIE], { env: env() })
    expect(cli.code, cli.stderr).toBe(0)
    expect(JSON.parse(cli.stdout).queries[0].sharpFactHash).toBe(EXAMPLE.sharpFact)
  })
})
