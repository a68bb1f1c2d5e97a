import { InvalidInputError } from '../core/errors.ts'
import { STARK_PRIME, toBytes32Hex } from '../pie/shared/index.ts'

/**
 * Facts as the chains take them. Both are written as `0x` hex of at most 32 bytes: an Ethereum
 * fact is a bytes32 (a keccak digest), a Starknet fact a felt252 (below the Stark prime).
 * Leading zeros may be dropped (`toHex` writes them without), so shorter hex is left-padded.
 */

const HEX_FACT = /^0x[0-9a-fA-F]{1,64}$/

/** The fact as an integer; `input` names the argument in the error. */
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

/** The bytes32 form `isValid` takes: 0x and 64 lowercase hex digits (pie/shared/hex.ts, the one place facts are formatted). */
export function toBytes32(fact: bigint): `0x${string}` {
  return toBytes32Hex(fact)
}

/** A Starknet fact must be a field element; `input` names the argument in the error. */
export function assertFelt(fact: bigint, input = 'fact'): bigint {
  if (fact >= STARK_PRIME) {
    throw new InvalidInputError(`${input} is not a Starknet field element: check that you copied the Integrity fact hash, not the SHARP fact.`, {
      input,
      metaMessages: ['It is not below the Stark prime 2^251 + 17·2^192 + 1; an Integrity fact always is.'],
    })
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
