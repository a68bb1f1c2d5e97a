import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { type Hold, holdingTap } from '../helpers/holding-tap.ts'
import { startAction } from '../helpers/run-action.ts'

/**
 * The interruption matrix of the root action (issue 32): a job proving a PIE (the general
 * submission, whose derived `dedup-id` leaves the run attempt out) stopped at each stage by the
 * runner's SIGINT (a cancel), its SIGTERM, a SIGKILL (the job's time limit, a lost runner) or a
 * dropped connection, then "Re-run jobs": attempt 2, in a fresh RUNNER_TEMP as GitHub gives it.
 * Exactly one query per cell on the emulator's own list of the cell's key; the re-run follows it,
 * saying so ("Following query X, submitted by an earlier attempt"), never "Submitted", and ends
 * DONE with the gate passed (and the on-chain check, where that is the stage; there, with the
 * default reuse: auto, the re-run finds the DONE query's fact on chain and passes with nothing
 * sent, `reused: chain`, instead of following the query). Every stage is
 * reached by an event (the upload's bytes or the service's answer at a TCP tap, the id in the
 * log, a status read or an RPC call in the emulator's request log). Runs the action's sources.
 */

const STAGES = ['upload middle', 'upload end', 'id arrived', 'wait', 'on-chain check'] as const
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGKILL', 'drop'] as const
type Stage = (typeof STAGES)[number]
type Interruption = (typeof SIGNALS)[number]
/**
 * Every stage × every interruption with PROVING_MATRIX=full (the table in docs/reliability.md);
 * by default (npm test's time budget) each stage once, the interruptions in turn, so every stage
 * and every interruption runs (the wait gets SIGINT: Ctrl-C, the runner's cancel).
 */
const FULL = process.env.PROVING_MATRIX === 'full'
const CELLS = FULL
  ? STAGES.flatMap((stage) => SIGNALS.map((signal) => ({ stage, signal })))
  : STAGES.map((stage, index) => ({ stage, signal: SIGNALS[(index + 1) % SIGNALS.length]! }))
const KEYS = CELLS.map((_, index) => `pk_action_matrix_${String(index).padStart(2, '0')}`)

let emulator: TestEmulator
let work: string
let zip: string
let zipBytes: number
type Row = {
  stage: Stage
  signal: Interruption
  firstExit: string
  paidAfterFirst: number
  rerunSays: string
  paid: number
}
const rows: Row[] = []

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: KEYS, timing: { receivedMs: 0, stepMs: 600_000 } })
  work = await mkdtemp(join(tmpdir(), 'interruption-matrix-action-'))
  await generatePie({ outDir: join(work, 'pie'), memoryBytes: 4 * 1024 * 1024, seed: 34 })
  const packed = await packPie(join(work, 'pie'), join(work, 'pie.zip'))
  zip = packed.path
  zipBytes = packed.sizeBytes
}, 60_000)

afterAll(async () => {
  await emulator?.close()
  await rm(work, { recursive: true, force: true })
  const order = (row: Row) => STAGES.indexOf(row.stage) * 10 + SIGNALS.indexOf(row.signal)
  const lines = rows
    .sort((a, b) => order(a) - order(b))
    .map(
      (row) =>
        `| ${row.stage} | ${row.signal} | ${row.firstExit} | ${row.paidAfterFirst} | ${row.rerunSays} | ${row.paid} |`,
    )
  console.log(
    [
      '| stage | interruption | attempt 1 | queries after it | attempt 2 says | paid queries |',
      '|---|---|---|---|---|---|',
      ...lines,
    ].join('\n'),
  )
})

async function queriesOf(apiKey: string): Promise<{ id: string; status: string }[]> {
  const answer = await emulator.call('GET', '/docs/proving-queries', { query: { apiKey, limit: 100, offset: 0 } })
  return (answer.body as { provingQueries: { id: string; status: string }[] }).provingQueries
}

async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

async function ownPie(index: number): Promise<string> {
  await generatePie({ outDir: join(work, `pie-${index}`), memoryBytes: 4 * 1024 * 1024, seed: 100 + index })
  return (await packPie(join(work, `pie-${index}`), join(work, `pie-${index}.zip`))).path
}

function holdFor(stage: Stage): Hold {
  if (stage === 'upload middle') return { postBytes: Math.floor(zipBytes / 2) }
  if (stage === 'upload end') return { answer: true }
  if (stage === 'on-chain check') return { answer: true, path: '/starknet-rpc' }
  return undefined
}

describe.concurrent('the root action interrupted at every stage, then "Re-run jobs": one paid query', () => {
  it.each(CELLS.map((cell, index) => ({ ...cell, index })))(
    '$stage × $signal',
    async ({ stage, signal, index }) => {
      const apiKey = KEYS[index]!
      const tap = await holdingTap(emulator.url)
      try {
        // The on-chain cells each prove a PIE of their own: the emulator's chain is shared, and a
        // fact another cell got registered would pass this cell's attempt 1 with nothing submitted
        // (reuse: auto reads the chain before submitting).
        const pie = stage === 'on-chain check' ? await ownPie(index) : zip
        const inputs: Record<string, string> = {
          pie,
          'api-key': apiKey,
          'base-url': tap.url,
          result: 'PROOF_VERIFICATION_ON_L2',
        }
        if (stage === 'on-chain check')
          Object.assign(inputs, {
            'verify-onchain': 'starknet',
            'starknet-rpc-url': `${tap.url}/starknet-rpc`,
            'allow-insecure-http': 'true',
          })
        const attempt = (n: number) =>
          startAction('', {
            inputs,
            fromSource: true,
            env: { GITHUB_RUN_ID: String(9000 + index), GITHUB_RUN_ATTEMPT: String(n) },
          })
        // The on-chain check's hold is armed once the id arrived: before submitting, reuse: auto
        // (the default) reads the chain too, and holding that read held the wait's start instead.
        if (stage !== 'on-chain check') tap.arm(holdFor(stage))
        const first = attempt(1)
        let id: string | undefined
        if (stage.startsWith('upload')) await tap.reached()
        else {
          id = (await first.waitFor(/Submitted: query (\S+)/, 60_000))[1]!
          if (stage === 'on-chain check') tap.arm(holdFor(stage))
          if (stage === 'wait')
            await until(
              () => emulator.requests().some((request) => request.method === 'GET' && request.path.includes(id!)),
              'a status read',
            )
          if (stage === 'on-chain check') {
            await until(
              () => emulator.requests().some((request) => request.method === 'GET' && request.path.includes(id!)),
              'a status read',
            )
            await emulator.control('POST', `/queries/${id}/complete`)
            await tap.reached()
          }
        }
        expect(first.child.exitCode, `${stage}: attempt 1 ended before it was interrupted`).toBeNull()
        if (signal === 'drop' && (stage === 'id arrived' || stage === 'wait')) {
          // The run knows its query: the network comes back once it reconnects, and the job ends DONE itself.
          const opened = tap.connections()
          tap.drop()
          await until(() => tap.connections() > opened, 'a reconnection')
          tap.restore()
          await emulator.control('POST', `/queries/${id}/complete`)
          const recovered = await first.done
          expect(recovered.code, recovered.stdout).toBe(0)
          expect(recovered.outputs.status).toBe('DONE')
          const queries = await queriesOf(apiKey)
          expect(queries).toHaveLength(1)
          rows.push({
            stage,
            signal,
            firstExit: 'exit 0, DONE',
            paidAfterFirst: 1,
            rerunSays: 'none needed: the job reconnects and ends DONE itself',
            paid: queries.length,
          })
          return
        }
        if (signal === 'drop') tap.drop()
        else first.child.kill(signal)
        const stopped = await first.done
        tap.restore()
        const paidAfterFirst = (await queriesOf(apiKey)).length
        expect(paidAfterFirst).toBeLessThanOrEqual(1)

        const again = attempt(2)
        const announced = await again.waitFor(
          /(Following|Submitted):? query ([0-9a-f-]+)|(Already proven on chain)/,
          60_000,
        )
        const [query] = await queriesOf(apiKey)
        if (query && query.status !== 'DONE') await emulator.control('POST', `/queries/${query.id}/complete`)
        const ended = await again.done
        const queries = await queriesOf(apiKey)
        const context = `${stage} × ${signal}\nattempt 1 (exit ${stopped.code}, ${stopped.signal}):\n${stopped.stdout}\nattempt 2:\n${ended.stdout}`
        expect(queries, context).toHaveLength(1)
        expect(ended.code, context).toBe(0)
        if (announced[3]) {
          // reuse: auto (the default): attempt 1's query was DONE and its fact registered before
          // the stop, so the re-run finds the fact on chain and passes with nothing submitted.
          expect(stage, context).toBe('on-chain check')
          expect(queries[0]!.status, context).toBe('DONE')
          expect(ended.outputs, context).toMatchObject({ reused: 'chain', 'onchain-verified': 'true' })
          expect(ended.stdout, context).not.toMatch(/Submitted: query|Following query/)
          rows.push({
            stage,
            signal,
            firstExit: stopped.signal ? `killed (${stopped.signal})` : `exit ${stopped.code}`,
            paidAfterFirst,
            rerunSays: 'already proven on chain (reuse: auto): passes, nothing sent',
            paid: queries.length,
          })
          return
        }
        expect(ended.outputs.status, context).toBe('DONE')
        expect(ended.outputs['query-id'], context).toBe(queries[0]!.id)
        if (stage === 'on-chain check') expect(ended.outputs['onchain-verified'], context).toBe('true')
        if (paidAfterFirst === 1) {
          expect(announced[1], context).toBe('Following')
          expect(ended.stdout, context).toContain(
            `Following query ${queries[0]!.id}, submitted by an earlier attempt of this job`,
          )
          expect(ended.stdout, context).not.toContain('Submitted: query')
        } else {
          expect(announced[1], context).toBe('Submitted')
        }
        rows.push({
          stage,
          signal,
          firstExit: stopped.signal ? `killed (${stopped.signal})` : `exit ${stopped.code}`,
          paidAfterFirst,
          rerunSays: paidAfterFirst
            ? 'follows the query (found by its dedup-id), DONE'
            : 'submits, once (no query has its dedup-id)',
          paid: queries.length,
        })
      } finally {
        await tap.close()
      }
    },
    180_000,
  )
})
