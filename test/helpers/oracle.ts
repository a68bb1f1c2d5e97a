/**
 * The reference oracle (../shared/oracle: cairo-lang v0.14.0.1 run from its own source, see its
 * README) for the differential test (test/interop/oracle.test.ts). Its Python environment is
 * made by scripts/oracle-env.sh (.ci/run calls it). Where the oracle or its environment is
 * absent, the test reports itself skipped, saying why; with PROVING_REQUIRE_SYSTEM_TOOLS=1 (CI)
 * that is a failure instead.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, it } from 'vitest'
import { SHARED_FIXTURES_PRESENT } from './pie-fixtures.ts'

/** ../shared/oracle beside the repository, or where PROVING_TEST_ORACLE points. */
export const ORACLE = process.env.PROVING_TEST_ORACLE
  ? resolve(process.env.PROVING_TEST_ORACLE)
  : fileURLToPath(new URL('../../../shared/oracle', import.meta.url))
/** Where ../shared/oracle/judge and scripts/oracle-env.sh put the venv. */
export const ORACLE_VENV = process.env.CAIRO_ORACLE_VENV ?? '/tmp/cairo-oracle-venv'
const BATCH = fileURLToPath(new URL('./oracle-batch.py', import.meta.url))
const MODULES = 'marshmallow, sympy, lark, frozendict, eth_hash, Crypto, typing_inspect, ecdsa, cachetools, yaml'

/** Why the oracle cannot run here, or undefined when it can. */
function absence(): string | undefined {
  if (!SHARED_FIXTURES_PRESENT) return `${join(ORACLE, '..', 'fixtures', 'pie')} is absent`
  if (!existsSync(join(ORACLE, 'oracle.py'))) return `${ORACLE} (cairo-lang, the reference oracle) is absent`
  const python = join(ORACLE_VENV, 'bin', 'python')
  if (!existsSync(python)) return `its Python environment ${ORACLE_VENV} is absent (make it with scripts/oracle-env.sh)`
  try {
    execFileSync(python, ['-c', `import ${MODULES}`], { stdio: 'ignore' })
  } catch {
    return `its Python environment ${ORACLE_VENV} lacks cairo-lang's dependencies (run scripts/oracle-env.sh)`
  }
  return undefined
}

/**
 * A describe() that runs when the oracle can; else one skipped test whose name says why, and
 * that reason on the console (or, under PROVING_REQUIRE_SYSTEM_TOOLS=1, one failing test).
 */
export function describeOracle(name: string, body: () => void): void {
  const why = absence()
  if (why === undefined) {
    describe(name, body)
    return
  }
  const reason = `skipped: ${why}`
  if (process.env.PROVING_REQUIRE_SYSTEM_TOOLS === '1') {
    describe(name, () =>
      it('has the oracle .ci/run installs', () => {
        throw new Error(`${why}, and PROVING_REQUIRE_SYSTEM_TOOLS=1 requires it`)
      }),
    )
    return
  }
  console.warn(`The oracle test is ${reason}`)
  describe(name, () => it.skip(reason, () => {}))
}

/** What oracle.py's `judge` says of one PIE (see ../shared/oracle/README.md). */
export type OracleVerdict = {
  path: string
  valid: boolean
  error?: string
  program_words?: number
  hashes?: Record<string, string>
  fact?: string
  fact_topology?: [number[], number[]]
  seconds?: number
  crash?: string
}

/** What oracle.py's `equal` says of a PIE and its packed copy. */
export type OracleEquality = {
  equal: boolean | null
  error?: string
  diff?: unknown
  packed_valid?: boolean
  packed_error?: string
  crash?: string
}

type Job = ['judge', string] | ['equal', string, string] | ['entries', string] | ['verdict', string]

/**
 * Runs the jobs in `workers` Python processes (each imports cairo-lang once), the jobs dealt
 * out in turn; answers in the jobs' order.
 */
async function run(
  jobs: Job[],
  options: { workers?: number; maxWords?: number; python?: string; zipOnly?: boolean } = {},
): Promise<unknown[]> {
  const workers = Math.max(1, Math.min(options.workers ?? 2, jobs.length))
  const answers: unknown[] = new Array(jobs.length)
  const env = {
    ...process.env,
    PYTHONPATH: [ORACLE, join(ORACLE, 'cairo-lang'), join(ORACLE, 'deps'), join(ORACLE, 'shims')].join(':'),
    PYTHONDONTWRITEBYTECODE: '1',
    ...(options.maxWords ? { PROVING_ORACLE_MAX_WORDS: String(options.maxWords) } : {}),
    ...(options.zipOnly ? { PROVING_ORACLE_ZIP_ONLY: '1' } : {}),
  }
  await Promise.all(
    Array.from({ length: workers }, async (_, w) => {
      const mine = jobs.map((job, i) => [job, i] as const).filter((_, i) => i % workers === w)
      const child = spawn(options.python ?? join(ORACLE_VENV, 'bin', 'python'), [BATCH], {
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
      let stdout = ''
      let stderr = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
      child.stdin.end(mine.map(([job]) => `${JSON.stringify(job)}\n`).join(''))
      const code = await new Promise<number | null>((done, fail) => child.on('error', fail).on('close', done))
      const lines = stdout.trim().split('\n').filter(Boolean)
      if (code !== 0 || lines.length !== mine.length) {
        throw new Error(
          `the oracle exited with ${code} after ${lines.length} of ${mine.length} answers: ${stderr.slice(-2000)}`,
        )
      }
      for (const [k, [, i]] of mine.entries()) answers[i] = JSON.parse(lines[k]!)
      cpuSeconds += Number(/^cpu ([\d.]+)$/m.exec(stderr)?.[1] ?? 0)
    }),
  )
  return answers
}

let cpuSeconds = 0

/** CPU seconds the oracle's Python processes have spent so far (wall time depends on the machine's load). */
export function oracleCpuSeconds(): number {
  return cpuSeconds
}

/**
 * cairo-lang's verdict on each PIE zip, and whether it loads each pair (a PIE and its packed
 * copy) as equal CairoPie objects: one batch, so each worker imports cairo-lang once.
 */
export async function askOracle(
  paths: string[],
  pairs: [string, string][],
  options: { workers?: number; maxWords?: number; pedersenOnly?: boolean } = {},
): Promise<{ verdicts: OracleVerdict[]; equalities: OracleEquality[] }> {
  const jobs: Job[] = [
    ...paths.map((path): Job => [options.pedersenOnly ? 'verdict' : 'judge', path]),
    ...pairs.map(([a, b]): Job => ['equal', a, b]),
  ]
  const answers = await run(jobs, options)
  return {
    verdicts: answers.slice(0, paths.length) as OracleVerdict[],
    equalities: answers.slice(paths.length) as OracleEquality[],
  }
}

/** What a Python's zipfile reads of a zip as cairo-lang opens it: each name's SHA-256, or its error. */
export type ZipfileReading = { entries?: Record<string, string>; error?: string; crash?: string }

/**
 * Each zip as Python's zipfile reads it: the oracle's Python (3.11.7, cairo-lang's), or with
 * `python` another interpreter (cairo-lang is not imported: only zipfile answers).
 */
export async function zipfileReadings(
  paths: string[],
  options: { python?: string; workers?: number } = {},
): Promise<ZipfileReading[]> {
  return (await run(
    paths.map((path): Job => ['entries', path]),
    { ...options, zipOnly: options.python !== undefined },
  )) as ZipfileReading[]
}

/** The other Pythons on this machine whose zipfile also judges the fuzzer's zips (3.11.8 and later refuse overlapping entries). */
export function otherPythons(): { python: string; version: string }[] {
  // Debian's own, then any newer one on the PATH or in pyenv's folder.
  const pyenv = join(process.env.PYENV_ROOT ?? join(process.env.HOME ?? '/root', '.pyenv'), 'versions')
  const versions = existsSync(pyenv)
    ? readdirSync(pyenv)
        .filter((v) => /^3\.(1[2-9])\./.test(v))
        .sort()
    : []
  const candidates = [
    '/usr/bin/python3',
    ...['3.12', '3.13', '3.14'].map((v) => `python${v}`),
    ...versions.map((v) => join(pyenv, v, 'bin', 'python3')),
  ]
  const found: { python: string; version: string }[] = []
  for (const python of candidates) {
    try {
      const version = execFileSync(python, ['-c', 'import sys, zipfile; print(sys.version.split()[0])'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim()
      if (!found.some((f) => f.version === version)) found.push({ python, version })
    } catch {
      // absent here
    }
  }
  return found
}
