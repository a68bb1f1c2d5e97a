/**
 * Starknet's Poseidon over many field elements (poseidonHashMany: the sponge of rate 2 over the
 * Hades permutation, the input padded with 1 then 0 to an even length), on the WebAssembly of
 * pedersen.ts; about 15x faster than @scure/starknet's BigInt permutation, the reference this
 * is checked against (test/unit/pie/hash/poseidon.test.ts).
 *
 * The round constants are StarkWare's: the i-th is SHA-256("Hades" + i) read big-endian,
 * modulo P (as cairo-lang's poseidon_utils and @scure/starknet derive them; the test compares
 * them with @scure/starknet's `poseidonSmall.roundConstants`). Derived here rather than read
 * from @scure/starknet so the library's entry does not load it (~75 ms of start-up).
 */
import { createHash } from 'node:crypto'
import { STARK_PRIME } from '../shared/index.ts'
import { localEngine, wordsOf } from './pedersen.ts'

/** Width 3, 8 full and 83 partial rounds: 273 constants. */
const ROUND_CONSTANTS = 91 * 3

/** Hades' round constants, in order (round by round, lane by lane). */
export function hadesRoundConstants(): bigint[] {
  return Array.from(
    { length: ROUND_CONSTANTS },
    (_, i) => BigInt(`0x${createHash('sha256').update(`Hades${i}`).digest('hex')}`) % STARK_PRIME,
  )
}

let roundConstants: Uint8Array | undefined

/** poseidonHashMany(values): the same result as @scure/starknet's. */
export function poseidonHashManyFast(values: readonly bigint[]): bigint {
  const padded = [...values, 1n]
  if (padded.length % 2 !== 0) padded.push(0n)
  roundConstants ??= wordsOf(hadesRoundConstants())
  return localEngine().poseidonAbsorb(wordsOf(padded), padded.length, roundConstants)
}
