import { mkdtempSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { type ActionRun, control, leakedSecret, runAction } from '../helpers/run-action.ts'

/**
 * docs/action.md's bucket workflow (one bucket across a job matrix) through the bundled actions,
 * run as the runner runs them: bucket-create -> a "matrix" of root-action jobs proving into the
 * bucket at once (each its own process, as each leg is its own runner) -> bucket-close with
 * wait: true, gating on every query and checking each one's facts against the PIEs. Also the root action's general submission
 * (result kinds, program hash) and several PIEs in one step.
 */
const API_KEY = 'pk_e2e_BUCKET_5b0e44c1'
let emulator: RunningEmulator
let workspace: string
const runs: ActionRun[] = []
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url })

async function action(
  name: string,
  inputs: Record<string, string>,
  env: Record<string, string> = {},
): Promise<ActionRun> {
  const run = await runAction(name, {
    inputs,
    workspace,
    env: { GITHUB_WORKFLOW: 'release', GITHUB_JOB: 'prove', ...env },
  })
  runs.push(run)
  return run
}

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 30 }, apiKeys: [API_KEY] })
  workspace = mkdtempSync(join(tmpdir(), 'workspace-buckets-'))
  await mkdir(join(workspace, 'pies'))
  for (let seed = 1; seed <= 4; seed++) {
    const generated = await generatePie({ outDir: join(workspace, 'build', `pie${seed}`), memoryBytes: 4096, seed })
    await packPie(generated.dir, join(workspace, 'pies', `pie${seed}.zip`))
  }
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  for (const run of runs.splice(0)) expect(leakedSecret(run, API_KEY), 'the API key leaked').toBeUndefined()
})

describe('a bucket filled by a job matrix, closed and gated', () => {
  it('create -> 3 jobs prove into it at once -> close, wait, gate on every query with facts per PIE', async () => {
    const created = await action('bucket-create', { ...service(), 'external-id': 'release-v1' })
    expect(created.code, created.stdout).toBe(0)
    const bucketId = created.outputs['bucket-id']!
    expect(bucketId).toMatch(/\S/)
    expect(JSON.parse(created.outputs.bucket!)).toMatchObject({ id: bucketId, externalId: 'release-v1' })
    expect(created.summary).toMatch(/^### ✅ Create bucket: done/)

    // The matrix: one process per leg, all at once, each with its strategy.job-index.
    const legs = await Promise.all(
      [1, 2, 3].map((seed, index) =>
        action(
          '',
          { ...service(), pie: `pies/pie${seed}.zip`, 'bucket-id': bucketId, 'bucket-job-index': String(index) },
          { GITHUB_RUN_ID: '777' },
        ),
      ),
    )
    for (const [index, leg] of legs.entries()) {
      expect(leg.code, leg.stdout).toBe(0)
      expect(leg.outputs).toMatchObject({ 'bucket-id': bucketId, 'bucket-job-index': String(index) })
      expect(leg.outputs['query-id']).toMatch(/\S/)
      expect(leg.outputs['dedup-id']).toMatch(/^gh-[0-9a-f]{40}$/)
      expect(leg.summary).toContain('it ends when the bucket is closed')
    }
    expect(new Set(legs.map((leg) => leg.outputs['dedup-id'])).size).toBe(3)

    // "Re-run jobs": the same run id, a new attempt; the query it paid for, not a second one.
    const rerun = await action(
      '',
      { ...service(), pie: 'pies/pie1.zip', 'bucket-id': bucketId, 'bucket-job-index': '0' },
      {
        GITHUB_RUN_ID: '777',
        GITHUB_RUN_ATTEMPT: '2',
      },
    )
    expect(rerun.code, rerun.stdout).toBe(0)
    expect(rerun.outputs['query-id']).toBe(legs[0]!.outputs['query-id'])
    expect(rerun.stdout).toContain(
      `Following query ${legs[0]!.outputs['query-id']}, submitted by an earlier attempt of this job`,
    )
    expect(rerun.stdout).not.toContain('Submitted: query')
    expect(Object.values(emulator.state.queries).filter((query) => query.bucketId === bucketId)).toHaveLength(3)

    const closed = await action('bucket-close', {
      ...service(),
      'bucket-id': bucketId,
      wait: 'true',
      pie: 'pies/pie[123].zip',
    })
    expect(closed.code, closed.stdout).toBe(0)
    expect(closed.outputs).toMatchObject({ 'bucket-id': bucketId, status: 'DONE', 'gate-passed': 'true', leaves: '3' })
    const rows = JSON.parse(closed.outputs.queries!)
    expect(rows.map((row: { bucketJobIndex: number }) => row.bucketJobIndex)).toEqual([0, 1, 2])
    expect(rows.map((row: { facts: string; pie: string }) => [row.facts, row.pie])).toEqual([
      ['match', 'pies/pie1.zip'],
      ['match', 'pies/pie2.zip'],
      ['match', 'pies/pie3.zip'],
    ])
    expect(closed.summary).toMatch(/^### ✅ Close bucket: passed/)
    expect(closed.summary).toContain('is DONE: all 3 queries passed the gate and their facts match the PIEs.')
    expect(closed.summary).toContain('| # | query | status | program hash | mocked | facts | PIE | problems |')
    expect(closed.summary).toMatch(/\| 2 \| `[^`]+` \| DONE \| `0x[0-9a-f]+` \| no \| match \| pies\/pie3\.zip \|/)
  })

  it('refuses a bucket with a FAILED query and a PIE that has no query, naming both', async () => {
    const created = await action('bucket-create', service())
    const bucketId = created.outputs['bucket-id']!
    await control(emulator.url, 'POST', 'next-query', { outcome: 'fail', reason: 'Prover ran out of memory' })
    const legs = await Promise.all(
      [1, 2].map((seed) =>
        action('', { ...service(), pie: `pies/pie${seed}.zip`, 'bucket-id': bucketId }, { GITHUB_RUN_ID: '778' }),
      ),
    )
    for (const leg of legs) expect(leg.code, leg.stdout).toBe(0)
    const closed = await action('bucket-close', {
      ...service(),
      'bucket-id': bucketId,
      wait: 'true',
      pie: 'pies/pie1.zip\npies/pie2.zip\npies/pie4.zip',
    })
    expect(closed.code).toBe(1)
    expect(closed.outputs).toMatchObject({ status: 'FAILED', 'gate-passed': 'false' })
    expect(closed.outputs['error-reason']).toMatch(/\S/)
    expect(closed.summary).toMatch(/^### ❌ Close bucket: failed/)
    expect(closed.summary).toContain('Prover ran out of memory')
    expect(closed.summary).toContain('No query in the bucket proved pies/pie4.zip')
  })
})

describe("the root action's general submission", () => {
  it.each([
    'PROOF_GENERATION',
    'PROOF_VERIFICATION_ON_L2',
    'PROOF_VERIFICATION_ON_APE_CHAIN',
    'PROOF_VERIFICATION_ON_WORLD_CHAIN',
  ])('%s on the emulator: DONE, the facts checked and the gate passed', async (result) => {
    const run = await action('', { pie: 'pies/pie3.zip', emulator: 'true', result })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'true' })
    expect(run.summary).toContain(`| **Result** | ${result} |`)
  })

  it('TRACE_GENERATION on the emulator: DONE, and the summary says a trace has no fact', async () => {
    const run = await action('', {
      pie: 'pies/pie1.zip',
      emulator: 'true',
      result: 'TRACE_GENERATION',
      'external-id': 'trace-1',
    })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'false' })
    expect(run.summary).toContain(
      'not checked: a TRACE_GENERATION query generates a trace, not a proof: it has no fact',
    )
    expect(run.summary).toMatch(/\*\*Result\*\* \| TRACE_GENERATION/)
  })

  it('PROOF_VERIFICATION_ON_L1 checks the facts; a program hash is proved without a PIE', async () => {
    const l1 = await action('', {
      pie: 'pies/pie2.zip',
      emulator: 'true',
      result: 'PROOF_VERIFICATION_ON_L1',
      network: 'testnet',
    })
    expect(l1.code, l1.stdout).toBe(0)
    expect(l1.outputs['facts-verified']).toBe('true')
    const byHash = await action('', {
      'program-hash': '0x1234abcd',
      emulator: 'true',
      result: 'PROOF_GENERATION',
      'declared-job-size': 's',
    })
    expect(byHash.code, byHash.stdout).toBe(0)
    expect(byHash.summary).toContain('not checked: no PIE to compute them from')
  })

  it('several PIEs in `pie` (a glob) are a batch: one row each, `results` as JSON', async () => {
    const run = await action('', { pie: 'pies/*.zip', emulator: 'true', concurrency: '2' })
    expect(run.code, run.stdout).toBe(0)
    const results = JSON.parse(run.outputs.results!)
    expect(
      results.map((row: { pie: string; status: string; facts: string }) => [row.pie, row.status, row.facts]),
    ).toEqual([1, 2, 3, 4].map((seed) => [`pies/pie${seed}.zip`, 'DONE', 'match']))
    expect(run.outputs.status).toBe('DONE')
    expect(run.summary).toContain('| # | PIE | query | status | facts | gate |')
  })

  it('refuses a bucket with the emulator, and two things to prove, before anything is sent', async () => {
    const run = await action('', { pie: 'pies/pie1.zip', 'program-hash': '0x1', emulator: 'true', 'bucket-id': 'b-1' })
    expect(run.code).toBe(1)
    expect(run.summary).toContain('`pie` and `program-hash` exclude each other')
    expect(run.summary).toContain('`bucket-id` and `emulator: true` exclude each other')
  })
})
