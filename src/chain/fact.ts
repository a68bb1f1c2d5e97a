import { InvalidInputError } from '../core/errors.ts'
import { STARK_PRIME, toBytes32Hex } from '../pie/shared/index.ts'

/**
 * Facts as the chains take them. Both are written as `0x` hex of at most 32 bytes: an Ethereum
 * fact is a bytes32 (a keccak digest), a Starknet fact a felt252 (below the Stark prime).
 * Leading zeros may be dropped (`toHex` writes them without), so shorter hex is left-padded.
 */

const HEX_FACT = /^0x[0-9a-fA-F]{1,64}$/

/**
 * Reads a fact written as `0x` hex of at most 32 bytes (leading zeros may be dropped).
 *
 * @param text The fact.
 * @param input How the error names the value.
 * @returns The fact as an integer.
 * @throws {InvalidInputError} When it is not `0x` and 1 to 64 hex digits.
 * @default input 'fact'
 * @example
 * ```ts
 * import { parseFact, toBytes32 } from 'proving-kit/chain'
 *
 * toBytes32(parseFact('0xabc')) // '0x0000...0abc'
 * ```
 */
export function parseFact(text: string, input = 'fact'): bigint {
  const trimmed = text.trim()
  if (!HEX_FACT.test(trimmed)) {
    throw new InvalidInputError(
      `${input} must be 0x followed by 1 to 64 hex digits (at most 32 bytes); got ${JSON.stringify(shorten(trimmed))}.`,
      { input },
    )
  }
  return BigInt(trimmed)
}

/**
 * A fact as bytes32, the form Ethereum's registries take: `0x` and 64 lowercase hex digits.
 *
 * @param fact The fact.
 * @returns Its bytes32 text.
 * @example
 * ```ts
 * import { computeSharpFact, inspectPie } from 'proving-kit'
 * import { toBytes32 } from 'proving-kit/chain'
 *
 * const inspection = await inspectPie('build/pie.zip')
 * const fact = toBytes32(
 *   computeSharpFact(BigInt(inspection.programHash), inspection.output.map(BigInt), inspection.factTopology),
 * )
 * ```
 */
export function toBytes32(fact: bigint): `0x${string}` {
  return toBytes32Hex(fact)
}

/** A Starknet fact must be a field element; `input` names the argument in the error. */
export function assertFelt(fact: bigint, input = 'fact'): bigint {
  if (fact >= STARK_PRIME) {
    throw new InvalidInputError(
      `${input} is not a Starknet field element: check that you copied the Integrity fact hash, not the SHARP fact.`,
      {
        input,
        metaMessages: ['It is not below the Stark prime 2^251 + 17·2^192 + 1; an Integrity fact always is.'],
      },
    )
  }
  return fact
}

/** Felts as Starknet JSON-RPC writes them: 0x, lowercase, no leading zeros. */
export function feltHex(value: bigint): string {
  return `0x${value.toString(16)}`
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}
