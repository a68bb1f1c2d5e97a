import { poseidonHashMany, poseidonSmall } from '@scure/starknet'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { STARK_PRIME } from '../../../../src/pie/index.ts'
import { hadesRoundConstants, poseidonHashManyFast } from '../../../../src/pie/hash/poseidon.ts'

// @scure/starknet's poseidonHashMany is the reference: written and audited outside this project.
const felt = fc.oneof(
  fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
  fc.bigInt({ min: 0n, max: STARK_PRIME - 1n }),
  fc.constantFrom(0n, 1n, 2n, STARK_PRIME - 1n, 2n ** 251n),
)

describe('hadesRoundConstants', () => {
  it("are @scure/starknet's, in its order", () => {
    const reference = (poseidonSmall as unknown as { roundConstants: bigint[][] }).roundConstants.flat()
    expect(reference).toHaveLength(273)
    expect(hadesRoundConstants()).toEqual(reference)
  })
})

describe('poseidonHashManyFast', () => {
  it('equals @scure/starknet on random inputs of every length up to 60', () => {
    fc.assert(
      fc.property(
        fc.array(felt, { maxLength: 60, size: 'max' }),
        (values) => poseidonHashManyFast(values) === poseidonHashMany(values),
      ),
      { numRuns: 300 },
    )
  })

  it('equals it on lengths around its batches of 1,024 elements, odd and even', { timeout: 120_000 }, () => {
    for (const length of [0, 1, 2, 1023, 1024, 1025, 2047, 2049]) {
      const values = Array.from({ length }, (_, i) => (BigInt(i + 3) ** 11n * 0x9e3779b97f4a7c15n) % STARK_PRIME)
      expect(poseidonHashManyFast(values)).toBe(poseidonHashMany(values))
    }
  })

  it('refuses values outside the field', () => {
    expect(() => poseidonHashManyFast([STARK_PRIME])).toThrow(/not a field element/)
    expect(() => poseidonHashManyFast([-1n])).toThrow(/not a field element/)
  })
})
