/**
 * Figure 3: start-up of the root action. The bundle named by action.yml's `runs.main`, run the
 * way the runner runs it (`node <bundle>`, GITHUB_OUTPUT/GITHUB_STATE/GITHUB_STEP_SUMMARY files,
 * a workspace) with an input error (no `pie`, no key, no address) so it fails fast, next to
 * `node -e 0`, both with the project's Node, runs alternating, nothing between the bench and
 * the process. Then one unmeasured run with bench/startup-probe.mjs preloaded: which module
 * files that path loads, that none of them holds viem, archiver or @actions/artifact, and that
 * nothing registers source maps. And the size of every bundle of every action.yml in the repo.
 */
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { dirname, join, relative } from 'node:path'
import {
  BENCH,
  type FigureContext,
  type FigureResult,
  fmt,
  median,
  NODE,
  probeStartup,
  ROOT,
  RUN_DIR,
  table,
} from './lib.ts'

/**
 * Code that only the heavy packages carry (not their names, which comments and lazy import sites
 * mention), to tell whether a loaded file holds them: viem's error messages link to viem.sh;
 * archiver's queue error and its zip-stream/archiver-utils; @actions/artifact's twirp service;
 * undici's error symbol (either copy: @actions/http-client's undici 6, or the client's undici 7;
 * @actions/core reaches the former only through getIDToken, loaded on first use by
 * patches/@actions+core+*.patch).
 */
const HEAVY_MARKERS: Record<string, RegExp> = {
  viem: /viem\.sh/,
  archiver: /QUEUECLOSED|archiver-utils|ZipStream/,
  '@actions/artifact': /github\.actions\.results\.api\.v1/,
  undici: /undici\.error\.UND_ERR/,
}

/** The files an ES module entry imports statically, itself included (what loads before it runs). */
function staticClosure(entry: string): string[] {
  const seen = new Set<string>()
  const visit = (file: string) => {
    if (seen.has(file) || !existsSync(file)) return
    seen.add(file)
    const text = readFileSync(file, 'utf8')
    for (const match of text.matchAll(
      /(?:^|[;\s}])(?:import|export)\s*(?:[\w*{}\s,$]+?\s*from\s*)?["'](\.{1,2}\/[^"']+)["']/g,
    )) {
      visit(join(dirname(file), match[1]!))
    }
  }
  visit(entry)
  return [...seen]
}

/** `runs.main` / `runs.pre` / `runs.post` of an action.yml (the simple YAML actions use). */
export function actionRuns(file: string): Record<string, string> {
  const text = readFileSync(file, 'utf8')
  const runs = /^runs:\s*\n((?:[ \t]+.*\n?)*)/m.exec(text)?.[1] ?? ''
  const out: Record<string, string> = {}
  for (const key of ['pre', 'main', 'post']) {
    const value = new RegExp(`^[ \\t]+${key}:[ \\t]*['"]?([^'"\\n#]+?)['"]?[ \\t]*(?:#.*)?$`, 'm').exec(runs)?.[1]
    if (value) out[key] = value.trim()
  }
  return out
}

function jsFiles(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? jsFiles(join(dir, entry.name)) : entry.name.endsWith('.js') ? [join(dir, entry.name)] : [],
  )
}

function dirSize(dir: string): { bytes: number; files: number } {
  let bytes = 0
  let files = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      const sub = dirSize(path)
      bytes += sub.bytes
      files += sub.files
    } else if (entry.isFile()) {
      bytes += statSync(path).size
      files++
    }
  }
  return { bytes, files }
}

const kib = (bytes: number) => (bytes < 10 * 1024 ? `${bytes} B` : `${fmt(bytes / 1024, 0)} KiB`)

function runOnce(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ ms: number; code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(NODE, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.resume()
    child.on('error', reject)
    child.on('close', (code) => resolve({ ms: performance.now() - started, code, stdout }))
  })
}

export async function figureStartup(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const runs = ctx.quick ? 5 : 21
  const rootRuns = actionRuns(join(ROOT, 'action.yml'))
  if (!rootRuns.main) throw new Error('action.yml has no runs.main')
  const bundle = join(ROOT, rootRuns.main)
  if (!existsSync(bundle))
    throw new Error(`action.yml's runs.main is ${rootRuns.main}, which does not exist: run \`npm run bundle\``)

  // What the runner gives a step: its command files and a workspace; no inputs at all.
  const workspace = join(RUN_DIR, 'startup-workspace')
  await rm(workspace, { recursive: true, force: true })
  await mkdir(workspace, { recursive: true })
  const files = {
    GITHUB_OUTPUT: 'output',
    GITHUB_STATE: 'state',
    GITHUB_STEP_SUMMARY: 'summary',
    GITHUB_ENV: 'env',
    GITHUB_PATH: 'path',
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    GITHUB_ACTIONS: 'true',
    GITHUB_WORKSPACE: workspace,
    RUNNER_TEMP: workspace,
  }
  for (const [name, file] of Object.entries(files)) {
    env[name] = join(workspace, file)
    await writeFile(env[name]!, '')
  }

  // Warm-up: the files in the page cache, as on any run after the first.
  await runOnce(['-e', '0'], env, workspace)
  const first = await runOnce([bundle], env, workspace)
  if (first.code === 0) throw new Error(`${rootRuns.main} succeeded without inputs; expected an input error`)
  const errorLine =
    readFileSync(env.GITHUB_OUTPUT!, 'utf8').includes('error-reason') || first.stdout.includes('::error::')

  const bare: number[] = []
  const action: number[] = []
  for (let k = 0; k < runs; k++) {
    bare.push((await runOnce(['-e', '0'], env, workspace)).ms)
    const run = await runOnce([bundle], env, workspace)
    if (run.code === 0) throw new Error('the bundle succeeded without inputs')
    action.push(run.ms)
  }
  const bareMs = median(bare)
  const actionMs = median(action)
  const above = actionMs - bareMs
  ctx.log(
    `  node -e 0 ${fmt(bareMs, 0)} ms; ${rootRuns.main} with an input error ${fmt(actionMs, 0)} ms (+${fmt(above, 0)} ms)`,
  )

  // The probe run: what the input-error path loads.
  const probe = await probeStartup([bundle], { cwd: workspace, env })
  const loadedFiles = probe.files.filter((path) => !path.startsWith(BENCH))
  const heavyLoaded: string[] = []
  let loadedBytes = 0
  for (const path of loadedFiles) {
    const text = readFileSync(path, 'utf8')
    loadedBytes += Buffer.byteLength(text)
    for (const [name, marker] of Object.entries(HEAVY_MARKERS))
      if (marker.test(text)) heavyLoaded.push(`${name} (in ${relative(ROOT, path)})`)
  }
  // Where the heavy packages are in dist/ at all (they must be somewhere, loaded lazily).
  const heavyFiles = new Map<string, string[]>()
  for (const file of jsFiles(join(ROOT, 'dist'))) {
    const text = readFileSync(file, 'utf8')
    for (const [name, marker] of Object.entries(HEAVY_MARKERS))
      if (marker.test(text)) heavyFiles.set(name, [...(heavyFiles.get(name) ?? []), relative(ROOT, file)])
  }
  const heavyChunks = [...heavyFiles].map(([name, files]) => `${name} in ${files.join(', ')}`)
  const sourceMaps =
    probe.sourceMapCalls.length > 0 || probe.sourceMapsEnabled === true || probe.prepareStackTraceReplaced

  // Every bundle of every action in the repository.
  const actionFiles = [
    join(ROOT, 'action.yml'),
    ...readdirSync(ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(ROOT, entry.name, 'action.yml')))
      .map((entry) => join(ROOT, entry.name, 'action.yml')),
  ]
  const bundleRows: string[][] = []
  for (const file of actionFiles) {
    const dir = dirname(file)
    for (const [key, target] of Object.entries(actionRuns(file))) {
      const path = join(dir, target)
      if (!existsSync(path)) {
        bundleRows.push([relative(ROOT, file), key, relative(ROOT, path), 'missing', ''])
        continue
      }
      const closure = staticClosure(path)
      const closureBytes = closure.reduce((sum, f) => sum + statSync(f).size, 0)
      const shared = closure.filter((f) => f !== path).map((f) => relative(ROOT, f))
      bundleRows.push([
        relative(ROOT, file),
        key,
        relative(ROOT, path),
        kib(statSync(path).size),
        `${kib(closureBytes)}${shared.length ? ` (with ${shared.join(', ')})` : ''}`,
      ])
    }
  }
  const dist = existsSync(join(ROOT, 'dist')) ? dirSize(join(ROOT, 'dist')) : { bytes: 0, files: 0 }

  const body = [
    `Both with the project's Node (${process.version}), spawned directly, medians of ${runs} runs each, alternating, after a warm-up. The bundle runs as the runner runs it (command files, a workspace) with no inputs: ${errorLine ? 'it fails naming the missing inputs' : 'it fails'} (exit ${first.code}).`,
    '',
    table(
      ['command', 'median', 'min', 'max'],
      [
        ['`node -e 0`', `${fmt(bareMs, 0)} ms`, `${fmt(Math.min(...bare), 0)} ms`, `${fmt(Math.max(...bare), 0)} ms`],
        [
          `\`node ${rootRuns.main}\` (input error)`,
          `${fmt(actionMs, 0)} ms`,
          `${fmt(Math.min(...action), 0)} ms`,
          `${fmt(Math.max(...action), 0)} ms`,
        ],
      ],
    ),
    '',
    `Loaded on that path: ${loadedFiles.map((path) => `\`${relative(ROOT, path)}\``).join(', ')} (${kib(loadedBytes)}). Where the heavy packages are, loaded only by the paths that use them: ${heavyChunks.length ? heavyChunks.join('; ') : 'none found'}.`,
    '',
    "Bundles: each action's entry file, and with what it imports statically (loaded before it runs; chunk files load on demand):",
    '',
    table(['action', 'runs', 'entry', 'entry size', 'with its static imports'], bundleRows),
    '',
    `dist/ in total: ${kib(dist.bytes)} in ${dist.files} files.`,
  ].join('\n')

  return {
    id: 3,
    title: "Start-up: the root action's bundle (input error) vs `node -e 0`",
    body,
    checks: [
      { name: 'time above `node -e 0`', value: `+${fmt(above, 0)} ms`, target: '<= 150 ms', pass: above <= 150 },
      {
        name: 'viem, archiver, @actions/artifact, undici not loaded on that path',
        value: heavyLoaded.length ? `loaded: ${heavyLoaded.join(', ')}` : 'none loaded',
        target: 'none',
        pass: heavyLoaded.length === 0,
      },
      {
        name: 'no source-map registration at run time',
        value: sourceMaps
          ? `registered (${[...probe.sourceMapCalls, probe.prepareStackTraceReplaced ? 'Error.prepareStackTrace replaced' : ''].filter(Boolean).join(', ')})`
          : 'none',
        target: 'none',
        pass: !sourceMaps,
      },
    ],
    notes: [],
    seconds: (performance.now() - started) / 1000,
  }
}
