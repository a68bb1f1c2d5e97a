/**
 * Reading a zip the way cairo-lang's Python reads it, and refusing what another reader could
 * read differently. `readZipDirectory` (./zip-directory.ts) finds the end record and walks the
 * central directory exactly as Python 3.11's zipfile does; `checkZipLayout` (./zip-layout.ts)
 * then refuses every structure a second reader could take other bytes from; `readZipEntry`
 * (here) streams one entry's bytes as zipfile hands them to cairo-lang, inflated in chunks with
 * its CRC-32 checked, and refuses an entry whose data disagrees with its declared sizes. Nothing
 * here buffers a whole entry, so a multi-GiB memory.bin is read in flat memory.
 *
 * Each refusal carries its reason (ZipFormatError.reason): `cairo-lang` where Python's zipfile
 * (cairo-lang's `from_file`) refuses the zip itself, `ambiguous-container` where it reads one
 * thing and another reader (cairo-vm's zip crate, another Python version, unzip) may read another.
 */
import { createReadStream } from 'node:fs'
import { open } from 'node:fs/promises'
import { Readable } from 'node:stream'
import zlib from 'node:zlib'

/** Who refuses a zip structure: Python's zipfile itself, or nobody in particular but readers disagree. */
export type ZipReason = 'cairo-lang' | 'ambiguous-container'

export class ZipFormatError extends Error {
  override name = 'ZipFormatError'
  readonly reason: ZipReason
  constructor(message: string, reason: ZipReason = 'cairo-lang') {
    super(message)
    this.reason = reason
  }
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
      if (position < 0 || position >= size) return Buffer.alloc(0)
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
    read: async (position, length) =>
      position < 0
        ? new Uint8Array()
        : bytes.subarray(Math.min(position, bytes.length), Math.min(bytes.length, position + length)),
    stream(start, end) {
      const chunks: Uint8Array[] = []
      for (let at = start; at < end; at += READ_CHUNK) chunks.push(bytes.subarray(at, Math.min(end, at + READ_CHUNK)))
      return Readable.from(chunks)
    },
    close: async () => {},
  }
}

/** One central directory record, as Python's zipfile reads it (its ZipInfo), with the raw fields beside. */
export type ZipEntry = {
  /** The name as Python decodes it (UTF-8 with flag bit 11, else a single-byte code page). */
  name: string
  nameBytes: Uint8Array
  method: number
  flags: number
  crc32: number
  /** Sizes and offset after the ZIP64 extra field, as Python resolves them. */
  compressedSize: number
  uncompressedSize: number
  /** Where Python looks for the local header (the record's offset plus any bytes before the archive). */
  localHeaderOffset: number
  versionMadeBy: number
  versionNeeded: number
  diskStart: number
  externalAttributes: number
  /** The record's extra field, and its 32-bit uncompressed size, compressed size and header offset, as written. */
  extra: Uint8Array
  written: [number, number, number]
  /** Byte offset of the record in the file, and its length as declared. */
  recordOffset: number
  recordLength: number
  /** True when the central directory record carries a ZIP64 extra field. */
  zip64: boolean
  isDirectory: boolean
}

export type ZipDirectory = {
  entries: ZipEntry[]
  /** True when Python reads the ZIP64 end record (and so its counts, size and offset). */
  zip64: boolean
  /** What the layout checks (zip-layout.ts) compare: the end records as written. */
  end: ZipEnd
}

export type ZipEnd = {
  /** Offset of the classic end record, and the bytes after it in the file. */
  offset: number
  trailing: number
  commentLength: number
  disk: number
  diskWithDirectory: number
  entriesOnDisk: number
  entries: number
  directorySize: number
  directoryOffset: number
  /** Where Python reads the directory: directoryOffset + (bytes before the archive). */
  directoryStart: number
  /** The bytes before the archive Python infers (its `concat`), 0 for a zip that starts at byte 0. */
  shift: number
  /** The ZIP64 records as written, when Python read them. */
  zip64?: {
    recordOffset: number
    recordSize: number
    disk: number
    diskWithDirectory: number
    entriesOnDisk: number
    entries: number
    directorySize: number
    directoryOffset: number
    versionNeeded: number
    locatorDisk: number
    locatorRecordOffset: number
    locatorDisks: number
  }
  /** A ZIP64 locator Python found without the record where it looks for one (so it read none). */
  orphanLocator?: boolean
}

export const SIG_LOCAL = 0x04034b50
export const SIG_CENTRAL = 0x02014b50
export const SIG_EOCD = 0x06054b50
export const SIG_ZIP64_EOCD = 0x06064b50
export const SIG_ZIP64_LOCATOR = 0x07064b50
export const SIG_DATA_DESCRIPTOR = 0x08074b50
export const ZIP64_EXTRA_ID = 0x0001
export const FLAG_ENCRYPTED = 0x0001
export const FLAG_DATA_DESCRIPTOR = 0x0008
/** Python's zipfile refuses these when it opens the entry (NotImplementedError). */
export const FLAG_COMPRESSED_PATCH = 0x0020
export const FLAG_STRONG_ENCRYPTION = 0x0040
export const FLAG_UTF8 = 0x0800
export const MAX32 = 0xffffffff

export function view(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

export function u64(dv: DataView, at: number): number {
  const value = dv.getBigUint64(at, true)
  if (value > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ZipFormatError(`a 64-bit size or offset is too large (${value})`)
  return Number(value)
}

const utf8 = new TextDecoder('utf-8', { fatal: true })
const latin1 = new TextDecoder('latin1')

/**
 * A name as Python decodes it: UTF-8 under flag bit 11 (a name that is not UTF-8 makes Python
 * raise), else cp437, which agrees with latin1 on every ASCII name (the only names a PIE holds).
 */
export function decodeName(bytes: Uint8Array, flags: number, where: string): string {
  if (!(flags & FLAG_UTF8)) return latin1.decode(bytes)
  try {
    return utf8.decode(bytes)
  } catch {
    throw new ZipFormatError(
      `${where}: the name is flagged UTF-8 (bit 11) but is not UTF-8; Python's zipfile cannot decode it`,
    )
  }
}

export type ReadEntryOptions = {
  /** Size of the inflated chunks handed out. */
  chunkSize?: number
}

/** Where an entry's compressed bytes start, as Python finds them: after its local header's name and extra field. */
export async function entryDataOffset(source: ByteSource, entry: ZipEntry): Promise<number> {
  // Python seeks there: a negative position is a ValueError.
  if (entry.localHeaderOffset < 0)
    throw new ZipFormatError(
      `"${entry.name}": its local header would be at byte ${entry.localHeaderOffset}, before the file`,
    )
  const header = await source.read(entry.localHeaderOffset, 30)
  const hv = view(header)
  if (header.length < 30)
    throw new ZipFormatError(
      `"${entry.name}": the local header at byte ${entry.localHeaderOffset} is cut short by the end of the file`,
    )
  if (hv.getUint32(0, true) !== SIG_LOCAL)
    throw new ZipFormatError(`"${entry.name}": no local header at byte ${entry.localHeaderOffset}`)
  const nameLength = hv.getUint16(26, true)
  const extraLength = hv.getUint16(28, true)
  if (entry.flags & FLAG_COMPRESSED_PATCH)
    throw new ZipFormatError(
      `"${entry.name}": general-purpose flag bit 5 (compressed patched data), which Python's zipfile does not read`,
    )
  if (entry.flags & FLAG_STRONG_ENCRYPTION)
    throw new ZipFormatError(
      `"${entry.name}": general-purpose flag bit 6 (strong encryption), which Python's zipfile does not read`,
    )
  const nameBytes = await source.read(entry.localHeaderOffset + 30, nameLength)
  const localName = decodeName(nameBytes, hv.getUint16(6, true), `the local header at byte ${entry.localHeaderOffset}`)
  if (localName !== entry.name) {
    throw new ZipFormatError(
      `the local header at byte ${entry.localHeaderOffset} names "${localName}", the central directory "${entry.name}"`,
    )
  }
  if (entry.flags & FLAG_ENCRYPTED) throw new ZipFormatError(`"${entry.name}" is encrypted (flag bit 0)`)
  return entry.localHeaderOffset + 30 + nameLength + extraLength
}

/**
 * The entry's bytes as Python's zipfile hands them to cairo-lang, chunk by chunk: the DEFLATE
 * data from the local header's end, at most the declared compressed size of it, inflated and cut
 * at the declared size, its CRC-32 checked. Throws ZipFormatError where Python refuses (reason
 * `cairo-lang`), and where the data disagrees with what the directory declares though Python
 * reads it (`ambiguous-container`): a stream that inflates past or short of the declared size
 * (Python cuts it, or hands out fewer bytes), one that ends before or after its compressed bytes.
 */
export async function* readZipEntry(
  source: ByteSource,
  entry: ZipEntry,
  options: ReadEntryOptions = {},
): AsyncGenerator<Uint8Array> {
  if (entry.method !== 0 && entry.method !== 8)
    throw new ZipFormatError(`compression method ${entry.method} cannot be read`)
  const dataStart = await entryDataOffset(source, entry)
  const available = Math.max(0, Math.min(entry.compressedSize, source.size - dataStart))
  const raw = source.stream(dataStart, dataStart + available)
  let stream: Readable = raw
  let inflate: zlib.InflateRaw | undefined
  if (entry.method === 8) {
    inflate = zlib.createInflateRaw({ chunkSize: options.chunkSize ?? 256 * 1024 })
    raw.on('error', (error) => inflate!.destroy(error))
    stream = raw.pipe(inflate)
  }
  const declared = entry.uncompressedSize
  let crc = 0
  let handed = 0
  let total = 0
  let unfinished = false
  try {
    const iterator = stream[Symbol.asyncIterator]()
    for (;;) {
      let step: IteratorResult<Buffer>
      try {
        step = await iterator.next()
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === 'Z_BUF_ERROR') {
          // The compressed bytes ran out before the stream's end: Python flushes what it has.
          unfinished = true
          break
        }
        // Python inflates until it holds the declared size; corruption past that it never sees.
        const reason = handed < declared ? 'cairo-lang' : 'ambiguous-container'
        throw new ZipFormatError(`compressed data is corrupt (${(error as Error).message})`, reason)
      }
      if (step.done) break
      const chunk = step.value
      total += chunk.length
      // Python cuts the data at the declared size.
      const kept = handed + chunk.length > declared ? chunk.subarray(0, Math.max(0, declared - handed)) : chunk
      if (kept.length) {
        crc = zlib.crc32(kept, crc)
        handed += kept.length
        yield kept
      }
    }
  } finally {
    raw.destroy()
    stream.destroy()
  }
  if (available < entry.compressedSize && handed < declared && (unfinished || entry.method === 0)) {
    throw new ZipFormatError(
      `data (${entry.compressedSize} bytes from byte ${dataStart}) runs past the end of the file (${source.size} bytes)`,
    )
  }
  if (crc >>> 0 !== entry.crc32) {
    throw new ZipFormatError(
      `CRC-32 mismatch: the data Python reads has ${hex32(crc)}, the directory declares ${hex32(entry.crc32)}`,
    )
  }
  if (total > declared) {
    throw new ZipFormatError(
      `inflates to more than the declared ${declared} bytes (Python's zipfile reads the first ${declared}, another reader all of them)`,
      'ambiguous-container',
    )
  }
  if (total < declared) {
    throw new ZipFormatError(
      `inflates to ${total} bytes, the directory declares ${declared} (Python's zipfile reads the ${total})`,
      'ambiguous-container',
    )
  }
  if (unfinished) {
    throw new ZipFormatError(
      `the DEFLATE stream is cut short: its ${entry.compressedSize} compressed bytes end before the stream does (Python's zipfile reads what they hold)`,
      'ambiguous-container',
    )
  }
  const consumed = inflate ? inflate.bytesWritten : available
  if (consumed !== entry.compressedSize) {
    throw new ZipFormatError(
      `the DEFLATE stream ends after ${consumed} of its ${entry.compressedSize} declared compressed bytes (readers differ on what follows)`,
      'ambiguous-container',
    )
  }
}

function hex32(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, '0')}`
}
