import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runBucketClose } from '../../src/action/actions/bucket-close.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { control, fakeIO } from '../helpers/run-action.ts'

/**
 * A bucket's leaves are the queries whose own records say they are in it, not whatever its
 * listing names. Bucket A's listing names query Q (the emulator lists it under the bucket that
 * holds it) while Q's record, made to say so through POST /_emulator/queries/{id}/record, names
 * another bucket, a lookalike of A's id, or none: `proving bucket close A --wait --expect-query Q`
 * and `bucket-close` with `expected-queries: Q` used to pass on the listing's word. Now both
 * refuse, naming both buckets; the record naming A again passes.
 */
const API_KEY = 'pk_e2e_MEMBER_61d2e9b0'
let emulator: RunningEmulator
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' })
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url })

let bucketId: string
let otherBucketId: string
let queryId: string

async function createBucket(): Promise<string> {
  const created = await runCli(['bucket', 'create', '--json'], { env: env() })
  expect(created.code, created.stderr).toBe(0)
  return JSON.parse(created.stdout).provingBucket.id as string
}

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 }, apiKeys: [API_KEY] })
  bucketId = await createBucket()
  otherBucketId = await createBucket()
  const proved = await runCli(['prove', EXAMPLE_PIE, '--bucket-id', bucketId, '--quiet'], { env: env() })
  expect(proved.code, proved.stderr).toBe(0)
  queryId = proved.stdout.trim()
  // The honest bucket passes: what follows is refused for the record's word alone.
  const closed = await runCli(['bucket', 'close', bucketId, '--wait', '--expect-query', queryId], { env: env() })
  expect(closed.code, closed.stdout + closed.stderr).toBe(0)
}, 60_000)
afterAll(async () => {
  await emulator.close()
})

/** What the record says its bucket is, and how the refusal names it. */
const CASES: { name: string; says: () => string | null; named: () => string }[] = [
  { name: 'another bucket', says: () => otherBucketId, named: () => `in bucket ${otherBucketId}` },
  // The same id but its first hyphen (U+2010 HYPHEN for U+002D): shown escaped, not as A's twin.
  {
    name: "a lookalike of this bucket's id",
    says: () => bucketId.replace('-', '\u2010'),
    named: () => `in bucket "${bucketId.replace('-', '\\u2010')}"`,
  },
  { name: 'no bucket', says: () => null, named: () => 'in no bucket (bucketId is null)' },
]

describe("a bucket's listing names a query whose own record names another bucket", () => {
  it.each(CASES)(
    'the record says $name: the CLI and bucket-close refuse, naming both buckets',
    async ({ says, named }) => {
      await control(emulator.url, 'POST', `queries/${queryId}/record`, { bucketId: says() })
      const refusal = `Query #0 (${queryId}): it is ${named()} by its own record, not in bucket ${bucketId}, whose listing names it: the gate trusts the query's record, not the listing.`

      const cli = await runCli(['bucket', 'close', bucketId, '--wait', '--json', '--expect-query', queryId], {
        env: env(),
      })
      expect(cli.code, cli.stderr).toBe(1)
      const verdict = JSON.parse(cli.stdout)
      expect(verdict).toMatchObject({ ok: false, refusals: [refusal] })
      expect(
        verdict.queries.map((row: { queryId: string; problems: string[] }) => [row.queryId, row.problems.length]),
      ).toEqual([[queryId, 1]])
      const text = await runCli(['bucket', 'close', bucketId, '--wait', '--expect-query', queryId], { env: env() })
      expect(text.code).toBe(1)
      expect(text.stdout).toContain(`Gate refused:\n  - ${refusal}`)

      const io = fakeIO({ 'bucket-id': bucketId, ...service(), wait: 'true', 'expected-queries': queryId })
      await runBucketClose(io)
      expect(io.failed).toBe(refusal)
      expect(io.outputs['gate-passed']).toBe('false')
      expect(io.summary).toContain('### ❌ Close bucket: failed')
      expect(io.summary).toContain(`by its own record, not in bucket ${bucketId}, whose listing names it`)
    },
  )

  it('the record naming this bucket again passes on both hosts', async () => {
    await control(emulator.url, 'POST', `queries/${queryId}/record`, { bucketId })
    const cli = await runCli(['bucket', 'close', bucketId, '--wait', '--expect-query', queryId], { env: env() })
    expect(cli.code, cli.stdout + cli.stderr).toBe(0)
    const io = fakeIO({ 'bucket-id': bucketId, ...service(), wait: 'true', 'expected-queries': queryId })
    await runBucketClose(io)
    expect(io.failed).toBeUndefined()
    expect(io.outputs['gate-passed']).toBe('true')
  })
})
