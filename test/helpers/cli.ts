import { execFile, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { main } from '../../src/cli/main.ts'
import type { CliIO } from '../../src/cli/context.ts'

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))
/**
 * The Node the suite's child processes run on (the CLI, the bin, the action): the project's own
 * Node 24, or the one PROVING_TEST_NODE names (CI runs the CLI and library cases again on Node 22
 * that way, .ci/run).
 */
export const NODE = process.env.PROVING_TEST_NODE || `${REPO_ROOT}node_modules/.bin/node`
/**
 * Node's compile cache for the action runs the suite starts as child processes (the CLI enables
 * its own: src/cli/compile-cache.ts): each run compiles the sources again otherwise, about
 * 0.4 s of CPU a process, and the suite starts hundreds.
 */
export const TEST_COMPILE_CACHE = `${REPO_ROOT}node_modules/.cache/proving-kit-test-compile-cache`

export type CliRun = { code: number; stdout: string; stderr: string }

/**
 * Each run gets its own submission journal unless the test gives one (PROVING_JOURNAL_DIR):
 * runs stay independent, and nothing is written to the user's cache directory.
 */
const JOURNALS = mkdtempSync(join(tmpdir(), 'proving-journals-'))
function withJournal(env: Record<string, string | undefined> | undefined): Record<string, string | undefined> {
  return { PROVING_JOURNAL_DIR: mkdtempSync(join(JOURNALS, 'run-')), ...env }
}

/** Runs `proving ...` in this process with captured output (fast; the same code as the bin). */
export async function runCli(
  args: string[],
  options: {
    env?: Record<string, string | undefined>
    signal?: AbortSignal
    stdin?: NodeJS.ReadableStream
    /** Called with all the output so far (stdout then stderr) each time some is written: for tests that act on what it says. */
    onOutput?: (output: { stdout: string; stderr: string }) => void
  } = {},
): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const io: CliIO = {
    stdout: (text) => {
      stdout += text
      options.onOutput?.({ stdout, stderr })
    },
    stderr: (text) => {
      stderr += text
      options.onOutput?.({ stdout, stderr })
    },
    env: withJournal(options.env),
    stdin: options.stdin,
    isTTY: false,
  }
  const code = await main(args, { io, signal: options.signal ?? new AbortController().signal })
  return { code, stdout, stderr }
}

/** Runs the real `proving` executable in a child process (on NODE, the built bin or the sources). */
export function spawnCli(
  args: string[],
  options: {
    env?: Record<string, string | undefined>
    entry?: 'bin' | 'source'
    input?: string
    nodeOptions?: string[]
  } = {},
) {
  const entry = options.entry === 'bin' ? `${REPO_ROOT}bin/proving.js` : `${REPO_ROOT}src/cli/run.ts`
  const child = spawn(NODE, [...(options.nodeOptions ?? []), entry, ...args], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...withJournal(options.env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  if (options.input !== undefined) child.stdin.end(options.input)
  else child.stdin.end()
  const done = new Promise<CliRun>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : -1), stdout, stderr }))
  })
  return {
    child,
    done,
    output: () => ({ stdout, stderr }),
    /** Resolves with stdout so far once it contains `pattern`. */
    waitForOutput: (pattern: RegExp, timeoutMs = 15_000) =>
      new Promise<RegExpMatchArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${pattern} in output: ${stdout} ${stderr}`)), timeoutMs)
        const check = () => {
          const match = stdout.match(pattern) ?? stderr.match(pattern)
          if (match) {
            clearTimeout(timer)
            resolve(match)
          }
        }
        child.stdout.on('data', check)
        child.stderr.on('data', check)
        check()
      }),
  }
}

/** The oldest Node the CLI and the library run on (package.json's engines.node, bin/proving.js). */
export const MINIMUM_NODE = '22.17'

/** Whether a Node version (`22.16.0`) is older than MINIMUM_NODE. */
export function olderThanMinimum(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number)
  const [needMajor = 0, needMinor = 0] = MINIMUM_NODE.split('.').map(Number)
  return major < needMajor || (major === needMajor && minor < needMinor)
}

/**
 * The first `node` on the machine's PATH (or in /usr/bin, /usr/local/bin, /bin) older than
 * MINIMUM_NODE, to run `proving` as a user with an old Node would; undefined when the machine has none.
 */
export async function olderNode(): Promise<{ path: string; version: string } | undefined> {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/usr/local/bin', '/bin']
  for (const dir of dirs.filter((entry) => entry && !entry.includes('node_modules'))) {
    const path = join(dir, 'node')
    const version = await promisify(execFile)(path, ['-p', 'process.versions.node']).then(
      ({ stdout }) => stdout.trim(),
      () => undefined,
    )
    if (version && olderThanMinimum(version)) return { path, version }
  }
  return undefined
}

/** Node options that make Node 24 report an older version: the version check's stand-in where no older Node exists. */
export const pretendNodeVersion = (version: string) => [
  '--import',
  `data:text/javascript,Object.defineProperty(process.versions,'node',{value:'${version}'})`,
]
