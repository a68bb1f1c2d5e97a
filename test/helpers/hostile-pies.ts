/**
 * Hostile pie.zip files, small to send and ruinous to read without budgets (issue 13): a zip
 * bomb of small JSON objects in metadata.json, and a memory.bin that scatters one cell per
 * bitmap page over 16 segments of 2^30-1 cells. Built in memory from the committed example PIE.
 */
import zlib from 'node:zlib'
import { centralHeader, endRecords, localHeader } from '../../src/pie/pack/zip-writer.ts'
import { type Cell, decodeCells, encodeCells, exampleFiles } from './pie-fixtures.ts'

type Entry = { name: string; body: Uint8Array; crc32: number; size: number }

/** Deflates `count` repetitions of `unit` between `head` and `tail`, never holding the whole text. */
export async function deflateRepeated(
  head: string,
  unit: string,
  count: number,
  tail: string,
): Promise<Omit<Entry, 'name'>> {
  const deflate = zlib.createDeflateRaw({ level: 9 })
  const chunks: Buffer[] = []
  deflate.on('data', (chunk: Buffer) => chunks.push(chunk))
  const ended = new Promise<void>((resolve, reject) => deflate.on('end', resolve).on('error', reject))
  let crc = 0
  let size = 0
  const write = async (data: Buffer) => {
    crc = zlib.crc32(data, crc)
    size += data.length
    if (!deflate.write(data)) await new Promise((resolve) => deflate.once('drain', resolve))
  }
  const perBlock = Math.max(1, Math.floor((4 * 1024 * 1024) / unit.length))
  const block = Buffer.from(unit.repeat(Math.min(count, perBlock)))
  await write(Buffer.from(head))
  let left = count
  while (left >= perBlock) {
    await write(block)
    left -= perBlock
  }
  if (left > 0) await write(Buffer.from(unit.repeat(left)))
  await write(Buffer.from(tail))
  deflate.end()
  await ended
  return { body: Buffer.concat(chunks), crc32: crc, size }
}

function zipEntries(entries: Entry[]): Uint8Array {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let position = 0
  for (const entry of entries) {
    const header = {
      name: entry.name,
      method: 8,
      crc32: entry.crc32,
      compressedSize: entry.body.length,
      uncompressedSize: entry.size,
      zip64: false,
    }
    const local = localHeader(header)
    central.push(centralHeader({ ...header, localHeaderOffset: position }))
    parts.push(local, entry.body)
    position += local.length + entry.body.length
  }
  const cdSize = central.reduce((sum, part) => sum + part.length, 0)
  parts.push(
    ...central,
    endRecords({
      entryCount: entries.length,
      centralDirectoryOffset: position,
      centralDirectorySize: cdSize,
      anyZip64: false,
    }),
  )
  return Buffer.concat(parts)
}

function plain(name: string, data: Uint8Array | string): Entry {
  const bytes = typeof data === 'string' ? Buffer.from(data) : Buffer.from(data)
  return { name, body: zlib.deflateRawSync(bytes), crc32: zlib.crc32(bytes), size: bytes.length }
}

/** The example PIE with one JSON entry replaced by `head + unit × count + tail`. */
export async function jsonBombPie(options: {
  entry?: 'metadata.json' | 'additional_data.json'
  head: string
  unit: string
  count: number
  tail: string
}): Promise<Uint8Array> {
  const files = await exampleFiles()
  const target = options.entry ?? 'metadata.json'
  const entries: Entry[] = []
  for (const [name, data] of files) {
    entries.push(
      name === target
        ? { ...(await deflateRepeated(options.head, options.unit, options.count, options.tail)), name }
        : plain(name, data),
    )
  }
  return zipEntries(entries)
}

/** The zip bomb: metadata.json inflating to 120M empty objects (~360 MB, a ~118 KB zip). */
export const metadataObjectBomb = () =>
  jsonBombPie({ head: '{"program":{"data":[', unit: '{},', count: 120_000_000, tail: '{}]}}' })

/**
 * The sparse memory.bin: the example's metadata with 16 extra segments of 2^30-1 cells,
 * and one cell written per 32768-cell page of each (524,288 cells; a ~1 MB zip).
 */
export async function sparseSegmentsPie(options: { segments?: number; stride?: number } = {}): Promise<Uint8Array> {
  const segments = options.segments ?? 16
  const stride = options.stride ?? 32768
  const files = await exampleFiles()
  const metadata = JSON.parse(Buffer.from(files.get('metadata.json')!).toString('utf8'))
  const indices = [
    metadata.program_segment,
    metadata.execution_segment,
    metadata.ret_fp_segment,
    metadata.ret_pc_segment,
    ...Object.values(metadata.builtin_segments),
    ...metadata.extra_segments,
  ]
  const first = 1 + Math.max(...indices.map((segment: { index: number }) => segment.index))
  const cells: Cell[] = decodeCells(files.get('memory.bin') as Uint8Array)
  for (let k = 0; k < segments; k++) {
    metadata.extra_segments.push({ index: first + k, size: 2 ** 30 - 1 })
    for (let offset = 0; offset < 2 ** 30 - 1; offset += stride) cells.push({ segment: first + k, offset, value: 0n })
  }
  // The program's words and prime are integers above 2^53: only the extra segments are written
  // again (JSON.stringify of the parsed file would round them through doubles).
  const original = Buffer.from(files.get('metadata.json')!).toString('utf8')
  const text = original.replace(
    /"extra_segments":\s*\[[^\]]*\]/,
    `"extra_segments": ${JSON.stringify(metadata.extra_segments)}`,
  )
  if (text === original) throw new Error('hostile PIE: no extra_segments to replace')
  const entries = [...files].map(([name, data]) =>
    plain(name, name === 'metadata.json' ? text : name === 'memory.bin' ? encodeCells(cells) : data),
  )
  return zipEntries(entries)
}
