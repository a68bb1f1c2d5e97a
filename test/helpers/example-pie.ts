/**
 * The PIEs the suite proves, all the project's own, so the whole suite runs on a plain clone:
 * the committed example (examples/fib/pie.zip, written by `npm run gen:pie`: the public
 * fibonacci program, whose Pedersen program hash is the published vector of pie-and-facts.md)
 * and PIEs generated on demand by src/pie/generate/generate.ts (any size, any seed). The PIEs written by
 * cairo-lang and cairo-vm (beside the repository) are read only by the interop suite (test/interop/).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll } from 'vitest'
import { generatePie } from '../../src/pie/generate/generate.ts'
import { packPie } from '../../src/pie/pack/pack.ts'
import { REPO_ROOT } from './cli.ts'

/** The committed example pie.zip, absolute. */
export const EXAMPLE_PIE = resolve(REPO_ROOT, 'examples/fib/pie.zip')

/** What the example proves, as literals (checked against the published vectors in test/unit/pie/hash/hash.test.ts). */
export const EXAMPLE = {
  /** Pedersen program hash of the public fibonacci_compiled.json: the published vector. */
  programHash: '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45',
  output: ['0xb', '0x59'],
  nSteps: 73,
  sharpFact: '0xddc56e937bce9e92a3d08db65481313259bcf9648b3f2b9400b2ca9dcc9221cd',
  integrityFact: '0x50253357a35bab517213951fba2439472345233dcf41f60004b1dfe29382708',
  sha256: '6e953ddb7639d53ca3fb031a170fb39b6594ca1d74447cb5c95e12f60175f1e0',
} as const

const generated = new Map<string, Promise<{ dir: string; zip: string }>>()
/** The folders generatedPie made for this test file, removed after it (nothing is left in /tmp). */
const generatedRoots: string[] = []
// Imported while a test file is collected: the hook belongs to that file.
afterAll(async () => {
  generated.clear()
  await Promise.all(generatedRoots.splice(0).map((folder) => rm(folder, { recursive: true, force: true })))
})

/**
 * A valid PIE made by the project's generator (directory and canonical zip), once per seed and
 * size per test file, and removed after it. Another seed gives another output, so other facts, for the same program.
 */
export function generatedPie(
  options: { seed?: number; memoryBytes?: number } = {},
): Promise<{ dir: string; zip: string }> {
  const seed = options.seed ?? 2
  const memoryBytes = options.memoryBytes ?? 4096
  const key = `${seed}:${memoryBytes}`
  let pie = generated.get(key)
  if (!pie) {
    pie = (async () => {
      const root = await mkdtemp(join(tmpdir(), `generated-pie-${seed}-`))
      generatedRoots.push(root)
      const dir = join(root, 'pie')
      await generatePie({ outDir: dir, memoryBytes, seed })
      const zip = join(root, 'pie.zip')
      await packPie(dir, zip)
      return { dir, zip }
    })()
    generated.set(key, pie)
  }
  return pie
}
