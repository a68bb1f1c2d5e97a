import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EXAMPLE } from '../helpers/example-pie.ts'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import {
  type ActionRun,
  control,
  errorAnnotations,
  FIXTURE_PIE,
  leakedSecret,
  runAction,
  runPost,
  unzipPie,
} from '../helpers/run-action.ts'

/**
 * The root action's committed bundle (dist/main, then dist/post), run as the runner runs it,
 * against an emulator started here. Every run is scanned for the API key afterwards.
 */
const API_KEY = 'pk_e2e_ROOT_9c41f7d2b8e5a0'
const FIXTURE_SHA256 = EXAMPLE.sha256
const FIXTURE_PROGRAM_HASH = EXAMPLE.programHash

let emulator: RunningEmulator
const runs: ActionRun[] = []

async function prove(inputs: Record<string, string>, options: { runnerTemp?: string } = {}): Promise<ActionRun> {
  const run = await runAction('', {
    inputs: { pie: FIXTURE_PIE, 'api-key': API_KEY, 'base-url': emulator.url, ...inputs },
    ...options,
  })
  runs.push(run)
  return run
}

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 100, stepMs: 100 } })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  for (const run of runs.splice(0)) expect(leakedSecret(run, API_KEY), 'the API key leaked').toBeUndefined()
})

describe('root action bundle', () => {
  it('proves the example PIE: DONE, facts checked, every output set; the post step adds nothing', async () => {
    const run = await prove({})
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.stderr).toBe('')
    expect(run.outputs).toMatchObject({
      status: 'DONE',
      'program-hash': FIXTURE_PROGRAM_HASH,
      'is-fact-mocked': 'false',
      'facts-verified': 'true',
      'pie-sha256': FIXTURE_SHA256,
      emulated: 'false',
    })
    expect(run.outputs['query-id']).toMatch(/^[\w-]+$/)
    expect(run.outputs['integrity-fact-hash']).toMatch(/^0x[0-9a-f]+$/)
    expect(run.outputs['sharp-fact-hash']).toMatch(/^0x[0-9a-f]+$/)
    expect(run.outputs['pie-zip']).toMatch(/\/examples\/fib\/pie\.zip$/)
    const urls = JSON.parse(run.outputs['metadata-urls']!) as string[]
    expect(urls.some((url) => url.endsWith('/proof.json'))).toBe(true)
    expect(run.outputs['error-reason']).toBeUndefined()
    expect(run.summary).toMatch(/^### ✅ Prove: passed/)
    expect(run.summary).toContain('[this run](https://github.com/proving-kit/proving-kit/actions/runs/4242)')
    expect(run.stdout).toMatch(/::group::Waiting for query/)
    // One line per status or step change: no line repeats.
    const progress = run.stdout
      .split('\n')
      .filter((line) => /^\[\s*\d+s\] /.test(line))
      .map((line) => line.replace(/^\[[^\]]*\] /, ''))
    expect(progress.length).toBeGreaterThan(0)
    expect(new Set(progress).size).toBe(progress.length)

    const post = await runPost('', run)
    runs.push(post)
    expect(post.code).toBe(0)
    expect(post.summary).toBe('')
  })

  it('a FAILED query fails the step with its error reason, query-id set', async () => {
    await control(emulator.url, 'POST', 'next-query', {
      outcome: 'fail',
      reason: 'Trace generation ran out of memory (emulated)',
      retriable: true,
    })
    // A new query takes the plan: by default (reuse: auto) the first test's DONE query of this
    // PIE would be followed instead, and the plan left for the next submission.
    const run = await prove({ reuse: 'never' })
    expect(run.outputs.reused).toBe('false')
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({
      status: 'FAILED',
      'error-reason': 'Trace generation ran out of memory (emulated)',
      'facts-verified': 'false',
    })
    expect(run.outputs['query-id']).toMatch(/\S/)
    expect(errorAnnotations(run)[0]).toBe('The query FAILED: Trace generation ran out of memory (emulated).')
    expect(run.summary).toMatch(/^### ❌ Prove: failed/)
    expect(run.summary).toContain('- The query FAILED: Trace generation ran out of memory (emulated).')
    expect(run.summary).toContain('`retry` sub-action')
  })

  it('a mocked fact is refused by default', async () => {
    const run = await prove({ 'mock-fact-hash': 'true' })
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({ status: 'DONE', 'is-fact-mocked': 'true' })
    expect(run.outputs['error-reason']).toMatch(/fact is mocked/)
    expect(run.stdout).toMatch(/::warning::`mock-fact-hash` is true but `allow-mocked-fact` is false/)
    expect(run.summary).toContain('| **Fact mocked** | YES: nothing was verified on chain |')
  })

  it('a mocked fact passes with allow-mocked-fact', async () => {
    const run = await prove({ 'mock-fact-hash': 'true', 'allow-mocked-fact': 'true' })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs).toMatchObject({ status: 'DONE', 'is-fact-mocked': 'true' })
    expect(run.summary).toMatch(/with a mocked fact \(allowed\)/)
  })

  it('expected-program-hash: a different hash fails before anything is submitted; the right one passes', async () => {
    const wrong = '0x931813b5c14b9b8b8d9f44bc542445105de0c7e1c7a5a83b7e40ca0b096975'
    const refused = await prove({ 'expected-program-hash': wrong })
    expect(refused.code).toBe(1)
    expect(refused.outputs['query-id']).toBeUndefined()
    expect(refused.outputs['program-hash']).toBe(FIXTURE_PROGRAM_HASH)
    expect(refused.outputs['error-reason']).toBe(
      `The PIE's program hash is ${FIXTURE_PROGRAM_HASH}, not the expected ${wrong}; nothing was submitted.`,
    )
    expect(refused.summary).toContain('| **Expected program hash** |')

    const upperCase = `0x${FIXTURE_PROGRAM_HASH.slice(2).toUpperCase().padStart(64, '0')}`
    const passed = await prove({ 'expected-program-hash': upperCase })
    expect(passed.code, passed.stdout).toBe(0)
    expect(passed.outputs.status).toBe('DONE')
  })

  it('a missing api-key fails before anything is packed or sent, naming the input', async () => {
    const pieDir = await unzipPie(FIXTURE_PIE, join(mkdtempSync(join(tmpdir(), 'pie-dir-')), 'pie'))
    const runnerTemp = mkdtempSync(join(tmpdir(), 'runner-temp-'))
    await control(emulator.url, 'DELETE', 'requests')
    const run = await runAction('', { inputs: { pie: pieDir, 'base-url': emulator.url }, runnerTemp })
    expect(run.code).toBe(1)
    expect(errorAnnotations(run)).toEqual([
      '`api-key` is required unless `emulator` is true: pass it from a secret, e.g. `api-key: ${{ secrets.PROVING_API_KEY }}`.',
    ])
    expect(run.outputs).toMatchObject({
      'error-reason': expect.stringContaining('`api-key`'),
      emulated: 'false',
      'facts-verified': 'false',
    })
    expect(readdirSync(runnerTemp)).toEqual([])
    expect(((await control(emulator.url, 'GET', 'requests')) as { requests: unknown[] }).requests).toEqual([])
    expect(run.summary).toContain('The inputs need fixing; nothing was packed or sent.')
  })

  it('an invalid PIE fails with its problems listed and nothing uploaded', async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'bad-pie-')), 'pie.zip')
    writeFileSync(bad, 'this is not a zip file\n')
    await control(emulator.url, 'DELETE', 'requests')
    const run = await prove({ pie: bad })
    expect(run.code).toBe(1)
    expect(errorAnnotations(run)[0]).toMatch(
      /^pie: .*bad-pie-.*pie\.zip is not a valid Cairo PIE \(\d+ problems?\); nothing was uploaded\./,
    )
    expect(run.outputs['query-id']).toBeUndefined()
    expect(run.summary).toContain('**What failed**')
    expect(((await control(emulator.url, 'GET', 'requests')) as { requests: unknown[] }).requests).toEqual([])
  })

  it('a timeout fails with the query still running, query-id set and how to resume', async () => {
    await control(emulator.url, 'PUT', 'timing', { stepMs: 600_000 })
    try {
      // A new query, slowed down: reuse: auto would follow an earlier DONE query of this PIE.
      const run = await prove({ 'timeout-minutes': '0.03', reuse: 'never' })
      expect(run.code).toBe(1)
      const queryId = run.outputs['query-id']!
      expect(queryId).toMatch(/\S/)
      expect(run.outputs.status).toMatch(/^(RECEIVED|IN_PROGRESS)$/)
      expect(run.outputs['error-reason']).toBe(
        `Timed out waiting for query ${queryId}. Resume with the wait sub-action: query-id ${queryId}.`,
      )
      expect(run.summary).toMatch(/^### ⏱️ Prove: timed out/)
      expect(run.summary).toContain(`- uses: ./wait\n  with:\n    query-id: ${queryId}\n`)
      await control(emulator.url, 'POST', `queries/${queryId}/complete`)
    } finally {
      await control(emulator.url, 'PUT', 'timing', { stepMs: 100 })
    }
  })

  it('a failed artifact upload warns and does not fail the gate', async () => {
    const run = await prove({ 'upload-artifacts': 'true' })
    expect(run.code, run.stdout).toBe(0)
    expect(run.stdout).toMatch(/::warning::Could not upload the artifacts \(.*\); the gate is not affected\./)
    expect(run.summary).toMatch(/\| \*\*Artifacts\*\* \| upload failed: /)
  })

  it('emulator: true needs no key nor address and says emulated', async () => {
    const run = await runAction('', { inputs: { pie: FIXTURE_PIE, emulator: 'true' } })
    runs.push(run)
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.outputs).toMatchObject({ status: 'DONE', emulated: 'true', 'facts-verified': 'true' })
    expect(run.summary).toMatch(/^### ✅ Prove: passed \(emulator\)/)
  })

  it('emulator: true with decommit-destination-chain-id: the DONE proof is decommitted, task outputs and MMRs set', async () => {
    const run = await runAction('', {
      inputs: { pie: FIXTURE_PIE, emulator: 'true', 'decommit-destination-chain-id': '0xaa36a7' },
    })
    runs.push(run)
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(run.outputs).toMatchObject({
      status: 'DONE',
      emulated: 'true',
      'facts-verified': 'true',
      'task-status': 'TaskDecommitmentCompleted',
    })
    expect(run.outputs['task-uuid']).toMatch(/^[0-9a-f-]{36}$/)
    expect(run.outputs['task-updated-at']).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(run.outputs['task-error-message']).toBeUndefined()
    const mmrs = JSON.parse(run.outputs.mmrs!) as Record<string, string>[]
    expect(mmrs.length).toBeGreaterThan(0)
    for (const mmr of mmrs)
      expect(Object.keys(mmr).sort()).toEqual(['chain_id', 'hashing_function', 'id', 'root', 'size'])
    // The proof's section, then the decommitment's with its MMR table.
    expect(run.summary).toMatch(/^### ✅ Prove: passed \(emulator\)/)
    expect(run.summary).toContain('| **Decommitment** | to chain 0xaa36a7, submitted next (see "Decommit" below) |')
    expect(run.summary).toMatch(/### ✅ Decommit: passed[\s\S]*\*\*MMRs used\*\*/)
    expect(run.summary.indexOf('Prove: passed')).toBeLessThan(run.summary.indexOf('Decommit: passed'))
  })

  it("decommit-destination-chain-id on a service: a failed decommitment fails the step with the task's error", async () => {
    await control(emulator.url, 'POST', 'next-task', { outcome: 'fail', error: 'Decommitment reverted (emulated)' })
    const run = await prove({ 'decommit-destination-chain-id': '0xaa36a7', 'tasks-url': emulator.url })
    expect(run.code).toBe(1)
    expect(run.outputs).toMatchObject({
      status: 'DONE',
      'facts-verified': 'true',
      'task-status': 'TaskDecommitmentFailed',
      'task-error-message': 'Decommitment reverted (emulated)',
    })
    expect(run.outputs['error-reason']).toMatch(/Decommitment reverted \(emulated\)/)
    expect(errorAnnotations(run).at(-1)).toMatch(/Decommitment reverted \(emulated\)/)
    expect(run.summary).toMatch(/^### ✅ Prove: passed[\s\S]*### ❌ Decommit: failed/)
  })

  it('decommit-destination-chain-id: no decommitment when the gate refuses the proof', async () => {
    const run = await runAction('', {
      inputs: {
        pie: FIXTURE_PIE,
        emulator: 'true',
        'mock-fact-hash': 'true',
        'decommit-destination-chain-id': '0xaa36a7',
      },
    })
    runs.push(run)
    expect(run.code).toBe(1)
    expect(run.outputs['error-reason']).toMatch(/fact is mocked/)
    expect(run.outputs['task-uuid']).toBeUndefined()
    expect(run.summary).toContain('| **Decommitment** | not submitted: the gate refused the result |')
    expect(run.summary).not.toContain('Decommit:')
  })

  it('a PIE directory is packed into RUNNER_TEMP, validated and proved', async () => {
    const pieDir = await unzipPie(FIXTURE_PIE, join(mkdtempSync(join(tmpdir(), 'pie-dir-')), 'pie'))
    const runnerTemp = mkdtempSync(join(tmpdir(), 'runner-temp-'))
    const run = await prove({ pie: pieDir }, { runnerTemp })
    expect(run.code, run.stdout).toBe(0)
    expect(run.outputs['pie-zip']!.startsWith(runnerTemp)).toBe(true)
    expect(run.outputs['pie-sha256']).toMatch(/^[0-9a-f]{64}$/)
    expect(run.outputs).toMatchObject({
      status: 'DONE',
      'facts-verified': 'true',
      'program-hash': FIXTURE_PROGRAM_HASH,
    })
    expect(run.stdout).toMatch(/Packed .* into a .* pie\.zip/)
  })
})
