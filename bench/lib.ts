/**
 * Shared helpers of the benchmark suite (bench/run.ts): processes measured from the outside
 * (wall time, peak RSS), servers in their own processes, cached inputs under .bench-tmp/,
 * medians, the machine description, and the shape of a figure's result.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { createReadStream, createWriteStream, existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const BENCH = join(ROOT, 'bench')
/** Cached inputs (git-ignored); shared with bench/pack.ts, which uses the same PIE folders. */
export const TMP = join(ROOT, '.bench-tmp')
/** Outputs of one run: removed at the end. */
export const RUN_DIR = join(TMP, 'run')
/** The Node the project brings (devDependency `node`), not the system's. */
export const NODE = process.execPath
export const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined
export const PIE_FILES = [
  'metadata.json',
  'memory.bin',
  'additional_data.json',
  'execution_resources.json',
  'version.json',
]

// ---------------------------------------------------------------------------------------------
// Results

export type Check = {
  /** What is checked: "throughput vs zip -r -1". */
  name: string
  /** The measured value, formatted: "2.41x". */
  value: string
  /** The target, formatted: ">= 2x". */
  target: string
  /** null: reported only, the issue sets no target. */
  pass: boolean | null
  /** Why a failure cannot hold on this machine, or what the number means. */
  note?: string
}

export type FigureResult = {
  id: number
  title: string
  /** Markdown: tables of medians, side by side with the peer. */
  body: string
  checks: Check[]
  notes: string[]
  seconds: number
}

export type FigureContext = {
  /** Fewer runs and smaller inputs: a smoke test of the suite, not a measurement. */
  quick: boolean
  log(message: string): void
}

// ---------------------------------------------------------------------------------------------
// Statistics and formatting

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

export const mib = (bytes: number) => bytes / 1024 ** 2
export const fmt = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : 'n/a')
export const fmtMs = (ms: number) =>
  Number.isFinite(ms)
    ? ms >= 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : ms >= 1000
        ? `${(ms / 1000).toFixed(2)} s`
        : `${ms.toFixed(0)} ms`
    : 'n/a'
export const fmtMiB = (kib: number) => (Number.isFinite(kib) ? `${(kib / 1024).toFixed(0)} MiB` : 'n/a')

export function table(header: string[], rows: (string | number)[][]): string {
  // A `|` inside a cell (`curl | jq`) would end it.
  const cell = (value: string | number) => String(value).replace(/(?<!\\)\|/g, '\\|')
  return [
    `| ${header.map(cell).join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`),
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------
// Processes

export type Measured = {
  ms: number
  /** Peak RSS of the measured process in KiB (GNU time's %M, or what the child reported). */
  rssKiB: number
  /** User + system CPU time in ms (GNU time's %U + %S; NaN without GNU time). */
  cpuMs: number
  stdout: string
  stderr: string
  code: number | null
}

export type MeasureOptions = {
  cwd?: string
  env?: NodeJS.ProcessEnv
  /** Pin the process to these CPUs with taskset (when available). */
  cpus?: string
  /** Accept these exit codes (default: 0 only). */
  okCodes?: number[]
  /** Skip the RSS wrapper: a start-up measurement wants nothing between it and the process. */
  bare?: boolean
}

const TASKSET = existsSync('/usr/bin/taskset') ? '/usr/bin/taskset' : undefined
let rssCounter = 0

/**
 * Runs a command to completion and measures it from the outside: wall time around the process
 * (start-up included), peak RSS from GNU time (`/usr/bin/time -f %M`). Without GNU time, a Node
 * child's own `process.resourceUsage().maxRSS` is used when it prints it (a JSON line with
 * `maxRssKiB`), and anything else goes through Python's getrusage of its child.
 */
export async function measure(command: string, args: string[], options: MeasureOptions = {}): Promise<Measured> {
  await mkdir(RUN_DIR, { recursive: true })
  const rssFile = join(RUN_DIR, `rss-${process.pid}-${rssCounter++}.txt`)
  let argv = [command, ...args]
  if (options.cpus && TASKSET) argv = [TASKSET, '-c', options.cpus, ...argv]
  let wrapper: 'time' | 'python' | 'none' = 'none'
  if (!options.bare) {
    if (GNU_TIME) {
      argv = [GNU_TIME, '-f', '%M %U %S', '-o', rssFile, ...argv]
      wrapper = 'time'
    } else if (command !== NODE && hasCommand('python3')) {
      argv = [
        'python3',
        '-c',
        'import resource, subprocess, sys\nr = subprocess.run(sys.argv[2:])\nopen(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\nsys.exit(r.returncode)',
        rssFile,
        ...argv,
      ]
      wrapper = 'python'
    }
  }
  const started = performance.now()
  const result = await new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ stdout, stderr, code }))
  })
  const ms = performance.now() - started
  const okCodes = options.okCodes ?? [0]
  if (!okCodes.includes(result.code ?? -1)) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.code}:\n${(result.stderr || result.stdout).slice(-2000)}`,
    )
  }
  let rssKiB = Number.NaN
  let cpuMs = Number.NaN
  if (wrapper !== 'none') {
    const text = await readFile(rssFile, 'utf8').catch(() => '')
    // GNU time writes "Command exited with non-zero status n" before its line.
    const [rss, user, system] = (text.trim().split('\n').pop() ?? '').split(' ').map(Number)
    rssKiB = Number(rss)
    if (wrapper === 'time') cpuMs = (Number(user) + Number(system)) * 1000
    await rm(rssFile, { force: true })
  }
  if (!Number.isFinite(rssKiB)) {
    const reported = lastJson(result.stdout)?.maxRssKiB
    if (typeof reported === 'number') rssKiB = reported
  }
  return { ms, rssKiB, cpuMs, ...result }
}

/** The last line of a child's stdout that parses as a JSON object, or undefined. */
export function lastJson(stdout: string): Record<string, unknown> | undefined {
  const lines = stdout.trim().split('\n').reverse()
  for (const line of lines) {
    if (!line.startsWith('{')) continue
    try {
      return JSON.parse(line) as Record<string, unknown>
    } catch {
      // not JSON
    }
  }
  return undefined
}

export function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

export function version(command: string, args: string[], line = 0): string {
  try {
    const text = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    return text.split('\n')[line]!.trim()
  } catch {
    return 'unavailable'
  }
}

/** A server in its own process (bench/servers.ts): its URL once it listens, and a stop. */
export type ServerProcess = {
  url: string
  pid: number
  child: ChildProcess
  /** Stops it; resolves with its own peak RSS (KiB) as it reports it. */
  stop(): Promise<number>
}

export async function startServer(
  kind: 'emulator' | 'trivial' | 'discard',
  args: string[] = [],
  options: { cpus?: string } = {},
): Promise<ServerProcess> {
  let argv = [NODE, join(BENCH, 'servers.ts'), kind, ...args]
  if (options.cpus && TASKSET) argv = [TASKSET, '-c', options.cpus, ...argv]
  const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = createInterface({ input: child.stdout! })
  const iterator = lines[Symbol.asyncIterator]()
  const first = await Promise.race([
    iterator.next(),
    new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`the ${kind} server exited with ${code} before listening`))),
    ),
  ])
  const announced = JSON.parse(String(first.value)) as { url: string; pid: number }
  let stopping: Promise<number> | undefined
  return {
    url: announced.url,
    pid: announced.pid,
    child,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode !== null) return Number.NaN
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        child.kill('SIGTERM')
        let rss = Number.NaN
        const next = await Promise.race([iterator.next(), exited.then(() => undefined)])
        if (next && !next.done) rss = Number((JSON.parse(String(next.value)) as { maxRssKiB?: number }).maxRssKiB)
        await exited
        return rss
      })()
      return stopping
    },
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs, cached under .bench-tmp/

export type CachedPie = { dir: string; zip: string; inputBytes: number; memoryBytes: number; zipBytes: number }

/**
 * A generated PIE (src/pie/generate/generate.ts, the same as `npm run gen:pie`), in the folder and with
 * the marker bench/pack.ts uses, so the two share one copy; and its pie.zip packed by packPie.
 */
export async function ensurePie(memory: string, ctx: FigureContext, seed = 1): Promise<CachedPie> {
  const { generatePie, packPie, parseByteSize } = await import('../src/pie/index.ts')
  const memoryBytes = parseByteSize(memory)
  const label = memory.replace(/[^0-9A-Za-z.]/g, '')
  const dir = join(TMP, `pie-${label}-seed${seed}`)
  const marker = `${dir}.json`
  const wanted = JSON.stringify({ memoryBytes, seed, generator: 1 })
  await mkdir(TMP, { recursive: true })
  const fresh =
    existsSync(marker) &&
    readFileSync(marker, 'utf8') === wanted &&
    PIE_FILES.every((name) => existsSync(join(dir, name)))
  if (!fresh) {
    ctx.log(`generating a PIE with a ${memory} memory.bin in ${dir} (cached for the next runs) ...`)
    await rm(dir, { recursive: true, force: true })
    await rm(marker, { force: true })
    const started = performance.now()
    await generatePie({ outDir: dir, memoryBytes, seed })
    await writeFile(marker, wanted)
    ctx.log(`  generated in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  const zip = `${dir}.zip`
  if (!existsSync(zip) || statSync(zip).mtimeMs < statSync(marker).mtimeMs) {
    ctx.log(`packing it into ${zip} with packPie ...`)
    await rm(zip, { force: true })
    await packPie(dir, zip)
  }
  let inputBytes = 0
  for (const name of PIE_FILES) inputBytes += (await stat(join(dir, name))).size
  return {
    dir,
    zip,
    inputBytes,
    memoryBytes: (await stat(join(dir, 'memory.bin'))).size,
    zipBytes: (await stat(zip)).size,
  }
}

/** A file of exactly `bytes` bytes cut from the start of `source` (cached). */
export async function ensureSlice(source: string, bytes: number, name: string): Promise<string> {
  const path = join(TMP, name)
  if (existsSync(path) && statSync(path).size === bytes && statSync(path).mtimeMs >= statSync(source).mtimeMs)
    return path
  await pipeline(createReadStream(source, { start: 0, end: bytes - 1 }), createWriteStream(path))
  return path
}

/** Reads a file once so the measured runs find it in the page cache. */
export async function warmCache(path: string): Promise<void> {
  for await (const _ of createReadStream(path, { highWaterMark: 4 * 1024 * 1024 })) {
    // read and drop
  }
}

// ---------------------------------------------------------------------------------------------
// The product as users run it: lib/, built by `npm run build` (tsc)

function newestMtime(dir: string): number {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path))
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(path).mtimeMs)
  }
  return newest
}

export type Build = { from: 'lib' | 'src'; note?: string }
let build: Build | undefined

/**
 * The CLI (bin/proving.js) and the library's entry (lib/index.js) run the compiled lib/, as
 * users get them: the client processes of figures 2, 5 and 6 do too (type stripping of src/
 * would add ~100 ms and ~30 MiB to each). lib/ is rebuilt first when src/ is newer. Should that
 * fail, they run src/ and the results say so.
 */
export function ensureBuilt(ctx: FigureContext): Build {
  if (build) return build
  const built = join(ROOT, 'lib', 'clients', 'proving.js')
  const stale = !existsSync(built) || statSync(built).mtimeMs < newestMtime(join(ROOT, 'src'))
  let note: string | undefined
  if (stale) {
    ctx.log('lib/ is older than src/: building it (tsc -p tsconfig.build.json) ...')
    try {
      execFileSync(NODE, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], {
        cwd: ROOT,
        stdio: 'pipe',
      })
    } catch (error) {
      // tsc still writes its output on type errors; what matters is that it runs.
      const first = String((error as { stdout?: Buffer }).stdout ?? error).split('\n')[0]
      note = `\`tsc -p tsconfig.build.json\` reported errors (${first}); lib/ is what it wrote.`
      ctx.log(`  ${note}`)
    }
  }
  build = existsSync(built)
    ? { from: 'lib', ...(note ? { note } : {}) }
    : {
        from: 'src',
        note: 'lib/ could not be built: the client processes ran src/ (type stripping adds ~100 ms and ~30 MiB to each).',
      }
  return build
}

/** The CLI's entry as users run it (bin/proving.js over lib/, or src/ when lib/ could not be built); the build's note, if any, goes to `notes`. */
export function cliScript(ctx: FigureContext, notes: string[]): string {
  const built = ensureBuilt(ctx)
  if (built.note) notes.push(built.note)
  return built.from === 'lib' ? join(ROOT, 'bin', 'proving.js') : join(ROOT, 'src', 'cli', 'run.ts')
}

/** The environment of a client process: which build of the product it imports. */
export function productEnv(ctx: FigureContext, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { ...process.env, BENCH_PRODUCT: ensureBuilt(ctx).from, ...extra }
}

// ---------------------------------------------------------------------------------------------
// The machine

/** The load average (1 / 5 / 15 min), formatted: "0.52 / 0.40 / 0.31". */
export const loadAverage = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' / ')

export function machine(): { lines: string[]; load: () => string; busy: () => boolean } {
  const osName = (() => {
    try {
      return /PRETTY_NAME="([^"]+)"/.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'unknown'
    } catch {
      return 'unknown'
    }
  })()
  const cpuModel = cpus()[0]?.model ?? 'unknown'
  const lines = [
    `CPU: ${cpuModel}, ${cpus().length} logical cores (availableParallelism ${availableParallelism()})`,
    `Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    `OS: ${osName}, Linux ${release()}`,
    `Node ${process.version} (${NODE.replace(ROOT, '')}, the devDependency); system node ${systemNode()}`,
    `${version('curl', ['--version'])}`,
    `${version('zip', ['-v'], 1)}`,
    `${version('jq', ['--version'])}; ${version('python3', ['--version'])}; ${version('bash', ['--version'])}`,
    `Peak RSS by ${GNU_TIME ? 'GNU time (`/usr/bin/time -f %M`)' : "the child's own `process.resourceUsage().maxRSS` or Python's getrusage"}; CPU pinning by ${TASKSET ? 'taskset' : 'nothing (taskset unavailable)'}`,
  ]
  return { lines, load: loadAverage, busy: () => loadavg()[0]! > cpus().length * 0.5 }
}

/** The first `node` on PATH outside node_modules (npm puts node_modules/.bin first). */
function systemNode(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (!dir || dir.includes('node_modules')) continue
    const candidate = join(dir, 'node')
    if (existsSync(candidate)) return version(candidate, ['--version'])
  }
  return 'none'
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** What bench/startup-probe.mjs recorded of one process: the module files it loaded (deduplicated paths) and source-map use. */
export type StartupProbe = {
  files: string[]
  sourceMapCalls: string[]
  sourceMapsEnabled: boolean | null
  prepareStackTraceReplaced: boolean
}

/**
 * Runs `node --import bench/startup-probe.mjs <args>` once, unmeasured, and reads its record.
 * The process may fail on purpose (figure 3's input error); only a missing record is an error.
 */
export async function probeStartup(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<StartupProbe> {
  const out = join(RUN_DIR, 'startup-probe.json')
  await rm(out, { force: true })
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(NODE, ['--import', join(BENCH, 'startup-probe.mjs'), ...args], {
      cwd: options.cwd,
      env: { ...(options.env ?? process.env), STARTUP_PROBE_OUT: out },
      stdio: 'ignore',
    })
    child.on('error', reject)
    child.on('close', resolve)
  })
  if (!existsSync(out))
    throw new Error(
      `the start-up probe (node ${args.join(' ')} in ${options.cwd}) wrote no record (exit ${code}); run it by hand to see why`,
    )
  const record = JSON.parse(readFileSync(out, 'utf8')) as Omit<StartupProbe, 'files'> & { loaded: string[] }
  const files = [
    ...new Set(record.loaded.map((url) => (url.startsWith('require:') ? url.slice(8) : fileURLToPath(url)))),
  ]
  return {
    files,
    sourceMapCalls: record.sourceMapCalls,
    sourceMapsEnabled: record.sourceMapsEnabled,
    prepareStackTraceReplaced: record.prepareStackTraceReplaced,
  }
}
