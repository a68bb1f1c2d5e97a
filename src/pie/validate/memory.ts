/**
 * memory.bin, read as a stream of 40-byte cells: an 8-byte little-endian address
 * (2^63 + segment * 2^47 + offset) and a 32-byte little-endian value, a pointer when bit 255 is
 * set (2^255 + segment * 2^47 + offset), otherwise a field element. Chunks may split cells
 * anywhere; the scanner carries the partial cell over. Decoding works on 32-bit words of a
 * DataView so scanning tens of millions of cells allocates nothing per cell.
 */

export const CELL_SIZE = 40

/** Whether this machine stores 32-bit words little-endian, as memory.bin does. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1

/**
 * Many whole cells at once, as 32-bit little-endian words (10 per cell) when the chunk allows
 * it: `words[10 * k]` starts cell k, which is also `view` at `at + 40 * k`, byte
 * `fileOffset + 40 * k` of the file.
 */
export type CellRun = (words: Uint32Array, count: number, view: DataView, at: number, fileOffset: number) => void

/**
 * Calls `onCell(view, at, fileOffset)` for each whole cell; `view` is valid during the call.
 * With `onRun`, runs of whole cells at 4-byte aligned positions go to it instead (the fast path
 * of a scan), the other cells to `onCell`.
 */
export class CellScanner {
  private readonly onCell: (view: DataView, at: number, fileOffset: number) => void
  private readonly onRun: CellRun | undefined
  private readonly carry = new Uint8Array(CELL_SIZE)
  private readonly carryView = new DataView(this.carry.buffer)
  private carryLength = 0
  /** Bytes consumed so far (whole cells and carry). */
  bytes = 0
  cells = 0

  constructor(onCell: (view: DataView, at: number, fileOffset: number) => void, onRun?: CellRun) {
    this.onCell = onCell
    this.onRun = LITTLE_ENDIAN ? onRun : undefined
  }

  push(chunk: Uint8Array): void {
    const base = this.bytes
    let at = 0
    if (this.carryLength) {
      const take = Math.min(CELL_SIZE - this.carryLength, chunk.length)
      this.carry.set(chunk.subarray(0, take), this.carryLength)
      this.carryLength += take
      at = take
      if (this.carryLength < CELL_SIZE) {
        this.bytes += take
        return
      }
      this.onCell(this.carryView, 0, base + take - CELL_SIZE)
      this.cells++
      this.carryLength = 0
    }
    const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const whole = at + Math.floor((chunk.length - at) / CELL_SIZE) * CELL_SIZE
    if (this.onRun && whole > at && (chunk.byteOffset + at) % 4 === 0) {
      const count = (whole - at) / CELL_SIZE
      this.onRun(new Uint32Array(chunk.buffer, chunk.byteOffset + at, count * 10), count, view, at, base + at)
      this.cells += count
      at = whole
    }
    for (; at < whole; at += CELL_SIZE) {
      this.onCell(view, at, base + at)
      this.cells++
    }
    if (at < chunk.length) {
      this.carry.set(chunk.subarray(at), 0)
      this.carryLength = chunk.length - at
    }
    this.bytes = base + chunk.length
  }

  /** Bytes of a trailing partial cell (0 when the stream held whole cells only). */
  get leftover(): number {
    return this.carryLength
  }
}

export const ADDRESS_NOT_RELOCATABLE = -1

/** Segment of the cell's address, or ADDRESS_NOT_RELOCATABLE when bit 63 is clear. */
export function addressSegment(view: DataView, at: number): number {
  const hi = view.getUint32(at + 4, true)
  if (hi < 0x80000000) return ADDRESS_NOT_RELOCATABLE
  return (hi & 0x7fffffff) >>> 15
}

export function addressOffset(view: DataView, at: number): number {
  return (view.getUint32(at + 4, true) & 0x7fff) * 2 ** 32 + view.getUint32(at, true)
}

export function rawAddress(view: DataView, at: number): bigint {
  return view.getBigUint64(at, true)
}

export function isPointer(view: DataView, at: number): boolean {
  return (view.getUint8(at + 39) & 0x80) !== 0
}

/**
 * Segment a pointer value points into, decoded as cairo-lang's `RelocatableValue.from_bytes`
 * (the 16 bits above the 47 offset bits) and cairo-vm's `CairoPieMemory::from_bytes` (the same
 * bits of the value's first 8 bytes) both do: bits 63 to 254 are ignored by both, so they are here.
 */
export function pointerSegment(view: DataView, at: number): number {
  return (view.getUint32(at + 12, true) >>> 15) & 0xffff
}

export function pointerOffset(view: DataView, at: number): number {
  return (view.getUint32(at + 12, true) & 0x7fff) * 2 ** 32 + view.getUint32(at + 8, true)
}

/** The 256-bit value as an integer (for pointers, including the 2^255 tag). */
export function cellValue(view: DataView, at: number): bigint {
  const v = at + 8
  return (
    view.getBigUint64(v, true) |
    (view.getBigUint64(v + 8, true) << 64n) |
    (view.getBigUint64(v + 16, true) << 128n) |
    (view.getBigUint64(v + 24, true) << 192n)
  )
}

/** Compares a cell's value with a bound given as 8 little-endian 32-bit words. */
export function valueBelow(view: DataView, at: number, boundWords: Uint32Array): boolean {
  for (let k = 7; k >= 0; k--) {
    const word = view.getUint32(at + 8 + 4 * k, true)
    const bound = boundWords[k]!
    if (word !== bound) return word < bound
  }
  return false
}

export function toWords(value: bigint): Uint32Array {
  const words = new Uint32Array(8)
  for (let k = 0; k < 8; k++) words[k] = Number((value >> BigInt(32 * k)) & 0xffffffffn)
  return words
}

// 2^15 bits (4 KiB) per page: one bit per cell of dense segments, nothing for unwritten spans.
const PAGE_BITS = 15

/** The duplicate-address check ran out of its budget (see SeenCells). */
export class SeenCellsBudgetError extends Error {
  override name = 'SeenCellsBudgetError'
}

export type SeenCellsBudget = {
  /** Bitmap bytes allowed before any cell is read. */
  baseBytes: number
  /** Bitmap bytes allowed per cell marked so far. */
  bytesPerCell: number
  /** Cells kept one by one once the bitmap budget is spent. */
  sparseCells: number
}

/**
 * Which (segment, offset) cells have been seen: a bitmap per segment, allocated page by page as
 * cells arrive. Offsets are below 2^30, so a dense trace costs one bit per cell (a 2 GiB
 * memory.bin, 54M cells, needs under 7 MiB). A page is allocated only while the pages' total
 * stays within the budget, which grows with the cells marked; a cell on a page past it is kept
 * in an exact set instead, bounded too. So memory follows what the PIE holds, never the span of
 * its addresses (16 segments of 2^30 cells with one cell per page would otherwise take 2 GiB).
 */
export class SeenCells {
  private readonly segments = new Map<number, (Uint8Array | undefined)[]>()
  // The last segment's pages: cells come in long runs of one segment.
  private lastSegment = -1
  private lastPages: (Uint8Array | undefined)[] = []
  private readonly sparse = new Set<number>()
  private readonly budget: SeenCellsBudget
  private pageBytes = 0
  private marked = 0

  constructor(budget: Partial<SeenCellsBudget> = {}) {
    this.budget = {
      baseBytes: Number.POSITIVE_INFINITY,
      bytesPerCell: 0,
      sparseCells: Number.POSITIVE_INFINITY,
      ...budget,
    }
  }

  /** Bytes held by the bitmap pages (for tests and benchmarks). */
  get bitmapBytes(): number {
    return this.pageBytes
  }

  /** Cells held one by one. */
  get sparseSize(): number {
    return this.sparse.size
  }

  /**
   * `mark` for the common cell, small enough to be inlined into a scan: a cell of the last
   * segment marked, on a page that exists, with no cell kept one by one. Returns 1 when the
   * cell had been marked before, 0 when not, and -1 (nothing done) when `mark` must decide.
   */
  markOnPage(segment: number, offset: number): number {
    if (segment !== this.lastSegment || this.sparse.size !== 0) return -1
    const page = this.lastPages[offset >>> PAGE_BITS]
    if (page === undefined) return -1
    this.marked++
    const bit = offset & ((1 << PAGE_BITS) - 1)
    const byte = bit >>> 3
    const mask = 1 << (bit & 7)
    const before = page[byte]!
    if ((before & mask) !== 0) return 1
    page[byte] = before | mask
    return 0
  }

  /** Marks the cell; returns true when it had been marked before. */
  mark(segment: number, offset: number): boolean {
    this.marked++
    let pages = segment === this.lastSegment ? this.lastPages : this.segments.get(segment)
    if (!pages) this.segments.set(segment, (pages = []))
    this.lastSegment = segment
    this.lastPages = pages
    const pageIndex = offset >>> PAGE_BITS
    let page = pages[pageIndex]
    const key = segment * 2 ** 30 + offset
    const inSparse = this.sparse.size > 0 && this.sparse.has(key)
    if (!page) {
      const size = 1 << (PAGE_BITS - 3)
      if (this.pageBytes + size > this.budget.baseBytes + this.marked * this.budget.bytesPerCell) {
        if (inSparse) return true
        if (this.sparse.size >= this.budget.sparseCells) {
          throw new SeenCellsBudgetError(
            `more than ${this.budget.sparseCells} cells scattered sparsely over their segments`,
          )
        }
        this.sparse.add(key)
        return false
      }
      pages[pageIndex] = page = new Uint8Array(size)
      this.pageBytes += size
    }
    const bit = offset & ((1 << PAGE_BITS) - 1)
    const byte = bit >>> 3
    const mask = 1 << (bit & 7)
    const seen = (page[byte]! & mask) !== 0 || inSparse
    page[byte] = page[byte]! | mask
    return seen
  }

  has(segment: number, offset: number): boolean {
    if (this.sparse.size > 0 && this.sparse.has(segment * 2 ** 30 + offset)) return true
    const page = this.segments.get(segment)?.[offset >>> PAGE_BITS]
    if (!page) return false
    const bit = offset & ((1 << PAGE_BITS) - 1)
    return (page[bit >>> 3]! & (1 << (bit & 7))) !== 0
  }
}

/** Encodes one cell (used by the generator and tests). */
export function writeCell(
  view: DataView,
  at: number,
  segment: number,
  offset: number,
  value: bigint | { segment: number; offset: number },
): void {
  view.setUint32(at, offset % 2 ** 32, true)
  view.setUint32(at + 4, (0x80000000 | (segment << 15) | Math.floor(offset / 2 ** 32)) >>> 0, true)
  let v: bigint
  if (typeof value === 'bigint') v = value
  else v = (1n << 255n) | (BigInt(value.segment) << 47n) | BigInt(value.offset)
  for (let k = 0; k < 4; k++) view.setBigUint64(at + 8 + 8 * k, (v >> BigInt(64 * k)) & 0xffffffffffffffffn, true)
}
