/**
 * How the toolkit writes and reads field elements and hashes as text: a felt (a program hash,
 * Integrity's verification hash) as lowercase `0x` hex without leading zeros (the form of the
 * spec's vectors); a fact that is bytes32 on chain (the SHARP fact, which SHARP's registry and the
 * Satellite register) as `0x` and 64 lowercase hex digits, wherever it is shown or output. Both
 * are read back leniently (any case, leading zeros, or plain decimal), so comparisons are numeric.
 */

/**
 * A felt as text: lowercase `0x` hex without leading zeros, the form every program hash and fact
 * of the toolkit is written in. (A fact that is bytes32 on chain is written with `toBytes32` of
 * `proving-kit/chain`.) Both forms are read back leniently: any case, leading zeros, or decimal.
 *
 * @param value The felt.
 * @returns Its text.
 * @example
 * ```ts
 * import { toHex } from 'proving-kit/pie'
 *
 * toHex(255n) // '0xff'
 * ```
 */
export function toHex(value: bigint): string {
  return `0x${value.toString(16)}`
}

/**
 * Reads a felt written as `0x` hex (any case, leading zeros allowed) or decimal.
 *
 * @param text The text.
 * @returns The integer, or undefined when the text is neither.
 * @example
 * ```ts
 * import { parseFeltText } from 'proving-kit/pie'
 *
 * parseFeltText('0x00FF') // 255n
 * parseFeltText('fact') // undefined
 * ```
 */
export function parseFeltText(text: string): bigint | undefined {
  const trimmed = text.trim()
  if (/^0[xX][0-9a-fA-F]+$/.test(trimmed)) return BigInt(`0x${trimmed.slice(2)}`)
  if (/^[0-9]+$/.test(trimmed)) return BigInt(trimmed)
  return undefined
}

const TWO_POW_256 = 1n << 256n

/** A 32-byte value as text: `0x` and 64 lowercase hex digits (a SHARP fact as Ethereum takes it). */
export function toBytes32Hex(value: bigint): `0x${string}` {
  return `0x${value.toString(16).padStart(64, '0')}`
}

/**
 * A bytes32 fact as someone else wrote it (the service's `sharpFactHash`), in its 32-byte form.
 * Text that is not a number of at most 32 bytes is returned as it is, for the caller to show as
 * the service's words: it is never reinterpreted.
 */
export function bytes32Text(text: string): string {
  const value = /^\s*(0[xX][0-9a-fA-F]+|[0-9]+)\s*$/.test(text) ? parseFeltText(text) : undefined
  return value !== undefined && value < TWO_POW_256 ? toBytes32Hex(value) : text
}
