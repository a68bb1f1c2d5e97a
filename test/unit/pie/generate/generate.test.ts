import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { InvalidInputError } from '../../../../src/core/errors.ts'
import { pedersen } from '@scure/starknet'
import { encodePacked, keccak256 } from 'viem'
import {
  CAIRO1_BUILTINS,
  generatePie,
  inspectPie,
  packPie,
  parseByteSize,
  programHashChain,
  validatePie,
} from '../../../../src/pie/index.ts'
import { decodeCells, execFileAsync, removeTempDirs, tempDir } from '../../../helpers/pie-fixtures.ts'

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

/** metadata.json with its words read exactly (JSON.parse rounds integers above 2^53). */
async function readMetadata(dir: string) {
  return JSON.parse((await readFile(join(dir, 'metadata.json'), 'utf8')).replace(/(\d{16,})/g, '"$1"'))
}

/** @scure/starknet's pedersen, one hash per word of [len, ...chain]: the reference program hash. */
function referenceProgramHash(program: { data: string[]; builtins: string[]; main: number }): bigint {
  const chain = programHashChain({ data: program.data.map(BigInt), builtins: program.builtins, main: program.main })
  const values = [BigInt(chain.length), ...chain]
  let acc = values[values.length - 1]!
  for (let i = values.length - 2; i >= 0; i--) acc = BigInt(pedersen(values[i]!, acc))
  return acc
}

describe('generatePie, shape cairo1 (what cairo1-run writes for a Cairo 1 program)', () => {
  it("has cairo1-run's shape: its builtins in canonical order, main 0, instance counters, arrays in extra segments", async () => {
    const dir = join(await tempDir(), 'c1')
    const generated = await generatePie({ outDir: dir, memoryBytes: 512 * 1024, seed: 2, shape: 'cairo1' })
    const metadata = await readMetadata(dir)
    expect(metadata.program.builtins).toEqual(['output', 'pedersen', 'range_check', 'bitwise', 'poseidon'])
    expect(metadata.program.builtins).toEqual([...CAIRO1_BUILTINS])
    expect(metadata.program.main).toBe(0)
    expect(
      Object.entries(metadata.builtin_segments).map(([name, segment]) => [name, (segment as { index: number }).index]),
    ).toEqual(CAIRO1_BUILTINS.map((name, k) => [name, 2 + k]))
    expect([metadata.ret_fp_segment, metadata.ret_pc_segment]).toEqual([
      { index: 7, size: 0 },
      { index: 8, size: 0 },
    ])
    expect(metadata.extra_segments.map((segment: { index: number }) => segment.index)).toEqual([9, 10, 11, 12, 13, 14])
    const resources = JSON.parse(await readFile(join(dir, 'execution_resources.json'), 'utf8'))
    const perInstance = { output: 1, pedersen: 3, range_check: 1, bitwise: 5, poseidon: 6 }
    for (const name of CAIRO1_BUILTINS) {
      expect(resources.builtin_instance_counter[`${name}_builtin`] * perInstance[name]).toBe(
        metadata.builtin_segments[name].size,
      )
    }
    // The output: Ok (0), then the returned array's length and words.
    expect(generated.output.slice(0, 2)).toEqual([0n, BigInt(generated.output.length - 2)])

    // Pointers past the cells written in an array: what real PIEs hold, and what validation must accept.
    const sizes = new Map<number, number>(
      metadata.extra_segments.map((s: { index: number; size: number }) => [s.index, s.size]),
    )
    const cells = decodeCells(await readFile(join(dir, 'memory.bin')))
    const past = cells.filter(
      (cell) => typeof cell.value !== 'bigint' && cell.value.offset > (sizes.get(cell.value.segment) ?? Infinity),
    )
    expect(past.length).toBeGreaterThan(0)
    expect(cells).toHaveLength(generated.cells)
  })

  it('is valid, as a directory and packed, at several sizes', async () => {
    for (const memoryBytes of [64 * 1024, 3 * 1024 * 1024, 9 * 1024 * 1024]) {
      const dir = join(await tempDir(), 'c1')
      const generated = await generatePie({ outDir: dir, memoryBytes, seed: 4, shape: 'cairo1' })
      const result = await validatePie(dir)
      expect(result.problems).toEqual([])
      expect(result.summary).toMatchObject({
        memoryCells: generated.cells,
        builtins: [...CAIRO1_BUILTINS],
        nSteps: generated.nSteps,
      })
      const packed = await packPie(dir, join(await tempDir(), 'pie.zip'))
      expect((await validatePie(packed.path)).problems).toEqual([])
    }
  })

  it('gives stable facts: the same bytes for a seed, its program hash and SHARP fact as independent code computes them', {
    timeout: 120_000,
  }, async () => {
    const [a, b] = [join(await tempDir(), 'a'), join(await tempDir(), 'b')]
    await generatePie({ outDir: a, memoryBytes: 256 * 1024, programWords: 120, seed: 9, shape: 'cairo1' })
    await generatePie({ outDir: b, memoryBytes: 256 * 1024, programWords: 120, seed: 9, shape: 'cairo1' })
    for (const name of [
      'metadata.json',
      'memory.bin',
      'additional_data.json',
      'execution_resources.json',
      'version.json',
    ]) {
      expect((await readFile(join(a, name))).equals(await readFile(join(b, name))), name).toBe(true)
    }
    const [first, second] = [await inspectPie(a, { sha256: false }), await inspectPie(b, { sha256: false })]
    expect(second.sharpFactHash).toBe(first.sharpFactHash)
    expect(second.integrityFactHash).toBe(first.integrityFactHash)

    const metadata = await readMetadata(a)
    expect(BigInt(first.programHash)).toBe(referenceProgramHash(metadata.program))
    // No output pages: keccak(programHash, keccak(output)), encoded by viem.
    const output = first.output.map(BigInt)
    const outputHash = keccak256(
      encodePacked(
        output.map(() => 'uint256'),
        output,
      ),
    )
    const fact = keccak256(encodePacked(['uint256', 'bytes32'], [BigInt(first.programHash), outputHash]))
    expect(BigInt(first.sharpFactHash)).toBe(BigInt(fact))

    const other = join(await tempDir(), 'c')
    await generatePie({ outDir: other, memoryBytes: 256 * 1024, programWords: 120, seed: 10, shape: 'cairo1' })
    expect((await inspectPie(other, { sha256: false })).sharpFactHash).not.toBe(first.sharpFactHash)
  })

  it('refuses a program or a memory.bin too small for the shape', async () => {
    const dir = join(await tempDir(), 'c1')
    await expect(
      generatePie({ outDir: dir, memoryBytes: 64 * 1024, programWords: 3, shape: 'cairo1' }),
    ).rejects.toThrow(/programWords/)
    await expect(generatePie({ outDir: dir, memoryBytes: 4096, shape: 'cairo1' })).rejects.toThrow(
      /too small for a Cairo 1 shaped PIE/,
    )
  })

  it('has a CLI: node scripts/gen-pie.ts --shape cairo1', async () => {
    const out = join(await tempDir(), 'cli')
    const { stdout } = await execFileAsync(process.execPath, [
      'scripts/gen-pie.ts',
      '--shape',
      'cairo1',
      '--memory',
      '256KiB',
      out,
    ])
    expect(JSON.parse(stdout)).toMatchObject({ dir: out, shape: 'cairo1', programWords: 400 })
    expect((await validatePie(out)).problems).toEqual([])
    const refused = await execFileAsync(process.execPath, ['scripts/gen-pie.ts', '--shape', 'cairo2', out]).catch(
      (error: unknown) => error,
    )
    expect(refused).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/--shape must be one of cairo0, cairo1, got cairo2/),
    })
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
