import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { afterAll, describe, expect, it } from 'vitest'
import { FactMismatchError, InvalidPieError } from '../../../../src/core/errors.ts'
import {
  assertQueryFacts,
  checkQueryFacts,
  computeIntegrityFact,
  computeProgramHash,
  computeSharpFact,
  generatePie,
  inspectPie,
  toHex,
} from '../../../../src/pie/index.ts'
import { FIBONACCI_PROGRAM } from '../../../../src/pie/generate/generate.ts'
import { encodePacked, keccak256 } from 'viem'
import {
  decodeCells,
  encodeCells,
  exampleFiles,
  removeTempDirs,
  tempDir,
  text,
  unzipExample,
  writeDir,
  zipOf,
} from '../../../helpers/pie-fixtures.ts'
import { EXAMPLE, EXAMPLE_PIE } from '../../../helpers/example-pie.ts'

afterAll(removeTempDirs)

describe('inspectPie', () => {
  it('the example: output, steps, job size, hashes and facts, pinned', async () => {
    const inspection = await inspectPie(EXAMPLE_PIE)
    expect(inspection).toMatchObject({
      output: [...EXAMPLE.output],
      nSteps: EXAMPLE.nSteps,
      builtins: ['output'],
      jobSize: 'XS',
      programHash: EXAMPLE.programHash,
      sharpFactHash: EXAMPLE.sharpFact,
      integrityFactHash: EXAMPLE.integrityFact,
      sha256: EXAMPLE.sha256,
    })
    expect(inspection.sha256).toBe(
      createHash('sha256')
        .update(await readFile(EXAMPLE_PIE))
        .digest('hex'),
    )
    expect(inspection.programHashes.pedersen).toBe(inspection.programHash)
    const words = inspection.output.map((word) => BigInt(word))
    expect(inspection.sharpFactHash).toBe(toHex(computeSharpFact(BigInt(inspection.programHash), words)))
    expect(inspection.integrityFactHash).toBe(toHex(computeIntegrityFact(BigInt(inspection.programHash), words)))
  })

  it('gives the same answers for a zip, its bytes and its directory', async () => {
    const fromZip = await inspectPie(EXAMPLE_PIE, { sha256: false })
    const fromBytes = await inspectPie(await readFile(EXAMPLE_PIE), { sha256: false })
    const fromDir = await inspectPie(await unzipExample(), { sha256: false })
    for (const other of [fromBytes, fromDir])
      expect({ ...other, summary: undefined }).toEqual({ ...fromZip, summary: undefined })
    expect(fromZip.sha256).toBeNull()
  })

  it('the generated PIE has the published program hash of fibonacci_compiled.json', async () => {
    const dir = join(await tempDir(), 'gen')
    const generated = await generatePie({ outDir: dir, memoryBytes: 64 * 1024, seed: 2 })
    const inspection = await inspectPie(dir)
    expect(inspection.programHash).toBe('0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45')
    expect(inspection.output).toEqual(generated.output.map(toHex))
    expect(inspection.nSteps).toBe(generated.nSteps)
    expect(computeProgramHash({ ...FIBONACCI_PROGRAM })).toBe(BigInt(inspection.programHash))
  })

  it('keeps output words above 2^53 exact', async () => {
    const files = await exampleFiles()
    const memory = Buffer.from(files.get('memory.bin') as Uint8Array)
    // Output cell (2, 0) sits at byte 4000 of the example (after 27 program and 73 execution cells); give it a 250-bit value.
    memory.fill(0xab, 4000 + 8, 4000 + 8 + 31)
    memory[4000 + 39] = 0x01
    files.set('memory.bin', memory)
    const inspection = await inspectPie(zipOf(files))
    expect(inspection.output[0]).toBe(`0x01${'ab'.repeat(31)}`.replace(/^0x0+/, '0x'))
  })

  it('uses output pages for the SHARP fact', async () => {
    const files = await exampleFiles()
    files.set(
      'additional_data.json',
      '{"output_builtin": {"pages": {"1": [1, 1]}, "attributes": {"gps_fact_topology": [2, 2]}}}',
    )
    const paged = await inspectPie(zipOf(files))
    expect(paged.factTopology).toEqual({ treeStructure: [2, 2], pageSizes: [1, 1] })
    const plain = await inspectPie(EXAMPLE_PIE)
    expect(paged.sharpFactHash).not.toBe(plain.sharpFactHash)
    expect(paged.sharpFactHash).toBe(
      toHex(computeSharpFact(BigInt(plain.programHash), [11n, 89n], { treeStructure: [2, 2], pageSizes: [1, 1] })),
    )
  })

  // The Starknet OS PIE of Sepolia block 924016 in miniature (test/interop/snos-pie.test.ts
  // reads the real one): an extra segment with a pointer past the cells written in it, and
  // output pages under the topology [2, 1, 0, 2]. It must validate (cairo-lang and cairo-vm
  // accept such pointers) and its SHARP fact must be built from the page tree.
  it('a PIE shaped like the Starknet OS: a pointer past its segment recorded size, output pages; valid, fact from the page tree', async () => {
    const files = await exampleFiles()
    files.set(
      'metadata.json',
      text(files.get('metadata.json') as Uint8Array).replace(
        '"extra_segments": []',
        '"extra_segments": [{"index": 5, "size": 2}]',
      ),
    )
    const cells = decodeCells(files.get('memory.bin') as Uint8Array)
    cells.find((cell) => cell.segment === 1 && cell.offset === 5)!.value = { segment: 5, offset: 7 }
    cells.push({ segment: 5, offset: 0, value: 3n }, { segment: 5, offset: 1, value: { segment: 5, offset: 6 } })
    files.set('memory.bin', encodeCells(cells))
    files.set(
      'additional_data.json',
      '{"output_builtin": {"pages": {"1": [1, 1]}, "attributes": {"gps_fact_topology": [2, 1, 0, 2]}}}',
    )

    for (const input of [zipOf(files), await writeDir(await tempDir(), files)]) {
      const inspection = await inspectPie(input, { sha256: false })
      expect(inspection.summary.segments.at(-1)).toEqual({ name: 'extra_0', index: 5, size: 2 })
      expect(inspection.factTopology).toEqual({ treeStructure: [2, 1, 0, 2], pageSizes: [1, 1] })
      // By hand, with viem's keccak: push pages 0 and 1, wrap the top one, merge the two.
      const word = (value: bigint | number) => encodePacked(['uint256'], [BigInt(value)]).slice(2)
      const keccakWords = (...values: (bigint | number)[]) => BigInt(keccak256(`0x${values.map(word).join('')}`))
      const [page0, page1] = [keccakWords(11n), keccakWords(89n)]
      const wrapped = 1n + keccakWords(page1, 2)
      const root = 1n + keccakWords(page0, 1, wrapped, 2)
      expect(BigInt(inspection.sharpFactHash)).toBe(keccakWords(BigInt(inspection.programHash), root))
      // One flat page is another fact.
      expect(inspection.sharpFactHash).not.toBe(toHex(computeSharpFact(BigInt(inspection.programHash), [11n, 89n])))
    }
  })

  it('throws InvalidPieError for an invalid PIE', async () => {
    const files = await exampleFiles()
    files.set(
      'execution_resources.json',
      text(files.get('execution_resources.json') as Uint8Array).replace('"n_steps": 73', '"n_steps": 0'),
    )
    await expect(inspectPie(zipOf(files))).rejects.toBeInstanceOf(InvalidPieError)
  })
})

describe('checkQueryFacts', () => {
  const pie = EXAMPLE_PIE

  it('accepts matching values whatever their case and leading zeros', async () => {
    const inspection = await inspectPie(pie)
    const upper = (hex: string) => `0X${'0'.repeat(3)}${hex.slice(2).toUpperCase()}`
    const result = await checkQueryFacts(
      {
        programHash: upper(inspection.programHash),
        sharpFactHash: upper(inspection.sharpFactHash),
        integrityFactHash: inspection.integrityFactHash,
      },
      pie,
    )
    expect(result).toEqual({
      ok: true,
      programHashVariant: 'pedersen',
      mismatches: [],
      checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
    })
  })

  it('recognises a Poseidon program hash and checks the facts with it', async () => {
    const inspection = await inspectPie(pie)
    const poseidon = BigInt(inspection.programHashes.poseidon)
    const output = inspection.output.map((w) => BigInt(w))
    const record = {
      programHash: inspection.programHashes.poseidon,
      sharpFactHash: toHex(computeSharpFact(poseidon, output)),
      integrityFactHash: toHex(computeIntegrityFact(poseidon, output)),
    }
    expect(await checkQueryFacts(record, inspection)).toMatchObject({ ok: true, programHashVariant: 'poseidon' })
    // Without the program hash, the facts alone tell which variant was used.
    expect(await checkQueryFacts({ ...record, programHash: null }, inspection)).toMatchObject({
      ok: true,
      programHashVariant: 'poseidon',
      checked: ['sharpFactHash', 'integrityFactHash'],
    })
  })

  it('recognises a Blake program hash', async () => {
    const inspection = await inspectPie(pie)
    // The program hash alone binds no output: it is recognised, but the check is not ok.
    expect(await checkQueryFacts({ programHash: inspection.programHashes.blake }, inspection)).toMatchObject({
      ok: false,
      programHashVariant: 'blake',
      mismatches: [],
      checked: ['programHash'],
    })
  })

  it('skips null fields and reports each mismatch', async () => {
    const inspection = await inspectPie(pie)
    const result = await checkQueryFacts(
      { programHash: inspection.programHash, sharpFactHash: '0x1234', integrityFactHash: null },
      pie,
    )
    expect(result).toEqual({
      ok: false,
      programHashVariant: 'pedersen',
      mismatches: [{ field: 'sharpFactHash', expected: inspection.sharpFactHash, actual: '0x1234' }],
      checked: ['programHash', 'sharpFactHash'],
    })
    const none = await checkQueryFacts({ programHash: null, sharpFactHash: null, integrityFactHash: null }, inspection)
    // Nothing compared is not a match.
    expect(none).toEqual({ ok: false, programHashVariant: null, mismatches: [], checked: [] })
    const programOnly = await checkQueryFacts(
      { programHash: inspection.programHash, sharpFactHash: null, integrityFactHash: null },
      inspection,
    )
    expect(programOnly).toEqual({ ok: false, programHashVariant: 'pedersen', mismatches: [], checked: ['programHash'] })
  })

  it('reports a program hash matching no variant', async () => {
    const inspection = await inspectPie(pie)
    const result = await checkQueryFacts({ programHash: '0x5', sharpFactHash: inspection.sharpFactHash }, inspection)
    expect(result.programHashVariant).toBeNull()
    expect(result.mismatches).toEqual([{ field: 'programHash', expected: inspection.programHash, actual: '0x5' }])
  })

  it('assertQueryFacts throws FactMismatchError naming the fact that differs', async () => {
    const inspection = await inspectPie(pie)
    const error = await assertQueryFacts({ integrityFactHash: 'not hex' }, inspection).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(FactMismatchError)
    expect((error as Error).message).toMatch(/integrityFactHash differs/)
    expect((error as Error).message).toContain(`the PIE gives ${inspection.integrityFactHash}`)
    await expect(
      assertQueryFacts({ programHash: inspection.programHash, sharpFactHash: inspection.sharpFactHash }, inspection),
    ).resolves.toMatchObject({ ok: true })
    // A record with no fact that binds the output is refused too, saying so.
    const none = await assertQueryFacts({ programHash: inspection.programHash }, inspection).catch(
      (caught: unknown) => caught,
    )
    expect(none).toBeInstanceOf(FactMismatchError)
    expect((none as Error).message).toMatch(/no fact to compare/)
  })
})
