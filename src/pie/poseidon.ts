/**
 * Starknet's Poseidon over many field elements (poseidonHashMany: the sponge of rate 2 over the
 * Hades permutation, the input padded with 1 then 0 to an even length), on the WebAssembly of
 * pedersen.ts. The round constants are @scure/starknet's (`poseidonSmall.roundConstants`), the
 * reference this is checked against (test/unit/pie/poseidon.test.ts); about 40x faster than its
 * BigInt permutation on a long program.
 */
import { poseidonSmall } from '@scure/starknet'
import { localEngine, wordsOf } from './pedersen.ts'

let roundConstants: Uint8Array | undefined

function constantsAsWords(): Uint8Array {
  const rows = (poseidonSmall as unknown as { roundConstants: readonly (readonly bigint[])[] }).roundConstants
  return (roundConstants ??= wordsOf(rows.flat()))
}

/** poseidonHashMany(values): the same result as @scure/starknet's. */
export function poseidonHashManyFast(values: readonly bigint[]): bigint {
  const padded = [...values, 1n]
  if (padded.length % 2 !== 0) padded.push(0n)
  return localEngine().poseidonAbsorb(wordsOf(padded), padded.length, constantsAsWords())
}
