import { lstat, mkdir, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { AbortedError, InvalidInputError } from '../../../../src/core/errors.ts'
import { canonicalZipDigest, inspectPie, packPie, validatePie } from '../../../../src/pie/index.ts'
import { readZipDirectory } from '../../../../src/pie/read/zip-directory.ts'
import { bytesSource } from '../../../../src/pie/read/zip.ts'
import { generatePie } from '../../../../src/pie/generate/generate.ts'
import {
  execFileAsync,
  PIE_ENTRY_ORDER as ORDER,
  pythonEntries,
  readZipFiles,
  removeTempDirs,
  tempDir,
  unzipExample,
  writeDir,
} from '../../../helpers/pie-fixtures.ts'
import { EXAMPLE_PIE, generatedPie } from '../../../helpers/example-pie.ts'

const writeDirFrom = async (files: Map<string, Uint8Array>) => writeDir(await tempDir(), new Map(files))
import { createHash, randomBytes } from 'node:crypto'
import { watch } from 'node:fs'
import zlib from 'node:zlib'
import { createBlockCompressor, outputCapacity } from '../../../../src/pie/pack/deflate-pool.ts'

afterAll(removeTempDirs)

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest('hex')

/**
 * Byte equality of large buffers. vitest's toEqual walks a Buffer element by element (13.7 s for
 * 1.5 MiB on two busy cores, the reason this file once hit its 30 s timeout); Buffer.equals is a
 * memcmp. A mismatch still says where: the length, or the first offset that differs.
 */
function expectSameBytes(actual: Uint8Array, expected: Uint8Array): void {
  expect(actual.length, 'length').toBe(expected.length)
  if (Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(expected)) return
  const at = actual.findIndex((byte, i) => byte !== expected[i])
  expect.fail(`the bytes differ first at offset ${at}: ${actual[at]} where ${expected[at]} was expected`)
}
describe('packPie on the example and generated PIEs', () => {
  it.each(['the example', 'a generated PIE'])(
    '%s: repacks into a canonical zip Python, unzip and our validator accept',
    async (which) => {
      const source =
        which === 'the example' ? EXAMPLE_PIE : (await generatedPie({ seed: 3, memoryBytes: 256 * 1024 })).zip
      const dir = await writeDirFrom(await readZipFiles(source))
      const out = join(await tempDir(), 'pie.zip')
      const packed = await packPie(dir, out)
      expect(packed.path).toBe(out)
      expect(packed.entries.map((e) => e.name)).toEqual(ORDER)
      const bytes = await readFile(out)
      expect(bytes.subarray(0, 2).toString()).toBe('PK')
      expect(packed.sizeBytes).toBe(bytes.length)
      expect(packed.sha256).toBe(createHash('sha256').update(bytes).digest('hex'))

      const original = await readZipFiles(source)
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
        inspectPie(source, { sha256: false }),
        inspectPie(out, { sha256: false }),
      ])
      expect({ ...after, summary: undefined }).toEqual({ ...before, summary: undefined })
    },
  )

  it('compresses blocks to the same bytes inline and on workers', async () => {
    const data = await readFile(join(await unzipExample(), 'memory.bin'))
    const outputs: string[] = []
    for (const memLevel of [undefined, 9]) {
      for (const workers of [0, 2]) {
        const compressor = createBlockCompressor({ workers, level: 1, blockSize: 64 * 1024, slots: 2 })
        try {
          compressor.input(1).set(data)
          const block = await compressor.compress(1, data.length, false, memLevel)
          expect(block.crc32).toBe(zlib.crc32(data))
          outputs.push(Buffer.from(block.data).toString('hex'))
        } finally {
          await compressor.close()
        }
      }
    }
    expect(outputs[1]).toBe(outputs[0])
    expect(outputs[3]).toBe(outputs[2])
    expect(Buffer.from(outputs[2]!, 'hex').length).toBeLessThanOrEqual(Buffer.from(outputs[0]!, 'hex').length * 1.01)
    // A sync-flushed block ends byte-aligned with an empty stored block.
    expect(outputs[0]!.endsWith('0000ffff')).toBe(true)

    // ownOutput: the worker moves its output buffer over; the bytes are the same, and stay the
    // caller's when the slot is filled and compressed again.
    const owning = createBlockCompressor({ workers: 2, level: 1, blockSize: 64 * 1024, slots: 2, ownOutput: true })
    try {
      owning.input(0).set(data)
      const first = await owning.compress(0, data.length, false)
      owning.input(0).fill(7)
      const second = await owning.compress(0, data.length, true)
      expect(Buffer.from(first.data).toString('hex')).toBe(outputs[0])
      expect(first.data.length).toBe(outputs[0]!.length / 2)
      // Moved, not copied: a view on zlib's whole output buffer.
      expect(first.data.buffer.byteLength).toBe(outputCapacity(64 * 1024))
      expectSameBytes(zlib.inflateRawSync(second.data), Buffer.alloc(data.length, 7))
    } finally {
      await owning.close()
    }
    // Later blocks get an output buffer sized from the previous block's output, not the worst
    // case's; a block that compresses far worse than the last (random bytes after zeros) spills
    // over that estimate into several zlib chunks: still every byte, in a buffer of its own.
    const block = 512 * 1024
    const sized = createBlockCompressor({ workers: 1, level: 1, blockSize: block, slots: 2, ownOutput: true })
    try {
      const zeros: Uint8Array[] = []
      for (const slot of [0, 1]) {
        sized.input(slot).fill(0)
        zeros.push((await sized.compress(slot, block, false)).data)
      }
      expect(zeros[0]!.buffer.byteLength).toBe(outputCapacity(block))
      expect(zeros[1]!.buffer.byteLength).toBeLessThan(outputCapacity(block) / 2)
      const noise = randomBytes(block)
      sized.input(0).set(noise)
      const random = (await sized.compress(0, block, true)).data
      expect(random.length).toBeGreaterThan(zeros[1]!.buffer.byteLength)
      expect(random.buffer.byteLength).toBe(random.length)
      expectSameBytes(
        zlib.inflateRawSync(Buffer.concat([...zeros, random])),
        Buffer.concat([Buffer.alloc(2 * block), noise]),
      )
    } finally {
      await sized.close()
    }
  })

  it('is byte-identical when packing twice, and matches canonicalZipDigest', async () => {
    const dir = await unzipExample()
    const folder = await tempDir()
    const a = await packPie(dir, join(folder, 'a.zip'))
    const b = await packPie(dir, join(folder, 'b.zip'))
    const c = await packPie(dir, join(folder, 'c.zip'), { blockSize: 64 * 1024, workers: 2, level: 1 })
    expect(b.sha256).toBe(a.sha256)
    expect(c.sha256).toBe(a.sha256)
    expect((await readFile(join(folder, 'b.zip'))).equals(await readFile(join(folder, 'a.zip')))).toBe(true)
    expect((await canonicalZipDigest(dir)).sha256).toBe(a.sha256)
    expect((await inspectPie(dir)).sha256).toBe(a.sha256)
  })

  it('splits a large memory.bin into blocks on workers into one valid DEFLATE stream', async () => {
    const dir = join(await tempDir(), 'gen')
    await generatePie({ outDir: dir, memoryBytes: 3 * 1024 * 1024, seed: 7 })
    const folder = await tempDir()
    const inline = await packPie(dir, join(folder, 'inline.zip'), { blockSize: 4 << 20 })
    const blocks = await packPie(dir, join(folder, 'blocks.zip'), { blockSize: 256 * 1024, workers: 2 })
    const single = await packPie(dir, join(folder, 'single.zip'), { blockSize: 256 * 1024, workers: 1 })
    expect(blocks.sha256).toBe(single.sha256)
    expect(blocks.sha256).not.toBe(inline.sha256)
    // Sync-flushed blocks cost a few bytes each, nothing more.
    expect(blocks.sizeBytes).toBeLessThan(inline.sizeBytes * 1.01)
    const memory = await readFile(join(dir, 'memory.bin'))
    for (const name of ['inline.zip', 'blocks.zip']) {
      const python = await pythonEntries(join(folder, name))
      expect(python[1]!.sha256).toBe(sha256(memory))
      expect((await execFileAsync('unzip', ['-t', join(folder, name)])).stdout).toMatch(/No errors detected/)
    }
    const digest = await canonicalZipDigest(dir, { blockSize: 256 * 1024 })
    expect(digest.sha256).toBe(blocks.sha256)
    expect(digest.sizeBytes).toBe(blocks.sizeBytes)
  })

  it.each([false, true])(
    'writes a large entry as it compresses it, CRC and sizes in a data descriptor (ZIP64: %s), and hands on the bytes read and written in order',
    async (forceZip64) => {
      const dir = join(await tempDir(), 'gen')
      await generatePie({ outDir: dir, memoryBytes: 3 * 1024 * 1024, seed: 8 })
      const out = join(await tempDir(), 'pie.zip')
      const read = new Map<string, Buffer[]>()
      const written: Uint8Array[] = []
      const packed = await packPie(dir, out, {
        blockSize: 256 * 1024,
        workers: 2,
        forceZip64,
        taps: {
          input: (name, chunk) => {
            if (chunk) read.set(name, [...(read.get(name) ?? []), Buffer.from(chunk)])
          },
          // Kept as given, not copied: the output tap's bytes are never written again.
          output: (chunk) => void written.push(chunk),
        },
      })
      const bytes = await readFile(out)
      expect(Buffer.concat(written).equals(bytes)).toBe(true)
      expect(packed.sha256).toBe(sha256(bytes))
      for (const name of ORDER)
        expect(Buffer.concat(read.get(name)!).equals(await readFile(join(dir, name)))).toBe(true)

      // memory.bin is 12 blocks (more than 4): general purpose bit 3, zeros in the local header,
      // then a signed descriptor; the small entries carry their values in the local header.
      const { entries } = await readZipDirectory(bytesSource(bytes))
      for (const entry of entries) {
        const local = entry.localHeaderOffset
        const streamed = entry.name === 'memory.bin'
        expect(entry.flags & 0x0008, entry.name).toBe(streamed ? 0x0008 : 0)
        expect(bytes.readUInt16LE(local + 6) & 0x0008, entry.name).toBe(streamed ? 0x0008 : 0)
        expect(bytes.readUInt32LE(local + 14), entry.name).toBe(streamed ? 0 : entry.crc32)
        if (!streamed) continue
        const after =
          local + 30 + bytes.readUInt16LE(local + 26) + bytes.readUInt16LE(local + 28) + entry.compressedSize
        expect(bytes.readUInt32LE(after)).toBe(0x08074b50)
        expect(bytes.readUInt32LE(after + 4)).toBe(entry.crc32)
        const sizes = forceZip64
          ? [Number(bytes.readBigUInt64LE(after + 8)), Number(bytes.readBigUInt64LE(after + 16))]
          : [bytes.readUInt32LE(after + 8), bytes.readUInt32LE(after + 12)]
        expect(sizes).toEqual([entry.compressedSize, entry.uncompressedSize])
        expect(after + (forceZip64 ? 24 : 16)).toBe(entries[entries.indexOf(entry) + 1]!.localHeaderOffset)
      }
      const python = await pythonEntries(out)
      expect(python[1]!.sha256).toBe(sha256(await readFile(join(dir, 'memory.bin'))))
      expect((await execFileAsync('unzip', ['-t', out])).stdout).toMatch(/No errors detected/)
      expect((await validatePie(out)).problems).toEqual([])
    },
  )

  it('copies JSON bytes exactly, never re-serialising them', async () => {
    const dir = await unzipExample()
    const weird =
      '{"program": {"prime": 3618502788666131213697322783095070105623107215331596699973092056135872020481,   "x":1}}\n'
    await writeFile(join(dir, 'metadata.json'), weird)
    const out = join(await tempDir(), 'pie.zip')
    await packPie(dir, out)
    expect(Buffer.from((await readZipFiles(out)).get('metadata.json')!).toString()).toBe(weird)
  })

  it('packs without version.json when the directory has none', async () => {
    const dir = await unzipExample()
    await rm(join(dir, 'version.json'))
    const out = join(await tempDir(), 'pie.zip')
    const packed = await packPie(dir, out)
    expect(packed.entries.map((e) => e.name)).toEqual(ORDER.slice(0, 4))
  })
})

describe('packPie refuses what is not a PIE directory', () => {
  async function refusal(prepare: (dir: string) => Promise<void>) {
    const dir = await unzipExample()
    await prepare(dir)
    const folder = await tempDir()
    const error = await packPie(dir, join(folder, 'pie.zip')).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(await readdir(folder)).toEqual([])
    return (error as Error).message
  }

  it('a missing file', async () => {
    expect(await refusal((dir) => rm(join(dir, 'memory.bin')))).toMatch(/missing required file "memory.bin"/)
  })

  it('an extra file', async () => {
    expect(await refusal((dir) => writeFile(join(dir, 'notes.txt'), 'x'))).toMatch(/extra file "notes.txt"/)
  })

  it('a folder', async () => {
    expect(await refusal((dir) => mkdir(join(dir, '__MACOSX')))).toMatch(/extra folder "__MACOSX"/)
  })

  it('a symlinked entry', async () => {
    const message = await refusal(async (dir) => {
      const target = join(await tempDir(), 'memory.bin')
      await writeFile(target, await readFile(join(dir, 'memory.bin')))
      await rm(join(dir, 'memory.bin'))
      await symlink(target, join(dir, 'memory.bin'))
      expect((await lstat(join(dir, 'memory.bin'))).isSymbolicLink()).toBe(true)
    })
    expect(message).toMatch(/"memory.bin" is a symbolic link/)
  })

  it('an oversized execution_resources.json', async () => {
    expect(await refusal((dir) => writeFile(join(dir, 'execution_resources.json'), ' '.repeat(10_000)))).toMatch(
      /"execution_resources.json" is 10000 bytes/,
    )
  })
})

describe('packPie writes atomically', () => {
  it('leaves neither output nor temporary file when aborted', async () => {
    const dir = join(await tempDir(), 'gen')
    await generatePie({ outDir: dir, memoryBytes: 4 * 1024 * 1024, seed: 3 })
    const folder = await tempDir()
    const controller = new AbortController()
    // Aborted as soon as the packer has created its temporary file (an event, not a fixed delay).
    const watcher = watch(folder, () => controller.abort(new Error('stop')))
    const packing = packPie(dir, join(folder, 'pie.zip'), {
      signal: controller.signal,
      blockSize: 64 * 1024,
      workers: 2,
    })
    const error = await packing.catch((caught: unknown) => caught)
    watcher.close()
    expect(error).toBeInstanceOf(AbortedError)
    expect(await readdir(folder)).toEqual([])
  })

  it('refuses an already-aborted signal and a directory as output', async () => {
    const dir = await unzipExample()
    await expect(packPie(dir, join(await tempDir(), 'x.zip'), { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(
      AbortedError,
    )
    await expect(packPie(dir, await tempDir())).rejects.toThrow(/is a directory/)
  })

  it('replaces an existing output only once complete', async () => {
    const dir = await unzipExample()
    const out = join(await tempDir(), 'pie.zip')
    await writeFile(out, 'old')
    await packPie(dir, out)
    const { entries } = await readZipDirectory(bytesSource(await readFile(out)))
    expect(entries).toHaveLength(5)
  })
})
