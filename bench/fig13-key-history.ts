/**
 * Figure 13: the statement pipeline against a key with a history (issue 39). The emulator (its
 * own process, timing 0) holds 2,000 earlier queries of the key; then, side by side in one run:
 * `proving prove '<dir>/*.zip' --wait --concurrency 8 --max-rps 1000` for N new PIEs (default
 * 1,000 and 10,000; --quick 100 and 300), and the plan of the largest N (`--dry-run --json`).
 * For each: the wall time and the time per PIE, the list requests (GET /docs/proving-queries and
 * /proving-queries, from the emulator's per-route counts, which are never trimmed), and the
 * status reads in the busiest second. The peer, measured in the same run: the same lookups made
 * per PIE (a fresh index for each, as every PIE listed the key's queries itself before), for
 * 100 PIEs. BENCH_HISTORY_SIZES (e.g. 1000,10000) chooses the sizes.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { link, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  cliScript,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMs,
  NODE,
  ROOT,
  RUN_DIR,
  startServer,
  table,
  TMP,
} from './lib.ts'

const KEY = 'bench-key'
const HISTORY = 2_000

type Run = {
  what: string
  n: number
  ms: number
  lists: number
  requests: number
  peakReads: number
  keyQueries?: number
}

/**
 * N pie.zip files of N different statements (seeds 1..N): a program of 28 words, fibonacci's and
 * one seeded word after it, so each seed is another program (the generator's default program is
 * fibonacci's for every seed, with only 90 outputs: statements would repeat, and be reused).
 */
async function ensureStatements(n: number, ctx: FigureContext): Promise<string> {
  const { generatePie, packPie } = await import('../src/pie/index.ts')
  const dir = join(TMP, 'statements-2KiB')
  await mkdir(dir, { recursive: true })
  let made = 0
  for (let seed = 1; seed <= n; seed++) {
    const zip = join(dir, `pie${String(seed).padStart(5, '0')}.zip`)
    if (existsSync(zip)) continue
    const generated = await generatePie({
      outDir: join(TMP, 'statements-2KiB-dirs', String(seed)),
      memoryBytes: 2048,
      programWords: 28,
      seed,
    })
    await packPie(generated.dir, zip)
    await rm(generated.dir, { recursive: true, force: true })
    made++
  }
  if (made) ctx.log(`  generated ${made} PIEs in ${dir}`)
  return dir
}

/** The list's pages for a key of this many queries (100 a page, the list's total read). */
const pagesOf = (queries: number) => Math.min(50, Math.ceil(queries / 100))

/** The key's history: HISTORY queries of the example PIE, 16 uploads at a time. */
async function seedHistory(url: string): Promise<void> {
  const { ProvingClient } = await import('../src/index.ts')
  const client = new ProvingClient({ baseUrl: url, apiKey: KEY, allowInsecureHttp: true })
  const pie = join(ROOT, 'examples', 'fib', 'pie.zip')
  let next = 0
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < HISTORY) await client.submitPie({ pieZip: pie })
    }),
  )
}

async function counts(url: string): Promise<{ lists: number; requests: number; peakReads: number }> {
  const body = (await (await fetch(`${url}/_emulator/requests`)).json()) as {
    requests: { at: string; method: string; path: string }[]
    counts: Record<string, number>
  }
  const lists = (body.counts['GET /docs/proving-queries'] ?? 0) + (body.counts['GET /proving-queries'] ?? 0)
  const requests = Object.values(body.counts).reduce((sum, count) => sum + count, 0)
  const reads = body.requests
    .filter((request) => request.method === 'GET' && /^\/(docs\/)?proving-query\//.test(request.path))
    .map((request) => Date.parse(request.at))
    .sort((a, b) => a - b)
  let peakReads = 0
  for (let first = 0, last = 0; last < reads.length; last++) {
    while (reads[last]! - reads[first]! >= 1_000) first++
    peakReads = Math.max(peakReads, last - first + 1)
  }
  return { lists, requests, peakReads }
}

/** The CLI on the first N cached PIEs (linked into a folder of their own), a fresh journal. */
async function runCli(
  cli: string,
  url: string,
  dir: string,
  n: number,
  flags: string[],
  offset: number,
): Promise<number> {
  await mkdir(RUN_DIR, { recursive: true })
  const journal = await mkdtemp(join(RUN_DIR, 'journal-'))
  const batch = await mkdtemp(join(RUN_DIR, `history-${n}-`))
  for (let seed = offset + 1; seed <= offset + n; seed++) {
    const name = `pie${String(seed).padStart(5, '0')}.zip`
    await link(join(dir, name), join(batch, name))
  }
  await fetch(`${url}/_emulator/requests`, { method: 'DELETE', headers: { 'x-emulator-control': '1' } })
  const env = {
    ...process.env,
    PROVING_BASE_URL: url,
    PROVING_API_KEY: KEY,
    PROVING_JOURNAL_DIR: journal,
    NO_COLOR: '1',
  }
  const started = performance.now()
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(
      NODE,
      [cli, 'prove', join(batch, '*.zip'), '--concurrency', '8', '--max-rps', '1000', ...flags],
      { env, stdio: ['ignore', 'ignore', 'ignore'] },
    )
    child.on('error', reject)
    child.on('close', resolve)
  })
  const ms = performance.now() - started
  await rm(journal, { recursive: true, force: true })
  await rm(batch, { recursive: true, force: true })
  if (code !== 0) throw new Error(`proving prove ${flags.join(' ')} (${n} PIEs) exited with ${code}`)
  return ms
}

/** The peer: each PIE's lookup with an index of its own, as every PIE listed the key's queries before. */
async function perPieLookups(url: string, dir: string, n: number): Promise<Run> {
  const { ProvingClient, silentLogger } = await import('../src/index.ts')
  const { findReusableQuery, l2ReuseRequest } = await import('../src/pipeline/reuse.ts')
  const { KeyQueries } = await import('../src/pipeline/key-queries.ts')
  const { inspectPie } = await import('../src/pie/index.ts')
  const client = new ProvingClient({ baseUrl: url, apiKey: KEY, allowInsecureHttp: true, logger: silentLogger })
  const request = l2ReuseRequest({ layout: 'auto', prover: 'svc_sharp', mockFactHash: false, allowMockedFact: false })
  const { RequestBudget } = await import('../src/core/budget.ts')
  const budget = new RequestBudget(client.http.clock, 1_000)
  await fetch(`${url}/_emulator/requests`, { method: 'DELETE', headers: { 'x-emulator-control': '1' } })
  const started = performance.now()
  for (let seed = 1; seed <= n; seed++) {
    const inspection = await inspectPie(join(dir, `pie${String(seed + 1).padStart(5, '0')}.zip`))
    await findReusableQuery(client, inspection, request, {
      logger: silentLogger,
      queries: new KeyQueries(client, { budget }),
    })
  }
  const ms = performance.now() - started
  return { what: 'peer: a lookup per PIE', n, ms, ...(await counts(url)) }
}

export async function figureKeyHistory(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const notes: string[] = []
  const cli = cliScript(ctx, notes)
  const sizes = process.env.BENCH_HISTORY_SIZES
    ? process.env.BENCH_HISTORY_SIZES.split(',').map((size) => Number(size.trim()))
    : ctx.quick
      ? [100, 300]
      : [1_000, 10_000]
  const largest = Math.max(...sizes)
  // New statements for each run; the plan is of the largest batch's PIEs, before that batch runs.
  const first = 0
  const dir = await ensureStatements(
    sizes.reduce((sum, n) => sum + n, 0),
    ctx,
  )
  const emulator = await startServer('emulator', ['--received-ms', '0', '--step-ms', '0'])
  const runs: Run[] = []
  try {
    await seedHistory(emulator.url)
    ctx.log(`  the key holds ${HISTORY} earlier queries`)
    let offset = first
    for (const n of sizes) {
      const keyQueries = HISTORY + offset - first
      if (n === largest) {
        const planMs = await runCli(cli, emulator.url, dir, n, ['--dry-run', '--json'], offset)
        runs.push({ what: 'the plan (--dry-run)', n, ms: planMs, keyQueries, ...(await counts(emulator.url)) })
        ctx.log(`  the plan, N=${n}: ${fmtMs(planMs)}, ${runs.at(-1)!.requests} requests`)
      }
      const ms = await runCli(cli, emulator.url, dir, n, ['--wait'], offset)
      offset += n
      runs.push({ what: 'prove --wait', n, ms, keyQueries, ...(await counts(emulator.url)) })
      ctx.log(`  prove --wait, N=${n}: ${fmtMs(ms)}, ${runs.at(-1)!.lists} list requests`)
    }
    runs.push(await perPieLookups(emulator.url, dir, 100))
  } finally {
    await emulator.stop()
  }
  const proves = runs.filter((run) => run.what === 'prove --wait')
  const perItem = (run: Run) => run.ms / run.n
  const growth = proves.length > 1 ? perItem(proves.at(-1)!) / perItem(proves[0]!) : Number.NaN
  const peer = runs.at(-1)!
  const plan = runs.find((run) => run.what.startsWith('the plan'))!
  const body = [
    `The emulator (its own process, timing 0) holds ${HISTORY} earlier queries of the key; each run proves new statements (generated, 2 KiB memory.bin, each seed another program), so every lookup reads the whole history. \`--concurrency 8 --max-rps 1000\` (the client's own cost). List requests: the emulator's per-route counts (never trimmed); reads/s: GET /proving-query/{id} in its request log (its newest 10,000).`,
    '',
    table(
      [
        'run',
        'PIEs',
        'wall',
        'per PIE',
        'list requests',
        'list requests a PIE',
        'all requests',
        'status reads, busiest second',
      ],
      runs.map((run) => [
        run.what,
        run.n,
        fmtMs(run.ms),
        fmtMs(perItem(run)),
        run.lists,
        fmt(run.lists / run.n, 3),
        run.requests,
        run.peakReads,
      ]),
    ),
    '',
    `List requests a PIE: ${fmt(proves.at(-1)!.lists / proves.at(-1)!.n, 4)} at N=${proves.at(-1)!.n} against the peer's ${fmt(peer.lists / peer.n, 1)}: ${fmt(peer.lists / peer.n / (proves.at(-1)!.lists / proves.at(-1)!.n), 0)}x fewer. Time per PIE from N=${proves[0]!.n} to N=${proves.at(-1)!.n}: ${fmt(growth)}x (1x is linear).`,
  ].join('\n')
  return {
    id: 13,
    title: 'A key with a history: list requests, reads a second and time per PIE of a batch, and its plan',
    body,
    checks: [
      {
        name: 'list requests of a run, whatever its size',
        value: [...proves, plan].map((run) => `${run.lists} at N=${run.n} (key: ${run.keyQueries} queries)`).join(', '),
        target: "the key's pages read once (one per 100 of its queries), not per PIE",
        pass: [...proves, plan].every((run) => run.lists === pagesOf(run.keyQueries!)),
      },
      {
        name: `time per PIE, N=${proves[0]!.n} to ${proves.at(-1)!.n}`,
        value: `${fmt(growth)}x`,
        target: '< 1.5x (linear)',
        pass: !(growth >= 1.5),
      },
      {
        name: `the plan of ${plan.n} PIEs: requests`,
        value: `${plan.requests} (${plan.lists} lists), ${fmtMs(plan.ms)}`,
        target: 'no upload, no status read: the list and the probe',
        pass: plan.requests - plan.lists <= 2,
      },
    ],
    notes,
    seconds: (performance.now() - started) / 1000,
  }
}
