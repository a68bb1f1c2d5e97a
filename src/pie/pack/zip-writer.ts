/**
 * The zip records the packer writes, built by hand because no library gives all three of:
 * DEFLATE data compressed in parallel blocks, byte-for-byte reproducible output (fixed
 * timestamp, attributes and field choices) and ZIP64 when an entry passes 4 GiB.
 *
 * Choices, all fixed so the same input always gives the same bytes:
 * - every entry is DEFLATE (method 8), timestamp 1980-01-01 00:00, "made by" Unix with mode 0644;
 * - a small entry's local header holds its CRC and sizes (its compressed blocks are kept until
 *   known); a large one (decided from its uncompressed size alone) is written as it is
 *   compressed: general purpose bit 3, zeros in the local header, and the CRC and sizes in a
 *   data descriptor after the data (with its signature; 8-byte sizes for a ZIP64 entry), as
 *   APPNOTE 4.3.9 and Info-ZIP writing to a pipe do. Nothing is ever written twice, so the zip
 *   can be hashed and sent while it is written;
 * - an entry gets a ZIP64 extra field (local and central, holding both sizes) when it may reach
 *   4 GiB, decided from its uncompressed size before writing; the local header offset moves to
 *   the central record's ZIP64 field when it passes 4 GiB;
 * - ZIP64 end records are written when anything above needed ZIP64 (or `forceZip64`, which
 *   also makes every entry ZIP64, so readers' ZIP64 paths can be tested with small files).
 */
import { SIG_CENTRAL, SIG_EOCD, SIG_LOCAL, SIG_ZIP64_EOCD, SIG_ZIP64_LOCATOR, ZIP64_EXTRA_ID } from '../read/index.ts'

/** DOS date of 1980-01-01 (day 1, month 1, year 0 = 1980); the time is 00:00:00. */
export const DOS_DATE_1980 = (0 << 9) | (1 << 5) | 1
export const DOS_TIME_MIDNIGHT = 0
const MAX32 = 0xffffffff
const VERSION_DEFLATE = 20
const VERSION_ZIP64 = 45
const MADE_BY_UNIX = 3 << 8
/** General purpose bit 3: CRC and sizes are in the data descriptor after the data. */
export const FLAG_DATA_DESCRIPTOR = 0x0008
export const SIG_DATA_DESCRIPTOR = 0x08074b50
/** Regular file, rw-r--r--, in the high 16 bits as Info-ZIP writes it. */
const EXTERNAL_ATTRIBUTES = (0o100644 << 16) >>> 0

export type EntryHeader = {
  name: string
  method: number
  crc32: number
  compressedSize: number
  uncompressedSize: number
  /** Sizes go to a ZIP64 extra field (local and central). */
  zip64: boolean
  /** CRC and sizes follow the data in a data descriptor (bit 3); the local header holds zeros. */
  descriptor?: boolean
}

export type CentralEntry = EntryHeader & { localHeaderOffset: number }

/** Upper bound of the compressed size of `size` bytes split in sync-flushed blocks. */
export function deflateBound(size: number, blockSize: number): number {
  const blocks = Math.max(1, Math.ceil(size / blockSize))
  return size + Math.ceil(size / 1024) + blocks * 64 + 1024
}

export function needsZip64(size: number, blockSize: number): boolean {
  return size >= MAX32 || deflateBound(size, blockSize) >= MAX32
}

const encoder = new TextEncoder()

/**
 * The fields the local and the central header share, in the same order (APPNOTE 4.3.7 and
 * 4.3.12), from "version needed to extract" to "extra field length": 26 bytes from `at`.
 */
function writeSharedFields(
  dv: DataView,
  at: number,
  entry: EntryHeader,
  version: number,
  nameLength: number,
  extraLength: number,
): void {
  dv.setUint16(at, version, true)
  dv.setUint16(at + 2, entry.descriptor ? FLAG_DATA_DESCRIPTOR : 0, true)
  dv.setUint16(at + 4, entry.method, true)
  dv.setUint16(at + 6, DOS_TIME_MIDNIGHT, true)
  dv.setUint16(at + 8, DOS_DATE_1980, true)
  dv.setUint32(at + 10, entry.crc32 >>> 0, true)
  dv.setUint32(at + 14, entry.zip64 ? MAX32 : entry.compressedSize, true)
  dv.setUint32(at + 18, entry.zip64 ? MAX32 : entry.uncompressedSize, true)
  dv.setUint16(at + 22, nameLength, true)
  dv.setUint16(at + 24, extraLength, true)
}

export function localHeader(header: EntryHeader): Uint8Array {
  // With a data descriptor, the local header knows none of the three values.
  const entry = header.descriptor ? { ...header, crc32: 0, compressedSize: 0, uncompressedSize: 0 } : header
  const name = encoder.encode(entry.name)
  const extraLength = entry.zip64 ? 20 : 0
  const out = new Uint8Array(30 + name.length + extraLength)
  const dv = new DataView(out.buffer)
  dv.setUint32(0, SIG_LOCAL, true)
  writeSharedFields(dv, 4, entry, entry.zip64 ? VERSION_ZIP64 : VERSION_DEFLATE, name.length, extraLength)
  out.set(name, 30)
  if (entry.zip64) {
    const at = 30 + name.length
    dv.setUint16(at, ZIP64_EXTRA_ID, true)
    dv.setUint16(at + 2, 16, true)
    dv.setBigUint64(at + 4, BigInt(entry.uncompressedSize), true)
    dv.setBigUint64(at + 12, BigInt(entry.compressedSize), true)
  }
  return out
}

export function centralHeader(entry: CentralEntry, forceZip64 = false): Uint8Array {
  const name = encoder.encode(entry.name)
  const offsetZip64 = forceZip64 || entry.localHeaderOffset >= MAX32
  const fields: number[] = []
  if (entry.zip64) fields.push(entry.uncompressedSize, entry.compressedSize)
  if (offsetZip64) fields.push(entry.localHeaderOffset)
  const extraLength = fields.length ? 4 + 8 * fields.length : 0
  const zip64 = fields.length > 0
  const out = new Uint8Array(46 + name.length + extraLength)
  const dv = new DataView(out.buffer)
  const version = zip64 ? VERSION_ZIP64 : VERSION_DEFLATE
  dv.setUint32(0, SIG_CENTRAL, true)
  dv.setUint16(4, MADE_BY_UNIX | version, true)
  writeSharedFields(dv, 6, entry, version, name.length, extraLength)
  dv.setUint16(32, 0, true) // comment
  dv.setUint16(34, 0, true) // disk
  dv.setUint16(36, 0, true) // internal attributes
  dv.setUint32(38, EXTERNAL_ATTRIBUTES, true)
  dv.setUint32(42, offsetZip64 ? MAX32 : entry.localHeaderOffset, true)
  out.set(name, 46)
  if (zip64) {
    let at = 46 + name.length
    dv.setUint16(at, ZIP64_EXTRA_ID, true)
    dv.setUint16(at + 2, 8 * fields.length, true)
    at += 4
    for (const value of fields) {
      dv.setBigUint64(at, BigInt(value), true)
      at += 8
    }
  }
  return out
}

/** The data descriptor after a `descriptor` entry's data: signature, CRC, compressed and uncompressed sizes. */
export function dataDescriptor(entry: EntryHeader): Uint8Array {
  const out = new Uint8Array(entry.zip64 ? 24 : 16)
  const dv = new DataView(out.buffer)
  dv.setUint32(0, SIG_DATA_DESCRIPTOR, true)
  dv.setUint32(4, entry.crc32 >>> 0, true)
  if (entry.zip64) {
    dv.setBigUint64(8, BigInt(entry.compressedSize), true)
    dv.setBigUint64(16, BigInt(entry.uncompressedSize), true)
  } else {
    dv.setUint32(8, entry.compressedSize, true)
    dv.setUint32(12, entry.uncompressedSize, true)
  }
  return out
}

/** ZIP64 end record and locator (when needed), then the classic end record. */
export function endRecords(options: {
  entryCount: number
  centralDirectoryOffset: number
  centralDirectorySize: number
  anyZip64: boolean
  forceZip64?: boolean
}): Uint8Array {
  const { entryCount, centralDirectoryOffset: cdOffset, centralDirectorySize: cdSize } = options
  const zip64 = options.forceZip64 || options.anyZip64 || entryCount >= 0xffff || cdOffset >= MAX32 || cdSize >= MAX32
  const out = new Uint8Array((zip64 ? 56 + 20 : 0) + 22)
  const dv = new DataView(out.buffer)
  let at = 0
  if (zip64) {
    const recordOffset = cdOffset + cdSize
    dv.setUint32(0, SIG_ZIP64_EOCD, true)
    dv.setBigUint64(4, 44n, true) // size of the rest of this record
    dv.setUint16(12, MADE_BY_UNIX | VERSION_ZIP64, true)
    dv.setUint16(14, VERSION_ZIP64, true)
    dv.setUint32(16, 0, true)
    dv.setUint32(20, 0, true)
    dv.setBigUint64(24, BigInt(entryCount), true)
    dv.setBigUint64(32, BigInt(entryCount), true)
    dv.setBigUint64(40, BigInt(cdSize), true)
    dv.setBigUint64(48, BigInt(cdOffset), true)
    dv.setUint32(56, SIG_ZIP64_LOCATOR, true)
    dv.setUint32(60, 0, true)
    dv.setBigUint64(64, BigInt(recordOffset), true)
    dv.setUint32(72, 1, true)
    at = 76
  }
  // With ZIP64 records present the classic fields are set to their "see ZIP64" markers only
  // when forced; otherwise they keep the real values when these fit, as Python does.
  const force = options.forceZip64 === true
  dv.setUint32(at, SIG_EOCD, true)
  dv.setUint16(at + 4, 0, true)
  dv.setUint16(at + 6, 0, true)
  dv.setUint16(at + 8, force ? 0xffff : Math.min(entryCount, 0xffff), true)
  dv.setUint16(at + 10, force ? 0xffff : Math.min(entryCount, 0xffff), true)
  dv.setUint32(at + 12, force ? MAX32 : Math.min(cdSize, MAX32), true)
  dv.setUint32(at + 16, force ? MAX32 : Math.min(cdOffset, MAX32), true)
  dv.setUint16(at + 20, 0, true)
  return out
}
