import { describe, expect, it } from 'vitest'
import zlib from 'node:zlib'
import { crc32Combine } from '../../../../src/pie/pack/crc32.ts'

describe('crc32Combine', () => {
  it('equals the CRC of the concatenation', () => {
    const a = Buffer.from('The quick brown fox ')
    const b = Buffer.alloc(100_003, 0x5a)
    expect(crc32Combine(zlib.crc32(a), zlib.crc32(b), b.length)).toBe(zlib.crc32(Buffer.concat([a, b])))
    expect(crc32Combine(zlib.crc32(a), zlib.crc32(Buffer.alloc(0)), 0)).toBe(zlib.crc32(a))
    expect(crc32Combine(0, zlib.crc32(b), b.length)).toBe(zlib.crc32(b))
  })
})
