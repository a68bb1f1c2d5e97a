import { bytes32Text } from '../pie/shared/index.ts'

/**
 * What --json prints of a value: as it is, except that a SHARP fact (a `sharpFactHash` field,
 * wherever it sits: a query record, a batch row, an error's record) is in its on-chain form, `0x`
 * and 64 hex digits, as the human output, the action's outputs and facts.json give it.
 */
export function jsonOutputValue(key: string, value: unknown): unknown {
  return key === 'sharpFactHash' && typeof value === 'string' ? bytes32Text(value) : value
}
