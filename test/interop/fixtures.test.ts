/**
 * The interop suite: the PIEs written by cairo-lang and cairo-vm, and the compiled program of
 * cairo-lang's compiler, read in place from ../shared/fixtures (never copied into the
 * repository; test/interop/FIXTURES.md gives each file's origin and licence). They show that
 * our reader, validator, packer and hashes agree with files we did not write. Runs whenever
 * ../shared is beside the repository (the development machines and CI); on a plain clone it
 * reports itself skipped, saying why. Every other test uses the project's own PIEs
 * (test/helpers/example-pie.ts).
 */
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { FIBONACCI_PROGRAM } from '../../src/pie/generate/generate.ts'
import {
  assertValidPie,
  computeIntegrityFact,
  computeProgramHash,
  computeSharpFact,
  inspectPie,
  packPie,
  programFromCompiled,
  toHex,
  validatePie,
} from '../../src/pie/index.ts'
import { bytesSource, openFileSource, readZipEntry } from '../../src/pie/read/zip.ts'
import { extraFields, readZipDirectory } from '../../src/pie/read/zip-directory.ts'
import {
  collect,
  describeInterop,
  execFileAsync,
  FIBONACCI_COMPILED,
  fixturePath,
  PIE_ENTRY_ORDER as ORDER,
  PIE_FIXTURES,
  pythonEntries,
  pythonRead,
  readZipFiles,
  removeTempDirs,
  tempDir,
  unzipFixture,
} from '../helpers/pie-fixtures.ts'

afterAll(removeTempDirs)

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

describeInterop('the compiled program of cairo-lang (fibonacci_compiled.json)', () => {
  it('is the program the project carries (FIBONACCI_PROGRAM), and hashes to the published vector', async () => {
    const program = programFromCompiled(JSON.parse(await readFile(FIBONACCI_COMPILED, 'utf8')))
    expect(program.main).toBe(FIBONACCI_PROGRAM.main)
    expect(program.builtins).toEqual([...FIBONACCI_PROGRAM.builtins])
    expect(program.data).toEqual([...FIBONACCI_PROGRAM.data])
    expect(toHex(computeProgramHash(program, 'pedersen'))).toBe(
      '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45',
    )
  })
})

describeInterop('PIEs written by cairo-lang and cairo-vm: validation', () => {
  it.each(PIE_FIXTURES)('%s validates, as a zip, as bytes and as a directory', async (name) => {
    const zip = await validatePie(fixturePath(name))
    expect(zip).toMatchObject({ valid: true, problems: [] })
    expect(zip.summary).toMatchObject({ source: 'zip', builtins: ['output'], outputSize: 2 })
    expect((await validatePie(await readFile(fixturePath(name)))).valid).toBe(true)
    const dir = await validatePie(await unzipFixture(name))
    expect(dir).toMatchObject({ valid: true, summary: { source: 'directory' } })
    expect(dir.summary.memoryCells).toBe(zip.summary.memoryCells)
  })

  it('summarises the PIE', async () => {
    const { summary } = await validatePie(fixturePath('fib-cairo-vm-writer.zip'))
    expect(summary).toMatchObject({
      version: '1.1',
      nSteps: 89,
      memoryCells: 131,
      programSize: 54,
      segments: [
        { name: 'program', index: 0, size: 54 },
        { name: 'execution', index: 1, size: 74 },
        { name: 'output', index: 2, size: 2 },
        { name: 'ret_fp', index: 3, size: 0 },
        { name: 'ret_pc', index: 4, size: 0 },
        { name: 'extra_0', index: 5, size: 1 },
      ],
    })
    expect(summary.entries.map((e) => [e.name, e.method])).toEqual([
      ['metadata.json', 8],
      ['memory.bin', 8],
      ['additional_data.json', 8],
      ['execution_resources.json', 8],
      ['version.json', 8],
    ])
  })

  it('assertValidPie returns the summary of a valid PIE', async () => {
    await expect(assertValidPie(fixturePath(PIE_FIXTURES[0]))).resolves.toMatchObject({ nSteps: 72 })
  })

  it('are far inside every budget of the hostile-PIE defences (test/e2e/hostile-pie.test.ts)', async () => {
    for (const fixture of PIE_FIXTURES) expect((await validatePie(fixturePath(fixture))).valid).toBe(true)
  })
})

describeInterop('PIEs written by cairo-lang and cairo-vm: inspection', () => {
  it.each([
    ['fib-cairo-lang-writer.zip', ['0xa', '0x90'], 72],
    ['fib-cairo-lang-writer-2.zip', ['0xa', '0x90'], 72],
    ['fib-cairo-vm-writer.zip', ['0x1', '0x59'], 89],
  ])('%s: output, steps, job size, hashes and facts', async (name, output, nSteps) => {
    const inspection = await inspectPie(fixturePath(name))
    expect(inspection).toMatchObject({ output, nSteps, builtins: ['output'], jobSize: 'XS' })
    expect(inspection.sha256).toBe(
      createHash('sha256')
        .update(await readFile(fixturePath(name)))
        .digest('hex'),
    )
    const programHash = BigInt(inspection.programHash)
    expect(inspection.programHashes.pedersen).toBe(inspection.programHash)
    const words = output.map((word) => BigInt(word))
    expect(inspection.sharpFactHash).toBe(toHex(computeSharpFact(programHash, words)))
    expect(inspection.integrityFactHash).toBe(toHex(computeIntegrityFact(programHash, words)))
    for (const value of [
      inspection.programHash,
      inspection.sharpFactHash,
      inspection.integrityFactHash,
      ...inspection.output,
    ]) {
      expect(value).toMatch(/^0x(0|[1-9a-f][0-9a-f]*)$/)
    }
  })
})

describeInterop('PIEs written by cairo-lang and cairo-vm: packing', () => {
  it.each(PIE_FIXTURES)('%s: repacks into a canonical zip Python, unzip and our validator accept', async (name) => {
    const dir = await unzipFixture(name)
    const out = join(await tempDir(), 'pie.zip')
    const packed = await packPie(dir, out)
    expect(packed.path).toBe(out)
    expect(packed.entries.map((e) => e.name)).toEqual(ORDER)
    const bytes = await readFile(out)
    expect(bytes.subarray(0, 2).toString()).toBe('PK')
    expect(packed.sizeBytes).toBe(bytes.length)
    expect(packed.sha256).toBe(createHash('sha256').update(bytes).digest('hex'))

    const original = await readZipFiles(fixturePath(name))
    const python = await pythonEntries(out)
    expect(python.map((e) => e.name)).toEqual(ORDER)
    for (const entry of python) {
      expect(entry.method).toBe(8)
      expect(entry.date).toEqual([1980, 1, 1, 0, 0, 0])
      expect(entry.sha256).toBe(sha256(original.get(entry.name)!))
    }
    const { stdout } = await execFileAsync('unzip', ['-t', out])
    expect(stdout).toMatch(/No errors detected/)
    expect((await validatePie(out)).problems).toEqual([])

    const [before, after] = await Promise.all([
      inspectPie(fixturePath(name), { sha256: false }),
      inspectPie(out, { sha256: false }),
    ])
    expect({ ...after, summary: undefined }).toEqual({ ...before, summary: undefined })
  })
})

describeInterop('PIEs written by cairo-lang and cairo-vm: the zip reader', () => {
  it.each(PIE_FIXTURES)('reads %s like Python does', async (name) => {
    const source = await openFileSource(fixturePath(name))
    try {
      const { entries } = await readZipDirectory(source)
      const python = await pythonRead(fixturePath(name))
      expect(entries.map((e) => [e.name, e.method, e.uncompressedSize])).toEqual(
        python.map((p) => [p.name, p.method, p.size]),
      )
      for (const [i, entry] of entries.entries()) {
        expect((await collect(readZipEntry(source, entry))).toString('hex')).toBe(python[i]!.data)
      }
    } finally {
      await source.close()
    }
  })

  it('reads the ZIP64 extra field cairo-lang writes into the local header of memory.bin', async () => {
    const bytes = await readFile(fixturePath('fib-cairo-lang-writer.zip'))
    const { entries } = await readZipDirectory(bytesSource(bytes))
    const memory = entries.find((e) => e.name === 'memory.bin')!
    const view = new DataView(bytes.buffer, bytes.byteOffset)
    const nameLength = view.getUint16(memory.localHeaderOffset + 26, true)
    const extraLength = view.getUint16(memory.localHeaderOffset + 28, true)
    const extra = bytes.subarray(
      memory.localHeaderOffset + 30 + nameLength,
      memory.localHeaderOffset + 30 + nameLength + extraLength,
    )
    expect([...extraFields(extra)].map((f) => f.id)).toContain(1)
    expect((await collect(readZipEntry(bytesSource(bytes), memory))).length).toBe(3760)
  })
})
