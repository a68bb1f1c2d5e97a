import { mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, request, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { runCli } from '../helpers/cli.ts'

/**
 * `proving prove a.zip b/ 'c/*.zip' --concurrency N`: 100 PIEs written by the project's
 * generator, proved against the emulator. The bound is checked by a proxy in front of the
 * emulator that holds each upload until N are in flight (so a client that sent fewer at once
 * would never finish, and one that sent more would be seen): no timing is involved.
 */
const API_KEY = 'pk_cli_batch_31f0aa'
const COUNT = 100
let emulator: RunningEmulator
let work: string

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 10 } })
  work = mkdtempSync(join(tmpdir(), 'cli-batch-'))
  for (let seed = 1; seed <= COUNT; seed++) {
    const generated = await generatePie({
      outDir: join(work, 'dirs', `pie${String(seed).padStart(3, '0')}`),
      memoryBytes: 2048,
      seed,
    })
    await packPie(generated.dir, join(work, `pie${String(seed).padStart(3, '0')}.zip`))
  }
}, 120_000)
afterAll(async () => {
  await emulator.close()
})

async function setTiming(timing: { receivedMs: number; stepMs: number }) {
  const answer = await fetch(`${emulator.url}/_emulator/timing`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(timing),
  })
  expect(answer.status).toBe(200)
}

/** Forwards to the emulator; holds uploads until `limit` (or all that remain) are in flight. */
async function gatedProxy(limit: number, total: number) {
  let inFlight = 0
  let most = 0
  let released = 0
  const held: (() => void)[] = []
  const server: Server = createServer((req, res) => {
    const forward = () => {
      const upstream = request(`${emulator.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      })
      req.pipe(upstream)
    }
    if (req.method !== 'POST' || !req.url?.startsWith('/v1/l2/')) return forward()
    inFlight++
    most = Math.max(most, inFlight)
    res.on('finish', () => inFlight--)
    held.push(forward)
    if (held.length >= Math.min(limit, total - released)) {
      released += held.length
      for (const go of held.splice(0)) go()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${address.port}`,
    most: () => most,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

describe('proving prove with many PIEs', () => {
  it.each([8, 32])(
    'uploads exactly %i at a time, one progress line per PIE, a JSON array',
    async (limit) => {
      const proxy = await gatedProxy(limit, COUNT)
      try {
        const run = await runCli(['prove', join(work, 'pie*.zip'), '--concurrency', String(limit), '--json'], {
          env: { PROVING_BASE_URL: proxy.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
        })
        expect(run.code, run.stderr).toBe(0)
        expect(proxy.most()).toBe(limit)
        const results = JSON.parse(run.stdout)
        expect(results).toHaveLength(COUNT)
        expect(new Set(results.map((row: { provingQueryId: string }) => row.provingQueryId)).size).toBe(COUNT)
        expect(
          results.every(
            (row: { status: string; exitCode: number }) => row.status === 'SUBMITTED' && row.exitCode === 0,
          ),
        ).toBe(true)
        const lines = run.stderr.split('\n').filter((line) => /^\[\s*\d+\/100\] /.test(line))
        expect(lines).toHaveLength(COUNT)
      } finally {
        await proxy.close()
      }
    },
    120_000,
  )

  it('with --wait: every query DONE with facts checked; a table for a person; the worst exit code', async () => {
    const broken = join(work, 'broken.zip')
    writeFileSync(broken, 'not a zip')
    const args = [
      'prove',
      join(work, 'pie00*.zip'),
      join(work, 'dirs', 'pie010'),
      broken,
      '--wait',
      '--concurrency',
      '4',
    ]
    const run = await runCli(args, {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    // 9 zips and a PIE directory proved; the broken one is bad input, so the batch exits 2.
    expect(run.code, run.stderr).toBe(2)
    const rows = run.stdout.split('\n').filter((line) => /^\d+\s+\//.test(line))
    expect(rows).toHaveLength(11)
    expect(rows.filter((line) => /\sDONE\s+match/.test(line))).toHaveLength(10)
    expect(rows.at(-1)).toMatch(/broken\.zip\s+-\s+ERROR\s+not checked\s+<pie>: .*broken\.zip is not a valid Cairo PIE/)
    expect(run.stdout).toMatch(/10 of 11 succeeded in \d+\.\d s\./)
  }, 120_000)

  it('with --wait, 40 queries read their status at most --max-rps times in any second, all together (issue 35: 583 a second for 500)', async () => {
    // Each query takes a few steps of 300 ms, so every one is read several times.
    await setTiming({ receivedMs: 0, stepMs: 300 })
    const before = emulator.requests().length
    const args = ['prove', join(work, 'pie0[0-3]*.zip'), '--wait', '--concurrency', '8', '--max-rps', '15', '--json']
    const run = await runCli(args, { env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY } })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toHaveLength(39)
    const reads = emulator
      .requests()
      .slice(before)
      // One status read a turn: against this emulator (interface.md's record D has no status)
      // the docs path; the production path is asked once more only by the waits that began
      // before the client learned that (at most --concurrency of them).
      .filter((request) => request.method === 'GET' && request.path.startsWith('/docs/proving-query/'))
      .map((request) => Date.parse(request.at))
      .sort((a, b) => a - b)
    expect(reads.length).toBeGreaterThanOrEqual(39)
    // Turns are given 1/15 s apart, but on a loaded machine reads given apart can reach the
    // service together, so a one-second window of arrivals is the machine's speed, not the
    // budget's. Over the whole run the budget bounds them whatever the load: at most 15 a second
    // of the span the reads took, plus one each for the waits that started together (each query
    // polling alone: 39 at once, again and again). The spacing itself is a property of the
    // budget under a fake clock (test/unit/core/budget.test.ts).
    const spanSeconds = (reads.at(-1)! - reads[0]!) / 1_000
    expect(reads.length).toBeLessThanOrEqual(Math.floor(15 * spanSeconds) + 8)
    const production = emulator
      .requests()
      .slice(before)
      .filter((request) => request.method === 'GET' && request.path.startsWith('/proving-query/'))
    expect(production.length).toBeLessThanOrEqual(8)
    await setTiming({ receivedMs: 0, stepMs: 10 })
  }, 120_000)

  it('refuses a missing path or a pattern that matches nothing before anything is sent', async () => {
    const before = emulator.state.counters.submissions
    const missing = await runCli(['prove', join(work, 'pie001.zip'), join(work, 'nope.zip')], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('nope.zip; give a pie.zip or a PIE directory (or a glob)')
    const none = await runCli(['prove', join(work, 'zzz*.zip')], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('matches no file or directory')
    expect(emulator.state.counters.submissions).toBe(before)
  })

  it('the same PIE named twice is proved once: both rows report that query (more spellings and copies: journal-races-and-reruns.test.ts)', async () => {
    const before = emulator.state.counters.submissions
    const twice = await runCli(['prove', join(work, 'pie001.zip'), join(work, 'pie001.zip'), '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(twice.code, twice.stderr).toBe(0)
    const rows = JSON.parse(twice.stdout) as { provingQueryId: string }[]
    expect(rows).toHaveLength(2)
    expect(rows[1]!.provingQueryId).toBe(rows[0]!.provingQueryId)
    expect(emulator.state.counters.submissions).toBe(before + 1)
  })

  it("query list --all pages at the service's largest page (100), whatever --limit says (issue 35: it paged by 20)", async () => {
    const before = emulator.requests().length
    const run = await runCli(['query', 'list', '--all', '--limit', '5', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY },
    })
    expect(run.code, run.stderr).toBe(0)
    const { provingQueries } = JSON.parse(run.stdout) as { provingQueries: unknown[] }
    // The batches above made more than 100 queries with this key: more than one page.
    expect(provingQueries.length).toBeGreaterThan(100)
    const pages = emulator
      .requests()
      .slice(before)
      .filter((request) => request.path.startsWith('/docs/proving-queries'))
    expect(pages.map((request) => new URL(request.path, 'http://x').searchParams.get('limit'))).toEqual(
      Array(Math.ceil(provingQueries.length / 100)).fill('100'),
    )
  })
})
