/**
 * The container fuzzer's cases (test/interop/zip-fuzz.test.ts): real PIE zips (the project's
 * example as packed, as streamed with data descriptors and as forced ZIP64, and the zips
 * cairo-lang and cairo-vm wrote) taken apart (./zip-model.ts) and changed by one to three
 * mutations drawn by fast-check: any header field of the local headers, data descriptors,
 * directory records, ZIP64 records and end record set to an edge value; records duplicated
 * (within the count or beyond it, with the same data or another program), dropped, reordered;
 * bytes before, between and after the records; comments holding signatures; extra fields of
 * every shape; the DEFLATE data inflating past or short of its size; and rewrites legitimate
 * writers make (ZIP64 markers in small local headers, data descriptors, ZIP64 end records).
 * A case is pure data (a plan), applied to its base deterministically, so a seed replays it.
 */
import zlib from 'node:zlib'
import fc from 'fast-check'
import { cloneModel, type ModelEntry, type ZipModel, peek, poke, writeZip } from './zip-model.ts'

export type ZipCase = { name: string; base: string; zip: Uint8Array }

const SIG = {
  local: [0x50, 0x4b, 3, 4],
  central: [0x50, 0x4b, 1, 2],
  end: [0x50, 0x4b, 5, 6],
  descriptor: [0x50, 0x4b, 7, 8],
}

type Op =
  | { kind: 'field'; pick: number; value: number; random: number }
  | { kind: 'duplicate'; entry: number; variant: number; place: number }
  | { kind: 'drop'; record: number }
  | { kind: 'swap'; a: number; b: number; records: boolean }
  | { kind: 'bytes'; where: number; content: number; length: number; seed: number }
  | { kind: 'comment'; content: number; length: number; mismatch: number }
  | { kind: 'extra'; entry: number; central: boolean; shape: number; seed: number }
  | { kind: 'legit'; entry: number; rewrite: number }
  | { kind: 'data'; entry: number; change: number }
  | { kind: 'both'; entry: number; field: number; value: number }
  | { kind: 'cut'; at: number }

const nat = (max: number) => fc.integer({ min: 0, max })

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('field' as const),
      pick: nat(1 << 20),
      value: nat(15),
      random: fc.integer({ min: 0, max: 0xffffffff }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('duplicate' as const), entry: nat(16), variant: nat(5), place: nat(4) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), record: nat(16) }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('swap' as const), a: nat(16), b: nat(16), records: fc.boolean() }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('bytes' as const),
      where: nat(5),
      content: nat(5),
      length: fc.integer({ min: 1, max: 40 }),
      seed: nat(1 << 30),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('comment' as const),
      content: nat(3),
      length: fc.integer({ min: 0, max: 40 }),
      mismatch: fc.integer({ min: -3, max: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('extra' as const),
      entry: nat(16),
      central: fc.boolean(),
      shape: nat(9),
      seed: nat(1 << 30),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('legit' as const), entry: nat(16), rewrite: nat(5) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('data' as const), entry: nat(16), change: nat(5) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('both' as const), entry: nat(16), field: nat(3), value: nat(15) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: nat(1 << 20) }) },
)

/** A case: a base (by index) and its mutations. */
export const planArbitrary = (bases: number) =>
  fc.record({ base: nat(bases - 1), ops: fc.array(opArbitrary, { minLength: 1, maxLength: 3 }) })
export type Plan = { base: number; ops: Op[] }

function bytesOf(seed: number, length: number): Uint8Array {
  const out = new Uint8Array(length)
  let x = seed | 1
  for (let i = 0; i < length; i++) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

const FLAG_BITS = [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 15]
const VERSIONS = [0, 10, 20, 45, 46, 51, 62, 63, 64, 0x0314, 0xff]

/** Edge values for a field of `size` bytes whose value is `was`. */
function edge(was: bigint, size: number, choice: number, random: number): bigint {
  const max = (1n << BigInt(8 * size)) - 1n
  const values = [
    0n,
    1n,
    was + 1n,
    was - 1n,
    max,
    max - 1n,
    was ^ (1n << BigInt(random % (8 * size))),
    BigInt(random) & max,
    was + 22n,
    was - 22n,
    was + 46n,
    0xffffffffn & max,
    0xffffn & max,
    2n,
    was * 2n,
    was + 1000n,
  ]
  const value = values[choice % values.length]!
  return value < 0n ? value + max + 1n : value & max
}

const deflate = (data: Uint8Array) => new Uint8Array(zlib.deflateRawSync(data))
/** What a (possibly cut or corrupted) stream inflates to, as far as it goes. */
function inflate(data: Uint8Array): Uint8Array {
  try {
    return new Uint8Array(zlib.inflateRawSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH }))
  } catch {
    return data
  }
}

function setData(entry: ModelEntry, plain: Uint8Array): void {
  entry.data = deflate(plain)
  const crc = zlib.crc32(plain)
  for (const fields of [entry.local, entry.central]) {
    if (fields.crc !== 0 || !(entry.local.flags! & 8)) fields.crc = crc
    if (fields.csize !== 0xffffffff && (fields.csize !== 0 || !(entry.local.flags! & 8)))
      fields.csize = entry.data.length
    if (fields.usize !== 0xffffffff && (fields.usize !== 0 || !(entry.local.flags! & 8))) fields.usize = plain.length
  }
  rewriteZip64(entry, crc, plain.length, entry.data.length)
}

/** The entry's ZIP64 fields and data descriptor, rewritten to new values. */
function rewriteZip64(entry: ModelEntry, crc: number, usize: number, csize: number): void {
  for (const [extra, fields] of [
    [entry.localExtra, entry.local],
    [entry.centralExtra, entry.central],
  ] as const) {
    for (let p = 0; p + 4 <= extra.length; p += 4 + (extra[p + 2]! | (extra[p + 3]! << 8))) {
      if ((extra[p]! | (extra[p + 1]! << 8)) !== 1) continue
      const dv = new DataView(extra.buffer, extra.byteOffset + p + 4)
      const length = extra[p + 2]! | (extra[p + 3]! << 8)
      const values: number[] = []
      if (extra === entry.localExtra) values.push(usize, csize)
      else {
        if (fields.usize === 0xffffffff) values.push(usize)
        if (fields.csize === 0xffffffff) values.push(csize)
      }
      const zeros = extra === entry.localExtra && entry.local.flags! & 8 && dv.getBigUint64(0, true) === 0n
      for (let k = 0; k < values.length && 8 * k + 8 <= length; k++)
        dv.setBigUint64(8 * k, zeros ? 0n : BigInt(values[k]!), true)
    }
  }
  if (entry.descriptor.length) {
    const signed = entry.descriptor[0] === 0x50 && entry.descriptor[1] === 0x4b && entry.descriptor[2] === 7 ? 4 : 0
    const dv = new DataView(entry.descriptor.buffer, entry.descriptor.byteOffset)
    dv.setUint32(signed, crc, true)
    if (entry.descriptor.length - signed === 20) {
      dv.setBigUint64(signed + 4, BigInt(csize), true)
      dv.setBigUint64(signed + 12, BigInt(usize), true)
    } else {
      dv.setUint32(signed + 4, csize, true)
      dv.setUint32(signed + 8, usize, true)
    }
  }
}

function plainOf(entry: ModelEntry): Uint8Array {
  return entry.local.method === 0 ? entry.data : inflate(entry.data)
}

function copyEntry(entry: ModelEntry): ModelEntry {
  return {
    ...entry,
    local: { ...entry.local },
    central: { ...entry.central },
    localExtra: entry.localExtra.slice(),
    centralExtra: entry.centralExtra.slice(),
    descriptor: entry.descriptor.slice(),
  }
}

/** metadata.json (or any JSON entry) with its first program word changed, or broken. */
function otherContent(entry: ModelEntry, variant: number): Uint8Array {
  const text = Buffer.from(plainOf(entry)).toString('latin1')
  if (variant === 1)
    return Buffer.from(
      text.replace(/"data": \[(\d+)/, (_, word: string) => `"data": [${BigInt(word) + 1n}`),
      'latin1',
    )
  if (variant === 2) return Buffer.from(text.slice(0, Math.max(1, text.length >> 1)), 'latin1')
  return Buffer.from(text.replace('{', '{ '), 'latin1')
}

function extraField(shape: number, seed: number, entry: ModelEntry, central: boolean): Uint8Array {
  const usize = BigInt(central ? entry.central.usize! : entry.local.usize!)
  const csize = BigInt(central ? entry.central.csize! : entry.local.csize!)
  const field = (id: number, data: Uint8Array, declared = data.length) => {
    const out = new Uint8Array(4 + data.length)
    const dv = new DataView(out.buffer)
    dv.setUint16(0, id, true)
    dv.setUint16(2, declared, true)
    out.set(data, 4)
    return out
  }
  const values = (...v: bigint[]) => {
    const out = new Uint8Array(8 * v.length)
    for (const [k, x] of v.entries()) new DataView(out.buffer).setBigUint64(8 * k, x, true)
    return out
  }
  switch (shape) {
    case 0:
      return field(1, values(usize, csize))
    case 1:
      return field(1, values(usize))
    case 2:
      return field(1, values(usize + 1n, csize))
    case 3:
      return field(1, values(0n, 0n))
    case 4:
      return field(0x5455, bytesOf(seed, 5)) // Info-ZIP's timestamp: harmless
    case 5:
      return field(0x7075, bytesOf(seed, 9), 20) // declares more than it holds
    case 6:
      return bytesOf(seed, 1 + (seed % 3)) // bytes left over
    case 7:
      return field(1, values(usize, csize, 0n))
    case 8:
      return field(0xcafe, new Uint8Array()) // an empty field (as jar writes)
    default:
      return field(1, new Uint8Array(3))
  }
}

/** One mutation of the model; returns a short name, or a byte mutation to run after the layout. */
function apply(
  model: ZipModel,
  op: Op,
  after: ((bytes: Uint8Array, spots: ReturnType<typeof writeZip>['spots']) => Uint8Array)[],
): string {
  const n = model.entries.length
  const pickEntry = (k: number) => model.entries[k % n]!
  switch (op.kind) {
    case 'field': {
      after.push((bytes, spots) => {
        const spot = spots[op.pick % spots.length]!
        poke(bytes, spot, edge(peek(bytes, spot), spot.size, op.value, op.random))
        return bytes
      })
      return `a field set to an edge value (#${op.pick}, ${op.value})`
    }
    case 'duplicate': {
      const index = op.entry % n
      const copy = copyEntry(model.entries[index]!)
      if (op.variant >= 1 && op.variant <= 3) setData(copy, otherContent(copy, op.variant))
      model.entries.push(copy)
      const at = model.entries.length - 1
      const place = op.place % 4
      if (place === 0)
        model.records.push(at) // counted, last
      else if (place === 1) {
        // beyond the end record's count (Python reads it, the zip crate does not)
        model.pinned.add('entries').add('entriesOnDisk')
        model.end.entries = model.records.length
        model.end.entriesOnDisk = model.records.length
        model.records.push(at)
      } else if (place === 2) model.records.unshift(at)
      // place 3: in no record (a hidden local entry)
      return `entry ${index} twice (${['same data', 'another program word', 'broken JSON', 'another JSON text', 'same data', 'same data'][op.variant]}, ${['counted, last', 'beyond the count', 'first', 'hidden'][place]})`
    }
    case 'drop': {
      model.records.splice(op.record % model.records.length, 1)
      return 'a directory record dropped'
    }
    case 'swap': {
      const list: unknown[] = op.records ? model.records : model.entries
      const a = op.a % list.length
      const b = op.b % list.length
      const held = list[a]
      list[a] = list[b]
      list[b] = held
      if (!op.records) {
        // The records name entries by index: keep each record with its entry.
        model.records = model.records.map((r) => (r === a ? b : r === b ? a : r))
      }
      return op.records ? 'two directory records swapped' : 'two entries swapped in the file'
    }
    case 'bytes': {
      const content = [
        bytesOf(op.seed, op.length),
        Uint8Array.from([...SIG.local, ...bytesOf(op.seed, op.length)]),
        Uint8Array.from([...SIG.end, ...new Uint8Array(18)]),
        Uint8Array.from([0x50, 0x4b, ...bytesOf(op.seed, op.length)]),
        Uint8Array.from([...SIG.central, ...bytesOf(op.seed, op.length)]),
        Uint8Array.from([...SIG.descriptor, ...bytesOf(op.seed, 12)]),
      ][op.content % 6]!
      const where = op.where % 5
      if (where === 0) model.prefix = content
      else if (where === 1) {
        // a prefix whose length the offsets do not count (Python shifts them, others do not)
        model.prefix = content
        for (const entry of model.entries) entry.pinnedOffset = true
        let at = 0
        for (const entry of model.entries) {
          entry.central.offset = at
          at += 30 + entry.localName.length + entry.localExtra.length + entry.data.length + entry.descriptor.length
        }
      } else if (where === 2) model.beforeDirectory = content
      else if (where === 3) model.afterDirectory = content
      else model.suffix = content
      return `bytes ${['before the archive', 'before the archive, offsets not counting them', 'before the directory', 'between the directory and the end record', 'after the end record'][where]} (${['random', 'a local signature', 'an end record', '"PK"', 'a directory signature', 'a descriptor'][op.content % 6]})`
    }
    case 'comment': {
      model.comment = [
        new Uint8Array(op.length),
        bytesOf(op.length + 7, op.length),
        Uint8Array.from([...bytesOf(3, op.length), ...SIG.end, ...new Uint8Array(18)]),
        Uint8Array.from([...SIG.end]),
      ][op.content % 4]!
      if (op.mismatch) model.commentLength = Math.max(0, model.comment.length + op.mismatch)
      return `an archive comment (${['zeros', 'random', 'holding an end record', 'holding the end signature'][op.content % 4]}${op.mismatch ? `, its length off by ${op.mismatch}` : ''})`
    }
    case 'extra': {
      const entry = pickEntry(op.entry)
      const field = extraField(op.shape, op.seed, entry, op.central)
      if (op.central) entry.centralExtra = Uint8Array.from([...entry.centralExtra, ...field])
      else entry.localExtra = Uint8Array.from([...entry.localExtra, ...field])
      return `an extra field in a ${op.central ? 'directory record' : 'local header'} (shape ${op.shape})`
    }
    case 'legit': {
      const entry = pickEntry(op.entry)
      const rewrite = op.rewrite % 6
      if (rewrite === 0 && !entry.localExtra.length && !(entry.local.flags! & 8)) {
        // Rust's zip crate with large_file: ZIP64 markers and a ZIP64 field in the local header.
        entry.localExtra = extraField(0, 0, entry, false)
        entry.local.csize = 0xffffffff
        entry.local.usize = 0xffffffff
      } else if (rewrite === 1 && !entry.localExtra.length) {
        // Python's force_zip64: the sizes and a ZIP64 field holding them too.
        entry.localExtra = extraField(0, 0, entry, false)
      } else if (rewrite === 2 && !(entry.local.flags! & 8) && entry.local.csize !== 0xffffffff) {
        // A data descriptor (Python writing to a pipe), signed or not.
        entry.local.flags! |= 8
        entry.central.flags! |= 8
        const descriptor = new Uint8Array(16)
        const dv = new DataView(descriptor.buffer)
        dv.setUint32(0, 0x08074b50, true)
        dv.setUint32(4, entry.central.crc!, true)
        dv.setUint32(8, entry.data.length, true)
        dv.setUint32(12, entry.central.usize === 0xffffffff ? plainOf(entry).length : entry.central.usize!, true)
        entry.descriptor = op.entry % 2 ? descriptor : descriptor.subarray(4)
        entry.local.crc = 0
        entry.local.csize = 0
        entry.local.usize = 0
      } else if (rewrite === 3) {
        model.zip64 = true
      } else if (rewrite === 4) {
        // An Info-ZIP timestamp field in both headers.
        entry.localExtra = Uint8Array.from([...entry.localExtra, 0x55, 0x54, 5, 0, 3, 1, 2, 3, 4])
        entry.centralExtra = Uint8Array.from([...entry.centralExtra, 0x55, 0x54, 5, 0, 3, 1, 2, 3, 4])
      } else {
        // DEFLATE level bits (1-2) in both headers, as Info-ZIP and libzip set them.
        entry.local.flags! |= 2
        entry.central.flags! |= 2
      }
      return `a rewrite writers make (${['ZIP64 markers in the local header', 'a ZIP64 field beside the sizes', 'a data descriptor', 'ZIP64 end records', 'a timestamp field', 'DEFLATE level bits'][rewrite]})`
    }
    case 'data': {
      const entry = pickEntry(op.entry)
      const plain = plainOf(entry)
      const change = op.change % 6
      const stream = deflate(
        change === 0
          ? Uint8Array.from([...plain, 32, 32])
          : change === 1
            ? plain.subarray(0, Math.max(0, plain.length - 3))
            : plain,
      )
      // The directory keeps declaring the old sizes and CRC: the data disagrees with them.
      if (change === 2) entry.data = Uint8Array.from([...stream, 1, 2, 3])
      else if (change === 3) entry.data = stream.subarray(0, Math.max(1, stream.length - 4))
      else if (change === 4) {
        // Stored: the bytes as they are, method 0 in both headers.
        entry.data = plain
        entry.local.method = 0
        entry.central.method = 0
      } else entry.data = stream
      const sized = change >= 2
      if (sized) {
        for (const fields of [entry.local, entry.central])
          if (fields.csize !== 0xffffffff && fields.csize !== 0) fields.csize = entry.data.length
        rewriteZip64(entry, entry.central.crc!, plain.length, entry.data.length)
      }
      return `the data ${['inflating past its size', 'inflating short of its size', 'with bytes after the DEFLATE stream', 'cut before the stream ends', 'stored', 'recompressed'][change]}`
    }
    case 'both': {
      const entry = pickEntry(op.entry)
      const field = ['flags', 'version', 'method', 'external'][op.field % 4]!
      let value: number
      if (field === 'flags') value = entry.central.flags! | (1 << FLAG_BITS[op.value % FLAG_BITS.length]!)
      else if (field === 'version') value = VERSIONS[op.value % VERSIONS.length]!
      else if (field === 'method') value = [0, 1, 8, 9, 12, 14, 93, 99][op.value % 8]!
      else value = [0o120777, 0o040755, 0o010644, 0o100644, 0][op.value % 5]! * 0x10000
      if (field !== 'external') entry.local[field] = value
      if (field === 'version' || field === 'flags' || field === 'method') entry.central[field] = value
      else entry.central.external = value >>> 0
      return `${field} ${value.toString(16)} in both headers`
    }
    case 'cut': {
      after.push((bytes) => bytes.subarray(0, op.at % bytes.length))
      return 'the file cut short'
    }
  }
}

/** The zip a plan describes, and a name saying what was done. */
export function zipCase(bases: { name: string; model: ZipModel }[], plan: Plan): ZipCase {
  const base = bases[plan.base % bases.length]!
  const model = cloneModel(base.model)
  const after: Parameters<typeof apply>[2] = []
  const names = plan.ops.map((op) => apply(model, op, after))
  let { bytes, spots } = writeZip(model)
  bytes = Uint8Array.from(bytes)
  for (const step of after) bytes = step(bytes, spots)
  return { name: `${base.name}: ${names.join('; ')}`, base: base.name, zip: bytes }
}
