import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EXAMPLE, generatedPie } from '../helpers/example-pie.ts'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import {
  type ActionRun,
  control,
  errorAnnotations,
  FIXTURE_PIE,
  leakedSecret,
  runAction,
  unzipPie,
} from '../helpers/run-action.ts'

/** The sub-actions' committed bundles (dist/<name>), run from their action.yml as the runner does. */
const API_KEY = 'pk_e2e_SUB_e83f11a06c72'
const FIXTURE_PROGRAM_HASH = EXAMPLE.programHash

let emulator: RunningEmulator
let client: ProvingClient
const runs: ActionRun[] = []
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url })

async function action(
  name: string,
  inputs: Record<string, string>,
  options: { workspace?: string } = {},
): Promise<ActionRun> {
  const run = await runAction(name, { inputs, ...options })
  runs.push(run)
  return run
}

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 100, stepMs: 100 } })
  client = new ProvingClient({ baseUrl: emulator.url, apiKey: API_KEY })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  for (const run of runs.splice(0)) expect(leakedSecret(run, API_KEY), 'the API key leaked').toBeUndefined()
})

describe('pack/', () => {
  it('packs a PIE directory into the workspace and reports what it proves', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'workspace-'))
    await unzipPie(FIXTURE_PIE, join(workspace, 'build', 'pie'))
    const run = await action('pack', { 'pie-dir': 'build/pie', output: 'out/fib.zip' }, { workspace })
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.outputs).toMatchObject({
      'pie-zip': join(workspace, 'out', 'fib.zip'),
      'n-steps': String(EXAMPLE.nSteps),
      'job-size': 'XS',
      'program-hash': FIXTURE_PROGRAM_HASH,
      output: JSON.stringify(EXAMPLE.output),
    })
    expect(run.outputs['pie-sha256']).toMatch(/^[0-9a-f]{64}$/)
    expect(Number(run.outputs['size-bytes'])).toBeGreaterThan(100)
    expect(run.summary).toMatch(/^### ✅ Pack: done/)

    // The same directory always gives the same zip; the root action proves it as it is.
    const again = await action('pack', { 'pie-dir': 'build/pie', output: 'out/again.zip' }, { workspace })
    expect(again.outputs['pie-sha256']).toBe(run.outputs['pie-sha256'])
    const proved = await action('', { pie: run.outputs['pie-zip']!, reuse: 'never', ...service() }, { workspace })
    expect(proved.code, proved.stdout).toBe(0)
    expect(proved.outputs['pie-sha256']).toBe(run.outputs['pie-sha256'])
  })

  it('refuses a folder that is not a PIE, naming the input, and leaves no zip', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'workspace-'))
    const run = await action('pack', { 'pie-dir': 'missing' }, { workspace })
    expect(run.code).toBe(1)
    expect(errorAnnotations(run)[0]).toMatch(/^`pie-dir`: nothing at /)
    const noInput = await action('pack', {}, { workspace })
    expect(errorAnnotations(noInput)).toEqual(['`pie-dir` is required and was not given.'])
  })
})

describe('wait/', () => {
  it('with pie: the PIE is checked before waiting and the facts after DONE', async () => {
    const submitted = await action('', { pie: FIXTURE_PIE, reuse: 'never', wait: 'false', ...service() })
    expect(submitted.code, submitted.stdout).toBe(0)
    const queryId = submitted.outputs['query-id']!

    const run = await action('wait', { 'query-id': queryId, pie: FIXTURE_PIE, ...service() })
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.outputs).toMatchObject({
      'query-id': queryId,
      status: 'DONE',
      'facts-verified': 'true',
      'program-hash': FIXTURE_PROGRAM_HASH,
      'pie-sha256': submitted.outputs['pie-sha256'],
    })
    expect(run.summary).toMatch(/\| \*\*Facts checked locally\*\* \| yes: /)
    expect(run.summary).toContain(', and the facts match the PIE.')

    // Without it, the facts are not checked; the gate is the same otherwise.
    const plain = await action('wait', { 'query-id': queryId, ...service() })
    expect(plain.code).toBe(0)
    expect(plain.outputs['facts-verified']).toBe('false')
    expect(plain.outputs['pie-zip']).toBeUndefined()
    expect(plain.summary).toContain('not checked: no `pie` was given to compare with')
  })

  it('with the pie of another run (same program, other output): the gate refuses the result', async () => {
    const submitted = await action('', { pie: FIXTURE_PIE, reuse: 'never', wait: 'false', ...service() })
    const other = await generatedPie({ seed: 7 })
    const run = await action('wait', { 'query-id': submitted.outputs['query-id']!, pie: other.zip, ...service() })
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'false' })
    expect(run.outputs['error-reason']).toMatch(/^What the service says it proved differs from the PIE: /)
    expect(run.summary).toMatch(/\| \*\*Facts checked locally\*\* \| MISMATCH: /)
  })

  it('with a pie that is not a PIE: fails before waiting, naming the input', async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'bad-pie-')), 'pie.zip')
    writeFileSync(bad, 'not a zip\n')
    const run = await action('wait', { 'query-id': 'never-polled', pie: bad, ...service() })
    expect(run.code).toBe(1)
    expect(errorAnnotations(run)[0]).toMatch(/^pie: .* is not a valid Cairo PIE/)
    expect(run.outputs.status).toBeUndefined()
  })
})

describe('verify-proof/', () => {
  it('submits a proof.json for L2 verification and waits for DONE', async () => {
    const proved = await action('', { pie: FIXTURE_PIE, reuse: 'never', ...service() })
    expect(proved.code).toBe(0)
    const proofUrl = (JSON.parse(proved.outputs['metadata-urls']!) as string[]).find((url) =>
      url.endsWith('/proof.json'),
    )!
    const proof = join(mkdtempSync(join(tmpdir(), 'proof-')), 'proof.json')
    writeFileSync(proof, Buffer.from(await (await fetch(proofUrl)).arrayBuffer()))

    const run = await action('verify-proof', { proof, ...service() })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs).toMatchObject({
      status: 'DONE',
      'is-fact-mocked': 'false',
      'facts-verified': 'false',
      emulated: 'false',
    })
    expect(run.outputs['query-id']).toMatch(/\S/)
    expect(run.outputs['query-id']).not.toBe(proved.outputs['query-id'])
    expect(run.summary).toMatch(/^### ✅ Verify proof: passed/)

    const mocked = await action('verify-proof', { proof, 'mock-fact-hash': 'true', wait: 'true', ...service() })
    expect(mocked.code, mocked.stdout).toBe(0)
    expect(mocked.outputs['is-fact-mocked']).toBe('true')
  })

  it('names every missing input at once', async () => {
    const run = await action('verify-proof', { 'stone-version': 'stone9' })
    expect(run.code).toBe(1)
    expect(run.outputs['error-reason']).toMatch(/^4 inputs need fixing/)
    for (const input of ['proof', 'stone-version', 'api-key', 'base-url'])
      expect(run.summary).toContain(`- \`${input}\``)
  })
})

describe('retry/', () => {
  it('retries a FAILED retriable query and waits for it to finish', async () => {
    await control(emulator.url, 'POST', 'next-query', {
      outcome: 'fail',
      retriable: true,
      reason: 'Prover node lost (emulated)',
    })
    const failed = await action('', { pie: FIXTURE_PIE, reuse: 'never', ...service() })
    expect(failed.outputs.status).toBe('FAILED')
    const queryId = failed.outputs['query-id']!

    const run = await action('retry', { 'query-id': queryId, ...service() })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs).toMatchObject({ 'query-id': queryId, status: 'DONE', 'retry-count': '1' })
    expect(run.summary).toContain('| **Retries used** | 1 of 3 |')

    const again = await action('retry', { 'query-id': queryId, wait: 'false', ...service() })
    expect(again.code).toBe(1)
    expect(again.outputs['error-reason']).toMatch(/409 QUERY_NOT_IN_FAILED_STATUS/)
  })

  it("a query that cannot be retried fails with the service's reason", async () => {
    await control(emulator.url, 'POST', 'next-query', { outcome: 'fail', retriable: false })
    const failed = await action('', { pie: FIXTURE_PIE, reuse: 'never', ...service() })
    const run = await action('retry', { 'query-id': failed.outputs['query-id']!, ...service() })
    expect(run.code).toBe(1)
    expect(run.outputs['error-reason']).toMatch(/400 QUERY_NOT_RETRIABLE/)
    expect(run.outputs['retry-count']).toBeUndefined()
  })
})

describe('bucket-close/', () => {
  it('closes a bucket: id, leaves and the record as JSON; closing again is harmless', async () => {
    const bucket = await client.createBucket({ aggregatorVersion: 'snos_aggregator_v1', externalId: 'release-1' })
    const run = await action('bucket-close', { 'bucket-id': bucket.id, ...service() })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs['bucket-id']).toBe(bucket.id)
    expect(run.outputs.leaves).toBe('0')
    expect(JSON.parse(run.outputs.bucket!)).toMatchObject({ id: bucket.id, externalId: 'release-1' })
    expect(run.summary).toMatch(/^### ✅ Close bucket: done/)
    const again = await action('bucket-close', { 'bucket-id': bucket.id, ...service() })
    expect(again.code).toBe(0)
  })

  it("an unknown bucket fails with the service's answer; a missing key names the input", async () => {
    const unknown = await action('bucket-close', { 'bucket-id': '00000000-0000-4000-8000-000000000000', ...service() })
    expect(unknown.code).toBe(1)
    expect(errorAnnotations(unknown)[0]).toMatch(/404 BUCKET_NOT_FOUND/)
    const noKey = await action('bucket-close', { 'bucket-id': 'b', 'base-url': emulator.url })
    expect(errorAnnotations(noKey)).toEqual([
      '`api-key` is required: pass it from a secret, e.g. `api-key: ${{ secrets.PROVING_API_KEY }}`.',
    ])
  })
})
