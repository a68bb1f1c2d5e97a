/**
 * Runs the committed action bundles the way the GitHub runner does: `node <runs.main>` from
 * the action.yml, with each input as `INPUT_<NAME>` (the runner's name mangling: uppercased,
 * spaces to `_`, hyphens kept) after applying action.yml's defaults, the file commands
 * (GITHUB_OUTPUT, GITHUB_STATE, GITHUB_STEP_SUMMARY) in a fresh folder, RUNNER_TEMP and
 * GITHUB_WORKSPACE, and nothing else from this process's environment. The post step gets the
 * main step's state as `STATE_<name>`, as the runner passes it (and, when given, the inputs).
 *
 * The action.yml is read with the `yaml` package, a full YAML parser: a file the runner
 * cannot load fails here too. Also a fake ActionIO for driving `run()` in-process.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parse } from 'yaml'
import { NODE, REPO_ROOT, TEST_COMPILE_CACHE } from './cli.ts'
import { CONTROL_HEADER } from '../../src/emulator/router.ts'
import type { ActionIO } from '../../src/action/types.ts'

export { NODE, REPO_ROOT }
/** The committed example PIE, relative to the workspace (the repository root by default). */
export const FIXTURE_PIE = 'examples/fib/pie.zip'

// --- action.yml ------------------------------------------------------------------------------

export type ActionDefinition = {
  dir: string
  file: string
  /** The whole file, as the `yaml` package (a full YAML 1.2 parser, like the runner's) reads it. */
  yaml: Record<string, unknown> & { name?: string; description?: string; branding?: { icon?: string; color?: string } }
  inputs: Record<string, { description?: string; required?: boolean; default?: string }>
  outputs: Record<string, { description?: string }>
  runs: { using?: string; main?: string; post?: string; 'post-if'?: string }
}

/** `''` is the root action; else the sub-action folder (`wait`, `pack`, ...). */
export function readAction(name: string): ActionDefinition {
  const dir = resolve(REPO_ROOT, name)
  const file = join(dir, 'action.yml')
  const yaml = parse(readFileSync(file, 'utf8')) as ActionDefinition['yaml']
  // The runner passes every input as a string: `default: 120` is the input "120".
  const inputs = Object.fromEntries(
    Object.entries((yaml.inputs ?? {}) as Record<string, Record<string, unknown>>).map(([input, spec]) => [
      input,
      { ...spec, default: spec.default === undefined || spec.default === null ? undefined : String(spec.default) },
    ]),
  ) as ActionDefinition['inputs']
  return {
    dir,
    file,
    yaml,
    inputs,
    outputs: (yaml.outputs ?? {}) as ActionDefinition['outputs'],
    runs: (yaml.runs ?? {}) as ActionDefinition['runs'],
  }
}

/** The runner's variable for an input: `api-key` -> `INPUT_API-KEY`. */
export function inputVariable(name: string): string {
  return `INPUT_${name.replace(/ /g, '_').toUpperCase()}`
}

// --- Running a bundle ------------------------------------------------------------------------

export type FileCommands = { output: string; state: string; summary: string }

export type ActionRun = {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** GITHUB_OUTPUT parsed; the last value of a name wins, as on the runner. */
  outputs: Record<string, string>
  state: Record<string, string>
  summary: string
  files: FileCommands
  /** The raw text of every file command, for secret scans. */
  raw: { output: string; state: string; summary: string }
  ms: number
}

export type StartOptions = {
  /** Inputs as a workflow's `with:` gives them; action.yml defaults fill in the rest. */
  inputs?: Record<string, string>
  /** Extra environment (GITHUB_REPOSITORY, ...). */
  env?: Record<string, string>
  /** `STATE_*` for a post step. */
  state?: Record<string, string>
  /** RUNNER_TEMP (a fresh folder by default). */
  runnerTemp?: string
  /** GITHUB_WORKSPACE and the working directory (the repository root by default). */
  workspace?: string
  entry?: 'main' | 'post'
  /**
   * Run the action's sources (src/action/index.ts, through its one entry, with the real
   * @actions/core) instead of the committed bundle: for behaviour not yet in dist/.
   */
  fromSource?: boolean
}

export type RunningAction = {
  child: ChildProcess
  done: Promise<ActionRun>
  output: () => { stdout: string; stderr: string }
  /** Resolves once stdout or stderr matches. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
}

export function startAction(name: string, options: StartOptions = {}): RunningAction {
  const action = readAction(name)
  const entry = options.entry ?? 'main'
  const script = action.runs[entry]
  if (!script) throw new Error(`${action.file} has no runs.${entry}`)
  const work = mkdtempSync(join(tmpdir(), `action-${name || 'root'}-${entry}-`))
  const files: FileCommands = {
    output: join(work, 'github_output'),
    state: join(work, 'github_state'),
    summary: join(work, 'step_summary'),
  }
  for (const file of Object.values(files)) writeFileSync(file, '')
  const workspace = options.workspace ?? REPO_ROOT
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? work,
    GITHUB_ACTIONS: 'true',
    GITHUB_OUTPUT: files.output,
    GITHUB_STATE: files.state,
    GITHUB_STEP_SUMMARY: files.summary,
    RUNNER_TEMP: options.runnerTemp ?? mkdtempSync(join(work, 'runner-temp-')),
    GITHUB_WORKSPACE: workspace,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_REPOSITORY: 'proving-kit/proving-kit',
    GITHUB_RUN_ID: '4242',
    GITHUB_RUN_ATTEMPT: '1',
    NODE_COMPILE_CACHE: TEST_COMPILE_CACHE,
    ...options.env,
  }
  // The runner gives a post step the same inputs as its main step.
  if (entry === 'main' || options.inputs) {
    for (const [input, spec] of Object.entries(action.inputs)) {
      if (spec.default !== undefined) env[inputVariable(input)] = spec.default
    }
    for (const [input, value] of Object.entries(options.inputs ?? {})) env[inputVariable(input)] = value
  }
  for (const [key, value] of Object.entries(options.state ?? {})) env[`STATE_${key}`] = value
  const started = Date.now()
  const step = /dist\/([a-z-]+)\/index\.js$/.exec(script)?.[1]
  const source = `import(${JSON.stringify(resolve(REPO_ROOT, 'src/action/index.ts'))}).then((entry) => entry.runAction(${JSON.stringify(step)}))`
  const argv = options.fromSource ? ['--input-type=module', '-e', source] : [resolve(action.dir, script)]
  const child = spawn(NODE, argv, { cwd: workspace, env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const done = new Promise<ActionRun>((resolveRun, reject) => {
    child.on('error', reject)
    child.on('close', (code, signal) => {
      const raw = {
        output: readFileSync(files.output, 'utf8'),
        state: readFileSync(files.state, 'utf8'),
        summary: readFileSync(files.summary, 'utf8'),
      }
      resolveRun({
        code,
        signal,
        stdout,
        stderr,
        outputs: parseFileCommand(raw.output),
        state: parseFileCommand(raw.state),
        summary: raw.summary,
        files,
        raw,
        ms: Date.now() - started,
      })
    })
  })
  return {
    child,
    done,
    output: () => ({ stdout, stderr }),
    waitFor: (pattern, timeoutMs = 20_000) =>
      new Promise((resolveMatch, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${pattern} in the output:\n${stdout}\n${stderr}`)),
          timeoutMs,
        )
        const check = () => {
          const match = stdout.match(pattern) ?? stderr.match(pattern)
          if (!match) return
          clearTimeout(timer)
          child.stdout!.off('data', check)
          child.stderr!.off('data', check)
          resolveMatch(match)
        }
        child.stdout!.on('data', check)
        child.stderr!.on('data', check)
        check()
      }),
  }
}

/** Runs an action's main step to the end. */
export function runAction(name: string, options: Omit<StartOptions, 'entry'> = {}): Promise<ActionRun> {
  return startAction(name, { ...options, entry: 'main' }).done
}

/** Runs the post step after `main`, with the state the main step saved. */
export function runPost(
  name: string,
  main: ActionRun,
  options: Omit<StartOptions, 'entry' | 'state'> = {},
): Promise<ActionRun> {
  return startAction(name, { ...options, entry: 'post', state: main.state }).done
}

/** GITHUB_OUTPUT / GITHUB_STATE: `name<<delimiter`, the value's lines, `delimiter`. */
export function parseFileCommand(text: string): Record<string, string> {
  const values: Record<string, string> = {}
  const lines = text.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (!line) continue
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line)
    if (heredoc) {
      const [, name, delimiter] = heredoc
      const body: string[] = []
      while (index + 1 < lines.length && lines[index + 1] !== delimiter) body.push(lines[++index]!)
      index++
      values[name!] = body.join('\n')
      continue
    }
    const equals = line.indexOf('=')
    if (equals > 0) values[line.slice(0, equals)] = line.slice(equals + 1)
  }
  return values
}

/** `::error::` lines of stdout, decoded as the runner shows them. */
export function errorAnnotations(run: Pick<ActionRun, 'stdout'>): string[] {
  return run.stdout
    .split('\n')
    .filter((line) => line.startsWith('::error'))
    .map((line) =>
      line
        .replace(/^::error[^:]*::/, '')
        .replace(/%0A/g, '\n')
        .replace(/%0D/g, '\r')
        .replace(/%25/g, '%'),
    )
}

/**
 * Every place a secret could leak from a run: stdout (without the `::add-mask::` command, which
 * the runner consumes and never shows), stderr, and the output, state and summary files.
 */
export function leakedSecret(run: ActionRun, secret: string): string | undefined {
  const stdout = run.stdout
    .split('\n')
    .filter((line) => !line.startsWith('::add-mask::'))
    .join('\n')
  const places: [string, string][] = [
    ['stdout', stdout],
    ['stderr', run.stderr],
    ['GITHUB_OUTPUT', run.raw.output],
    ['GITHUB_STATE', run.raw.state],
    ['GITHUB_STEP_SUMMARY', run.raw.summary],
  ]
  return places.find(([, text]) => text.includes(secret))?.[0]
}

// --- A fake runner for run() in-process -----------------------------------------------------

export type FakeIO = ActionIO & {
  outputs: Record<string, string>
  /** Every setOutput call in order (name, value). */
  outputLog: [string, string][]
  state: Record<string, string>
  secrets: string[]
  logs: { level: 'debug' | 'info' | 'warning' | 'error' | 'group' | 'endgroup'; message: string }[]
  summary: string
  failed: string | undefined
}

/** An ActionIO that records everything; `inputs` as the runner would pass them (defaults are run()'s job). */
export function fakeIO(
  inputs: Record<string, string> = {},
  options: { env?: Record<string, string>; state?: Record<string, string> } = {},
): FakeIO {
  const io: FakeIO = {
    outputs: {},
    outputLog: [],
    state: {},
    secrets: [],
    logs: [],
    summary: '',
    failed: undefined,
    env: { GITHUB_WORKSPACE: REPO_ROOT, RUNNER_TEMP: mkdtempSync(join(tmpdir(), 'fake-runner-')), ...options.env },
    getInput: (name) => (inputs[name] ?? '').trim(),
    setOutput: (name, value) => {
      io.outputs[name] = value
      io.outputLog.push([name, value])
    },
    setSecret: (value) => {
      if (value) io.secrets.push(value)
    },
    saveState: (name, value) => (io.state[name] = value),
    getState: (name) => options.state?.[name] ?? '',
    debug: (message) => io.logs.push({ level: 'debug', message }),
    info: (message) => io.logs.push({ level: 'info', message }),
    warning: (message) => io.logs.push({ level: 'warning', message }),
    error: (message) => io.logs.push({ level: 'error', message }),
    startGroup: (message) => io.logs.push({ level: 'group', message }),
    endGroup: () => io.logs.push({ level: 'endgroup', message: '' }),
    appendSummary: async (markdown) => {
      io.summary += `${markdown}\n`
    },
    // Records as written: this fake masks nothing, so a test sees what a step would hand over.
    scrub: (text) => text,
    setFailed: (message) => {
      io.failed = message
    },
  }
  return io
}

export const repoPath = (...parts: string[]) => resolve(REPO_ROOT, ...parts)

/** Unzips a pie.zip into a PIE directory (the fixtures are zips; the packing paths need a folder). */
export async function unzipPie(zipPath: string, dir: string): Promise<string> {
  const { mkdir, writeFile } = await import('node:fs/promises')
  const { openFileSource, readZipEntry } = await import('../../src/pie/read/zip.ts')
  const { readZipDirectory } = await import('../../src/pie/read/zip-directory.ts')
  await mkdir(dir, { recursive: true })
  const source = await openFileSource(zipPath)
  try {
    const { entries } = await readZipDirectory(source)
    for (const entry of entries) {
      if (entry.isDirectory) continue
      const chunks: Uint8Array[] = []
      for await (const chunk of readZipEntry(source, entry)) chunks.push(chunk)
      await writeFile(join(dir, entry.name), Buffer.concat(chunks))
    }
  } finally {
    await source.close()
  }
  return dir
}

/** The emulator's control API (docs/emulator.md). */
export async function control(
  baseUrl: string,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${baseUrl}/_emulator/${path}`, {
    method,
    headers: body === undefined ? { [CONTROL_HEADER]: '1' } : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} /_emulator/${path}: ${response.status} ${text}`)
  return text ? JSON.parse(text) : undefined
}
