import { pedersen } from '@scure/starknet'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  computeProgramHash,
  computeProgramHashAsync,
  programHashChain,
  STARK_PRIME,
} from '../../../../src/pie/index.ts'
import { syntheticProgram } from '../../../../src/pie/generate/generate.ts'
import { fastPedersenHashChain, fastPedersenHashChainAsync, pedersenHash } from '../../../../src/pie/hash/pedersen.ts'

// @scure/starknet is the reference: an audited implementation written outside this project.
const reference = (a: bigint, b: bigint) => BigInt(pedersen(a, b))
const referenceChain = (values: readonly bigint[]) => {
  let acc = values[values.length - 1]!
  for (let i = values.length - 2; i >= 0; i--) acc = reference(values[i]!, acc)
  return acc
}

/** The reference chain of every suffix: element i is the chain of values[i..]. */
const referenceSuffixChains = (values: readonly bigint[]) => {
  const chains: bigint[] = new Array(values.length)
  let acc = values[values.length - 1]!
  chains[values.length - 1] = acc
  for (let i = values.length - 2; i >= 0; i--) chains[i] = acc = reference(values[i]!, acc)
  return chains
}

// Field elements of every shape a program holds: small words, instructions (< 2^63), values
// near the 248-bit split of the low and high parts, and full-size ones up to P - 1.
const felt = fc.oneof(
  fc.bigInt({ min: 0n, max: 255n }),
  fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }),
  fc.bigInt({ min: 2n ** 248n - 2n ** 20n, max: 2n ** 248n + 2n ** 20n }),
  fc.bigInt({ min: 0n, max: STARK_PRIME - 1n }),
  fc.constantFrom(0n, 1n, STARK_PRIME - 1n, 2n ** 248n - 1n, 2n ** 248n, 2n ** 251n),
)

// Generous timeouts: the reference costs about 4 ms a hash here, more on a busy machine, so the
// suite's share is kept to some 4,000 of them (about 15 s of one core); PROVING_HASH_DEPTH
// multiplies the random runs (e.g. 10 before touching src/pie/hash/).
const DEPTH = Math.max(1, Number(process.env.PROVING_HASH_DEPTH ?? 1))
const runs = (n: number) => Math.round(n * DEPTH)

describe('pedersenHash', () => {
  it('gives the published pedersen(0, 0)', () => {
    expect(pedersenHash(0n, 0n)).toBe(0x49ee3eba8c1600700ee1b87eb599f16716b0b1022947733551fde4050ca6804n)
  })

  it('equals @scure/starknet on random pairs (400, times PROVING_HASH_DEPTH)', {
    timeout: 300_000,
  }, () => {
    fc.assert(
      fc.property(felt, felt, (a, b) => pedersenHash(a, b) === reference(a, b)),
      { numRuns: runs(400) },
    )
  })

  it('refuses values outside the field', () => {
    expect(() => pedersenHash(STARK_PRIME, 0n)).toThrow(/not a field element/)
    expect(() => pedersenHash(0n, -1n)).toThrow(/not a field element/)
  })
})

describe('fastPedersenHashChain', () => {
  it('equals a chain of @scure/starknet hashes on random chains (every length around a batch)', {
    timeout: 300_000,
  }, () => {
    fc.assert(
      fc.property(
        fc.array(felt, { minLength: 1, maxLength: 600 }),
        (values) => fastPedersenHashChain(values) === referenceChain(values),
      ),
      { numRuns: runs(3) },
    )
    // Around its batches of 1,024 words: one reference fold over 1,025 words gives the chain of
    // every suffix (the fold runs from the end), so each length costs one fast chain only.
    const values = Array.from({ length: 1025 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n) % STARK_PRIME)
    const suffixes = referenceSuffixChains(values)
    for (const length of [1, 2, 511, 512, 513, 1023, 1024, 1025]) {
      expect(fastPedersenHashChain(values.slice(values.length - length))).toBe(suffixes[values.length - length])
    }
  })

  it('uses its wide table above 8,192 words and still equals the reference', {
    timeout: 600_000,
  }, async () => {
    const values = Array.from({ length: 8200 }, (_, i) => (BigInt(i + 1) ** 7n * 0x1234567n) % STARK_PRIME)
    const fast = await fastPedersenHashChainAsync(values)
    expect(fast).toBe(fastPedersenHashChain(values))
    // The narrow-table path (checked against the reference above), folded in pieces short
    // enough to stay narrow, gives the same hash.
    expect(fast).toBe(fastViaNarrow(values))
    const tail = values.slice(values.length - 300)
    expect(fastPedersenHashChain(tail)).toBe(referenceChain(tail))
  })

  it('keeps concurrent chains on the calling thread apart (they share the module between batches)', {
    timeout: 300_000,
  }, async () => {
    // Below the worker's threshold and above one batch: both run here, interleaved.
    const chains = [3000, 2500, 1500].map((length, k) =>
      Array.from({ length }, (_, i) => (BigInt(i + 1) * 0x9e3779b97f4a7c15n + BigInt(k)) % STARK_PRIME),
    )
    const together = await Promise.all(chains.map((values) => fastPedersenHashChainAsync(values)))
    expect(together).toEqual(chains.map((values) => fastPedersenHashChain(values)))
    const tail = chains[0]!.slice(2900)
    expect(fastPedersenHashChain(tail)).toBe(referenceChain(tail))
  })

  it('stops when its signal aborts', async () => {
    const controller = new AbortController()
    controller.abort(new Error('stop'))
    expect(() => fastPedersenHashChain([1n, 2n, 3n], controller.signal)).toThrow('stop')
    await expect(fastPedersenHashChainAsync([1n, 2n, 3n], controller.signal)).rejects.toThrow('stop')
  })
})

/** The chain through narrow tables only: fold in pieces shorter than the wide threshold. */
function fastViaNarrow(values: readonly bigint[]): bigint {
  let acc = values[values.length - 1]!
  for (let end = values.length - 1; end > 0; end -= 4000) {
    const start = Math.max(0, end - 4000)
    acc = fastPedersenHashChain([...values.slice(start, end), acc])
  }
  return acc
}

describe('program hash cache and async computation', () => {
  it('gives the same hash synchronously and asynchronously, for each variant', async () => {
    const program = {
      data: [1n, 2n, 0x400380007ffc7ffdn, STARK_PRIME - 1n],
      builtins: ['output'],
      main: 0,
    }
    for (const variant of ['pedersen', 'poseidon', 'blake'] as const) {
      const other = {
        ...program,
        data: [...program.data, BigInt(variant.length)],
      }
      expect(await computeProgramHashAsync(other, variant)).toBe(computeProgramHash(other, variant))
    }
    const chain = [0n, 0n, 1n, 0x6f7574707574n, ...program.data]
    expect(computeProgramHash(program)).toBe(referenceChain([BigInt(chain.length), ...chain]))
  })
})

describe('program hashes of random programs', () => {
  const builtin = fc.constantFrom(
    'output',
    'pedersen',
    'range_check',
    'ecdsa',
    'bitwise',
    'ec_op',
    'keccak',
    'poseidon',
    'range_check96',
  )
  const program = fc.record({
    data: fc.array(felt, { minLength: 1, maxLength: 300, size: 'max' }),
    builtins: fc.uniqueArray(builtin, { maxLength: 5 }),
    main: fc.nat({ max: 600 }),
  })

  it('equal the chain of @scure/starknet hashes over [len, 0, main, n, builtins, ...data]', {
    timeout: 300_000,
  }, () => {
    fc.assert(
      fc.property(program, (p) => {
        const chain = programHashChain(p)
        return computeProgramHash(p) === referenceChain([BigInt(chain.length), ...chain])
      }),
      { numRuns: runs(6) },
    )
  })

  it('on a worker thread (a long program) equal the same hash on the calling thread', {
    timeout: 300_000,
  }, async () => {
    const long = { data: syntheticProgram(12_000, 7), builtins: ['output', 'pedersen'], main: 6 }
    const chain = programHashChain(long)
    const values = [BigInt(chain.length), ...chain]
    const onWorker = await fastPedersenHashChainAsync(values)
    expect(onWorker).toBe(fastPedersenHashChain(values))
    expect(await computeProgramHashAsync(long)).toBe(onWorker)
    // The last 100 steps, from the reference, match the fast chain's (the tail of the chain is
    // a chain of its own).
    const tail = values.slice(values.length - 100)
    expect(fastPedersenHashChain(tail)).toBe(referenceChain(tail))
  })

  it('stop on a worker thread when the signal aborts mid-way', async () => {
    const values = Array.from({ length: 200_000 }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n) % STARK_PRIME)
    const controller = new AbortController()
    const hashing = fastPedersenHashChainAsync(values, controller.signal)
    controller.abort(new Error('cancelled by the test'))
    await expect(hashing).rejects.toThrow('cancelled by the test')
  })
})
