import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { add, addFast, fe, fromMont, mul, mulFast, P, readRaw, sub, subFast, toMont, writeRaw } from '../../../src/pie/stark-field.ts'

// BigInt arithmetic is the reference; values of every size, edges of the field included.
const element = fc.oneof(
  fc.bigInt({ min: 0n, max: P - 1n }),
  fc.bigInt({ min: 0n, max: 2n ** 64n }),
  fc.constantFrom(0n, 1n, 2n, P - 1n, P - 2n, 2n ** 251n, 2n ** 192n, 2n ** 230n - 1n, (P - 1n) / 2n),
)

function limbs(value: bigint) {
  const out = fe()
  toMont(out, 0, value)
  return out
}

function normalised(out: Float64Array) {
  return [...out].every((limb) => Number.isInteger(limb) && limb >= 0 && limb < 2 ** 23)
}

describe('Stark field on limbs', () => {
  it('multiplies, adds and subtracts like BigInt modulo P (loop and unrolled forms)', () => {
    fc.assert(
      fc.property(element, element, (x, y) => {
        const a = limbs(x)
        const b = limbs(y)
        const out = fe()
        const checks: [(o: Float64Array, a: Float64Array, b: Float64Array) => void, bigint][] = [
          [mul, (x * y) % P],
          [mulFast, (x * y) % P],
          [add, (x + y) % P],
          [addFast, (x + y) % P],
          [sub, (((x - y) % P) + P) % P],
          [subFast, (((x - y) % P) + P) % P],
        ]
        return checks.every(([op, expected]) => {
          op(out, a, b)
          return fromMont(out) === expected && normalised(out) && readRaw(out) < P
        })
      }),
      { numRuns: 5000 },
    )
  })

  it('works in place (out aliasing an input)', () => {
    const a = limbs(P - 5n)
    mulFast(a, a, a)
    expect(fromMont(a)).toBe(25n)
    subFast(a, a, limbs(30n))
    expect(fromMont(a)).toBe(P - 5n)
  })

  it('round-trips raw limbs', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: P - 1n }), (x) => {
        const out = fe()
        writeRaw(out, 0, x)
        return readRaw(out) === x
      }),
    )
  })
})
