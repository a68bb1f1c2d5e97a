/**
 * The benchmark suite (issue 9): each figure measured side by side with the tool a CI step would
 * otherwise script, in the same run, and written to bench/results.md with the machine it ran on,
 * the medians, the ratio against the peer, the target and PASS/FAIL.
 *
 *   npm run bench                      every figure (under 10 minutes on 2 cores)
 *   npm run bench -- --only 3,5        some of them
 *   npm run bench -- --quick           smaller inputs and fewer runs: a smoke test, not a result
 *   npm run bench -- --out other.md    write elsewhere
 *
 * 1 pack (bench/fig1-pack.ts, through bench/pack.ts)   4 waiting (bench/fig4-wait.ts)
 * 2 upload (bench/fig2-upload.ts)                      5 scale (bench/fig5-scale.ts)
 * 3 start-up (bench/fig3-startup.ts)                   6 end to end (bench/fig6-e2e.ts)
 * 7 program hash by size (bench/fig7-hash.ts, through bench/hash.ts)
 * 8 import cost of the library (bench/fig8-import.ts)
 * 9 `proving pack <dir>` vs zip (bench/fig9-pack-dir.ts)  10 `proving prove <dir>` to submitted vs zip + curl (bench/fig10-prove-dir.ts)
 * 11 a batch of 100 to 2,000 PIEs with --wait: time per PIE, tail, RSS, reads a second (bench/fig11-batch-scale.ts)
 * 12 the emulator at 1,000 to 100,000 queries, indexed vs the scans they replace (bench/fig12-emulator-scale.ts)
 * 13 a key with 2,000 earlier queries: a batch's list requests, reads a second, time per PIE, and its plan (bench/fig13-key-history.ts)
 *
 * Inputs (generated PIEs) are cached in .bench-tmp/ (git-ignored); the first run generates the
 * 1 GiB one (about a minute). Absolute numbers depend on the machine and on whatever else runs
 * on it; the ratios, measured side by side, are what the targets are about.
 */
import { rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { figurePack } from './fig1-pack.ts'
import { figureUpload } from './fig2-upload.ts'
import { figureStartup } from './fig3-startup.ts'
import { figureWait } from './fig4-wait.ts'
import { figureScale } from './fig5-scale.ts'
import { figureE2e } from './fig6-e2e.ts'
import { figureHash } from './fig7-hash.ts'
import { figureImport } from './fig8-import.ts'
import { figurePackDir } from './fig9-pack-dir.ts'
import { figureProveDir } from './fig10-prove-dir.ts'
import { figureBatchScale } from './fig11-batch-scale.ts'
import { figureEmulatorScale } from './fig12-emulator-scale.ts'
import { figureKeyHistory } from './fig13-key-history.ts'
import {
  BENCH,
  type Build,
  ensureBuilt,
  type FigureContext,
  type FigureResult,
  machine,
  RUN_DIR,
  table,
} from './lib.ts'

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string', default: join(BENCH, 'results.md') },
  },
})

const FIGURES: [number, string, (ctx: FigureContext) => Promise<FigureResult>][] = [
  [1, 'Pack', figurePack],
  [2, 'Upload', figureUpload],
  [3, 'Start-up', figureStartup],
  [4, 'Waiting', figureWait],
  [5, 'Scale', figureScale],
  [6, 'End to end', figureE2e],
  [7, 'Program hash', figureHash],
  [8, 'Import cost', figureImport],
  [9, 'Pack a directory (CLI)', figurePackDir],
  [10, 'Directory to submitted', figureProveDir],
  [11, 'A batch at scale', figureBatchScale],
  [12, 'The emulator at scale', figureEmulatorScale],
  [13, 'A key with a history', figureKeyHistory],
]
const only = values.only ? new Set(values.only.split(',').map((n) => Number(n.trim()))) : undefined
const selected = FIGURES.filter(([id]) => !only || only.has(id))

const log = (message: string) => process.stderr.write(`${message}\n`)
const ctx: FigureContext = { quick: values.quick, log }
const host = machine()
const loadBefore = host.load()
const busyBefore = host.busy()
const startedAt = new Date()
const started = performance.now()
const results: FigureResult[] = []
// The client processes (figures 2, 5, 6, 9, 10, 11) and the import (8) run the compiled lib/, as users do: build it first if stale.
const build: Build | undefined = selected.some(([id]) => [2, 5, 6, 8, 9, 10, 11, 13].includes(id))
  ? ensureBuilt(ctx)
  : undefined

for (const [id, name, run] of selected) {
  log(`figure ${id}: ${name} ...`)
  const figureStarted = performance.now()
  try {
    const result = await run(ctx)
    results.push(result)
    for (const check of result.checks)
      log(`  ${verdict(check.pass)} ${check.name}: ${check.value} (target ${check.target})`)
    log(`  (${result.seconds.toFixed(0)} s)`)
  } catch (error) {
    log(`  figure ${id} failed: ${error instanceof Error ? error.stack : String(error)}`)
    results.push({
      id,
      title: name,
      body: '',
      checks: [
        {
          name: 'the measurement ran',
          value: `error: ${String(error instanceof Error ? error.message : error).split('\n')[0]}`,
          target: 'runs',
          pass: false,
        },
      ],
      notes: [],
      seconds: (performance.now() - figureStarted) / 1000,
    })
  }
}
await rm(RUN_DIR, { recursive: true, force: true })
const totalSeconds = (performance.now() - started) / 1000

function verdict(pass: boolean | null): string {
  return pass === null ? 'INFO' : pass ? 'PASS' : 'FAIL'
}

const summary = results.flatMap((r) =>
  r.checks.map((c) => [`${r.id}`, c.name, c.value, c.target, `**${verdict(c.pass)}**`]),
)
const failed = results.flatMap((r) => r.checks).filter((c) => c.pass === false).length
const markdown = `# Benchmarks

Written by \`npm run bench\` (bench/run.ts${values.quick ? ' --quick: a smoke test with small inputs, not a measurement' : ''}${only ? `, figures ${[...only].join(', ')} only` : ''}) on ${startedAt.toISOString().replace(/\.\d+Z$/, 'Z')}, in ${totalSeconds.toFixed(0)} s.
Each figure runs its tool and the peer a CI step would otherwise script side by side in the same
run; the ratios are what the targets are about (absolute numbers move with the machine and its load).

## Machine
${host.lines.map((line) => `- ${line}`).join('\n')}
${build ? `- Product: the client processes run ${build.from === 'lib' ? 'the compiled lib/ (bin/proving.js, lib/clients)' : 'src/ through type stripping'}${build.note ? ` (${build.note})` : ''}\n` : ''}- Load average (1 / 5 / 15 min) before: ${loadBefore}; after: ${host.load()}${busyBefore || host.busy() ? ' (the machine was busy with other work: absolute numbers suffer, and so does any figure that needs both cores)' : ''}

## Summary
${failed === 0 ? 'Every target holds.' : `${failed} target${failed === 1 ? '' : 's'} missed: see the figure's notes.`}

${table(['figure', 'check', 'measured', 'target', 'result'], summary)}

${results
  .map(
    (r) => `## ${r.id}. ${r.title}

${r.body}
${r.notes.length ? `\n${r.notes.map((note) => `- ${note}`).join('\n')}\n` : ''}
${table(
  ['check', 'measured', 'target', 'result'],
  r.checks.map((c) => [c.name, c.value, c.target, `**${verdict(c.pass)}**`]),
)}
${
  r.checks.some((c) => c.note)
    ? `\n${r.checks
        .filter((c) => c.note)
        .map((c) => `- ${c.name}: ${c.note}`)
        .join('\n')}\n`
    : ''
}
(${r.seconds.toFixed(0)} s)
`,
  )
  .join('\n')}`
await writeFile(values.out, markdown)
log(
  `\nwrote ${values.out} (${totalSeconds.toFixed(0)} s); ${failed === 0 ? 'every target holds' : `${failed} target(s) missed`}`,
)
