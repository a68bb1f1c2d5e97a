/**
 * Figure 11: a batch at scale (issue 35). `proving prove '<dir>/*.zip' --wait --concurrency 8`
 * (bin/proving.js) against the emulator (its own process, timing 0: a query is DONE at its first
 * read), N = 100, 1,000 and 2,000 distinct PIEs (generated, 2 KiB memory.bin each, cached under
 * .bench-tmp/). For each run: the wall time and the time per PIE, the silent tail (from the last
 * row's progress line to the end of the process: the journal's settling, which was quadratic),
 * the client's peak RSS, and the status reads a second the emulator logged (the whole run's
 * mean and the busiest second). The growth from one N to the next is stated as the ratio of the
 * time per PIE. The batches run with --max-rps 1000 so the client's own cost is measured; one
 * more run of N = 100 with the default budget (10 a second) shows the rate holding.
 * BENCH_BATCH_SIZES (e.g. 1000,10000) chooses other sizes.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { link, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import {
  cliScript,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMiB,
  fmtMs,
  GNU_TIME,
  NODE,
  RUN_DIR,
  startServer,
  table,
  TMP,
} from './lib.ts'

type Run = {
  n: number
  maxRps: string
  ms: number
  tailMs: number
  rssKiB: number
  reads: number
  meanRps: number
  peakRps: number
  ok: number
}

/** N distinct pie.zip files (seeds 1..N), generated once and kept. */
export async function ensureBatch(n: number, ctx: FigureContext): Promise<string> {
  const { generatePie, packPie } = await import('../src/pie/index.ts')
  const dir = join(TMP, 'batch-2KiB')
  await mkdir(dir, { recursive: true })
  const scratch = join(TMP, 'batch-2KiB-dirs')
  let made = 0
  for (let seed = 1; seed <= n; seed++) {
    const zip = join(dir, `pie${String(seed).padStart(5, '0')}.zip`)
    if (existsSync(zip)) continue
    const generated = await generatePie({ outDir: join(scratch, String(seed)), memoryBytes: 2048, seed })
    await packPie(generated.dir, zip)
    await rm(generated.dir, { recursive: true, force: true })
    made++
  }
  if (made) ctx.log(`  generated ${made} PIEs in ${dir}`)
  return dir
}

/** One batch: the CLI under GNU time, each stderr line stamped as it comes. */
async function runBatch(
  ctx: FigureContext,
  cli: string,
  emulatorUrl: string,
  dir: string,
  n: number,
  maxRps: string,
): Promise<Run> {
  await mkdir(RUN_DIR, { recursive: true })
  const journal = await mkdtemp(join(RUN_DIR, 'journal-'))
  const rssFile = join(RUN_DIR, `batch-rss-${n}.txt`)
  // The first N of the cached PIEs, linked into a folder of their own: one glob names them.
  const batch = await mkdtemp(join(RUN_DIR, `batch-${n}-`))
  for (let seed = 1; seed <= n; seed++) {
    const name = `pie${String(seed).padStart(5, '0')}.zip`
    await link(join(dir, name), join(batch, name))
  }
  const args = [cli, 'prove', join(batch, '*.zip'), '--wait', '--concurrency', '8', '--max-rps', maxRps]
  const argv = GNU_TIME ? [GNU_TIME, '-f', '%M', '-o', rssFile, NODE, ...args] : [NODE, ...args]
  await fetch(`${emulatorUrl}/_emulator/requests`, { method: 'DELETE', headers: { 'x-emulator-control': '1' } })
  const env = {
    ...process.env,
    PROVING_BASE_URL: emulatorUrl,
    PROVING_API_KEY: 'bench-key',
    PROVING_JOURNAL_DIR: journal,
    NO_COLOR: '1',
  }
  const started = performance.now()
  let lastRow = started
  let rows = 0
  let stdout = ''
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] })
    let pending = ''
    child.stderr.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) {
        if (/^\[\s*\d+\/\d+\] /.test(line)) {
          rows++
          lastRow = performance.now()
        }
      }
    })
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.on('error', reject)
    child.on('close', resolve)
  })
  const ended = performance.now()
  if (code !== 0) throw new Error(`proving prove (${n} PIEs) exited with ${code}: ${stdout.slice(-500)}`)
  const rssKiB = GNU_TIME ? Number((await readFile(rssFile, 'utf8')).trim().split('\n').pop()) : Number.NaN
  const { requests } = (await (await fetch(`${emulatorUrl}/_emulator/requests`)).json()) as {
    requests: { at: string; method: string; path: string }[]
  }
  // The emulator's request log keeps its newest 10,000 entries: a larger run's reads are its tail's.
  if (requests.length >= 10_000)
    ctx.log(
      `  N=${n}: the emulator's request log holds only its newest ${requests.length} requests; the reads counted are the run's last ones`,
    )
  const reads = requests
    .filter((request) => request.method === 'GET' && /^\/(docs\/)?proving-query\//.test(request.path))
    .map((request) => Date.parse(request.at))
    .sort((a, b) => a - b)
  let peak = 0
  for (let first = 0, last = 0; last < reads.length; last++) {
    while (reads[last]! - reads[first]! >= 1_000) first++
    peak = Math.max(peak, last - first + 1)
  }
  const span = reads.length > 1 ? (reads.at(-1)! - reads[0]!) / 1000 : Number.NaN
  await rm(journal, { recursive: true, force: true })
  await rm(batch, { recursive: true, force: true })
  const ok = Number(/(\d+) of \d+ succeeded/.exec(stdout)?.[1] ?? Number.NaN)
  ctx.log(
    `  N=${rows} --max-rps ${maxRps}: ${fmtMs(ended - started)}, tail ${fmtMs(ended - lastRow)}, ${fmtMiB(rssKiB)}, ${reads.length} reads, peak ${peak}/s`,
  )
  return {
    n: rows,
    maxRps,
    ms: ended - started,
    tailMs: ended - lastRow,
    rssKiB,
    reads: reads.length,
    meanRps: reads.length / span,
    peakRps: peak,
    ok,
  }
}

export async function figureBatchScale(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const notes: string[] = []
  const cli = cliScript(ctx, notes)
  // BENCH_BATCH_SIZES=1000,10000 for the issue's ten thousand (some 15 minutes here).
  const sizes = process.env.BENCH_BATCH_SIZES
    ? process.env.BENCH_BATCH_SIZES.split(',').map((size) => Number(size.trim()))
    : ctx.quick
      ? [100, 300]
      : [100, 1_000, 2_000]
  const dir = await ensureBatch(Math.max(...sizes), ctx)
  const emulator = await startServer('emulator', ['--received-ms', '0', '--step-ms', '0'])
  const runs: Run[] = []
  let budgeted: Run
  try {
    for (const n of sizes) runs.push(await runBatch(ctx, cli, emulator.url, dir, n, '1000'))
    budgeted = await runBatch(ctx, cli, emulator.url, dir, sizes[0]!, '10')
  } finally {
    await emulator.stop()
  }
  const perItem = (run: Run) => run.ms / run.n
  const growth = runs
    .slice(1)
    .map((run, index) => `${fmt(perItem(run) / perItem(runs[index]!))}x per PIE from ${runs[index]!.n} to ${run.n}`)
  const worstGrowth = Math.max(...runs.slice(1).map((run, index) => perItem(run) / perItem(runs[index]!)))
  const largest = runs.at(-1)!
  const body = [
    `\`node ${cli.replace(/^.*\/(bin|src)\//, '$1/')} prove '<dir>/pie*.zip' --wait --concurrency 8\`, distinct generated PIEs (2 KiB memory.bin), the emulator in its own process (timing 0: DONE at the first read), the journal in a fresh folder. One run each (a batch is long enough to be its own average). Tail: from the last row's progress line to the end of the process. Reads: GET /proving-query/{id} and /docs/proving-query/{id} in the emulator's request log.`,
    '',
    table(
      [
        'PIEs',
        '--max-rps',
        'wall',
        'per PIE',
        'tail',
        'peak RSS',
        'status reads',
        'reads/s (mean / busiest second)',
        'succeeded',
      ],
      [...runs, budgeted!].map((run) => [
        run.n,
        run.maxRps,
        fmtMs(run.ms),
        fmtMs(perItem(run)),
        fmtMs(run.tailMs),
        fmtMiB(run.rssKiB),
        run.reads,
        `${fmt(run.meanRps, 1)} / ${run.peakRps}`,
        run.ok,
      ]),
    ),
    '',
    `Growth of the time per PIE: ${growth.join('; ')} (1x is linear). Before issue 35 the tail alone was 6.6 s at N=2,000 (the journal listed its folder once per entry) and a batch of 500 read statuses at up to 583 a second.`,
  ].join('\n')
  return {
    id: 11,
    title: 'A batch at scale: `proving prove <N PIEs> --wait`, time per PIE, tail, memory and reads a second',
    body,
    checks: [
      {
        name: `time per PIE, growth up to N=${largest.n}`,
        value: `${fmt(worstGrowth)}x (${growth.join('; ')})`,
        target: '< 1.5x per step (linear)',
        pass: worstGrowth < 1.5,
      },
      {
        name: `tail after the last row, N=${largest.n}`,
        value: fmtMs(largest.tailMs),
        target: '< 2 s',
        pass: largest.tailMs < 2_000,
      },
      {
        name: `client peak RSS, N=${largest.n}`,
        value: fmtMiB(largest.rssKiB),
        target: '< 512 MiB',
        pass: !(largest.rssKiB >= 512 * 1024),
      },
      // The budget spaces turns 100 ms apart at the client; the emulator logs arrivals, which a
      // loaded machine bunches by a read or two.
      {
        name: 'status reads in the busiest second at the server, default budget (10/s)',
        value: `${budgeted!.peakRps} (N=${budgeted!.n})`,
        target: '<= 12 (10 at the client; arrivals bunch)',
        pass: budgeted!.peakRps <= 12,
      },
    ],
    notes,
    seconds: (performance.now() - started) / 1000,
  }
}
