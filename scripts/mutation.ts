/**
 * Mutation testing, outside `npm test`:
 *
 *   npm run mutation                              every module of stryker.config.mjs
 *   npm run mutation -- --mutate src/core/classify.ts   one of them (any `stryker run` option)
 *
 * Runs StrykerJS (stryker.config.mjs: the vitest runner over the in-process tests of
 * vitest.mutation.config.ts), then prints each mutated module's score from the JSON report and
 * exits 1 when any one is under MINIMUM_SCORE: a high total can hide one module nobody tests.
 * Stryker's own `thresholds.break` judges only the total.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const MINIMUM_SCORE = 85

/** The part of the mutation-testing-report-schema JSON (Stryker's `json` reporter) read here. */
export type MutationReport = { files: Record<string, { mutants: { status: string }[] }> }

export type ModuleScore = {
  path: string
  killed: number
  survived: number
  noCoverage: number
  timedOut: number
  /** Detected (killed or timed out) over valid mutants, as Stryker counts its score; null when none is valid. */
  score: number | null
}

/** Each module's score as Stryker computes it: compile errors and ignored mutants do not count. */
export function moduleScores(report: MutationReport): ModuleScore[] {
  return Object.entries(report.files)
    .map(([path, file]) => {
      const count = (status: string) => file.mutants.filter((mutant) => mutant.status === status).length
      const killed = count('Killed')
      const timedOut = count('Timeout')
      const survived = count('Survived')
      const noCoverage = count('NoCoverage')
      const valid = killed + timedOut + survived + noCoverage
      return {
        path,
        killed,
        survived,
        noCoverage,
        timedOut,
        score: valid === 0 ? null : (100 * (killed + timedOut)) / valid,
      }
    })
    .sort((a, b) => a.path.localeCompare(b.path))
}

/** One line per module, and the modules under the minimum (empty when all pass). */
export function judgeScores(scores: ModuleScore[], minimum = MINIMUM_SCORE): { lines: string[]; failing: string[] } {
  const lines = scores.map((module) => {
    const score = module.score === null ? 'no mutants' : `${module.score.toFixed(2)}%`
    return `${module.path}: ${score} (killed ${module.killed}, timed out ${module.timedOut}, survived ${module.survived}, no coverage ${module.noCoverage})`
  })
  const failing = scores
    .filter((module) => module.score !== null && module.score < minimum)
    .map((module) => module.path)
  return { lines, failing }
}

function main(): void {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const stryker = spawnSync(
    process.execPath,
    [join(root, 'node_modules', '@stryker-mutator', 'core', 'bin', 'stryker.js'), 'run', ...process.argv.slice(2)],
    { cwd: root, stdio: 'inherit' },
  )
  if (stryker.status !== 0) process.exit(stryker.status ?? 1)
  const report = JSON.parse(readFileSync(join(root, 'reports', 'mutation', 'mutation.json'), 'utf8')) as MutationReport
  const { lines, failing } = judgeScores(moduleScores(report))
  console.log(`\nMutation score by module (minimum ${MINIMUM_SCORE}%):`)
  for (const line of lines) console.log(`  ${line}`)
  if (failing.length > 0) {
    console.error(
      `Under ${MINIMUM_SCORE}%: ${failing.join(', ')}. Open reports/mutation/mutation.html for the mutants no test noticed.`,
    )
    process.exit(1)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main()
