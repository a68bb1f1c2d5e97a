/**
 * What makes a zip mean one thing: every structure a second reader could read differently from
 * Python's zipfile is refused here (reason `ambiguous-container`), whatever Python does with it.
 * cairo-vm's zip crate counts the end record's entries where Python uses the directory's size;
 * unzip and the zip crate scan for the end record differently; Python 3.11.8 and later refuse
 * overlapping entries that 3.11.7 reads; a streaming reader walks the local headers, not the
 * directory. So the archive must be laid out as every writer lays it: local header, data and
 * (with flag bit 3) its data descriptor, entry after entry from byte 0 with nothing between,
 * then the directory's records, exactly as many and as long as the end record says, then the
 * ZIP64 records if any, then the end record and its comment, the end of the file. Each local
 * header repeats its record (name, flags, method, CRC and sizes, or zeros before a descriptor
 * that does); versions, flags and extra fields are those the writers emit. What legitimate
 * writers produce passes: Python's zipfile (a ZIP64 extra on small entries, descriptors when
 * streaming), Info-ZIP, libzip and Rust's zip crate (ZIP64 markers in small local headers).
 */
import { extraFields, lastEndSignature } from './zip-directory.ts'
import {
  type ByteSource,
  FLAG_DATA_DESCRIPTOR,
  MAX32,
  SIG_DATA_DESCRIPTOR,
  SIG_LOCAL,
  ZIP64_EXTRA_ID,
  type ZipDirectory,
  type ZipEntry,
  view,
} from './zip.ts'

/** DEFLATE (2.0) and ZIP64 (4.5): the most a PIE's zip needs. Python reads up to 6.3, the zip crate does not look. */
export const MAX_VERSION_NEEDED = 45
/** Flag bits the writers set on a PIE's entries: 1-2 (DEFLATE level), 3 (data descriptor), 11 (UTF-8 name). */
export const ALLOWED_FLAGS = 0x0002 | 0x0004 | FLAG_DATA_DESCRIPTOR | 0x0800

const S_IFMT = 0o170000
const S_IFREG = 0o100000
const HOST_UNIX = 3
const DOS_DIRECTORY = 0x10

type Values = { crc32: number; compressedSize: number; uncompressedSize: number }

/**
 * Every ambiguity of the zip read as `directory` (from readZipDirectory), one line each. Reads
 * the local headers and data descriptors, not the data (readZipEntry checks that).
 */
export async function checkZipLayout(source: ByteSource, directory: ZipDirectory): Promise<string[]> {
  const problems: string[] = []
  const { end, entries } = directory
  const z = end.zip64

  // The end records.
  if (end.trailing !== end.commentLength) {
    problems.push(
      end.trailing > end.commentLength
        ? `${end.trailing - end.commentLength} bytes follow the end record and its ${end.commentLength}-byte comment; readers that find the end record by its comment length find none`
        : `the end record's comment declares ${end.commentLength} bytes, ${end.trailing} follow`,
    )
  }
  const tail = await source.read(Math.max(0, end.offset - 0xffff - 22), Math.min(end.offset, 0xffff + 22))
  const base = Math.max(0, end.offset - 0xffff - 22)
  for (let at = lastEndSignature(tail); at >= 0; at = lastEndSignature(tail, at + 3)) {
    // Another end record whose comment would run to the end of the file: the one Python reads is inside its comment.
    if (at + 22 <= tail.length && base + at + 22 + view(tail).getUint16(at + 20, true) === source.size) {
      problems.push(
        `the end record's signature also stands at byte ${base + at}, where an end record whose comment holds the real one begins; readers differ on which is the archive's`,
      )
      break
    }
  }
  if (end.orphanLocator)
    problems.push(
      'a ZIP64 locator stands before the end record without a ZIP64 end record before it; Python ignores it, other readers follow it',
    )
  const records = entries.length
  const classic = (value: number, real: number, marker: number, what: string) => {
    if (value !== real && !(z && value === marker))
      problems.push(`the end record says ${what} ${value}, the archive has ${real}`)
  }
  classic(end.disk, 0, 0xffff, 'disk number')
  classic(end.diskWithDirectory, 0, 0xffff, 'the directory starts on disk')
  classic(end.entriesOnDisk, records, 0xffff, 'entries on this disk:')
  classic(end.entries, records, 0xffff, 'entries:')
  if (z) {
    classic(end.directorySize, z.directorySize, MAX32, 'the directory is bytes long:')
    classic(end.directoryOffset, z.directoryOffset, MAX32, 'the directory starts at byte')
    if (z.entries !== records || z.entriesOnDisk !== records)
      problems.push(
        `the ZIP64 end record counts ${z.entries} entries (${z.entriesOnDisk} on this disk); the directory holds ${records} records`,
      )
    if (z.disk !== 0 || z.diskWithDirectory !== 0 || z.locatorDisks !== 1)
      problems.push('the ZIP64 records name disks other than one single disk')
    if (z.recordSize !== 44)
      problems.push(
        `the ZIP64 end record declares ${z.recordSize} bytes after its first 12 (44 without extensible data, where Python reads it)`,
      )
    if (z.locatorRecordOffset !== z.recordOffset)
      problems.push(
        `the ZIP64 locator points at byte ${z.locatorRecordOffset}; the ZIP64 end record Python reads is at byte ${z.recordOffset}`,
      )
    if (z.versionNeeded > MAX_VERSION_NEEDED)
      problems.push(`the ZIP64 end record needs version ${z.versionNeeded / 10} to extract`)
  }
  if (end.shift !== 0) {
    const what =
      end.shift > 0
        ? `${end.shift} bytes stand before the archive (or between its directory and end record)`
        : 'the end record places the directory past where it ends'
    problems.push(
      `${what}: the directory is read at byte ${end.directoryStart}, the end record says ${end.directoryOffset}; readers differ on where entries are`,
    )
  }

  // The directory's records: exactly as many as counted, filling exactly its declared size.
  const declaredSize = z ? z.directorySize : end.directorySize
  const used = entries.reduce((sum, entry) => sum + entry.recordLength, 0)
  if (used !== declaredSize)
    problems.push(`the directory's records take ${used} bytes, the end record declares ${declaredSize}`)
  if (end.directoryStart + declaredSize > source.size)
    problems.push(`the directory (${declaredSize} bytes from byte ${end.directoryStart}) runs past the end of the file`)
  for (const entry of entries) problems.push(...recordProblems(entry, end.shift))

  // The entries, in file order: from byte 0, each right after the previous, the directory right after the last.
  const ordered = [...entries].sort(
    (a, b) => a.localHeaderOffset - b.localHeaderOffset || a.recordOffset - b.recordOffset,
  )
  let expected = 0
  for (const entry of ordered) {
    if (entry.localHeaderOffset !== expected) {
      problems.push(
        entry.localHeaderOffset < expected
          ? `entry "${entry.name}" (local header at byte ${entry.localHeaderOffset}) overlaps the one before it, which ends at byte ${expected}: Python 3.11.8 and 3.12.2 on refuse it`
          : `bytes ${expected}-${entry.localHeaderOffset} before entry "${entry.name}" belong to no entry (a streaming reader would read them as another file)`,
      )
    }
    const local = await localProblems(source, entry)
    problems.push(...local.problems)
    expected = Math.max(expected, local.end)
  }
  if (ordered.length && expected !== end.directoryStart) {
    problems.push(
      expected > end.directoryStart
        ? `the last entry ends at byte ${expected}, past the directory's start (byte ${end.directoryStart})`
        : `bytes ${expected}-${end.directoryStart} between the last entry and the directory belong to no entry`,
    )
  }
  return problems
}

function recordProblems(entry: ZipEntry, shift: number): string[] {
  const problems: string[] = []
  const name = `entry "${entry.name}"`
  if (entry.versionNeeded > MAX_VERSION_NEEDED)
    problems.push(
      `${name} needs version ${entry.versionNeeded} to extract (a PIE needs 20, or 45 with ZIP64); readers that check it refuse it`,
    )
  if (entry.flags & ~ALLOWED_FLAGS)
    problems.push(
      `${name} sets general-purpose flag bits 0x${(entry.flags & ~ALLOWED_FLAGS).toString(16)}, which readers honour differently (encryption, patched data, reserved bits)`,
    )
  if (entry.diskStart !== 0)
    problems.push(`${name} starts on disk ${entry.diskStart}; Python ignores the disk number, other readers refuse it`)
  const host = entry.versionMadeBy >>> 8
  const type = (entry.externalAttributes >>> 16) & S_IFMT
  if (host === HOST_UNIX && type !== 0 && type !== S_IFREG) {
    problems.push(
      `${name} is marked as a ${type === 0o120000 ? 'symbolic link' : 'folder or special file'} (mode 0${type.toString(8)}): unzip makes that, Python reads its bytes`,
    )
  } else if (entry.externalAttributes & DOS_DIRECTORY && !entry.isDirectory) {
    problems.push(
      `${name} is marked as a folder (attribute 0x10): extracting tools make a folder, Python reads its bytes`,
    )
  }
  // (The offset as the record holds it, before Python adds the bytes before the archive.)
  const resolved = [entry.uncompressedSize, entry.compressedSize, entry.localHeaderOffset - shift]
  const markers = entry.written.map((value) => value === MAX32)
  problems.push(
    ...extraProblems(entry.extra, `${name}'s directory record`, (data) => centralZip64(data, resolved, markers)),
  )
  return problems
}

/**
 * A directory record's ZIP64 field: Python (and APPNOTE) take a value for each 32-bit field that
 * holds the marker, in order; a reader that takes the values in their fixed order whatever the
 * fields hold must get the same numbers. So the field holds exactly the marked values, or the
 * fixed-order values and each is the one Python resolves.
 */
function centralZip64(data: Uint8Array, resolved: number[], markers: boolean[]): string | undefined {
  const marked = markers.filter(Boolean).length
  if (data.length === 8 * marked) return undefined
  const dv = view(data)
  if (data.length % 8 === 0 && data.length <= 24) {
    let same = true
    for (let k = 0; k < data.length / 8; k++) same &&= Number(dv.getBigUint64(8 * k, true)) === resolved[k]
    if (same) return undefined
  }
  return `its ZIP64 extra field holds ${data.length} bytes for ${marked} field${marked === 1 ? '' : 's'} marked 0xFFFFFFFF, values readers take differently`
}

/** The extra field's fields: well formed (each within, nothing left over), at most one ZIP64 field, that one as `zip64` accepts. */
function extraProblems(extra: Uint8Array, where: string, zip64: (data: Uint8Array) => string | undefined): string[] {
  const problems: string[] = []
  let count = 0
  let end = 0
  try {
    for (const field of extraFields(extra)) {
      end = field.at + 4 + field.data.length
      if (field.id !== ZIP64_EXTRA_ID) continue
      if (++count === 2) problems.push(`${where}: two ZIP64 extra fields; readers take one or the other`)
      const problem = zip64(field.data)
      if (problem) problems.push(`${where}: ${problem}`)
    }
    if (end !== extra.length)
      problems.push(`${where}: ${extra.length - end} bytes at the end of the extra field belong to no field`)
  } catch (error) {
    problems.push(`${where}: ${(error as Error).message} (Python's zipfile refuses it where it reads it)`)
  }
  return problems
}

/** The local header of `entry` against its record, and where the entry (with its descriptor) ends. */
async function localProblems(source: ByteSource, entry: ZipEntry): Promise<{ problems: string[]; end: number }> {
  const problems: string[] = []
  const at = entry.localHeaderOffset
  const name = `entry "${entry.name}"`
  const header = await source.read(at, 30)
  if (at < 0) return { problems: [`${name}: its local header would be at byte ${at}, before the file`], end: 0 }
  if (header.length < 30 || view(header).getUint32(0, true) !== SIG_LOCAL) {
    return { problems: [`${name}: no local header at byte ${at}`], end: at + entry.compressedSize }
  }
  const hv = view(header)
  const nameLength = hv.getUint16(26, true)
  const extraLength = hv.getUint16(28, true)
  const rest = await source.read(at + 30, nameLength + extraLength)
  const localName = rest.subarray(0, nameLength)
  const localExtra = rest.subarray(nameLength)
  const flags = hv.getUint16(6, true)
  const version = hv.getUint16(4, true)
  if (Buffer.compare(Buffer.from(localName), Buffer.from(entry.nameBytes)) !== 0) {
    problems.push(
      `${name}: its local header at byte ${at} names ${JSON.stringify(Buffer.from(localName).toString('latin1'))}; readers of the local headers see another file`,
    )
  }
  if (flags !== entry.flags)
    problems.push(
      `${name}: its local header's flags are 0x${flags.toString(16)}, its record's 0x${entry.flags.toString(16)}`,
    )
  if (version > MAX_VERSION_NEEDED) problems.push(`${name}: its local header needs version ${version} to extract`)
  const method = hv.getUint16(8, true)
  if (method !== entry.method)
    problems.push(`${name}: its local header says compression method ${method}, its record ${entry.method}`)
  const written = {
    crc32: hv.getUint32(14, true),
    compressedSize: hv.getUint32(18, true),
    uncompressedSize: hv.getUint32(22, true),
  }
  const descriptor = (entry.flags & FLAG_DATA_DESCRIPTOR) !== 0
  let zip64: Values | undefined
  problems.push(
    ...extraProblems(localExtra, `${name}'s local header`, (data) => {
      if (data.length !== 16)
        return `its ZIP64 extra field holds ${data.length} bytes, not the two sizes a local header's holds`
      const dv = view(data)
      zip64 = {
        crc32: written.crc32,
        uncompressedSize: Number(dv.getBigUint64(0, true)),
        compressedSize: Number(dv.getBigUint64(8, true)),
      }
      return undefined
    }),
  )
  const dataStart = at + 30 + nameLength + extraLength
  const dataEnd = dataStart + entry.compressedSize
  // The local values: a marked size from the ZIP64 field; every ZIP64 value must agree too.
  const localValue = (key: keyof Values) =>
    key !== 'crc32' && written[key] === MAX32 && zip64 ? zip64[key] : written[key]
  const agrees = (key: keyof Values) => {
    const value = localValue(key)
    const fromZip64 = zip64 ? zip64[key] : value
    const ok = (v: number) => v === entry[key] || (descriptor && v === 0)
    return ok(value) && ok(fromZip64)
  }
  const disagreeing = (['crc32', 'compressedSize', 'uncompressedSize'] as const).filter((key) => !agrees(key))
  if (disagreeing.length) {
    const shown = { crc32: 'CRC-32', compressedSize: 'compressed size', uncompressedSize: 'size' }
    const local = disagreeing.map((key) => `${shown[key]} (${localValue(key)})`).join(', ')
    const recorded = disagreeing.map((key) => entry[key]).join(', ')
    problems.push(
      `${name}: its local header's ${local} disagree${disagreeing.length === 1 ? 's' : ''} with its record (${recorded})`,
    )
  }
  if (!descriptor) return { problems, end: dataEnd }
  // The data descriptor: CRC and sizes (8 bytes each with ZIP64), with or without its signature.
  const wide = zip64 !== undefined
  const length = wide ? 20 : 12
  const bytes = await source.read(dataEnd, length + 4)
  const dv = view(bytes)
  const read = (from: number): Values | undefined =>
    bytes.length < from + length
      ? undefined
      : {
          crc32: dv.getUint32(from, true),
          compressedSize: wide ? Number(dv.getBigUint64(from + 4, true)) : dv.getUint32(from + 4, true),
          uncompressedSize: wide ? Number(dv.getBigUint64(from + 12, true)) : dv.getUint32(from + 8, true),
        }
  const same = (values: Values | undefined) =>
    values !== undefined &&
    values.crc32 === entry.crc32 &&
    values.compressedSize === entry.compressedSize &&
    values.uncompressedSize === entry.uncompressedSize
  const signed = bytes.length >= 4 && dv.getUint32(0, true) === SIG_DATA_DESCRIPTOR
  if (signed && same(read(4))) return { problems, end: dataEnd + 4 + length }
  if (same(read(0))) return { problems, end: dataEnd + length }
  problems.push(
    `${name}: flag bit 3 says a data descriptor follows its data (byte ${dataEnd}), but none there gives its record's CRC-32 and sizes`,
  )
  return { problems, end: dataEnd + (signed ? 4 : 0) + length }
}
