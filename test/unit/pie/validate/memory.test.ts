import { describe, expect, it } from 'vitest'
import {
  CELL_SIZE,
  CellScanner,
  SeenCells,
  addressOffset,
  addressSegment,
  cellValue,
  isPointer,
  pointerOffset,
  pointerSegment,
  writeCell,
} from '../../../../src/pie/validate/memory.ts'

describe('memory cells', () => {
  const cells = new Uint8Array(3 * CELL_SIZE)
  const view = new DataView(cells.buffer)
  writeCell(view, 0, 0, 5, 1234567890123456789012345678901234567890n)
  writeCell(view, 40, 7, 2 ** 40 + 3, { segment: 1, offset: 99 })
  writeCell(view, 80, 65535, 0, { segment: 65535, offset: 2 ** 47 - 1 })

  it('decodes addresses 2^63 + segment * 2^47 + offset and pointer values with bit 255', () => {
    expect([addressSegment(view, 0), addressOffset(view, 0)]).toEqual([0, 5])
    expect(isPointer(view, 0)).toBe(false)
    expect(cellValue(view, 0)).toBe(1234567890123456789012345678901234567890n)
    expect([addressSegment(view, 40), addressOffset(view, 40)]).toEqual([7, 2 ** 40 + 3])
    expect(isPointer(view, 40)).toBe(true)
    expect([pointerSegment(view, 40), pointerOffset(view, 40)]).toEqual([1, 99])
    expect(view.getBigUint64(40, true)).toBe((1n << 63n) + 7n * (1n << 47n) + (1n << 40n) + 3n)
    expect([addressSegment(view, 80), pointerSegment(view, 80), pointerOffset(view, 80)]).toEqual([
      65535,
      65535,
      2 ** 47 - 1,
    ])
  })

  it("decodes a pointer as cairo-lang's RelocatableValue.from_bytes and cairo-vm do: bits 63 to 254 ignored", () => {
    const junk = new Uint8Array(CELL_SIZE)
    const v = new DataView(junk.buffer)
    // Junk at bit 63 (just above the 16 segment bits), bit 77 and bit 254, around segment 5, offset 7.
    writeCell(v, 0, 1, 0, (1n << 255n) | (1n << 254n) | (1n << 77n) | (1n << 63n) | (5n << 47n) | 7n)
    expect(isPointer(v, 0)).toBe(true)
    expect([pointerSegment(v, 0), pointerOffset(v, 0)]).toEqual([5, 7])
  })

  it('scans cells split across chunks at any boundary, with byte offsets', () => {
    for (const size of [1, 7, 39, 40, 41, 80, 119]) {
      const seen: [number, number][] = []
      const scanner = new CellScanner((v, at, byte) => seen.push([addressSegment(v, at), byte]))
      for (let at = 0; at < cells.length; at += size) scanner.push(cells.subarray(at, at + size))
      expect(seen).toEqual([
        [0, 0],
        [7, 40],
        [65535, 80],
      ])
      expect(scanner.leftover).toBe(0)
      expect(scanner.cells).toBe(3)
    }
    const scanner = new CellScanner(() => {})
    scanner.push(cells.subarray(0, 100))
    expect([scanner.cells, scanner.leftover, scanner.bytes]).toEqual([2, 20, 100])
  })

  it('remembers seen cells with one bit each, page by page', () => {
    const seen = new SeenCells()
    expect(seen.mark(1, 0)).toBe(false)
    expect(seen.mark(1, 0)).toBe(true)
    expect(seen.mark(1, 2 ** 30 - 1)).toBe(false)
    expect(seen.has(1, 2 ** 30 - 1)).toBe(true)
    expect(seen.has(1, 1)).toBe(false)
    expect(seen.has(2, 0)).toBe(false)
  })
})
