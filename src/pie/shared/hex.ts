/**
 * How this folder writes and reads field elements and hashes as text: lowercase `0x` hex
 * without leading zeros (the form of the spec's vectors), read back leniently (any case,
 * leading zeros, or plain decimal) so comparisons are numeric.
 */

export function toHex(value: bigint): string {
  return `0x${value.toString(16)}`
}

/** A `0x` hex or decimal string as an integer; undefined when it is neither. */
export function parseFeltText(text: string): bigint | undefined {
  const trimmed = text.trim()
  if (/^0[xX][0-9a-fA-F]+$/.test(trimmed)) return BigInt(`0x${trimmed.slice(2)}`)
  if (/^[0-9]+$/.test(trimmed)) return BigInt(trimmed)
  return undefined
}

