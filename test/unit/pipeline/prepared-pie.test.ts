import { cp, readdir, readFile, truncate, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { InvalidPieError } from '../../../src/core/errors.ts'
import { packPie } from '../../../src/pie/index.ts'
import { checkFacts, computeFactsAhead, preparePie } from '../../../src/pipeline/prepared-pie.ts'
import { EXAMPLE_PIE, generatedPie } from '../../helpers/example-pie.ts'
import { removeTempDirs, tempDir } from '../../helpers/pie-fixtures.ts'

afterAll(removeTempDirs)

const EXAMPLE_DIR = join(dirname(EXAMPLE_PIE), 'pie')

async function brokenCopy(): Promise<string> {
  const dir = join(await tempDir(), 'broken')
  await cp(EXAMPLE_DIR, dir, { recursive: true })
  await truncate(join(dir, 'memory.bin'), 4079)
  return dir
}

describe('packPie beforeRename', () => {
  it('keeps an existing zip and leaves no temporary file when the hook refuses', async () => {
    const folder = await tempDir()
    const out = join(folder, 'pie.zip')
    await writeFile(out, 'the good zip')
    await expect(
      packPie(EXAMPLE_DIR, out, { beforeRename: async () => Promise.reject(new Error('invalid')) }),
    ).rejects.toThrow('invalid')
    expect(await readFile(out, 'utf8')).toBe('the good zip')
    expect(await readdir(folder)).toEqual(['pie.zip'])
  })
})

describe('preparePie', () => {
  it('validates a directory while packing it: an invalid one leaves no pie.zip in packDir', async () => {
    const packDir = await tempDir()
    const error = await preparePie(await brokenCopy(), { inputName: '<pie>', packDir }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidPieError)
    expect((error as InvalidPieError).shortMessage).toMatch(
      /^<pie>: .*broken is not a valid Cairo PIE \(\d+ problems?\); nothing was uploaded\.$/,
    )
    expect(await readdir(packDir)).toEqual([])
  })

  it('packs a valid directory, with its inspection, and checks facts computed ahead', async () => {
    const generated = await generatedPie({ seed: 9, memoryBytes: 64 * 1024 })
    const packDir = await tempDir()
    const prepared = await preparePie(generated.dir, { inputName: '<pie>', packDir })
    expect(prepared.packed).toBe(true)
    expect(await readdir(packDir)).toEqual(['pie.zip'])
    expect(prepared.inspection?.output).toHaveLength(2)
    computeFactsAhead(prepared)
    const record = {
      programHash: prepared.inspection!.programHash,
      sharpFactHash: prepared.inspection!.sharpFactHash,
      integrityFactHash: prepared.inspection!.integrityFactHash,
    }
    const check = await checkFacts(record, prepared)
    expect(check).toMatchObject({ ok: true, programHashVariant: 'pedersen' })
    expect((await checkFacts({ ...record, programHash: '0x1' }, prepared)).ok).toBe(false)
  })
})
