import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { run as runBucketClose } from '../../src/action/actions/bucket-close.ts'
import { run as runMain } from '../../src/action/actions/main.ts'
import { run as runWait } from '../../src/action/actions/wait.ts'
import { ProvingClient } from '../../src/clients/proving.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { evaluateGate, expectResult } from '../../src/pipeline/gate.ts'
import { runCli } from '../helpers/cli.ts'
import { EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { control, fakeIO } from '../helpers/run-action.ts'

/**
 * Issue 23 (part A): a green gate means proven. A DONE query whose record gives nothing to
 * compare, keeps only the program hash, garbles a hash or does not say whether its fact is
 * mocked is refused, naming the field, by every host that gates: `proving prove --wait`, the
 * root action, `wait`, `bucket close --wait` / `bucket-close`, and the library's evaluateGate.
 * The emulator says these records through its control API (a next-query plan's `record`,
 * POST /_emulator/queries/{id}/record) and a fault's body (a bucket listing).
 */
const API_KEY = 'pk_e2e_GATE_3f9a1c70'
const PIE = EXAMPLE_PIE
let emulator: RunningEmulator
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' })
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url, reuse: 'never' })

const NO_FACTS = { programHash: null, sharpFactHash: null, integrityFactHash: null }
const PROGRAM_HASH_ONLY = { sharpFactHash: null, integrityFactHash: null }
/** A hash that is not hex, with a terminal escape in it: the read must not fail, and the text must not reach a terminal raw. */
const GARBLED = 'zz\u001b[2J0x'

/** The next query submitted ends DONE at once, its record saying `record`. */
async function nextQuerySays(record: Record<string, unknown>): Promise<void> {
  await control(emulator.url, 'POST', 'next-query', { outcome: 'done', record })
}

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 }, apiKeys: [API_KEY] })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(async () => {
  await control(emulator.url, 'DELETE', 'faults')
  // A plan a test did not use would shape the next test's query.
  const { nextQueries } = (await control(emulator.url, 'GET', 'state')) as { nextQueries: unknown[] }
  expect(nextQueries).toEqual([])
})

describe('proving prove --wait', () => {
  it('refuses a DONE proof with every fact null (exit 1), naming the fields; it never says the facts are equal', async () => {
    await nextQuerySays(NO_FACTS)
    const result = await runCli(['prove', PIE, '--wait', '--json'], { env: env() })
    expect(result.code, result.stderr).toBe(1)
    // The record read (L) does not name the prover: either fact would do, and neither is there.
    // With --json the refusals are the notes of the one `{ "error": … }` object on stderr (README).
    expect(result.stderr).toContain(
      'The service reported no programHash (null) for a DONE PROOF_VERIFICATION_ON_L2 result',
    )
    expect(result.stderr).toContain('neither sharpFactHash nor integrityFactHash')
    expect(result.stderr).not.toMatch(/Facts checked locally/)
    const output = JSON.parse(result.stdout)
    expect(output.localFactCheck).toMatchObject({ ok: false, checked: [] })
    expect(output.gate.ok).toBe(false)
  })

  it('refuses the program hash kept alone: the two facts that bind the output are null', async () => {
    await nextQuerySays(PROGRAM_HASH_ONLY)
    const result = await runCli(['prove', PIE, '--wait'], { env: env() })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toMatch(
      /gate refused: The service reported neither sharpFactHash nor integrityFactHash for a DONE PROOF_VERIFICATION_ON_L2 result/,
    )
    expect(result.stderr).not.toMatch(/programHash/)
  })

  it('refuses an unknown mock state unless --allow-mocked-fact', async () => {
    await nextQuerySays({ isFactMocked: null })
    const refused = await runCli(['prove', PIE, '--wait'], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toMatch(
      /gate refused: The service did not say whether the fact is mocked \(isFactMocked is null\)/,
    )

    await nextQuerySays({ isFactMocked: null })
    const allowed = await runCli(['prove', PIE, '--wait', '--allow-mocked-fact'], { env: env() })
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(allowed.stderr).toMatch(
      /Facts checked locally: program hash matches \(pedersen\), sharpFactHash, integrityFactHash equal/,
    )
  })

  it('reads a record with a malformed hash and refuses that field, the text shown as data', async () => {
    await nextQuerySays({ sharpFactHash: GARBLED })
    const result = await runCli(['prove', PIE, '--wait'], { env: env() })
    // 1 (refused), not 3 (a read that failed on the answer).
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toContain(
      "gate refused: The service's sharpFactHash is not a 0x hex hash of at most 64 digits",
    )
    expect(result.stdout + result.stderr).not.toContain('\u001b')
    expect(result.stdout).toContain('"zz\\u001b[2J0x"')
  })

  it('still passes a proof whose facts are all there, and a trace with none', async () => {
    const proved = await runCli(['prove', PIE, '--wait'], { env: env() })
    expect(proved.code, proved.stderr).toBe(0)
    const trace = await runCli(['submit', PIE, '--result', 'TRACE_GENERATION', '--wait'], { env: env() })
    expect(trace.code, trace.stderr).toBe(0)
    expect(trace.stderr).toContain('No fact to check: a TRACE_GENERATION query generates a trace, not a proof.')
  })

  it('a batch refuses the PIE whose record has no fact', async () => {
    // Another PIE (a copy of the same one would be proved once).
    const folder = mkdtempSync(join(tmpdir(), 'gate-batch-'))
    const generated = await generatePie({ outDir: join(folder, 'pie'), memoryBytes: 4096, seed: 7 })
    const other = join(folder, 'other.zip')
    await packPie(generated.dir, other)
    await nextQuerySays(NO_FACTS)
    const result = await runCli(['prove', PIE, other, '--wait', '--concurrency', '1'], { env: env() })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stdout).toMatch(/1 of 2 succeeded/)
    expect(result.stderr).toMatch(/neither sharpFactHash nor integrityFactHash/)
  })
})

describe('the root action and wait', () => {
  it('root action: null facts fail the step naming the field, and facts-verified is false', async () => {
    await nextQuerySays(NO_FACTS)
    const io = fakeIO({ pie: PIE, ...service() })
    await runMain(io)
    expect(io.failed).toMatch(/The service reported no programHash \(null\)/)
    expect(io.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'false' })
    expect(io.summary).toContain('neither sharpFactHash nor integrityFactHash')
  })

  it('root action: an unknown mock state fails unless allow-mocked-fact; with it the facts are verified', async () => {
    await nextQuerySays({ isFactMocked: null })
    const refused = fakeIO({ pie: PIE, ...service() })
    await runMain(refused)
    expect(refused.failed).toMatch(/isFactMocked is null/)
    expect(refused.outputs['facts-verified']).toBe('true')

    await nextQuerySays({ isFactMocked: null })
    const allowed = fakeIO({ pie: PIE, ...service(), 'allow-mocked-fact': 'true' })
    await runMain(allowed)
    expect(allowed.failed).toBeUndefined()
    expect(allowed.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'true' })
  })

  it('root action: the on-chain check settles an unknown mock state: a registered fact passes', async () => {
    await nextQuerySays({ isFactMocked: null })
    const io = fakeIO({
      pie: PIE,
      ...service(),
      'verify-onchain': 'starknet',
      'starknet-rpc-url': `${emulator.url}/starknet-rpc`,
    })
    await runMain(io)
    expect(io.failed).toBeUndefined()
    expect(io.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'true', 'onchain-verified': 'true' })

    // A missing fact is not settled by it: there is no fact to look up.
    await nextQuerySays(PROGRAM_HASH_ONLY)
    const missing = fakeIO({
      pie: PIE,
      ...service(),
      'verify-onchain': 'starknet',
      'starknet-rpc-url': `${emulator.url}/starknet-rpc`,
    })
    await runMain(missing)
    expect(missing.failed).toMatch(/neither sharpFactHash nor integrityFactHash/)
    expect(missing.outputs['onchain-verified']).toBe('false')
  })

  it('wait: null facts, a malformed hash and an absent mock state are each refused, with or without the PIE', async () => {
    const client = new ProvingClient({ baseUrl: emulator.url, apiKey: API_KEY })
    const { provingQueryId } = await client.submitPie({ pieZip: PIE })
    await client.waitForQuery(provingQueryId, { timeoutMs: 20_000 })
    const wait = async (inputs: Record<string, string>) => {
      const io = fakeIO({ 'query-id': provingQueryId, ...service(), ...inputs })
      await runWait(io)
      return io
    }
    expect((await wait({ pie: PIE })).failed).toBeUndefined()

    await control(emulator.url, 'POST', `queries/${provingQueryId}/record`, PROGRAM_HASH_ONLY)
    const withPie = await wait({ pie: PIE })
    expect(withPie.failed).toMatch(
      /The service reported neither sharpFactHash nor integrityFactHash|no integrityFactHash/,
    )
    expect(withPie.outputs['facts-verified']).toBe('false')
    const withoutPie = await wait({})
    expect(withoutPie.failed).toMatch(/integrityFactHash/)

    await control(emulator.url, 'POST', `queries/${provingQueryId}/record`, {
      sharpFactHash: GARBLED,
      integrityFactHash: '0x1',
    })
    const garbled = await wait({})
    expect(garbled.failed).toMatch(/sharpFactHash is not a 0x hex hash/)
    expect(garbled.summary).not.toContain('\u001b')

    const emulated = emulator.state.queries[provingQueryId]!
    await control(emulator.url, 'POST', `queries/${provingQueryId}/record`, {
      programHash: emulated.facts.programHash,
      sharpFactHash: emulated.facts.sharpFactHash,
      integrityFactHash: emulated.facts.integrityFactHash,
      isFactMocked: null,
    })
    const unknownMock = await wait({ pie: PIE })
    expect(unknownMock.failed).toMatch(/isFactMocked is null/)
    expect((await wait({ pie: PIE, 'allow-mocked-fact': 'true' })).failed).toBeUndefined()
  })

  it('root action: a malformed hash fails the step naming it; its text reaches no log raw', async () => {
    await nextQuerySays({ integrityFactHash: GARBLED })
    const io = fakeIO({ pie: PIE, ...service() })
    await runMain(io)
    expect(io.failed).toMatch(/integrityFactHash is not a 0x hex hash/)
    expect(io.summary).not.toContain('\u001b')
    expect(io.logs.map((line) => line.message).join('\n')).not.toContain('\u001b')
  })

  it('the emulator refuses a record override it cannot say', async () => {
    const client = new ProvingClient({ baseUrl: emulator.url, apiKey: API_KEY })
    const { provingQueryId } = await client.submitPie({ pieZip: PIE })
    await expect(
      control(emulator.url, 'POST', `queries/${provingQueryId}/record`, { programHash: 12 }),
    ).rejects.toThrow(/400 .*programHash must be a string/)
    await expect(control(emulator.url, 'POST', `queries/${provingQueryId}/record`, { status: 'DONE' })).rejects.toThrow(
      /400 .*record takes programHash/,
    )
    await expect(
      control(emulator.url, 'POST', 'next-query', { outcome: 'done', record: { isFactMocked: 'no' } }),
    ).rejects.toThrow(/400 .*isFactMocked must be a boolean or null/)
  })

  it('evaluateGate (the library) refuses the records the emulator serves', async () => {
    const client = new ProvingClient({ baseUrl: emulator.url, apiKey: API_KEY })
    await nextQuerySays({ ...NO_FACTS, isFactMocked: null })
    const { provingQueryId } = await client.submitPie({ pieZip: PIE })
    const { provingQuery } = await client.waitForQuery(provingQueryId, { timeoutMs: 20_000 })
    const refusals = evaluateGate(provingQuery, undefined, {
      allowMockedFact: false,
      expected: expectResult('PROOF_VERIFICATION_ON_L2'),
    })
    expect(refusals.map((refusal) => refusal.kind)).toEqual(['mock-state-unknown', 'fact-missing', 'fact-missing'])
  })
})

describe('the bucket gate', () => {
  /** A closed bucket holding one DONE query of the example PIE. */
  async function bucketWithOneQuery(): Promise<{ bucketId: string; queryId: string }> {
    const created = await runCli(['bucket', 'create', '--json'], { env: env() })
    expect(created.code, created.stderr).toBe(0)
    const bucketId = JSON.parse(created.stdout).provingBucket.id as string
    const proved = await runCli(['prove', PIE, '--bucket-id', bucketId, '--quiet'], { env: env() })
    expect(proved.code, proved.stderr).toBe(0)
    const queryId = proved.stdout.trim()
    const closed = await runCli(['bucket', 'close', bucketId, '--wait', '--pie', PIE], { env: env() })
    expect(closed.code, closed.stdout + closed.stderr).toBe(0)
    return { bucketId, queryId }
  }

  /** How many times the gate read the query since `since` (the request log). */
  async function readsOf(queryId: string, since: number): Promise<number> {
    const { requests } = (await control(emulator.url, 'GET', 'requests')) as { requests: { path: string }[] }
    return requests.slice(since).filter((request) => request.path.split('?')[0]!.endsWith(`/proving-query/${queryId}`))
      .length
  }
  const logLength = async () =>
    ((await control(emulator.url, 'GET', 'requests')) as { requests: unknown[] }).requests.length

  it('CLI: a listing naming one query 20,000 times is refused unread (issue 31); more distinct queries than leaves is refused', async () => {
    const { bucketId, queryId } = await bucketWithOneQuery()
    const listing = (ids: string[]) => ({
      bucket: { id: bucketId, status: 'DONE', leaves: 1 },
      queries: ids.map((id) => ({ id })),
    })
    await control(emulator.url, 'POST', 'faults', {
      method: 'GET',
      path: `/buckets/${bucketId}`,
      status: 200,
      body: listing(Array(20_000).fill(queryId)),
      times: 1000,
    })
    const before = await logLength()
    const repeated = await runCli(['bucket', 'close', bucketId, '--wait', '--json'], { env: env() })
    // An answer the gate cannot read is not a pass: 20,000 leaves of one query are not 2 leaves.
    expect(repeated.code, repeated.stderr).toBe(1)
    const verdict = JSON.parse(repeated.stdout)
    expect(verdict.ok).toBe(false)
    expect(verdict.queries).toEqual([])
    expect(verdict.refusals).toEqual([
      `Bucket ${bucketId} lists a query more than once: ${queryId} (20000 times). A listing the gate cannot read is not a pass; nothing was judged.`,
    ])
    expect(await readsOf(queryId, before)).toBe(0)

    const other = await bucketWithOneQuery()
    await control(emulator.url, 'DELETE', 'faults')
    await control(emulator.url, 'POST', 'faults', {
      method: 'GET',
      path: `/buckets/${bucketId}`,
      status: 200,
      body: listing([queryId, other.queryId]),
      times: 1000,
    })
    const tooMany = await runCli(['bucket', 'close', bucketId, '--wait'], { env: env() })
    expect(tooMany.code, tooMany.stderr).toBe(1)
    expect(tooMany.stdout).toContain(
      `Bucket ${bucketId} lists 2 distinct queries but has 1 leaf: the listing does not match the bucket.`,
    )
  })

  it('CLI: a record that is not the query it was read for is refused', async () => {
    const { bucketId, queryId } = await bucketWithOneQuery()
    const other = await bucketWithOneQuery()
    // The listing names this bucket's query, but the service answers with another bucket's query.
    // The other query's record with its status, as the /docs/ path answers (the public path's shape plus status).
    const { provingQuery } = await new ProvingClient({ baseUrl: emulator.url, apiKey: API_KEY }).readQuery(
      other.queryId,
    )
    const answer = { provingQuery, metadataUrls: [] }
    await control(emulator.url, 'POST', 'faults', {
      method: 'GET',
      path: `/proving-query/${queryId}`,
      status: 200,
      body: answer,
      times: 1000,
    })
    await control(emulator.url, 'POST', 'faults', {
      method: 'GET',
      path: `/docs/proving-query/${queryId}`,
      status: 200,
      body: answer,
      times: 1000,
    })
    const swapped = await runCli(['bucket', 'close', bucketId, '--wait'], { env: env() })
    expect(swapped.code, swapped.stdout + swapped.stderr).toBe(1)
    expect(swapped.stdout).toContain(`Read as query ${queryId}, the service answered with the record of another query.`)
  })

  it('CLI and bucket-close: a query with null facts, or a malformed one, is refused by name', async () => {
    const { bucketId, queryId } = await bucketWithOneQuery()
    await control(emulator.url, 'POST', `queries/${queryId}/record`, PROGRAM_HASH_ONLY)
    const cli = await runCli(['bucket', 'close', bucketId, '--wait'], { env: env() })
    expect(cli.code, cli.stderr).toBe(1)
    expect(cli.stdout).toMatch(/neither sharpFactHash nor integrityFactHash/)

    const io = fakeIO({ 'bucket-id': bucketId, wait: 'true', ...service() })
    await runBucketClose(io)
    expect(io.failed).toMatch(/neither sharpFactHash nor integrityFactHash/)
    expect(io.outputs['gate-passed']).toBe('false')

    await control(emulator.url, 'POST', `queries/${queryId}/record`, { sharpFactHash: GARBLED, isFactMocked: null })
    const garbled = await runCli(['bucket', 'close', bucketId, '--wait'], { env: env() })
    expect(garbled.code, garbled.stderr).toBe(1)
    expect(garbled.stdout).toMatch(/sharpFactHash is not a 0x hex hash/)
    expect(garbled.stdout).toMatch(/isFactMocked is null/)
    expect(garbled.stdout).not.toContain('\u001b')
    const action = fakeIO({ 'bucket-id': bucketId, wait: 'true', ...service() })
    await runBucketClose(action)
    expect(action.summary).toMatch(/sharpFactHash is not a 0x hex hash/)
    expect(action.summary).toMatch(/isFactMocked is null/)
    expect(action.summary).not.toContain('\u001b')
    const allowed = fakeIO({ 'bucket-id': bucketId, wait: 'true', 'allow-mocked-fact': 'true', ...service() })
    await runBucketClose(allowed)
    expect(allowed.summary).not.toMatch(/isFactMocked is null/)
    expect(allowed.failed).toMatch(/sharpFactHash is not a 0x hex hash/)
  })

  it('CLI: reading the queries counts against --timeout (exit 4)', async () => {
    const { bucketId } = await bucketWithOneQuery()
    // The query reads hang: only the command's deadline ends them.
    await control(emulator.url, 'POST', 'faults', {
      method: 'GET',
      path: '/docs/proving-query/:id',
      kind: 'delay',
      delayMs: 600_000,
      times: 10,
    })
    const result = await runCli(['bucket', 'close', bucketId, '--wait', '--timeout', '3s'], { env: env() })
    expect(result.code, result.stderr).toBe(4)
    expect(result.stderr).toContain(
      `Bucket ${bucketId} ended, but its queries could not all be read before the timeout`,
    )

    // The action: the same deadline (timeout-minutes, 0.05 = 3 s), a timeout, not a gate verdict.
    const io = fakeIO({ 'bucket-id': bucketId, wait: 'true', 'timeout-minutes': '0.05', ...service() })
    await runBucketClose(io)
    expect(io.failed).toBe(
      `Bucket ${bucketId} ended, but its queries could not all be read before the timeout; nothing was judged.`,
    )
    expect(io.outputs['gate-passed']).toBeUndefined()
  })
})
