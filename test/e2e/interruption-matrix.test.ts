import { mkdtemp, readdir, readlink, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { runCli, spawnCli } from '../helpers/cli.ts'
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { type Hold, holdingTap } from '../helpers/holding-tap.ts'

/**
 * Pay once per statement, through every interruption (issue 32): `proving prove <pie> --wait`
 * stopped at each stage by SIGINT, SIGTERM, SIGKILL or a dropped connection, then the same
 * command again. Each cell has its own API key, so the emulator's own list of the key's queries
 * (`GET /docs/proving-queries`, not the client's word) counts what was paid: exactly one. The
 * re-run follows that query, saying so, never "Submitted" for a query it did not send, and ends
 * as an uninterrupted run would (DONE, the facts checked, exit 0). Each stage is reached by an
 * event: the zip open in /proc/<pid>/fd before any upload (validation), the packer's folder
 * (packing), the bytes of the upload reaching the service or its answer coming back (a TCP tap
 * that holds the rest: start, middle, end), the id printed, a status read in the emulator's
 * request log (the wait). Queries stay IN_PROGRESS until the test completes them, so no run ends
 * on its own before it is interrupted. The table of results is docs/reliability.md's.
 */

const STAGES = ['validation', 'packing', 'upload start', 'upload middle', 'upload end', 'id arrived', 'wait'] as const
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
  : STAGES.map((stage, index) => ({ stage, signal: SIGNALS[(index + 2) % SIGNALS.length]! }))
const KEYS = CELLS.map((_, index) => `pk_matrix_cell_${String(index).padStart(2, '0')}`)

let emulator: TestEmulator
let work: string
/** A 12 MiB PIE, as a directory and as a zip: validating or packing it takes long enough to be stopped in. */
let bigDir: string
let bigZip: string
/** A 4 MiB zip: an upload with a middle. */
let zip: string
let zipBytes: number
type Row = {
  stage: Stage
  signal: Interruption
  firstExit: number | string
  paidAfterFirst: number
  rerunSays: string
  rerunExit: number
  paid: number
}
const rows: Row[] = []

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: KEYS, timing: { receivedMs: 0, stepMs: 600_000 } })
  work = await mkdtemp(join(tmpdir(), 'interruption-matrix-'))
  bigDir = join(work, 'big')
  await generatePie({ outDir: bigDir, memoryBytes: 12 * 1024 * 1024, seed: 32 })
  bigZip = (await packPie(bigDir, join(work, 'big.zip'))).path
  const small = join(work, 'small')
  await generatePie({ outDir: small, memoryBytes: 4 * 1024 * 1024, seed: 33 })
  const packed = await packPie(small, join(work, 'small.zip'))
  zip = packed.path
  zipBytes = packed.sizeBytes
}, 120_000)

afterAll(async () => {
  await emulator?.close()
  await rm(work, { recursive: true, force: true })
  const order = (row: Row) => STAGES.indexOf(row.stage) * 10 + SIGNALS.indexOf(row.signal)
  const lines = rows
    .sort((a, b) => order(a) - order(b))
    .map(
      (row) =>
        `| ${row.stage} | ${row.signal} | ${row.firstExit} | ${row.paidAfterFirst} | ${row.rerunSays} | ${row.rerunExit} | ${row.paid} |`,
    )
  console.log(
    [
      '| stage | interruption | first run exit | queries after it | the re-run says | re-run exit | paid queries |',
      '|---|---|---|---|---|---|---|',
      ...lines,
    ].join('\n'),
  )
})

/** The key's queries as the emulator lists them. */
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

/** Whether the process has `path` open (it is reading it). */
async function hasOpen(pid: number, path: string): Promise<boolean> {
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[])
  for (const fd of fds) if ((await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')) === path) return true
  return false
}

function holdFor(stage: Stage): Hold {
  if (stage === 'upload start') return { postBytes: 16 * 1024 }
  if (stage === 'upload middle') return { postBytes: Math.floor(zipBytes / 2) }
  if (stage === 'upload end') return { answer: true }
  return undefined
}

describe.concurrent('interrupted at every stage, then the same command again: one paid query', () => {
  it.each(CELLS.map((cell, index) => ({ ...cell, index })))(
    '$stage × $signal',
    async ({ stage, signal, index }) => {
      const apiKey = KEYS[index]!
      const tap = await holdingTap(emulator.url)
      const journal = await mkdtemp(join(work, 'journal-'))
      const temp = await mkdtemp(join(work, 'tmp-'))
      try {
        const input = stage === 'packing' ? bigDir : stage === 'validation' ? bigZip : zip
        // One command, run twice. Packing first, then uploading (not streamed), so packing is a stage of its own.
        const args = ['prove', input, '--wait']
        const env = {
          PROVING_BASE_URL: tap.url,
          PROVING_API_KEY: apiKey,
          PROVING_JOURNAL_DIR: journal,
          TMPDIR: temp,
          PROVING_STREAM_UPLOAD: '0',
        }
        tap.arm(holdFor(stage))
        const first = spawnCli(args, { env })
        const pid = first.child.pid!
        if (stage === 'validation')
          await until(
            async () => (await hasOpen(pid, bigZip)) && tap.connections() === 0,
            'the zip being read before any request',
          )
        else if (stage === 'packing')
          await until(
            async () => (await readdir(temp)).some((name) => name.startsWith('proving-pack-')),
            "the packer's folder",
          )
        else if (stage.startsWith('upload')) await tap.reached()
        else {
          const id = (await first.waitForOutput(/Submitted: query (\S+)/, 60_000))[1]!
          if (stage === 'wait')
            await until(
              () => emulator.requests().some((request) => request.method === 'GET' && request.path.includes(id)),
              'a status read',
            )
        }
        expect(first.child.exitCode, `${stage}: the first run ended before it was interrupted`).toBeNull()
        if (signal === 'drop' && (stage === 'id arrived' || stage === 'wait')) {
          // The query exists and the run knows it: the network comes back once the run has tried
          // to reconnect, the wait goes on, and the run ends DONE by itself: nothing to run again.
          const opened = tap.connections()
          tap.drop()
          await until(() => tap.connections() > opened, 'a reconnection')
          tap.restore()
          const [query] = await queriesOf(apiKey)
          await emulator.control('POST', `/queries/${query!.id}/complete`)
          const recovered = await first.done
          const queries = await queriesOf(apiKey)
          expect(queries, recovered.stderr).toHaveLength(1)
          expect(recovered.code, recovered.stderr).toBe(0)
          expect(recovered.stdout).toMatch(/status\s+DONE/)
          expect(await readdir(journal)).toEqual([])
          rows.push({
            stage,
            signal,
            firstExit: recovered.code,
            paidAfterFirst: 1,
            rerunSays: 'none needed: the run reconnects and ends DONE itself',
            rerunExit: 0,
            paid: queries.length,
          })
          return
        }
        if (signal === 'drop') tap.drop()
        else first.child.kill(signal)
        const stopped = await first.done
        tap.restore()
        // A signal is a cancellation at every stage: exit 130, never "unexpected failure" (3).
        if (signal === 'SIGINT' || signal === 'SIGTERM') expect(stopped.code, stopped.stderr).toBe(130)
        const paidAfterFirst = (await queriesOf(apiKey)).length
        expect(paidAfterFirst).toBeLessThanOrEqual(1)

        const again = spawnCli(args, { env })
        const seen = await again.waitForOutput(
          /(Following|Submitted): query (\S+)|Waiting for (?:it|them) to end to compare the facts/,
          60_000,
        )
        let announced = seen
        if (!seen[1]) {
          // An upload whose answer was lost, a query since: the re-run waits for it to end and
          // compares its facts with the PIE's before following it (issue 35).
          const [only] = await queriesOf(apiKey)
          await emulator.control('POST', `/queries/${only!.id}/complete`)
          announced = await again.waitForOutput(/(Following|Submitted): query (\S+)/, 60_000)
        } else await emulator.control('POST', `/queries/${announced[2]}/complete`)
        const ended = await again.done
        const queries = await queriesOf(apiKey)
        const context = `${stage} × ${signal}\nfirst run (exit ${stopped.code}):\n${stopped.stderr}\nre-run:\n${ended.stderr}`
        expect(queries, context).toHaveLength(1)
        expect(ended.code, context).toBe(0)
        expect(ended.stdout, context).toMatch(/status\s+DONE/)
        expect(ended.stderr, context).toMatch(/Facts checked locally/)
        if (paidAfterFirst === 1) {
          // The earlier run's query: followed, saying so, never announced as this run's.
          expect(announced[1], context).toBe('Following')
          expect(announced[2], context).toBe(queries[0]!.id)
          expect(ended.stderr, context).toMatch(
            new RegExp(`Following query ${queries[0]!.id}, submitted by an earlier run`),
          )
          expect(ended.stderr, context).not.toContain('Submitted: query')
        } else {
          // Nothing was created: the re-run is the one submission.
          expect(announced[1], context).toBe('Submitted')
        }
        expect(await readdir(journal), context).toEqual([])
        const says =
          paidAfterFirst === 0
            ? /lists no query since the upload began/.test(ended.stderr)
              ? 'submits, once (the service lists no query since the unfinished upload began)'
              : 'submits, once (nothing in the journal)'
            : /whose upload of this PIE/.test(ended.stderr)
              ? "follows the query (the one since the upload began whose facts are the PIE's)"
              : 'follows the query (recorded in the journal)'
        rows.push({
          stage,
          signal,
          firstExit: stopped.code,
          paidAfterFirst,
          rerunSays: says,
          rerunExit: ended.code,
          paid: queries.length,
        })
      } finally {
        await tap.close()
      }
    },
    120_000,
  )
})

describe('a signal during the validation of a pie.zip', () => {
  it('is a cancellation (exit 130, "Validating the PIE was aborted"), not an unexpected failure (exit 3)', async () => {
    const controller = new AbortController()
    // SIGTERM as src/cli/main.ts turns it into an abort, before the digest's first read.
    controller.abort(new Error('received SIGTERM'))
    const result = await runCli(['prove', bigZip, '--wait'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEYS[0]! },
      signal: controller.signal,
    })
    expect(result.code, result.stderr).toBe(130)
    expect(result.stderr).toMatch(/^proving: Validating the PIE was aborted/m)
  })
})
