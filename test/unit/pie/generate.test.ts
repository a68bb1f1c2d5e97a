import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { InvalidInputError } from '../../../src/core/errors.ts'
import { pedersen } from '@scure/starknet'
import { generatePie, inspectPie, packPie, parseByteSize, programHashChain, validatePie } from '../../../src/pie/index.ts'
import { execFileAsync, removeTempDirs, tempDir } from '../../helpers/pie-fixtures.ts'

afterAll(removeTempDirs)

describe('generatePie', () => {
  it('is deterministic for a seed and differs across seeds', async () => {
    const [a, b, c] = await Promise.all(
      [1, 1, 2].map(async (seed) => {
        const dir = join(await tempDir(), 'gen')
        await generatePie({ outDir: dir, memoryBytes: 256 * 1024, seed })
        return readFile(join(dir, 'memory.bin'))
      }),
    )
    expect(a!.equals(b!)).toBe(true)
    expect(a!.equals(c!)).toBe(false)
  })

  it('writes a memory.bin of the requested size, valid, and compressing like a real trace', async () => {
    const dir = join(await tempDir(), 'gen')
    const generated = await generatePie({ outDir: dir, memoryBytes: 8 * 1024 * 1024 + 17, seed: 1 })
    expect(generated.memoryBytes).toBe(Math.floor((8 * 1024 * 1024 + 17) / 40) * 40)
    expect((await readFile(join(dir, 'memory.bin'))).length).toBe(generated.memoryBytes)
    expect((await validatePie(dir)).problems).toEqual([])
    const packed = await packPie(dir, join(await tempDir(), 'pie.zip'))
    const ratio = packed.sizeBytes / generated.memoryBytes
    expect(ratio).toBeGreaterThan(0.18)
    expect(ratio).toBeLessThan(0.28)
  })

  it('makes a tiny example PIE of a few KiB', async () => {
    const dir = join(await tempDir(), 'tiny')
    const generated = await generatePie({ outDir: dir, memoryBytes: 4096, seed: 1 })
    expect(generated.memoryBytes).toBeLessThanOrEqual(4096)
    const packed = await packPie(dir, join(await tempDir(), 'pie.zip'))
    expect(packed.sizeBytes).toBeLessThan(4096)
    expect((await validatePie(packed.path)).valid).toBe(true)
  })

  it('makes programs of a given size (--program-words): valid, held in memory, hashed like @scure/starknet does', {
    timeout: 120_000,
  }, async () => {
    const dir = join(await tempDir(), 'gen')
    const generated = await generatePie({ outDir: dir, memoryBytes: 256 * 1024, programWords: 1500, seed: 3 })
    expect(generated.programWords).toBe(1500)
    expect((await validatePie(dir)).problems).toEqual([])
    const inspection = await inspectPie(dir, { sha256: false })
    const metadata = JSON.parse((await readFile(join(dir, 'metadata.json'), 'utf8')).replace(/(\d{16,})/g, '"$1"'))
    expect(metadata.program.data).toHaveLength(1500)
    // The reference: @scure/starknet's pedersen, one hash per word of [len, ...chain].
    const chain = programHashChain({ data: metadata.program.data.map(BigInt), builtins: ['output'], main: 6 })
    const values = [BigInt(chain.length), ...chain]
    let acc = values[values.length - 1]!
    for (let i = values.length - 2; i >= 0; i--) acc = BigInt(pedersen(values[i]!, acc))
    expect(BigInt(inspection.programHash)).toBe(acc)
  })

  it('refuses a program size out of range', async () => {
    const dir = join(await tempDir(), 'gen')
    await expect(generatePie({ outDir: dir, memoryBytes: 64 * 1024, programWords: 3 })).rejects.toThrow(/programWords/)
    await expect(generatePie({ outDir: dir, memoryBytes: 64 * 1024, programWords: 5000 })).rejects.toThrow(/too small/)
  })

  it('refuses a memory.bin too small for the program', async () => {
    await expect(generatePie({ outDir: await tempDir(), memoryBytes: 100 })).rejects.toBeInstanceOf(InvalidInputError)
  })

  it('has a CLI: node scripts/gen-pie.ts --memory 64KiB out/', async () => {
    const out = join(await tempDir(), 'cli')
    const { stdout } = await execFileAsync(process.execPath, [
      'scripts/gen-pie.ts',
      '--memory',
      '64KiB',
      '--seed',
      '3',
      '--zip',
      join(out, '..', 'cli.zip'),
      out,
    ])
    expect(JSON.parse(stdout)).toMatchObject({ dir: out, memoryBytes: 65520 })
    expect((await validatePie(join(out, '..', 'cli.zip'))).valid).toBe(true)
  })
})

describe('parseByteSize', () => {
  it.each([
    ['1GiB', 1024 ** 3],
    ['512MiB', 512 * 1024 ** 2],
    ['10MiB', 10 * 1024 ** 2],
    ['64KiB', 65536],
    ['1G', 1024 ** 3],
    ['1.5k', 1536],
    ['1000', 1000],
  ])('%s', (input, bytes) => {
    expect(parseByteSize(input)).toBe(bytes)
  })

  it('rejects nonsense', () => {
    expect(() => parseByteSize('lots')).toThrow(InvalidInputError)
  })
})
