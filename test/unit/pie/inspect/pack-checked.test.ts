import { cp, readdir, readFile, truncate, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { AbortedError, InvalidPieError } from '../../../../src/core/errors.ts'
import { PieBudgetError } from '../../../../src/pie/validate/budgets.ts'
import { generatePie } from '../../../../src/pie/generate/generate.ts'
import { inspectPie, validatePie } from '../../../../src/pie/index.ts'
import { packChecked } from '../../../../src/pie/inspect/pack-checked.ts'
import { EXAMPLE_PIE } from '../../../helpers/example-pie.ts'
import { removeTempDirs, tempDir } from '../../../helpers/pie-fixtures.ts'

afterAll(removeTempDirs)

const EXAMPLE_DIR = join(dirname(EXAMPLE_PIE), 'pie')

async function withGoodZip(): Promise<{ folder: string; out: string; good: Buffer }> {
  const folder = await tempDir()
  const out = join(folder, 'pie.zip')
  const good = await readFile(EXAMPLE_PIE)
  await writeFile(out, good)
  return { folder, out, good }
}

describe('packChecked: one reading of the directory packs and validates it', () => {
  it('gives the zip packPie gives and the inspection of the directory', async () => {
    const dir = join(await tempDir(), 'gen')
    // Large enough for worker threads and a data descriptor: memory.bin reaches the validation from the packer.
    await generatePie({ outDir: dir, memoryBytes: 20 * 1024 * 1024, seed: 5 })
    const out = join(await tempDir(), 'pie.zip')
    const { packed, inspection } = await packChecked(dir, out)
    const alone = await inspectPie(dir, { sha256: false })
    expect({ ...inspection, summary: undefined }).toEqual({ ...alone, summary: undefined })
    expect(inspection.summary.memoryCells).toBe(alone.summary.memoryCells)
    expect((await inspectPie(out)).sha256).toBe(packed.sha256)
  })

  it('an invalid PIE: every problem validatePie lists, no file written, an existing zip kept', async () => {
    const dir = join(await tempDir(), 'broken')
    await cp(EXAMPLE_DIR, dir, { recursive: true })
    await truncate(join(dir, 'memory.bin'), 4079)
    await writeFile(join(dir, 'execution_resources.json'), '{"n_steps": 0, "builtin_instance_counter": {}}')
    const { folder, out, good } = await withGoodZip()
    const error = await packChecked(dir, out).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidPieError)
    expect((error as InvalidPieError).problems).toEqual((await validatePie(dir)).problems)
    expect((await readFile(out)).equals(good)).toBe(true)
    expect(await readdir(folder)).toEqual(['pie.zip'])
  })

  it('a hostile PIE (past a parsing budget) and a cancelled pack leave nothing either', async () => {
    const hostile = join(await tempDir(), 'hostile')
    await cp(EXAMPLE_DIR, hostile, { recursive: true })
    const metadata = await readFile(join(hostile, 'metadata.json'), 'utf8')
    await writeFile(join(hostile, 'metadata.json'), `${metadata}${' '.repeat(40 * 1024 * 1024)}`)
    const first = await withGoodZip()
    await expect(packChecked(hostile, first.out)).rejects.toBeInstanceOf(PieBudgetError)
    expect((await readFile(first.out)).equals(first.good)).toBe(true)
    expect(await readdir(first.folder)).toEqual(['pie.zip'])

    const second = await withGoodZip()
    await expect(packChecked(EXAMPLE_DIR, second.out, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      AbortedError,
    )
    expect(await readdir(second.folder)).toEqual(['pie.zip'])
  })
})
