import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { RESULTS } from '../../src/schemas/proving-constants.ts'
import { runCli } from '../helpers/cli.ts'
import { control } from '../helpers/run-action.ts'

/**
 * `proving submit` (the general submission, each result kind), `proving prove --bucket-id` and
 * `proving bucket close --wait` gating on every query, against the emulator over HTTP.
 */
const API_KEY = 'pk_cli_submit_7c1d93'
let emulator: RunningEmulator
let work: string
const pies: string[] = []
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY })

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 } })
  work = mkdtempSync(join(tmpdir(), 'cli-submit-'))
  for (let seed = 1; seed <= 4; seed++) {
    const generated = await generatePie({ outDir: join(work, `dir${seed}`), memoryBytes: 4096, seed })
    await packPie(generated.dir, join(work, `pie${seed}.zip`))
    pies.push(join(work, `pie${seed}.zip`))
  }
})
afterAll(async () => {
  await emulator.close()
})

async function queryOf(id: string) {
  const shown = await runCli(['query', 'get', id, '--json'], { env: env() })
  expect(shown.code, shown.stderr).toBe(0)
  return JSON.parse(shown.stdout).provingQuery
}

describe('proving submit', () => {
  it.each(RESULTS)('submits a PIE for %s and waits; facts are checked wherever a fact exists', async (result) => {
    const run = await runCli(
      [
        'submit',
        pies[0]!,
        '--result',
        result,
        '--network',
        'TESTNET',
        '--wait',
        '--json',
        '--external-id',
        `ext-${result}`,
      ],
      {
        env: env(),
      },
    )
    expect(run.code, run.stderr).toBe(0)
    const output = JSON.parse(run.stdout)
    expect(output.provingQuery).toMatchObject({
      status: 'DONE',
      result,
      externalId: `ext-${result}`,
      network: 'TESTNET',
    })
    if (result === 'TRACE_GENERATION') {
      expect(run.stderr).toContain('No fact to check: a TRACE_GENERATION query generates a trace, not a proof.')
      expect(output.localFactCheck).toEqual({ ok: null, reason: 'TRACE_GENERATION has no fact' })
    } else {
      expect(output.localFactCheck.ok).toBe(true)
    }
  })

  it("sends every field; the declared job size defaults to the PIE's", async () => {
    const run = await runCli(
      [
        'submit',
        pies[1]!,
        '--cairo-vm',
        'python',
        '--cairo-version',
        'cairo0',
        '--sharp-prover',
        'stwo',
        '--hints',
        'svc_evm_grower',
        '--dedup-id',
        'dedup-all-fields',
        '--json',
      ],
      { env: env() },
    )
    expect(run.code, run.stderr).toBe(0)
    const { provingQueryId } = JSON.parse(run.stdout)
    const query = await queryOf(provingQueryId)
    expect(query).toMatchObject({ cairoVm: 'python', cairoVersion: 'cairo0', declaredJobSize: 'XS' })
    // What record L does not show, the service kept.
    expect(emulator.state.queries[provingQueryId]).toMatchObject({ dedupId: 'dedup-all-fields', sharpProver: 'stwo' })
    // The same dedup id again: the existing query, not a second one.
    const again = await runCli(['submit', pies[1]!, '--dedup-id', 'dedup-all-fields', '--json'], { env: env() })
    expect(again.code, again.stderr).toBe(0)
    expect(JSON.parse(again.stdout).provingQueryId).toBe(provingQueryId)
  })

  it('submits a program hash and a cairo1 program with its input; says the facts are not checked', async () => {
    const byHash = await runCli(
      ['submit', '--program-hash', '0x1234abcd', '--result', 'PROOF_GENERATION', '--declared-job-size', 'S', '--wait'],
      {
        env: env(),
      },
    )
    expect(byHash.code, byHash.stderr).toBe(0)
    expect(byHash.stdout).toMatch(/status\s+DONE/)
    expect(byHash.stderr).toContain('Facts not checked: there is no PIE to compute them from')

    const program = join(work, 'program.json')
    const input = join(work, 'input.txt')
    writeFileSync(
      program,
      JSON.stringify({ prime: '0x800000000000011000000000000000000000000000000000000000000000001', data: ['0x1'] }),
    )
    writeFileSync(input, '[1 2 3]\n')
    const cairo1 = await runCli(
      ['submit', '--program', program, '--program-input', input, '--cairo-version', 'cairo1', '--json'],
      { env: env() },
    )
    expect(cairo1.code, cairo1.stderr).toBe(0)
    expect(cairo1.stderr).toContain('Declared job size XS (no PIE to measure)')
    const query = await queryOf(JSON.parse(cairo1.stdout).provingQueryId)
    expect(query).toMatchObject({ cairoVersion: 'cairo1', declaredJobSize: 'XS' })
  })

  it('refuses bad combinations before anything is sent, naming the flag', async () => {
    const before = emulator.state.counters.submissions
    const cases: [string[], RegExp][] = [
      [['submit'], /Nothing to submit/],
      [['submit', pies[0]!, '--program-hash', '0x1'], /one source only/],
      [['submit', pies[0]!, '--result', 'PROOF'], /--result must be one of TRACE_GENERATION/],
      [['submit', '--program-hash', 'abc'], /--program-hash must be 0x-prefixed/],
      [['submit', '--program-hash', '0x1', '--bucket-job-index', '1'], /--bucket-job-index needs --bucket-id/],
      [
        ['submit', '--program', pies[0]!, '--cairo-version', 'cairo1', '--cairo-vm', 'python'],
        /cairo1 runs on the rust VM only/,
      ],
      [['submit', pies[0]!, '--bucket-id', 'b-1', '--wait'], /would wait forever/],
    ]
    for (const [args, message] of cases) {
      const run = await runCli(args, { env: env() })
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toMatch(message)
    }
    expect(emulator.state.counters.submissions).toBe(before)
  })
})

describe('buckets from the CLI', () => {
  it("prove --bucket-id fills a bucket; close --wait gates on every query and checks each one's facts", async () => {
    const created = await runCli(['bucket', 'create', '--aggregator-version', 'v1', '--json'], { env: env() })
    expect(created.code, created.stderr).toBe(0)
    const bucketId = JSON.parse(created.stdout).provingBucket.id
    for (const pie of pies.slice(0, 3)) {
      const proved = await runCli(['prove', pie, '--bucket-id', bucketId, '--json'], { env: env() })
      expect(proved.code, proved.stderr).toBe(0)
    }
    const closed = await runCli(['bucket', 'close', bucketId, '--wait', '--pie', join(work, 'pie[123].zip')], {
      env: env(),
    })
    expect(closed.code, closed.stdout + closed.stderr).toBe(0)
    expect(closed.stdout).toMatch(/^0\s+\S+\s+DONE\s+0x\S+\s+no\s+match\s+\S+pie1\.zip/m)
    expect(closed.stdout).toMatch(/^2\s+\S+\s+DONE/m)
    expect(closed.stdout).toContain('Gate passed: all 3 queries are DONE and their facts match the PIEs.')

    // A PIE that is not in the bucket: the gate refuses, naming it; the JSON has every row.
    const refused = await runCli(
      ['bucket', 'close', bucketId, '--wait', '--pie', pies[0]!, '--pie', pies[3]!, '--json'],
      { env: env() },
    )
    expect(refused.code).toBe(1)
    const verdict = JSON.parse(refused.stdout)
    expect(verdict.ok).toBe(false)
    expect(verdict.queries.map((row: { facts: string }) => row.facts)).toEqual(['match', 'differ', 'differ'])
    expect(verdict.refusals.join('\n')).toContain(`No query in the bucket proved ${pies[3]}`)
  })

  it('a failed query fails the bucket gate with its reason', async () => {
    const created = await runCli(['bucket', 'create', '--aggregator-version', 'v1', '--json'], { env: env() })
    const bucketId = JSON.parse(created.stdout).provingBucket.id
    await control(emulator.url, 'POST', 'next-query', { outcome: 'fail', reason: 'Out of memory in the prover' })
    const proved = await runCli(['prove', pies[0]!, '--bucket-id', bucketId, '--bucket-job-index', '0', '--json'], {
      env: env(),
    })
    expect(proved.code, proved.stderr).toBe(0)
    const closed = await runCli(['bucket', 'close', bucketId, '--wait', '--json'], { env: env() })
    expect(closed.code).toBe(1)
    const verdict = JSON.parse(closed.stdout)
    expect(verdict.status).toBe('FAILED')
    expect(verdict.refusals.join('\n')).toContain('Out of memory in the prover')
  })
})
