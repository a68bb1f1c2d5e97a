import { describe, expect, it } from 'vitest'
import { bytes32Text, parseFeltText, toBytes32Hex, toHex } from '../../../../src/pie/shared/index.ts'

describe('how facts and felts are written (issue 31)', () => {
  it('a bytes32 fact: 0x and 64 lowercase hex digits; a felt: minimal', () => {
    expect(toBytes32Hex(0xabcn)).toBe(`0x${'0'.repeat(61)}abc`)
    expect(toBytes32Hex((1n << 256n) - 1n)).toBe(`0x${'f'.repeat(64)}`)
    expect(toHex(0xabcn)).toBe('0xabc')
  })
  it("rewrites a service's bytes32 fact into that form, numerically the same; leaves what is not one as it is", () => {
    for (const text of ['0xABC', '0x0000abc', ' 0xabc ', '2748', `0x${'0'.repeat(61)}abc`]) {
      expect(bytes32Text(text)).toBe(`0x${'0'.repeat(61)}abc`)
      expect(parseFeltText(bytes32Text(text))).toBe(0xabcn)
    }
    for (const text of [`0x1${'0'.repeat(64)}`, '0xg', '', 'null', '-1', '0x']) expect(bytes32Text(text)).toBe(text)
  })
})
