/**
 * Packing benchmark: packPie against Info-ZIP `zip -r -1` and Python's zipfile (DEFLATE,
 * compresslevel=1) on the same synthetic 1 GiB PIE, plus validatePie and inspectPie on the
 * packed zip. Each tool runs in its own process (3 runs, medians), wall time measured around
 * the process, peak RSS from GNU time (`/usr/bin/time -f %M`) or, without it, from Python's
 * getrusage of the child. Writes bench/results-pack.md.
 *
 *   npm run bench:pack                 # 1 GiB memory.bin, 3 runs
 *   node bench/pack.ts --memory 256MiB --runs 1
 *
 * The PIE is generated once into .bench-tmp/ (git-ignored) and reused.
 */
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SELF = fileURLToPath(import.meta.url)
const FILES = ['metadata.json', 'memory.bin', 'additional_data.json', 'execution_resources.json', 'version.json']

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    child: { type: 'string' },
    memory: { type: 'string', default: '1GiB' },
    runs: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: join(ROOT, 'bench', 'results-pack.md') },
  },
})

// Child mode: one measured operation, its result as JSON on stdout.
if (values.child) {
  const [input, output] = positionals as [string, string | undefined]
  let result: unknown
  // Each child loads only the module it measures, as a CLI doing that one thing would.
  if (values.child === 'pack') result = await (await import('../src/pie/pack/pack.ts')).packPie(input, output!)
  else if (values.child === 'validate') {
    const validation = await (await import('../src/pie/validate/validate.ts')).validatePie(input)
    result = { valid: validation.valid, problems: validation.problems.slice(0, 3) }
  } else if (values.child === 'inspect') {
    const inspection = await (await import('../src/pie/inspect/inspect.ts')).inspectPie(input)
    result = { programHash: inspection.programHash, nSteps: inspection.nSteps, sha256: inspection.sha256 }
  } else throw new Error(`unknown child mode ${values.child}`)
  process.stdout.write(`${JSON.stringify(result)}\n`)
  process.exit(0)
}

const { generatePie, parseByteSize } = await import('../src/pie/generate/generate.ts')
const runs = Number(values.runs)
const memoryBytes = parseByteSize(values.memory)
const seed = Number(values.seed)
const TMP = join(ROOT, '.bench-tmp')
const label = values.memory.replace(/[^0-9A-Za-z.]/g, '')
const PIE_DIR = join(TMP, `pie-${label}-seed${seed}`)
const MARKER = `${PIE_DIR}.json`
const OUT = join(TMP, 'out')
const NODE = process.execPath
const GNU_TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined

type Measure = { seconds: number; rssKiB: number; stdout: string }

async function measure(command: string, args: string[], cwd = ROOT): Promise<Measure> {
  const rssFile = join(TMP, 'rss.txt')
  await rm(rssFile, { force: true })
  const [bin, argv] = GNU_TIME
    ? [GNU_TIME, ['-f', '%M', '-o', rssFile, command, ...args]]
    : [
        'python3',
        [
          '-c',
          'import resource, subprocess, sys\nr = subprocess.run(sys.argv[2:])\nopen(sys.argv[1], "w").write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\nsys.exit(r.returncode)',
          rssFile,
          command,
          ...args,
        ],
      ]
  const started = performance.now()
  const stdout = await new Promise<string>((resolvePromise, reject) => {
    const child = spawn(bin, argv, { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) =>
      code === 0 ? resolvePromise(out) : reject(new Error(`${command} ${args.join(' ')} exited with ${code}`)),
    )
  })
  const seconds = (performance.now() - started) / 1000
  const rssKiB = Number((await readFile(rssFile, 'utf8')).trim().split('\n').pop())
  return { seconds, rssKiB, stdout }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const mib = (bytes: number) => bytes / 1024 ** 2

async function ensurePie(): Promise<number> {
  const wanted = JSON.stringify({ memoryBytes, seed, generator: 1 })
  if (existsSync(MARKER) && (await readFile(MARKER, 'utf8')) === wanted && existsSync(join(PIE_DIR, 'memory.bin'))) {
    process.stderr.write(`using the cached PIE in ${PIE_DIR}\n`)
  } else {
    process.stderr.write(`generating a PIE with a ${values.memory} memory.bin in ${PIE_DIR} ...\n`)
    await rm(PIE_DIR, { recursive: true, force: true })
    const started = performance.now()
    await generatePie({ outDir: PIE_DIR, memoryBytes, seed })
    process.stderr.write(`generated in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    await writeFile(MARKER, wanted)
  }
  let total = 0
  for (const name of FILES) total += (await stat(join(PIE_DIR, name))).size
  return total
}

type Row = { name: string; seconds: number; mibPerSecond: number; rssMiB: number; sizeBytes?: number; note?: string }

async function series(
  name: string,
  run: (k: number) => Promise<Measure & { sizeBytes?: number }>,
  inputBytes: number,
  note?: string,
): Promise<Row> {
  const results: (Measure & { sizeBytes?: number })[] = []
  for (let k = 0; k < runs; k++) {
    const result = await run(k)
    results.push(result)
    process.stderr.write(
      `  ${name} run ${k + 1}: ${result.seconds.toFixed(2)} s, ${(result.rssKiB / 1024).toFixed(0)} MiB RSS\n`,
    )
  }
  const seconds = median(results.map((r) => r.seconds))
  const sizes = results.map((r) => r.sizeBytes).filter((s): s is number => s !== undefined)
  return {
    name,
    seconds,
    mibPerSecond: mib(inputBytes) / seconds,
    rssMiB: median(results.map((r) => r.rssKiB)) / 1024,
    ...(sizes.length ? { sizeBytes: median(sizes) } : {}),
    ...(note ? { note } : {}),
  }
}

function version(command: string, args: string[], line = 0): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
      .split('\n')
      [line]!.trim()
  } catch {
    return 'unavailable'
  }
}

await mkdir(OUT, { recursive: true })
const inputBytes = await ensurePie()
const memoryFileBytes = (await stat(join(PIE_DIR, 'memory.bin'))).size
const loadBefore = loadavg()
const benchStarted = performance.now()

const ours = join(OUT, 'ours.zip')
const infoZip = join(OUT, 'infozip.zip')
const python = join(OUT, 'python.zip')
const rows: Row[] = []

rows.push(
  await series(
    'packPie (2 workers, level 1)',
    async () => {
      await rm(ours, { force: true })
      const m = await measure(NODE, [SELF, '--child', 'pack', PIE_DIR, ours])
      return { ...m, sizeBytes: (await stat(ours)).size }
    },
    inputBytes,
  ),
)
rows.push(
  await series(
    'Info-ZIP `zip -r -1`',
    async () => {
      await rm(infoZip, { force: true })
      const m = await measure('zip', ['-q', '-r', '-1', infoZip, ...FILES], PIE_DIR)
      return { ...m, sizeBytes: (await stat(infoZip)).size }
    },
    inputBytes,
  ),
)
const pythonScript = [
  'import sys, zipfile',
  'out, files = sys.argv[1], sys.argv[2:]',
  'with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as z:',
  '    for name in files: z.write(name)',
].join('\n')
rows.push(
  await series(
    'Python zipfile (ZIP_DEFLATED, level 1)',
    async () => {
      await rm(python, { force: true })
      const m = await measure('python3', ['-c', pythonScript, python, ...FILES], PIE_DIR)
      return { ...m, sizeBytes: (await stat(python)).size }
    },
    inputBytes,
  ),
)
const validateRow = await series(
  'validatePie (pie.zip)',
  async () => {
    const m = await measure(NODE, [SELF, '--child', 'validate', ours])
    if (!JSON.parse(m.stdout).valid) throw new Error(`the packed PIE is invalid: ${m.stdout}`)
    return m
  },
  memoryFileBytes,
  'throughput over the uncompressed memory.bin',
)
const inspectRow = await series(
  'inspectPie (pie.zip, with sha256)',
  (k) =>
    measure(NODE, [SELF, '--child', 'inspect', ours]).then(
      (m) => (k === 0 && process.stderr.write(`  ${m.stdout}`), m),
    ),
  memoryFileBytes,
  'throughput over the uncompressed memory.bin',
)
rows.push(validateRow, inspectRow)
const loadAfter = loadavg()
const elapsed = (performance.now() - benchStarted) / 1000

const [packRow, zipRow, pyRow] = rows as [Row, Row, Row]
const ratio = (a: number, b: number) => (a / b).toFixed(2)
const cpuModel = cpus()[0]?.model ?? 'unknown'
const fmtSize = (bytes: number | undefined) =>
  bytes === undefined ? '' : `${mib(bytes).toFixed(1)} MiB (${((bytes / inputBytes) * 100).toFixed(1)}%)`

const markdown = `# Packing benchmark

Generated by \`npm run bench:pack\` (bench/pack.ts) on ${new Date().toISOString().slice(0, 10)}.

## Machine
- CPU: ${cpuModel}, ${cpus().length} logical cores (availableParallelism ${availableParallelism()})
- Memory: ${(totalmem() / 1024 ** 3).toFixed(1)} GiB
- Node ${process.version}; ${version('zip', ['-v'], 1)}; ${version('python3', ['--version'])}
- Load average (1/5/15 min) before: ${loadBefore.map((x) => x.toFixed(2)).join(' / ')}; after: ${loadAfter.map((x) => x.toFixed(2)).join(' / ')}
  (the machine is shared; a load above the core count slows every row alike)

## Input
A synthetic valid PIE from \`generatePie\` (seed ${seed}): memory.bin ${mib(memoryFileBytes).toFixed(0)} MiB,
${mib(inputBytes).toFixed(1)} MiB of PIE files in total, files in the page cache. Each tool runs
in its own process; medians of ${runs} run${runs === 1 ? '' : 's'}; wall time includes process start-up;
peak RSS by ${GNU_TIME ? 'GNU time (%M)' : "Python's getrusage of the child"}.

| operation | wall time | throughput | peak RSS | output size |
|---|---|---|---|---|
${rows.map((r) => `| ${r.name} | ${r.seconds.toFixed(2)} s | ${r.mibPerSecond.toFixed(0)} MiB/s${r.note ? ` (${r.note})` : ''} | ${r.rssMiB.toFixed(0)} MiB | ${fmtSize(r.sizeBytes)} |`).join('\n')}

## Ratios
- packPie / Info-ZIP throughput: **${ratio(packRow.mibPerSecond, zipRow.mibPerSecond)}x** (target >= 2x)
- packPie / Python zipfile throughput: **${ratio(packRow.mibPerSecond, pyRow.mibPerSecond)}x**
- packPie / Info-ZIP output size: **${ratio(packRow.sizeBytes!, zipRow.sizeBytes!)}** (target within 5%)
- packPie peak RSS: **${packRow.rssMiB.toFixed(0)} MiB** (target < 256 MiB)
- validatePie peak RSS: ${validateRow.rssMiB.toFixed(0)} MiB; inspectPie: ${inspectRow.rssMiB.toFixed(0)} MiB (target < 300 MiB)

Benchmark wall time: ${elapsed.toFixed(0)} s.
`
await writeFile(resolve(values.out), markdown)
process.stdout.write(markdown)
await rm(OUT, { recursive: true, force: true })
await rm(join(TMP, 'rss.txt'), { force: true })
