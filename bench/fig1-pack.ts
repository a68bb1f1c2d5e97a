/**
 * Figure 1: packing the generated 1 GiB PIE. packPie, run through bench/pack.ts's own child mode
 * (`node bench/pack.ts --child pack <dir> <out>`: the measured operation of the pack benchmark,
 * one process loading only the packer), against Info-ZIP `zip -q -r -1` on the same files, runs
 * alternating, each in its own process (wall time around the process, peak RSS from GNU time).
 * Targets: throughput >= 2x zip, output size within 5% of zip's, peak RSS < 256 MiB.
 */
import { rm, stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import {
  BENCH,
  ensurePie,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMiB,
  measure,
  median,
  mib,
  NODE,
  PIE_FILES,
  RUN_DIR,
  table,
  warmCache,
} from './lib.ts'

export async function figurePack(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const memory = ctx.quick ? '64MiB' : '1GiB'
  const runs = ctx.quick ? 1 : 3
  const pie = await ensurePie(memory, ctx)
  await warmCache(join(pie.dir, 'memory.bin'))
  const ours = join(RUN_DIR, 'pack-ours.zip')
  const infoZip = join(RUN_DIR, 'pack-infozip.zip')
  const notes: string[] = []

  // bench/pack.ts is the pack benchmark (figure 1's own script); its child mode is the
  // measurement. Should it ever lose that mode, packPie is called the same way directly.
  let packArgs = (out: string) => [join(BENCH, 'pack.ts'), '--child', 'pack', pie.dir, out]
  try {
    await rm(ours, { force: true })
    await measure(NODE, packArgs(ours))
  } catch (error) {
    notes.push(
      `bench/pack.ts --child pack failed (${String(error).split('\n')[0]}); packPie was called directly instead.`,
    )
    packArgs = (out: string) => [
      '--input-type=module',
      '-e',
      `const { packPie } = await import(${JSON.stringify(join(BENCH, '..', 'src', 'pie', 'pack.ts'))}); await packPie(process.argv[1], process.argv[2])`,
      pie.dir,
      out,
    ]
  }

  const oursRuns: { ms: number; cpuMs: number; rssKiB: number; size: number }[] = []
  const zipRuns: { ms: number; cpuMs: number; rssKiB: number; size: number }[] = []
  for (let k = 0; k < runs; k++) {
    await rm(ours, { force: true })
    const a = await measure(NODE, packArgs(ours))
    oursRuns.push({ ms: a.ms, cpuMs: a.cpuMs, rssKiB: a.rssKiB, size: (await stat(ours)).size })
    await rm(infoZip, { force: true })
    const b = await measure('zip', ['-q', '-r', '-1', infoZip, ...PIE_FILES], { cwd: pie.dir })
    zipRuns.push({ ms: b.ms, cpuMs: b.cpuMs, rssKiB: b.rssKiB, size: (await stat(infoZip)).size })
    ctx.log(
      `  run ${k + 1}: packPie ${fmt(a.ms / 1000)} s ${fmtMiB(a.rssKiB)}; zip -r -1 ${fmt(b.ms / 1000)} s ${fmtMiB(b.rssKiB)}`,
    )
  }
  await rm(ours, { force: true })
  await rm(infoZip, { force: true })

  const summary = (runsOf: typeof oursRuns) => {
    const ms = median(runsOf.map((r) => r.ms))
    const cpuMs = median(runsOf.map((r) => r.cpuMs))
    return {
      ms,
      cpuMs,
      throughput: mib(pie.inputBytes) / (ms / 1000),
      rssKiB: median(runsOf.map((r) => r.rssKiB)),
      size: median(runsOf.map((r) => r.size)),
    }
  }
  const o = summary(oursRuns)
  const z = summary(zipRuns)
  const speedup = o.throughput / z.throughput
  const sizeRatio = o.size / z.size
  const maxRss = Math.max(...oursRuns.map((r) => r.rssKiB))
  const coresUsed = o.cpuMs / o.ms
  if (speedup < 2 && Number.isFinite(coresUsed)) {
    notes.push(
      `packPie spreads deflate over ${availableParallelism()} worker threads; its speed-up over single-threaded zip is bounded by the cores it actually gets. Here it got ${fmt(coresUsed)} of ${availableParallelism()} on average (CPU time / wall time) while zip used ${fmt(z.cpuMs / z.ms)}: the machine's other work (load average in the header) took the rest. CPU per MiB: packPie ${fmt(o.cpuMs / mib(pie.inputBytes), 1)} ms, zip ${fmt(z.cpuMs / mib(pie.inputBytes), 1)} ms, so with its ${availableParallelism()} cores free the ratio could reach at most about ${fmt((z.cpuMs / o.cpuMs) * availableParallelism())}x (perfect scaling).`,
    )
  }

  const body = [
    `Input: a generated PIE (\`generatePie\`, seed 1) with a ${fmt(mib(pie.memoryBytes), 0)} MiB memory.bin, ${fmt(mib(pie.inputBytes), 1)} MiB of PIE files, in the page cache. Medians of ${runs} run${runs > 1 ? 's' : ''}, alternating; wall time around each process (start-up included).`,
    '',
    table(
      ['packer', 'wall time', 'throughput', 'CPU time (cores used)', 'peak RSS', 'output size'],
      [
        [
          'packPie (`bench/pack.ts --child pack`: parallel deflate, level 1)',
          `${fmt(o.ms / 1000)} s`,
          `${fmt(o.throughput, 0)} MiB/s`,
          `${fmt(o.cpuMs / 1000)} s (${fmt(o.cpuMs / o.ms)})`,
          fmtMiB(o.rssKiB),
          `${fmt(mib(o.size), 1)} MiB`,
        ],
        [
          'Info-ZIP `zip -q -r -1`',
          `${fmt(z.ms / 1000)} s`,
          `${fmt(z.throughput, 0)} MiB/s`,
          `${fmt(z.cpuMs / 1000)} s (${fmt(z.cpuMs / z.ms)})`,
          fmtMiB(z.rssKiB),
          `${fmt(mib(z.size), 1)} MiB`,
        ],
      ],
    ),
  ].join('\n')

  return {
    id: 1,
    title: 'Pack a 1 GiB PIE: packPie vs Info-ZIP `zip -r -1`',
    body,
    checks: [
      { name: 'throughput vs `zip -r -1`', value: `${fmt(speedup)}x`, target: '>= 2x', pass: speedup >= 2 },
      {
        name: 'output size vs `zip -r -1`',
        value: `${fmt(sizeRatio, 3)}`,
        target: 'within 5% (0.95-1.05)',
        pass: Math.abs(sizeRatio - 1) <= 0.05,
      },
      { name: 'packPie peak RSS (worst run)', value: fmtMiB(maxRss), target: '< 256 MiB', pass: maxRss < 256 * 1024 },
    ],
    notes,
    seconds: (performance.now() - started) / 1000,
  }
}
