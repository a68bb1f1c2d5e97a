/**
 * A zip taken apart into its records and put back together, for the container fuzzer
 * (test/helpers/zip-fuzz.ts): every local header, data descriptor, directory record, ZIP64
 * record and the end record, each field by name. `parseZip` reads a well-formed zip (a real
 * PIE); `writeZip` lays the model out again, computing offsets, counts and sizes unless a
 * mutation pinned them, and says where each field landed so that a mutation can also poke one
 * field's bytes after the layout.
 */
import { readFile } from 'node:fs/promises'

export type Fields = Record<string, number>

export type ModelEntry = {
  /** Local header fields: version, flags, method, time, date, crc, csize, usize (the 32-bit values written). */
  local: Fields
  localName: Uint8Array
  localExtra: Uint8Array
  /** The compressed bytes. */
  data: Uint8Array
  /** The data descriptor's bytes as written after the data (empty when none). */
  descriptor: Uint8Array
  /** Directory record fields: madeBy, version, flags, method, time, date, crc, csize, usize, disk, internal, external, offset. */
  central: Fields
  centralName: Uint8Array
  centralExtra: Uint8Array
  comment: Uint8Array
  /** The record's offset field is computed from the layout unless pinned. */
  pinnedOffset?: boolean
}

export type ZipModel = {
  /** Bytes before the first local header. */
  prefix: Uint8Array
  /** Entries in file order; `records` lists which go in the directory, in its order (an index may repeat). */
  entries: ModelEntry[]
  records: number[]
  /** Bytes between the last entry and the directory, and between the directory and the end records. */
  beforeDirectory: Uint8Array
  afterDirectory: Uint8Array
  zip64: boolean
  /** End record fields; counts, size and offset are computed unless pinned (`pinned`). */
  end: Fields
  pinned: Set<string>
  comment: Uint8Array
  /** The comment length written, when it is not the comment's length. */
  commentLength?: number
  /** Bytes after the comment. */
  suffix: Uint8Array
}

const u16 = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8)
const u32 = (b: Uint8Array, at: number) => (u16(b, at) | (u16(b, at + 2) << 16)) >>> 0

const LOCAL_FIELDS: [string, number, 2 | 4][] = [
  ['version', 4, 2],
  ['flags', 6, 2],
  ['method', 8, 2],
  ['time', 10, 2],
  ['date', 12, 2],
  ['crc', 14, 4],
  ['csize', 18, 4],
  ['usize', 22, 4],
]
const CENTRAL_FIELDS: [string, number, 2 | 4][] = [
  ['madeBy', 4, 2],
  ['version', 6, 2],
  ['flags', 8, 2],
  ['method', 10, 2],
  ['time', 12, 2],
  ['date', 14, 2],
  ['crc', 16, 4],
  ['csize', 20, 4],
  ['usize', 24, 4],
  ['disk', 34, 2],
  ['internal', 36, 2],
  ['external', 38, 4],
  ['offset', 42, 4],
]
const END_FIELDS: [string, number, 2 | 4][] = [
  ['disk', 4, 2],
  ['diskWithDirectory', 6, 2],
  ['entriesOnDisk', 8, 2],
  ['entries', 10, 2],
  ['size', 12, 4],
  ['offset', 16, 4],
]

function readFields(bytes: Uint8Array, at: number, layout: [string, number, 2 | 4][]): Fields {
  const fields: Fields = {}
  for (const [name, offset, size] of layout)
    fields[name] = size === 2 ? u16(bytes, at + offset) : u32(bytes, at + offset)
  return fields
}

/** A well-formed zip (one whose records all agree) as a model. */
export function parseZip(bytes: Uint8Array): ZipModel {
  const eocd =
    bytes.length -
    22 -
    (() => {
      for (let at = bytes.length - 22; at >= 0; at--) if (u32(bytes, at) === 0x06054b50) return bytes.length - 22 - at
      throw new Error('no end record')
    })()
  const zip64 = eocd >= 20 && u32(bytes, eocd - 20) === 0x07064b50
  let count = u16(bytes, eocd + 10)
  let cdOffset = u32(bytes, eocd + 16)
  if (zip64) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset)
    count = Number(dv.getBigUint64(eocd - 76 + 32, true))
    cdOffset = Number(dv.getBigUint64(eocd - 76 + 48, true))
  }
  const entries: ModelEntry[] = []
  let at = cdOffset
  for (let k = 0; k < count; k++) {
    const central = readFields(bytes, at, CENTRAL_FIELDS)
    const n = u16(bytes, at + 28)
    const e = u16(bytes, at + 30)
    const c = u16(bytes, at + 32)
    const centralName = bytes.slice(at + 46, at + 46 + n)
    const centralExtra = bytes.slice(at + 46 + n, at + 46 + n + e)
    const comment = bytes.slice(at + 46 + n + e, at + 46 + n + e + c)
    at += 46 + n + e + c
    let offset = central.offset!
    let csize = central.csize!
    // The ZIP64 field of the record, for the offset and compressed size of a forced-ZIP64 zip.
    for (let p = 0; p + 4 <= centralExtra.length; p += 4 + u16(centralExtra, p + 2)) {
      if (u16(centralExtra, p) !== 1) continue
      const dv = new DataView(centralExtra.buffer, centralExtra.byteOffset + p + 4)
      let q = 0
      if (central.usize === 0xffffffff) q += 8
      if (central.csize === 0xffffffff) (csize = Number(dv.getBigUint64(q, true))), (q += 8)
      if (central.offset === 0xffffffff) offset = Number(dv.getBigUint64(q, true))
    }
    const local = readFields(bytes, offset, LOCAL_FIELDS)
    const ln = u16(bytes, offset + 26)
    const le = u16(bytes, offset + 28)
    const dataStart = offset + 30 + ln + le
    const data = bytes.slice(dataStart, dataStart + csize)
    const next = dataStart + csize
    let descriptor = new Uint8Array()
    if (local.flags! & 8) {
      const wide = local.csize === 0xffffffff
      const length = (u32(bytes, next) === 0x08074b50 ? 4 : 0) + (wide ? 20 : 12)
      descriptor = bytes.slice(next, next + length)
    }
    entries.push({
      local,
      localName: bytes.slice(offset + 30, offset + 30 + ln),
      localExtra: bytes.slice(offset + 30 + ln, dataStart),
      data,
      descriptor,
      central,
      centralName,
      centralExtra,
      comment,
    })
  }
  const commentLength = u16(bytes, eocd + 20)
  return {
    prefix: new Uint8Array(),
    entries,
    records: entries.map((_, i) => i),
    beforeDirectory: new Uint8Array(),
    afterDirectory: new Uint8Array(),
    zip64,
    end: readFields(bytes, eocd, END_FIELDS),
    pinned: new Set(),
    comment: bytes.slice(eocd + 22, eocd + 22 + commentLength),
    suffix: new Uint8Array(),
  }
}

export async function parseZipFile(path: string): Promise<ZipModel> {
  return parseZip(await readFile(path))
}

export function cloneModel(model: ZipModel): ZipModel {
  return {
    ...model,
    entries: model.entries.map((e) => ({ ...e, local: { ...e.local }, central: { ...e.central } })),
    records: [...model.records],
    end: { ...model.end },
    pinned: new Set(model.pinned),
  }
}

/** Where a field of the written zip is: its byte offset and width. */
export type FieldSpot = { name: string; at: number; size: 2 | 4 | 8 }

class Writer {
  parts: Uint8Array[] = []
  length = 0
  spots: FieldSpot[] = []
  push(bytes: Uint8Array) {
    this.parts.push(bytes)
    this.length += bytes.length
  }
  record(
    prefix: string,
    signature: number,
    fixedLength: number,
    layout: [string, number, 2 | 4][],
    values: Fields,
    lengths: [string, number, number][],
  ) {
    const head = new Uint8Array(fixedLength)
    const dv = new DataView(head.buffer)
    dv.setUint32(0, signature, true)
    for (const [name, offset, size] of layout) {
      const value = values[name]! >>> 0
      if (size === 2) dv.setUint16(offset, value & 0xffff, true)
      else dv.setUint32(offset, value, true)
      this.spots.push({ name: `${prefix}.${name}`, at: this.length + offset, size })
    }
    for (const [name, offset, value] of lengths) {
      dv.setUint16(offset, value & 0xffff, true)
      this.spots.push({ name: `${prefix}.${name}`, at: this.length + offset, size: 2 })
    }
    this.spots.push({ name: `${prefix}.signature`, at: this.length, size: 4 })
    this.push(head)
  }
  extraSpots(prefix: string, extra: Uint8Array) {
    for (let p = 0; p + 4 <= extra.length; p += 4 + u16(extra, p + 2)) {
      this.spots.push(
        { name: `${prefix}.extra@${p}.id`, at: this.length + p, size: 2 },
        { name: `${prefix}.extra@${p}.length`, at: this.length + p + 2, size: 2 },
      )
      for (let q = p + 4; q + 8 <= p + 4 + u16(extra, p + 2) && q + 8 <= extra.length; q += 8)
        this.spots.push({ name: `${prefix}.extra@${p}.value@${q - p - 4}`, at: this.length + q, size: 8 })
    }
  }
}

/** The zip the model describes, and where each field landed. */
export function writeZip(model: ZipModel): { bytes: Uint8Array; spots: FieldSpot[] } {
  const w = new Writer()
  w.push(model.prefix)
  const offsets: number[] = []
  for (const [i, entry] of model.entries.entries()) {
    offsets.push(w.length)
    w.record(`local${i}`, 0x04034b50, 30, LOCAL_FIELDS, entry.local, [
      ['nameLength', 26, entry.localName.length],
      ['extraLength', 28, entry.localExtra.length],
    ])
    w.push(entry.localName)
    w.extraSpots(`local${i}`, entry.localExtra)
    w.push(entry.localExtra)
    w.push(entry.data)
    if (entry.descriptor.length) {
      const signed = u32(entry.descriptor, 0) === 0x08074b50 ? 4 : 0
      w.spots.push(
        { name: `descriptor${i}.crc`, at: w.length + signed, size: 4 },
        { name: `descriptor${i}.csize`, at: w.length + signed + 4, size: 4 },
      )
    }
    w.push(entry.descriptor)
  }
  w.push(model.beforeDirectory)
  const cdStart = w.length
  for (const [k, i] of model.records.entries()) {
    const entry = model.entries[i]!
    const central = { ...entry.central }
    if (!entry.pinnedOffset && central.offset !== 0xffffffff) central.offset = offsets[i]!
    w.record(`central${k}`, 0x02014b50, 46, CENTRAL_FIELDS, central, [
      ['nameLength', 28, entry.centralName.length],
      ['extraLength', 30, entry.centralExtra.length],
      ['commentLength', 32, entry.comment.length],
    ])
    w.push(entry.centralName)
    w.extraSpots(`central${k}`, entry.centralExtra)
    w.push(entry.centralExtra)
    w.push(entry.comment)
  }
  const cdSize = w.length - cdStart
  w.push(model.afterDirectory)
  const end = { ...model.end }
  const auto = (name: string, value: number) => {
    if (!model.pinned.has(name)) end[name] = value
  }
  auto('entriesOnDisk', model.zip64 && end.entriesOnDisk === 0xffff ? 0xffff : model.records.length)
  auto('entries', model.zip64 && end.entries === 0xffff ? 0xffff : model.records.length)
  auto('size', model.zip64 && end.size === 0xffffffff ? 0xffffffff : cdSize)
  auto('offset', model.zip64 && end.offset === 0xffffffff ? 0xffffffff : cdStart)
  if (model.zip64) {
    const record = new Uint8Array(56 + 20)
    const dv = new DataView(record.buffer)
    const recordOffset = w.length
    dv.setUint32(0, 0x06064b50, true)
    dv.setBigUint64(4, 44n, true)
    dv.setUint16(12, 0x031e, true)
    dv.setUint16(14, 45, true)
    const count = model.pinned.has('entries') ? end.entries! : model.records.length
    dv.setBigUint64(24, BigInt(model.pinned.has('entriesOnDisk') ? end.entriesOnDisk! : model.records.length), true)
    dv.setBigUint64(32, BigInt(count), true)
    dv.setBigUint64(40, BigInt(model.pinned.has('size') ? end.size! : cdSize), true)
    dv.setBigUint64(48, BigInt(model.pinned.has('offset') ? end.offset! : cdStart), true)
    dv.setUint32(56, 0x07064b50, true)
    dv.setBigUint64(64, BigInt(recordOffset), true)
    dv.setUint32(72, 1, true)
    for (const [name, at, size] of [
      ['zip64.recordSize', 4, 8],
      ['zip64.disk', 16, 4],
      ['zip64.entriesOnDisk', 24, 8],
      ['zip64.entries', 32, 8],
      ['zip64.size', 40, 8],
      ['zip64.offset', 48, 8],
      ['locator.disk', 60, 4],
      ['locator.offset', 64, 8],
      ['locator.disks', 72, 4],
    ] as [string, number, 2 | 4 | 8][]) {
      w.spots.push({ name, at: recordOffset + at, size })
    }
    w.push(record)
  }
  w.record('end', 0x06054b50, 22, END_FIELDS, end, [['commentLength', 20, model.commentLength ?? model.comment.length]])
  w.push(model.comment)
  w.push(model.suffix)
  const bytes = Buffer.concat(w.parts)
  return { bytes, spots: w.spots }
}

/** Writes `value` into the field at `spot` (little-endian, cut to its width). */
export function poke(bytes: Uint8Array, spot: FieldSpot, value: bigint): void {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (spot.at < 0 || spot.at + spot.size > bytes.length) return
  if (spot.size === 2) dv.setUint16(spot.at, Number(value & 0xffffn), true)
  else if (spot.size === 4) dv.setUint32(spot.at, Number(value & 0xffffffffn), true)
  else dv.setBigUint64(spot.at, value & 0xffffffffffffffffn, true)
}

export function peek(bytes: Uint8Array, spot: FieldSpot): bigint {
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (spot.at < 0 || spot.at + spot.size > bytes.length) return 0n
  if (spot.size === 2) return BigInt(dv.getUint16(spot.at, true))
  if (spot.size === 4) return BigInt(dv.getUint32(spot.at, true))
  return dv.getBigUint64(spot.at, true)
}
