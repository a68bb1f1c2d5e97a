import { describe, expect, it } from 'vitest'
import { assertFelt, parseFact, toBytes32 } from '../../../src/chain/fact.ts'
import { InvalidInputError } from '../../../src/core/errors.ts'
import { STARK_PRIME } from '../../../src/pie/shared/format.ts'

describe('facts as the chains take them', () => {
  it('reads 0x hex of at most 32 bytes, any case, leading zeros optional', () => {
    expect(parseFact('0x1')).toBe(1n)
    expect(parseFact(' 0xABcd ')).toBe(0xabcdn)
    expect(parseFact(`0x${'f'.repeat(64)}`)).toBe((1n << 256n) - 1n)
  })

  it('rejects anything else, naming the argument', () => {
    for (const bad of ['', '0x', '1234', '0xg1', `0x${'0'.repeat(65)}`, '0x 1', '-0x1']) {
      const error = (() => {
        try {
          parseFact(bad, '<fact>')
        } catch (e) {
          return e
        }
      })() as InvalidInputError
      expect(error, bad).toBeInstanceOf(InvalidInputError)
      expect(error.input).toBe('<fact>')
      expect(error.shortMessage).toMatch(/^<fact> must be 0x followed by 1 to 64 hex digits/)
    }
  })

  it('pads to bytes32 for isValid', () => {
    expect(toBytes32(0xabn)).toBe(`0x${'0'.repeat(62)}ab`)
    expect(toBytes32(parseFact(`0x${'1'.repeat(64)}`))).toBe(`0x${'1'.repeat(64)}`)
  })

  it('requires a felt on Starknet', () => {
    expect(assertFelt(STARK_PRIME - 1n)).toBe(STARK_PRIME - 1n)
    expect(() => assertFelt(STARK_PRIME, '<fact>')).toThrow(/<fact> is not a Starknet field element/)
  })
})
