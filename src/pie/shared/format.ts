/**
 * The fixed facts of the Cairo PIE format that every module of this folder agrees on:
 * which files a PIE holds, in which order the packer writes them, the
 * size limits cairo-lang enforces, the builtins it knows and the field it works in.
 */

export const METADATA = 'metadata.json'
export const MEMORY = 'memory.bin'
export const ADDITIONAL_DATA = 'additional_data.json'
export const EXECUTION_RESOURCES = 'execution_resources.json'
export const VERSION = 'version.json'

/** The order cairo-lang writes the entries in; the packer follows it so output is canonical. */
export const PIE_ENTRY_ORDER = [METADATA, MEMORY, ADDITIONAL_DATA, EXECUTION_RESOURCES, VERSION] as const
export type PieEntryName = (typeof PIE_ENTRY_ORDER)[number]
export const REQUIRED_ENTRIES: readonly PieEntryName[] = [METADATA, MEMORY, ADDITIONAL_DATA, EXECUTION_RESOURCES]

const GIB = 1024 ** 3
/** cairo-lang rejects an entry whose uncompressed size reaches its limit. */
export const ENTRY_SIZE_LIMITS: Readonly<Record<PieEntryName, number>> = {
  [METADATA]: 5 * GIB,
  [MEMORY]: 5 * GIB,
  [ADDITIONAL_DATA]: 5 * GIB,
  [EXECUTION_RESOURCES]: 10_000,
  [VERSION]: 10_000,
}

export function isPieEntryName(name: string): name is PieEntryName {
  return (PIE_ENTRY_ORDER as readonly string[]).includes(name)
}

/** cairo-lang's canonical builtin order; a program's builtins must be a subsequence of it. */
export const BUILTIN_ORDER = [
  'output',
  'pedersen',
  'range_check',
  'ecdsa',
  'bitwise',
  'ec_op',
  'keccak',
  'poseidon',
  'range_check96',
  'add_mod',
  'mul_mod',
] as const

/** The Stark field prime, 2^251 + 17 * 2^192 + 1: the field every Starknet hash works in. */
export const STARK_PRIME = 2n ** 251n + 17n * 2n ** 192n + 1n

export const TWO_POW_30 = 2 ** 30
export const TWO_POW_63 = 2n ** 63n
