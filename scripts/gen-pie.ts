/**
 * Generates a large, valid synthetic PIE directory (see src/pie/generate/generate.ts), optionally packed.
 *
 *   node scripts/gen-pie.ts --memory 1GiB out/            # 1 GiB memory.bin in out/
 *   node scripts/gen-pie.ts --memory 4KiB --zip pie.zip out/   # a tiny example PIE, also zipped
 *   node scripts/gen-pie.ts --program-words 100k --memory 64MiB out/   # a 100,000-word program
 *   node scripts/gen-pie.ts --shape cairo1 --memory 64MiB out/   # shaped like cairo1-run's PIEs
 *
 * Options: --memory <size> (default 10MiB; at least 40 bytes a program word), --program-words
 * <n> (default 27, fibonacci's, or 400 for cairo1; accepts 1k, 10k, 1M), --shape cairo0|cairo1
 * (default cairo0: fibonacci with the output builtin; cairo1: five builtins, main 0, arrays in
 * extra segments), --seed <n> (default 1), --zip <file>.
 * Prints a JSON summary on stdout.
 */
import { parseArgs } from 'node:util'
import { generatePie, packPie, parseByteSize, PIE_SHAPES, type PieShape } from '../src/pie/index.ts'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    memory: { type: 'string', default: '10MiB' },
    'program-words': { type: 'string' },
    shape: { type: 'string', default: 'cairo0' },
    seed: { type: 'string', default: '1' },
    zip: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
})

if (values.help || positionals.length !== 1) {
  process.stderr.write(
    'usage: node scripts/gen-pie.ts --memory <size, e.g. 1GiB> [--program-words <n, e.g. 100k>] [--shape cairo0|cairo1] [--seed <n>] [--zip <file>] <out-dir>\n',
  )
  process.exit(values.help ? 0 : 2)
}

const seed = Number(values.seed)
if (!Number.isInteger(seed) || seed < 0) {
  process.stderr.write(`--seed must be a non-negative integer, got ${values.seed}\n`)
  process.exit(2)
}

const shape = values.shape as PieShape
if (!PIE_SHAPES.includes(shape)) {
  process.stderr.write(`--shape must be one of ${PIE_SHAPES.join(', ')}, got ${values.shape}\n`)
  process.exit(2)
}

const wordsText = values['program-words']
const wordsMatch = wordsText === undefined ? undefined : /^(\d+)([km]?)$/i.exec(wordsText)
if (wordsText !== undefined && !wordsMatch) {
  process.stderr.write(`--program-words must be a count such as 1000, 10k or 1M, got ${wordsText}\n`)
  process.exit(2)
}
const programWords = wordsMatch
  ? Number(wordsMatch[1]) * { '': 1, k: 1000, m: 1_000_000 }[wordsMatch[2]!.toLowerCase() as '' | 'k' | 'm']
  : undefined

try {
  const started = performance.now()
  const generated = await generatePie({
    outDir: positionals[0]!,
    memoryBytes: parseByteSize(values.memory),
    programWords,
    seed,
    shape,
  })
  const packed = values.zip ? await packPie(generated.dir, values.zip) : undefined
  const summary = {
    dir: generated.dir,
    memoryBytes: generated.memoryBytes,
    cells: generated.cells,
    shape,
    programWords: generated.programWords,
    nSteps: generated.nSteps,
    output: generated.output.map((word) => `0x${word.toString(16)}`),
    ...(packed ? { zip: packed.path, zipBytes: packed.sizeBytes, sha256: packed.sha256 } : {}),
    seconds: Number(((performance.now() - started) / 1000).toFixed(2)),
  }
  process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`)
} catch (error) {
  process.stderr.write(`gen-pie: ${(error as Error).message}\n`)
  process.exit(1)
}
