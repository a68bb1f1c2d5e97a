import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { packPie } from '../../../../src/pie/pack/pack.ts'
import { ZipFormatError, bytesSource, openFileSource, readZipEntry } from '../../../../src/pie/read/zip.ts'
import { readZipDirectory } from '../../../../src/pie/read/zip-directory.ts'
import { deflateBound, needsZip64 } from '../../../../src/pie/pack/zip-writer.ts'
import { buildZip, collect, execFileAsync, pythonRead, readZipFiles, removeTempDirs, tempDir, unzipExample, writeDir } from '../../../helpers/pie-fixtures.ts'
import { EXAMPLE_PIE, generatedPie } from '../../../helpers/example-pie.ts'

afterAll(removeTempDirs)

describe('zip reader', () => {
  it.each(['the example', 'a generated PIE'])('reads %s like Python does', async (which) => {
    const path = which === 'the example' ? EXAMPLE_PIE : (await generatedPie({ seed: 4, memoryBytes: 128 * 1024 })).zip
    const source = await openFileSource(path)
    try {
      const { entries } = await readZipDirectory(source)
      const python = await pythonRead(path)
      expect(entries.map((e) => [e.name, e.method, e.uncompressedSize])).toEqual(python.map((p) => [p.name, p.method, p.size]))
      for (const [i, entry] of entries.entries()) {
        expect((await collect(readZipEntry(source, entry))).toString('hex')).toBe(python[i]!.data)
      }
    } finally {
      await source.close()
    }
  })

  it('detects a CRC mismatch, truncation and a non-zip', async () => {
    const zip = buildZip([{ name: 'a.txt', data: 'hello hello hello hello' }])
    const corrupt = Buffer.from(zip)
    corrupt.writeUInt32LE(0xdeadbeef, 14) // local CRC (ignored)
    const cdCrc = zip.length - 22 - (46 + 5) + 16
    corrupt.writeUInt32LE(0xdeadbeef, cdCrc)
    const entry = (await readZipDirectory(bytesSource(corrupt))).entries[0]!
    await expect(collect(readZipEntry(bytesSource(corrupt), entry))).rejects.toThrow(/CRC-32 mismatch/)

    await expect(readZipDirectory(bytesSource(Buffer.from('{"not": "a zip"}')))).rejects.toBeInstanceOf(ZipFormatError)
    // Compressed data cut short: the directory declares 3 bytes of it. Python's zipfile inflates
    // what the 3 bytes hold and fails on the CRC: cairo-lang refuses it.
    const truncated = Buffer.from(zip)
    truncated.writeUInt32LE(3, zip.length - 22 - 51 + 20)
    const cut = (await readZipDirectory(bytesSource(truncated))).entries[0]!
    await expect(collect(readZipEntry(bytesSource(truncated), cut))).rejects.toMatchObject({ reason: 'cairo-lang', message: expect.stringMatching(/CRC-32 mismatch/) })
  })
})

describe('zip writer', () => {
  it('decides ZIP64 from the size, with room for incompressible data', () => {
    expect(needsZip64(1024 ** 3, 4 << 20)).toBe(false)
    expect(needsZip64(4 * 1024 ** 3 - 1024, 4 << 20)).toBe(true)
    expect(needsZip64(5 * 1024 ** 3, 4 << 20)).toBe(true)
    expect(deflateBound(100, 4 << 20)).toBeGreaterThan(100)
  })

  it('writes ZIP64 records (forced, at small scale) that Python zipfile, unzip -t and our reader accept', async () => {
    const dir = await unzipExample()
    const out = join(await tempDir(), 'zip64.zip')
    const packed = await packPie(dir, out, { forceZip64: true })
    const bytes = await readFile(out)
    // ZIP64 end record, locator, and the classic record pointing at them.
    expect(bytes.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x06]))).toBeGreaterThan(0)
    expect(bytes.indexOf(Buffer.from([0x50, 0x4b, 0x06, 0x07]))).toBeGreaterThan(0)
    const eocd = bytes.length - 22
    expect(bytes.readUInt32LE(eocd + 16)).toBe(0xffffffff)

    const { entries, zip64 } = await readZipDirectory(bytesSource(bytes))
    expect(zip64).toBe(true)
    expect(entries.every((e) => e.zip64 && e.method === 8)).toBe(true)
    const python = await pythonRead(out)
    const original = await readZipFiles(EXAMPLE_PIE)
    for (const entry of python) {
      expect(entry.method).toBe(8)
      expect(entry.data).toBe(Buffer.from(original.get(entry.name)!).toString('hex'))
    }
    expect(python.map((p) => p.name)).toEqual(packed.entries.map((e) => e.name))
    const { stdout } = await execFileAsync('unzip', ['-t', out])
    expect(stdout).toMatch(/No errors detected/)
  })

  it('builds zips with stored and deflated entries for the tests', async () => {
    const zip = buildZip([
      { name: 'a', data: 'stored', method: 0 },
      { name: 'b/c', data: 'deflated' },
    ])
    const path = join(await tempDir(), 'x.zip')
    await writeFile(path, zip)
    expect((await pythonRead(path)).map((p) => [p.name, p.method])).toEqual([
      ['a', 0],
      ['b/c', 8],
    ])
    expect([...(await readZipFiles(zip)).keys()]).toEqual(['a', 'b/c'])
    await writeDir(await tempDir(), new Map([['x', 'y']]))
  })
})
