import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, useEmulator } from '../helpers/emulator.ts'
import { leakedSecret, runAction } from '../helpers/run-action.ts'

/**
 * The waits that have no PIE (`proving query wait`, `proving query retry --wait`, `proving
 * verify-proof --wait`, the `retry` action with `wait: true`) gate a DONE record as `prove
 * --wait` does: a mocked fact, an unknown mock state (isFactMocked null) or a null fact is a
 * refusal (exit 1, the field named), unless --allow-mocked-fact / `allow-mocked-fact` allows
 * the mock state. Resuming a `prove --wait` with `query wait` keeps the gate.
 */
const emulator = useEmulator()
const env = () => ({ PROVING_BASE_URL: emulator().url, PROVING_API_KEY: KEY })

/** A query submitted (not waited for) through the CLI, as `prove -q` gives it. */
async function submitted(extra: string[] = []): Promise<string> {
  const run = await runCli(['prove', FIXTURE_PIE, '-q', ...extra], { env: env() })
  expect(run.code, run.stderr).toBe(0)
  return run.stdout.trim()
}

/** A query whose record says `record` once it is DONE. */
async function doneSaying(record: Record<string, unknown>, extra: string[] = []): Promise<string> {
  const id = await submitted(extra)
  await emulator().control('POST', `/queries/${id}/record`, record)
  return id
}

/** A FAILED, retriable query whose record says `record` once a retry ends DONE. */
async function failedSaying(record: Record<string, unknown>, extra: string[] = []): Promise<string> {
  await emulator().control('POST', '/next-query', {
    outcome: 'fail',
    retriable: true,
    reason: 'worker lost (emulated)',
    record,
  })
  const id = await submitted(extra)
  const waited = await emulator().client().waitForQuery(id, { timeoutMs: 10_000 })
  expect(waited.provingQuery.status).toBe('FAILED')
  return id
}

describe('proving query wait gates a DONE record', () => {
  it('isFactMocked null: exit 1 naming it; --allow-mocked-fact lets it pass', async () => {
    const id = await doneSaying({ isFactMocked: null })
    const refused = await runCli(['query', 'wait', id], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stdout).toMatch(/status\s+DONE/)
    expect(refused.stderr).toMatch(/^proving: gate refused: .*isFactMocked is null/m)

    const json = await runCli(['query', 'wait', id, '--json'], { env: env() })
    expect(json.code).toBe(1)
    expect(JSON.parse(json.stdout).gate).toMatchObject({ ok: false, refusals: [{ kind: 'mock-state-unknown' }] })

    const allowed = await runCli(['query', 'wait', id, '--allow-mocked-fact'], { env: env() })
    expect(allowed.code, allowed.stderr).toBe(0)
    expect(allowed.stderr).not.toContain('gate refused')

    // A record the gate passes exits 0, its gate in the JSON.
    const passing = await runCli(['query', 'wait', await submitted(), '--json'], { env: env() })
    expect(passing.code, passing.stderr).toBe(0)
    expect(JSON.parse(passing.stdout).gate).toEqual({ ok: true, refusals: [] })
  })

  it('a mocked fact: exit 1; --allow-mocked-fact lets it pass', async () => {
    const id = await submitted(['--mock-fact-hash'])
    const refused = await runCli(['query', 'wait', id], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toMatch(/gate refused: The fact is mocked/)
    expect((await runCli(['query', 'wait', id, '--allow-mocked-fact'], { env: env() })).code).toBe(0)
  })

  it('null facts: exit 1 naming each, even with --allow-mocked-fact', async () => {
    const id = await doneSaying({ programHash: null, integrityFactHash: null, sharpFactHash: null })
    const refused = await runCli(['query', 'wait', id, '--allow-mocked-fact'], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toMatch(/gate refused: The service reported no programHash \(null\)/)
    expect(refused.stderr).toMatch(/gate refused: .*integrityFactHash/)
  })
})

describe('proving query retry --wait gates the retried query', () => {
  it('isFactMocked null after the retry: exit 1 naming it', async () => {
    const id = await failedSaying({ isFactMocked: null })
    const refused = await runCli(['query', 'retry', id, '--wait'], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stdout).toMatch(/status\s+DONE/)
    expect(refused.stderr).toMatch(/gate refused: .*isFactMocked is null/)
  })

  it('isFactMocked null after the retry, with --allow-mocked-fact: exit 0', async () => {
    const id = await failedSaying({ isFactMocked: null })
    const allowed = await runCli(['query', 'retry', id, '--wait', '--allow-mocked-fact'], { env: env() })
    expect(allowed.code, allowed.stderr).toBe(0)
  })

  it('a null fact after the retry: exit 1 even with --allow-mocked-fact', async () => {
    const id = await failedSaying({ programHash: null })
    const refused = await runCli(['query', 'retry', id, '--wait', '--allow-mocked-fact'], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toMatch(/gate refused: The service reported no programHash \(null\)/)
  })
})

describe('proving verify-proof --wait gates the verification', () => {
  const proof = () => {
    const path = join(mkdtempSync(join(tmpdir(), 'verify-proof-')), 'proof.json')
    writeFileSync(path, JSON.stringify({ proof: 'emulated' }))
    return path
  }
  const verify = (...extra: string[]) =>
    runCli(
      ['verify-proof', proof(), '--stone-version', 'stone6', '--memory-verification', 'relaxed', '--wait', ...extra],
      { env: env() },
    )

  it('isFactMocked null: exit 1 naming it; --allow-mocked-fact lets it pass', async () => {
    await emulator().control('POST', '/next-query', { outcome: 'done', record: { isFactMocked: null } })
    const refused = await verify()
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toMatch(/gate refused: .*isFactMocked is null.*, and --allow-mocked-fact was not given\./)

    await emulator().control('POST', '/next-query', { outcome: 'done', record: { isFactMocked: null } })
    const allowed = await verify('--allow-mocked-fact')
    expect(allowed.code, allowed.stderr).toBe(0)

    // --mock-fact-hash implies --allow-mocked-fact, as for prove; a real verification passes.
    const mocked = await verify('--mock-fact-hash')
    expect(mocked.code, mocked.stderr).toBe(0)
    expect(mocked.stdout).toMatch(/fact mocked\s+true/)
    expect((await verify()).code).toBe(0)
  })

  it('null facts: exit 1 even with --allow-mocked-fact', async () => {
    await emulator().control('POST', '/next-query', {
      outcome: 'done',
      record: { programHash: null, integrityFactHash: null, sharpFactHash: null },
    })
    const refused = await verify('--allow-mocked-fact')
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toMatch(/gate refused: The service reported no programHash \(null\)/)
  })
})

describe('the verify-proof action names the input it has', () => {
  it('isFactMocked null: the refusal names `mock-fact-hash` (verify-proof has no `allow-mocked-fact`)', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'verify-proof-')), 'proof.json')
    writeFileSync(path, JSON.stringify({ proof: 'emulated' }))
    await emulator().control('POST', '/next-query', { outcome: 'done', record: { isFactMocked: null } })
    const run = await runAction('verify-proof', {
      inputs: { 'api-key': KEY, 'base-url': emulator().url, proof: path },
      fromSource: true,
    })
    expect(run.code, run.stdout).toBe(1)
    expect(run.outputs['error-reason']).toMatch(/isFactMocked is null.*, and `mock-fact-hash` is false\./)
    expect(run.outputs['error-reason']).not.toContain('allow-mocked-fact')
  })
})

describe('the retry action gates the retried query (from source: dist/ is rebuilt separately)', () => {
  const retry = async (inputs: Record<string, string>) => {
    const run = await runAction('retry', {
      inputs: { 'api-key': KEY, 'base-url': emulator().url, ...inputs },
      fromSource: true,
    })
    expect(leakedSecret(run, KEY), 'the API key leaked').toBeUndefined()
    return run
  }

  it('isFactMocked null: the step fails naming it; allow-mocked-fact: true passes', async () => {
    const refusedId = await failedSaying({ isFactMocked: null })
    const refused = await retry({ 'query-id': refusedId })
    expect(refused.code, refused.stdout).toBe(1)
    expect(refused.outputs).toMatchObject({ status: 'DONE', 'retry-count': '1' })
    expect(refused.outputs['error-reason']).toMatch(/isFactMocked is null/)

    const allowedId = await failedSaying({ isFactMocked: null })
    const allowed = await retry({ 'query-id': allowedId, 'allow-mocked-fact': 'true' })
    expect(allowed.code, allowed.stdout).toBe(0)
    expect(allowed.outputs.status).toBe('DONE')
  })

  it('a mocked fact: the step fails', async () => {
    const id = await failedSaying({}, ['--mock-fact-hash'])
    const refused = await retry({ 'query-id': id })
    expect(refused.code, refused.stdout).toBe(1)
    expect(refused.outputs['error-reason']).toMatch(/The fact is mocked/)
  })
})
