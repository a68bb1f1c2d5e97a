/**
 * Reading a zip the way the PIE checks need it: the central directory as written (names,
 * compression method, sizes, ZIP64 fields), and one entry's bytes streamed and inflated in
 * chunks, with its CRC-32 and size verified at the end. Nothing here buffers a whole entry, so a
 * multi-GiB memory.bin is read in flat memory. Only what PIE files use is supported: a single
 * disk, stored (0) or DEFLATE (8) entries, no encryption.
 */
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { Readable } from 'node:stream'
import zlib from 'node:zlib'

export class ZipFormatError extends Error {
  override name = 'ZipFormatError'
}

/** Random access to the bytes of a zip, from a file or from memory. */
export type ByteSource = {
  readonly size: number
  read(position: number, length: number): Promise<Uint8Array>
  /** The bytes in [start, end), as a stream of chunks. */
  stream(start: number, end: number): Readable
  close(): Promise<void>
}

const READ_CHUNK = 1024 * 1024

export async function openFileSource(path: string): Promise<ByteSource> {
  const handle = await open(path, 'r')
  const { size } = await handle.stat()
  return {
    size,
    async read(position, length) {
      const buffer = Buffer.alloc(Math.max(0, Math.min(length, size - position)))
      let done = 0
      while (done < buffer.length) {
        const { bytesRead } = await handle.read(buffer, done, buffer.length - done, position + done)
        if (bytesRead === 0) break
        done += bytesRead
      }
      return buffer.subarray(0, done)
    },
    stream(start, end) {
      if (end <= start) return Readable.from([])
      return createReadStream(path, { start, end: end - 1, highWaterMark: READ_CHUNK })
    },
    close: () => handle.close(),
  }
}

export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    read: async (position, length) => bytes.subarray(position, Math.min(bytes.length, position + length)),
    stream(start, end) {
      const chunks: Uint8Array[] = []
      for (let at = start; at < end; at += READ_CHUNK) chunks.push(bytes.subarray(at, Math.min(end, at + READ_CHUNK)))
      return Readable.from(chunks)
    },
    close: async () => {},
  }
}

export type ZipEntry = {
  name: string
  method: number
  flags: number
  crc32: number
  compressedSize: number
  uncompressedSize: number
  localHeaderOffset: number
  versionMadeBy: number
  externalAttributes: number
  /** True when the central directory record carries a ZIP64 extra field. */
  zip64: boolean
  isDirectory: boolean
}

export type ZipDirectory = {
  entries: ZipEntry[]
  /** True when the archive ends with ZIP64 end-of-central-directory records. */
  zip64: boolean
}

export const SIG_LOCAL = 0x04034b50
export const SIG_CENTRAL = 0x02014b50
export const SIG_EOCD = 0x06054b50
export const SIG_ZIP64_EOCD = 0x06064b50
export const SIG_ZIP64_LOCATOR = 0x07064b50
export const ZIP64_EXTRA_ID = 0x0001
export const FLAG_ENCRYPTED = 0x0001
export const FLAG_UTF8 = 0x0800

const EOCD_SIZE = 22
const LOCATOR_SIZE = 20
const MAX_COMMENT = 0xffff

function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

function u64(dv: DataView, at: number): number {
  const value = dv.getBigUint64(at, true)
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new ZipFormatError(`a 64-bit size or offset is too large (${value})`)
  return Number(value)
}

const utf8 = new TextDecoder('utf-8')
const latin1 = new TextDecoder('latin1')

export async function readZipDirectory(source: ByteSource): Promise<ZipDirectory> {
  const tailLength = Math.min(source.size, EOCD_SIZE + MAX_COMMENT + LOCATOR_SIZE)
  const tailStart = source.size - tailLength
  const tail = await source.read(tailStart, tailLength)
  const tv = view(tail)
  let eocd = -1
  // The record sits right before a comment whose length it declares; scan from the end.
  for (let at = tail.length - EOCD_SIZE; at >= 0; at--) {
    if (tv.getUint32(at, true) === SIG_EOCD && at + EOCD_SIZE + tv.getUint16(at + 20, true) === tail.length) {
      eocd = at
      break
    }
  }
  if (eocd < 0) throw new ZipFormatError('no end-of-central-directory record (not a zip file, or truncated)')

  let entryCount = tv.getUint16(eocd + 10, true)
  let cdSize = tv.getUint32(eocd + 12, true)
  let cdOffset = tv.getUint32(eocd + 16, true)
  if (tv.getUint16(eocd + 4, true) !== 0 || tv.getUint16(eocd + 6, true) !== 0) {
    throw new ZipFormatError('multi-disk archives are not supported')
  }

  let zip64 = false
  const locator = eocd - LOCATOR_SIZE
  if (locator >= 0 && tv.getUint32(locator, true) === SIG_ZIP64_LOCATOR) {
    zip64 = true
    const recordOffset = u64(tv, locator + 8)
    const record = await source.read(recordOffset, 56)
    const rv = view(record)
    if (record.length < 56 || rv.getUint32(0, true) !== SIG_ZIP64_EOCD) {
      throw new ZipFormatError(`ZIP64 locator points at byte ${recordOffset}, where there is no ZIP64 end record`)
    }
    entryCount = u64(rv, 32)
    cdSize = u64(rv, 40)
    cdOffset = u64(rv, 48)
  }
  if (cdOffset + cdSize > source.size) {
    throw new ZipFormatError(`central directory (bytes ${cdOffset}-${cdOffset + cdSize}) lies beyond the end of the file (${source.size} bytes)`)
  }

  const cd = await source.read(cdOffset, cdSize)
  const cv = view(cd)
  const entries: ZipEntry[] = []
  let at = 0
  for (let k = 0; k < entryCount; k++) {
    if (at + 46 > cd.length || cv.getUint32(at, true) !== SIG_CENTRAL) {
      throw new ZipFormatError(`central directory record ${k} at byte ${cdOffset + at} is malformed`)
    }
    const flags = cv.getUint16(at + 8, true)
    const nameLength = cv.getUint16(at + 28, true)
    const extraLength = cv.getUint16(at + 30, true)
    const commentLength = cv.getUint16(at + 32, true)
    const end = at + 46 + nameLength + extraLength + commentLength
    if (end > cd.length) throw new ZipFormatError(`central directory record ${k} runs past the directory's end`)
    const nameBytes = cd.subarray(at + 46, at + 46 + nameLength)
    const name = (flags & FLAG_UTF8 ? utf8 : latin1).decode(nameBytes)
    let uncompressedSize = cv.getUint32(at + 24, true)
    let compressedSize = cv.getUint32(at + 20, true)
    let localHeaderOffset = cv.getUint32(at + 42, true)
    let entryZip64 = false
    for (const field of extraFields(cd.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength))) {
      if (field.id !== ZIP64_EXTRA_ID) continue
      entryZip64 = true
      const fv = view(field.data)
      let p = 0
      const next = () => {
        if (p + 8 > field.data.length) throw new ZipFormatError(`entry "${name}": ZIP64 extra field is too short`)
        const value = u64(fv, p)
        p += 8
        return value
      }
      if (uncompressedSize === 0xffffffff) uncompressedSize = next()
      if (compressedSize === 0xffffffff) compressedSize = next()
      if (localHeaderOffset === 0xffffffff) localHeaderOffset = next()
    }
    entries.push({
      name,
      method: cv.getUint16(at + 10, true),
      flags,
      crc32: cv.getUint32(at + 16, true),
      compressedSize,
      uncompressedSize,
      localHeaderOffset,
      versionMadeBy: cv.getUint16(at + 4, true),
      externalAttributes: cv.getUint32(at + 38, true),
      zip64: entryZip64,
      isDirectory: name.endsWith('/') || name.endsWith('\\'),
    })
    at = end
  }
  return { entries, zip64 }
}

export function* extraFields(extra: Uint8Array): Generator<{ id: number; data: Uint8Array }> {
  const ev = view(extra)
  let at = 0
  while (at + 4 <= extra.length) {
    const id = ev.getUint16(at, true)
    const size = ev.getUint16(at + 2, true)
    yield { id, data: extra.subarray(at + 4, Math.min(extra.length, at + 4 + size)) }
    at += 4 + size
  }
}

/** Where an entry's compressed bytes start, from its local header; checks the header agrees. */
export async function entryDataOffset(source: ByteSource, entry: ZipEntry): Promise<number> {
  const header = await source.read(entry.localHeaderOffset, 30)
  const hv = view(header)
  if (header.length < 30 || hv.getUint32(0, true) !== SIG_LOCAL) {
    throw new ZipFormatError(`no local header at byte ${entry.localHeaderOffset}`)
  }
  const nameLength = hv.getUint16(26, true)
  const extraLength = hv.getUint16(28, true)
  const nameBytes = await source.read(entry.localHeaderOffset + 30, nameLength)
  const localName = (hv.getUint16(6, true) & FLAG_UTF8 ? utf8 : latin1).decode(nameBytes)
  if (localName !== entry.name) {
    throw new ZipFormatError(`local header at byte ${entry.localHeaderOffset} names "${localName}", the central directory "${entry.name}"`)
  }
  const dataStart = entry.localHeaderOffset + 30 + nameLength + extraLength
  if (dataStart + entry.compressedSize > source.size) {
    throw new ZipFormatError(`data (${entry.compressedSize} bytes from byte ${dataStart}) runs past the end of the file (${source.size} bytes)`)
  }
  return dataStart
}

export type ReadEntryOptions = {
  /** Size of the inflated chunks handed out. */
  chunkSize?: number
}

/**
 * The entry's uncompressed bytes, chunk by chunk. Throws ZipFormatError when the data is
 * corrupt, shorter or longer than declared, or fails its CRC-32.
 */
export async function* readZipEntry(
  source: ByteSource,
  entry: ZipEntry,
  options: ReadEntryOptions = {},
): AsyncGenerator<Uint8Array> {
  if (entry.flags & FLAG_ENCRYPTED) throw new ZipFormatError('entry is encrypted')
  if (entry.method !== 0 && entry.method !== 8) {
    throw new ZipFormatError(`compression method ${entry.method} cannot be read`)
  }
  const dataStart = await entryDataOffset(source, entry)
  const raw = source.stream(dataStart, dataStart + entry.compressedSize)
  let stream: Readable = raw
  if (entry.method === 8) {
    const inflate = zlib.createInflateRaw({ chunkSize: options.chunkSize ?? 256 * 1024 })
    raw.on('error', (error) => inflate.destroy(error))
    stream = raw.pipe(inflate)
  }
  let crc = 0
  let total = 0
  try {
    const iterator = stream[Symbol.asyncIterator]()
    for (;;) {
      let step: IteratorResult<Buffer>
      try {
        step = await iterator.next()
      } catch (error) {
        throw new ZipFormatError(`compressed data is corrupt (${(error as Error).message})`)
      }
      if (step.done) break
      const chunk = step.value
      crc = zlib.crc32(chunk, crc)
      total += chunk.length
      if (total > entry.uncompressedSize) {
        throw new ZipFormatError(`inflates to more than the declared ${entry.uncompressedSize} bytes`)
      }
      yield chunk
    }
  } finally {
    raw.destroy()
    stream.destroy()
  }
  if (total !== entry.uncompressedSize) {
    throw new ZipFormatError(`inflates to ${total} bytes, the directory declares ${entry.uncompressedSize}`)
  }
  if (crc >>> 0 !== entry.crc32) {
    throw new ZipFormatError(`CRC-32 mismatch: data has ${hex32(crc)}, the directory declares ${hex32(entry.crc32)}`)
  }
}

function hex32(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, '0')}`
}
