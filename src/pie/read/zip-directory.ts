/**
 * The central directory as Python 3.11's zipfile reads it (`_EndRecData`, `_EndRecData64`,
 * `_RealGetContents`, `ZipInfo._decodeExtra`), since that is what cairo-lang's `from_file`
 * opens: the end record is the last "PK\5\6" in the file's last 64 KiB (its comment length is
 * not checked); ZIP64 records are read from just before it (the locator's offset is not used);
 * bytes before the archive shift every offset; records are read until the directory's declared
 * size is used up, whatever the end record counts; the last record of a name wins. Everything
 * Python refuses is refused here with the reason `cairo-lang`; whatever it tolerates is kept, as
 * written, for the layout checks (./zip-layout.ts) to refuse as ambiguous.
 */
import {
  type ByteSource,
  MAX32,
  SIG_CENTRAL,
  SIG_EOCD,
  SIG_ZIP64_EOCD,
  SIG_ZIP64_LOCATOR,
  ZIP64_EXTRA_ID,
  type ZipDirectory,
  type ZipEnd,
  type ZipEntry,
  ZipFormatError,
  decodeName,
  u64,
  view,
} from './zip.ts'

const EOCD_SIZE = 22
const LOCATOR_SIZE = 20
const ZIP64_EOCD_SIZE = 56
const MAX_COMMENT = 0xffff
/** Python's MAX_EXTRACT_VERSION: a record needing a later version raises NotImplementedError. */
export const PYTHON_MAX_EXTRACT_VERSION = 63

const NOT_A_ZIP = 'no end-of-central-directory record Python can read (not a zip file, or truncated)'

/** The last index of the end record's signature in `bytes`, below `before`. */
export function lastEndSignature(bytes: Uint8Array, before = bytes.length): number {
  for (let at = Math.min(before, bytes.length) - 4; at >= 0; at--) {
    if (bytes[at] === 0x50 && bytes[at + 1] === 0x4b && bytes[at + 2] === 0x05 && bytes[at + 3] === 0x06) return at
  }
  return -1
}

async function readEnd(source: ByteSource): Promise<ZipEnd> {
  const size = source.size
  if (size < EOCD_SIZE) throw new ZipFormatError(NOT_A_ZIP)
  const tailStart = Math.max(size - MAX_COMMENT - 1 - EOCD_SIZE, 0)
  const tail = await source.read(tailStart, size - tailStart)
  const tv = view(tail)
  // Python first tries the last 22 bytes as a record with no comment, then the last signature.
  let at = tail.length - EOCD_SIZE
  if (!(tv.getUint32(at, true) === SIG_EOCD && tv.getUint16(at + 20, true) === 0)) {
    at = lastEndSignature(tail)
    if (at < 0 || at + EOCD_SIZE > tail.length) throw new ZipFormatError(NOT_A_ZIP)
  }
  const offset = tailStart + at
  const end: ZipEnd = {
    offset,
    trailing: size - offset - EOCD_SIZE,
    disk: tv.getUint16(at + 4, true),
    diskWithDirectory: tv.getUint16(at + 6, true),
    entriesOnDisk: tv.getUint16(at + 8, true),
    entries: tv.getUint16(at + 10, true),
    directorySize: tv.getUint32(at + 12, true),
    directoryOffset: tv.getUint32(at + 16, true),
    commentLength: tv.getUint16(at + 20, true),
    directoryStart: 0,
    shift: 0,
  }
  await readZip64End(source, end)
  return end
}

/** Python's _EndRecData64: a locator right before the end record, and the ZIP64 record right before it. */
async function readZip64End(source: ByteSource, end: ZipEnd): Promise<void> {
  if (end.offset < LOCATOR_SIZE) return
  const locator = await source.read(end.offset - LOCATOR_SIZE, LOCATOR_SIZE)
  const lv = view(locator)
  if (lv.getUint32(0, true) !== SIG_ZIP64_LOCATOR) return
  const locatorDisk = lv.getUint32(4, true)
  const locatorDisks = lv.getUint32(16, true)
  if (locatorDisk !== 0 || locatorDisks > 1)
    throw new ZipFormatError(
      "the ZIP64 locator says the archive spans several disks, which Python's zipfile does not read",
    )
  const recordOffset = end.offset - LOCATOR_SIZE - ZIP64_EOCD_SIZE
  // Python seeks there; before the start of the file that is an OSError, "not a zip file".
  if (recordOffset < 0) throw new ZipFormatError(NOT_A_ZIP)
  const record = await source.read(recordOffset, ZIP64_EOCD_SIZE)
  const rv = view(record)
  if (rv.getUint32(0, true) !== SIG_ZIP64_EOCD) {
    end.orphanLocator = true
    return
  }
  end.zip64 = {
    recordOffset,
    recordSize: u64(rv, 4),
    versionNeeded: rv.getUint16(14, true),
    disk: rv.getUint32(16, true),
    diskWithDirectory: rv.getUint32(20, true),
    entriesOnDisk: u64(rv, 24),
    entries: u64(rv, 32),
    directorySize: u64(rv, 40),
    directoryOffset: u64(rv, 48),
    locatorDisk,
    locatorRecordOffset: u64(lv, 8),
    locatorDisks,
  }
}

/** The fields of an extra field as Python walks them: each id and its data; throws where Python does. */
export function* extraFields(extra: Uint8Array): Generator<{ id: number; data: Uint8Array; at: number }> {
  const ev = view(extra)
  let at = 0
  while (extra.length - at >= 4) {
    const id = ev.getUint16(at, true)
    const size = ev.getUint16(at + 2, true)
    if (at + 4 + size > extra.length)
      throw new ZipFormatError(
        `a corrupt extra field: field 0x${id.toString(16).padStart(4, '0')} declares ${size} bytes, ${extra.length - at - 4} follow`,
      )
    yield { id, data: extra.subarray(at + 4, at + 4 + size), at }
    at += 4 + size
  }
}

export async function readZipDirectory(source: ByteSource): Promise<ZipDirectory> {
  const end = await readEnd(source)
  const z = end.zip64
  const directorySize = z ? z.directorySize : end.directorySize
  const directoryOffset = z ? z.directoryOffset : end.directoryOffset
  // Python's "concat": the bytes before the archive, inferred from where the records end.
  const shift = (z ? z.recordOffset : end.offset) - directorySize - directoryOffset
  const start = directoryOffset + shift
  if (start < 0) throw new ZipFormatError('bad offset for the central directory')
  end.shift = shift
  end.directoryStart = start

  const cd = await source.read(start, directorySize)
  const cv = view(cd)
  const entries: ZipEntry[] = []
  let at = 0
  while (at < directorySize) {
    const where = `central directory record ${entries.length} (byte ${start + at})`
    if (at + 46 > cd.length)
      throw new ZipFormatError(`${where}: the central directory is truncated (it declares ${directorySize} bytes)`)
    if (cv.getUint32(at, true) !== SIG_CENTRAL)
      throw new ZipFormatError(
        `${where}: bad signature for a central directory record (the directory declares ${directorySize} bytes)`,
      )
    const flags = cv.getUint16(at + 8, true)
    const nameLength = cv.getUint16(at + 28, true)
    const extraLength = cv.getUint16(at + 30, true)
    const commentLength = cv.getUint16(at + 32, true)
    // Python reads what there is of each part (short at the directory's end).
    const nameBytes = cd.subarray(at + 46, Math.min(cd.length, at + 46 + nameLength))
    const extra = cd.subarray(
      Math.min(cd.length, at + 46 + nameLength),
      Math.min(cd.length, at + 46 + nameLength + extraLength),
    )
    const name = decodeName(nameBytes, flags, where)
    const versionNeeded = cv.getUint16(at + 6, true)
    // Python reads only the low byte as the version.
    if ((versionNeeded & 0xff) > PYTHON_MAX_EXTRACT_VERSION) {
      throw new ZipFormatError(
        `entry "${name}" needs zip version ${((versionNeeded & 0xff) / 10).toFixed(1)} to extract; Python's zipfile reads up to ${PYTHON_MAX_EXTRACT_VERSION / 10}`,
      )
    }
    let uncompressedSize = cv.getUint32(at + 24, true)
    let compressedSize = cv.getUint32(at + 20, true)
    let localHeaderOffset = cv.getUint32(at + 42, true)
    const written: [number, number, number] = [uncompressedSize, compressedSize, localHeaderOffset]
    let zip64 = false
    for (const field of extraFields(extra)) {
      if (field.id !== ZIP64_EXTRA_ID) continue
      zip64 = true
      const fv = view(field.data)
      let p = 0
      const next = (what: string) => {
        if (p + 8 > field.data.length)
          throw new ZipFormatError(`entry "${name}": a corrupt ZIP64 extra field (${what} not found)`)
        const value = u64(fv, p)
        p += 8
        return value
      }
      if (uncompressedSize === MAX32) uncompressedSize = next('the file size')
      if (compressedSize === MAX32) compressedSize = next('the compressed size')
      if (localHeaderOffset === MAX32) localHeaderOffset = next('the header offset')
    }
    entries.push({
      name,
      nameBytes,
      method: cv.getUint16(at + 10, true),
      flags,
      crc32: cv.getUint32(at + 16, true),
      compressedSize,
      uncompressedSize,
      localHeaderOffset: localHeaderOffset + shift,
      versionMadeBy: cv.getUint16(at + 4, true),
      versionNeeded,
      diskStart: cv.getUint16(at + 34, true),
      externalAttributes: cv.getUint32(at + 38, true),
      extra,
      written,
      recordOffset: start + at,
      recordLength: 46 + nameLength + extraLength + commentLength,
      zip64,
      isDirectory: name.endsWith('/') || name.endsWith('\\'),
    })
    at += 46 + nameLength + extraLength + commentLength
  }
  return { entries, zip64: z !== undefined, end }
}
