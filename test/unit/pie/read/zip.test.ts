import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { packPie } from '../../../../src/pie/pack/pack.ts'
import { ZipFormatError, bytesSource, openFileSource, readZipEntry } from '../../../../src/pie/read/zip.ts'
import { readZipDirectory } from '../../../../src/pie/read/zip-directory.ts'
import { deflateBound, needsZip64 } from '../../../../src/pie/pack/zip-writer.ts'
import {
  buildZip,
  collect,
  execFileAsync,
  pythonRead,
  readZipFiles,
  removeTempDirs,
  tempDir,
  unzipExample,
  writeDir,
} from '../../../helpers/pie-fixtures.ts'
import { EXAMPLE_PIE, generatedPie } from '../../../helpers/example-pie.ts'

afterAll(removeTempDirs)

describe('zip reader', () => {
  it.each(['the example', 'a generated PIE'])('reads %s like Python does', async (which) => {
    const path = which === 'the example' ? EXAMPLE_PIE : (await generatedPie({ seed: 4, memoryBytes: 128 * 1024 })).zip
    const source = await openFileSource(path)
    try {
      const { entries } = await readZipDirectory(source)
      const python = await pythonRead(path)
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
    await expect(collect(readZipEntry(bytesSource(truncated), cut))).rejects.toMatchObject({
      reason: 'cairo-lang',
      message: expect.stringMatching(/CRC-32 mismatch/),
    })
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

describe('one reading of the zip, or a refusal (issue 40)', async () => {
  const { cloneModel, parseZip, writeZip } = await import('../../../helpers/zip-model.ts')
  const { inspectPie, validatePie } = await import('../../../../src/pie/index.ts')
  const zlib = (await import('node:zlib')).default
  const base = parseZip(await readFile(EXAMPLE_PIE))
  const variant = (change: (m: ReturnType<typeof parseZip>) => void) => {
    const model = cloneModel(base)
    change(model)
    return Uint8Array.from(writeZip(model).bytes)
  }
  const reasons = async (zip: Uint8Array) =>
    (await validatePie(zip)).refusals.map((r) => [r.reason, r.problem.replace(/ \[.*\]$/, '')])

  it("refuses a second metadata.json past the end record's count, which Python reads and the zip crate does not, and inspect hashes no program", async () => {
    const zip = variant((m) => {
      const metadata = m.entries[0]!
      const text = zlib
        .inflateRawSync(metadata.data)
        .toString('latin1')
        .replace(/"data": \[(\d+)/, (_, w: string) => `"data": [${BigInt(w) + 1n}`)
      const body = new Uint8Array(zlib.deflateRawSync(Buffer.from(text, 'latin1')))
      const crc = zlib.crc32(Buffer.from(text, 'latin1'))
      m.entries.push({
        ...metadata,
        data: body,
        local: { ...metadata.local, crc, csize: body.length, usize: text.length },
        central: { ...metadata.central, crc, csize: body.length, usize: text.length },
      })
      m.pinned.add('entries').add('entriesOnDisk')
      m.records.push(m.entries.length - 1)
    })
    expect(await reasons(zip)).toEqual(
      expect.arrayContaining([
        ['ambiguous-container', 'pie.zip: the end record says entries on this disk: 5, the archive has 6'],
        ['ambiguous-container', expect.stringMatching(/^pie\.zip: entry "metadata\.json" appears more than once/)],
      ]),
    )
    await expect(inspectPie(zip)).rejects.toThrow(/is not a valid Cairo PIE/)
  })

  it.each([
    [
      'bytes after the end record',
      (m: ReturnType<typeof parseZip>) => (m.suffix = Uint8Array.of(1, 2, 3)),
      'ambiguous-container',
      /3 bytes follow the end record/,
    ],
    [
      'a stub starting with "PK" before the zip',
      (m: ReturnType<typeof parseZip>) => (m.prefix = Uint8Array.of(0x50, 0x4b, 0, 0)),
      'ambiguous-container',
      /bytes 0-4 before entry "metadata\.json" belong to no entry/,
    ],
    [
      'a non-zero disk number',
      (m: ReturnType<typeof parseZip>) => (m.end.disk = 1),
      'ambiguous-container',
      /disk number 1/,
    ],
    [
      'version needed 6.4 (Python refuses it)',
      (m: ReturnType<typeof parseZip>) => (m.entries[2]!.central.version = 64),
      'cairo-lang',
      /needs zip version 6\.4 to extract/,
    ],
    [
      'a directory size larger than its records (Python reads from before them)',
      (m: ReturnType<typeof parseZip>) => (m.pinned.add('size'), (m.end.size = 400)),
      'cairo-lang',
      /bad signature for a central directory record/,
    ],
  ])('refuses %s, for its true reason', async (_, change, reason, message) => {
    const refusals = (await validatePie(variant(change))).refusals
    expect(
      refusals.some((r) => r.reason === reason && message.test(r.problem)),
      JSON.stringify(refusals, null, 1),
    ).toBe(true)
    if (reason === 'ambiguous-container') expect(refusals.map((r) => r.reason)).not.toContain('cairo-lang')
  })

  it.each([
    [
      "ZIP64 markers and fields in every local header (Rust's zip crate, large_file)",
      (m: ReturnType<typeof parseZip>) => {
        for (const e of m.entries) {
          const extra = new Uint8Array(20)
          const dv = new DataView(extra.buffer)
          dv.setUint16(0, 1, true)
          dv.setUint16(2, 16, true)
          dv.setBigUint64(4, BigInt(e.local.usize!), true)
          dv.setBigUint64(12, BigInt(e.local.csize!), true)
          e.localExtra = extra
          e.local.usize = 0xffffffff
          e.local.csize = 0xffffffff
        }
      },
    ],
    [
      'data descriptors, with and without their signature (a writer on a pipe)',
      (m: ReturnType<typeof parseZip>) => {
        for (const [i, e] of m.entries.entries()) {
          const d = new Uint8Array(16)
          const dv = new DataView(d.buffer)
          dv.setUint32(0, 0x08074b50, true)
          dv.setUint32(4, e.central.crc!, true)
          dv.setUint32(8, e.central.csize!, true)
          dv.setUint32(12, e.central.usize!, true)
          e.descriptor = i % 2 ? d : d.subarray(4)
          e.local = { ...e.local, flags: 8, crc: 0, csize: 0, usize: 0 }
          e.central = { ...e.central, flags: 8 }
        }
      },
    ],
    ['ZIP64 end records', (m: ReturnType<typeof parseZip>) => (m.zip64 = true)],
  ])('keeps valid what writers emit: %s', async (_, change) => {
    expect((await validatePie(variant(change))).problems).toEqual([])
  })
})
