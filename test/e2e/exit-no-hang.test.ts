import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { limiter } from '../../src/pipeline/limit.ts'
import { spawnCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/**
 * No hang at exit (issue 32, 4): `proving pack` once stayed in Node's shutdown for good (1 run in
 * about 100: the unconditional `process.exit` of src/cli/run.ts with deflate worker threads alive,
 * nodejs/node#54918). Now the pools and the shared agent are ended first and the process ends on
 * its own. Each command runs PROVING_EXIT_RUNS times (3 by default, to keep the suite within its five minutes; the scheduled deep run gives 50; `PROVING_EXIT_RUNS=200 npx
 * vitest run test/e2e/exit-no-hang.test.ts` is the 200-run check), from the built bin as
 * a user runs it, two at a time; none may outlive its last output by EXIT_AFTER_MS (5 s).
 * The PIE is 8 MiB, so packing and the streamed `prove <dir>` run on worker threads.
 */

const RUNS = Number(process.env.PROVING_EXIT_RUNS ?? 3)
/**
 * How long a process may live after its last output. A process held open by a handle lives at
 * least src/cli/run.ts's 5 s last resort after its work, so this catches it; below that, a loaded
 * machine's cleanup (the journal's files, the packed zip removed): 3.6 s at most of 200 `prove`
 * runs at a load average of 26.
 */
const EXIT_AFTER_MS = 5_000

let emulator: TestEmulator
let work: string
let pieDir: string
let pieZip: string
const spans: Record<string, number[]> = {}

beforeAll(async () => {
  emulator = await startTestEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
  work = await mkdtemp(join(tmpdir(), 'exit-no-hang-'))
  pieDir = join(work, 'pie')
  await generatePie({ outDir: pieDir, memoryBytes: 8 * 1024 * 1024, seed: 4 })
  pieZip = (await packPie(pieDir, join(work, 'pie.zip'))).path
}, 60_000)

afterAll(async () => {
  await emulator?.close()
  await rm(work, { recursive: true, force: true })
  for (const [command, values] of Object.entries(spans)) {
    const sorted = [...values].sort((a, b) => a - b)
    console.log(
      `${command}: ${values.length} runs, after the last output: median ${sorted[sorted.length >> 1]} ms, max ${sorted.at(-1)} ms`,
    )
  }
})

/** Runs `proving <args>` and measures how long the process lived after its last byte of output. */
async function lingering(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; ms: number; stderr: string }> {
  const run = spawnCli(args, { entry: 'bin', env })
  let last = Date.now()
  run.child.stdout.on('data', () => (last = Date.now()))
  run.child.stderr.on('data', () => (last = Date.now()))
  const result = await run.done
  return { code: result.code, ms: Date.now() - last, stderr: result.stderr }
}

const COMMANDS: [string, () => string[], () => Record<string, string>][] = [
  ['pack', () => ['pack', pieDir, '-o', join(work, `out-${Math.random().toString(36).slice(2)}.zip`)], () => ({})],
  ['validate', () => ['validate', pieZip], () => ({})],
  ['inspect', () => ['inspect', pieZip], () => ({})],
  ['prove', () => ['prove', pieDir, '--wait'], () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY })],
]

describe(`every command ends with its work (${RUNS} runs each)`, () => {
  it.each(COMMANDS)(
    '%s',
    async (command, args, env) => {
      const limit = limiter(2)
      spans[command] = []
      await Promise.all(
        Array.from({ length: RUNS }, () =>
          limit(async () => {
            const result = await lingering(args(), env())
            expect(result.code, result.stderr).toBe(0)
            spans[command]!.push(result.ms)
          }),
        ),
      )
      expect(Math.max(...spans[command]!)).toBeLessThan(EXIT_AFTER_MS)
    },
    60_000 + RUNS * 10_000,
  )
})
