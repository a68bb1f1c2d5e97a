/**
 * Figure 6: end to end on a fixture-sized PIE (a generated one with a 4 KiB memory.bin) against
 * an emulator that completes queries at once (timing 0, its own process). The CLI process,
 * `proving prove <pie> --wait` (bin/proving.js: validates and packs, uploads, waits, checks the
 * facts), against bench/peer-prove.sh (Info-ZIP, curl -F, a curl | jq loop with sleep 5), runs
 * alternating, medians of 7 (3 with --quick). The script packs the PIE directory, so the
 * headline compares `proving prove <dir>`, the same work; `proving prove <pie.zip>` is shown too.
 */
import { join, relative } from 'node:path'
import {
  BENCH,
  cliScript,
  ensurePie,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMs,
  measure,
  median,
  NODE,
  ROOT,
  startServer,
  table,
} from './lib.ts'

export async function figureE2e(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const runs = ctx.quick ? 3 : 7
  const pie = await ensurePie('4KiB', ctx)
  const notes: string[] = []
  const cli = [NODE, cliScript(ctx, notes)]
  const emulator = await startServer('emulator', ['--received-ms', '0', '--step-ms', '0'])
  const env = { ...process.env, PROVING_BASE_URL: emulator.url, PROVING_API_KEY: 'bench-key', NO_COLOR: '1' }
  const proving = (target: string) => measure(cli[0]!, [...cli.slice(1), 'prove', target, '--wait'], { env })
  const script = () => measure('bash', [join(BENCH, 'peer-prove.sh'), pie.dir, emulator.url, 'bench-key'])
  const dirRuns: number[] = []
  const zipRuns: number[] = []
  const scriptRuns: number[] = []
  const versionRuns: number[] = []
  try {
    await proving(pie.dir)
    await script()
    for (let k = 0; k < runs; k++) {
      dirRuns.push((await proving(pie.dir)).ms)
      zipRuns.push((await proving(pie.zip)).ms)
      scriptRuns.push((await script()).ms)
      versionRuns.push((await measure(cli[0]!, [...cli.slice(1), '--version'], { env })).ms)
    }
  } finally {
    await emulator.stop()
  }
  const d = median(dirRuns)
  const z = median(zipRuns)
  const s = median(scriptRuns)
  ctx.log(`  proving prove <dir> --wait ${fmtMs(d)}; <pie.zip> ${fmtMs(z)}; peer-prove.sh ${fmtMs(s)}`)
  const cliName = relative(ROOT, cli[1]!)
  const body = [
    `Fixture-sized PIE: a generated one, 4 KiB memory.bin (${pie.zipBytes} bytes packed). Wall time of each process; medians of ${runs} runs, alternating, after a warm-up. The CLI: \`node ${cliName}\`.`,
    '',
    table(
      ['command', 'median', 'min', 'max', 'vs the script'],
      [
        [
          '`proving prove <pie dir> --wait`',
          fmtMs(d),
          fmtMs(Math.min(...dirRuns)),
          fmtMs(Math.max(...dirRuns)),
          `${fmt(d / s)}x`,
        ],
        [
          '`proving prove <pie.zip> --wait`',
          fmtMs(z),
          fmtMs(Math.min(...zipRuns)),
          fmtMs(Math.max(...zipRuns)),
          `${fmt(z / s)}x`,
        ],
        [
          '`bench/peer-prove.sh <pie dir>` (zip, curl -F, curl | jq + sleep 5)',
          fmtMs(s),
          fmtMs(Math.min(...scriptRuns)),
          fmtMs(Math.max(...scriptRuns)),
          '1x',
        ],
        [
          "(`proving --version`: the CLI's start-up alone)",
          fmtMs(median(versionRuns)),
          fmtMs(Math.min(...versionRuns)),
          fmtMs(Math.max(...versionRuns)),
          `${fmt(median(versionRuns) / s)}x`,
        ],
      ],
    ),
    '',
    `The CLI does more than the script: it validates the PIE by cairo-lang's rules before sending it and, after the wait, recomputes the program hash (Pedersen) and the facts locally and checks them against the service's. Most of the difference is Node's start-up with the client's modules (the \`--version\` row); against a real service, where a proof takes minutes, the waiting figure (4) is what decides the wall time.`,
  ].join('\n')
  return {
    id: 6,
    title: 'End to end: `proving prove --wait` vs a zip + curl + jq script',
    body,
    checks: [
      {
        name: 'wall time, `proving prove <dir> --wait` / the script',
        value: `${fmt(d / s)}x (${fmtMs(d)} vs ${fmtMs(s)})`,
        target: 'none set: reported',
        pass: null,
      },
    ],
    notes,
    seconds: (performance.now() - started) / 1000,
  }
}
