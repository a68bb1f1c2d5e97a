/**
 * Figure 9: `proving pack DIR` as a user runs it (bin/proving.js over lib/: start-up, the one
 * pass that validates the directory while packing it, the zip renamed into place) against
 * Info-ZIP `zip -q -r -1` on the same files (no validation), on the generated 1 GiB PIE. Runs
 * alternate, each in its own process (wall time around the process, peak RSS and CPU from GNU
 * time). Targets: throughput >= 2x zip's, peak RSS < 256 MiB.
 */
import { rm, stat } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { join } from 'node:path'
import {
  cliScript,
  ensurePie,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMiB,
  loadAverage,
  measure,
  median,
  mib,
  NODE,
  PIE_FILES,
  ROOT,
  RUN_DIR,
  table,
  warmCache,
} from './lib.ts'

type Run = { ms: number; cpuMs: number; rssKiB: number; size: number }

export async function figurePackDir(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const memory = ctx.quick ? '64MiB' : '1GiB'
  const runs = ctx.quick ? 1 : 3
  const notes: string[] = []
  const cli = [cliScript(ctx, notes)]
  const pie = await ensurePie(memory, ctx)
  await warmCache(join(pie.dir, 'memory.bin'))
  const ours = join(RUN_DIR, 'pack-dir-ours.zip')
  const infoZip = join(RUN_DIR, 'pack-dir-infozip.zip')
  const loadBefore = loadAverage()

  const proving = async (): Promise<Run> => {
    await rm(ours, { force: true })
    const m = await measure(NODE, [...cli, 'pack', pie.dir, '-o', ours])
    return { ms: m.ms, cpuMs: m.cpuMs, rssKiB: m.rssKiB, size: (await stat(ours)).size }
  }
  const zip = async (): Promise<Run> => {
    await rm(infoZip, { force: true })
    const m = await measure('zip', ['-q', '-r', '-1', infoZip, ...PIE_FILES], { cwd: pie.dir })
    return { ms: m.ms, cpuMs: m.cpuMs, rssKiB: m.rssKiB, size: (await stat(infoZip)).size }
  }
  const oursRuns: Run[] = []
  const zipRuns: Run[] = []
  for (let k = 0; k < runs; k++) {
    const a = await proving()
    const b = await zip()
    oursRuns.push(a)
    zipRuns.push(b)
    ctx.log(
      `  run ${k + 1}: proving pack ${fmt(a.ms / 1000)} s ${fmtMiB(a.rssKiB)}; zip -r -1 ${fmt(b.ms / 1000)} s ${fmtMiB(b.rssKiB)} (load ${loadAverage()})`,
    )
  }
  await rm(ours, { force: true })
  await rm(infoZip, { force: true })
  const loadAfter = loadAverage()

  const summary = (of: Run[]) => {
    const ms = median(of.map((r) => r.ms))
    return {
      ms,
      cpuMs: median(of.map((r) => r.cpuMs)),
      throughput: mib(pie.inputBytes) / (ms / 1000),
      rssKiB: median(of.map((r) => r.rssKiB)),
      size: median(of.map((r) => r.size)),
    }
  }
  const o = summary(oursRuns)
  const z = summary(zipRuns)
  const speedup = o.throughput / z.throughput
  const maxRss = Math.max(...oursRuns.map((r) => r.rssKiB))
  if (speedup < 2) {
    notes.push(
      `proving pack deflates on ${availableParallelism()} worker threads and validates on the main thread, so its lead over single-threaded zip depends on the cores it gets: it used ${fmt(o.cpuMs / o.ms)} cores on average (CPU time / wall time), zip ${fmt(z.cpuMs / z.ms)}. CPU per MiB: proving pack ${fmt(o.cpuMs / mib(pie.inputBytes), 1)} ms (deflate, CRC, the validation, the SHA-256, start-up), zip ${fmt(z.cpuMs / mib(pie.inputBytes), 1)} ms; with both cores free the ratio could reach about ${fmt((z.cpuMs / o.cpuMs) * availableParallelism())}x. The machine's load average during the figure: ${loadBefore} before, ${loadAfter} after.`,
    )
  }

  const body = [
    `Input: a generated PIE (\`generatePie\`, seed 1) with a ${fmt(mib(pie.memoryBytes), 0)} MiB memory.bin, ${fmt(mib(pie.inputBytes), 1)} MiB of PIE files, in the page cache. Medians of ${runs} run${runs > 1 ? 's' : ''}, alternating; wall time around each process (start-up included). Load average (1 / 5 / 15 min) before the figure: ${loadBefore}; after: ${loadAfter}.`,
    '',
    table(
      ['command', 'wall time', 'throughput', 'CPU time (cores used)', 'peak RSS', 'output size'],
      [
        [
          `\`proving pack <dir> -o pie.zip\` (\`node ${cli[0]!.replace(ROOT, '')}\`: one pass, validated)`,
          `${fmt(o.ms / 1000)} s`,
          `${fmt(o.throughput, 0)} MiB/s`,
          `${fmt(o.cpuMs / 1000)} s (${fmt(o.cpuMs / o.ms)})`,
          fmtMiB(o.rssKiB),
          `${fmt(mib(o.size), 1)} MiB`,
        ],
        [
          'Info-ZIP `zip -q -r -1` (no validation)',
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
    id: 9,
    title: 'Pack a 1 GiB PIE directory with the CLI, validation included: `proving pack` vs `zip -r -1`',
    body,
    checks: [
      {
        name: 'throughput vs `zip -r -1`, validation included',
        value: `${fmt(speedup)}x (${fmt(o.ms / 1000)} s vs ${fmt(z.ms / 1000)} s)`,
        target: '>= 2x',
        pass: speedup >= 2,
      },
      {
        name: '`proving pack` peak RSS (worst run)',
        value: fmtMiB(maxRss),
        target: '< 256 MiB',
        pass: maxRss < 256 * 1024,
      },
    ],
    notes,
    seconds: (performance.now() - started) / 1000,
  }
}
