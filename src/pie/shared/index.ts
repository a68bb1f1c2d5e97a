/**
 * The lowest layer of the PIE toolkit: the fixed facts of the Cairo PIE format (its files, their
 * order and limits, the builtins, the Stark prime), felts as text, SHA-256 of files and bytes, and
 * the shape of the output's fact tree (read by ../validate/, hashed by ../facts/).
 * Every other folder may import it; it imports none.
 */
export {
  ADDITIONAL_DATA,
  BUILTIN_ORDER,
  ENTRY_SIZE_LIMITS,
  EXECUTION_RESOURCES,
  isPieEntryName,
  MEMORY,
  METADATA,
  PIE_ENTRY_ORDER,
  REQUIRED_ENTRIES,
  STARK_PRIME,
  TWO_POW_30,
  TWO_POW_63,
  VERSION,
  type PieEntryName,
} from './format.ts'
export { bytes32Text, parseFeltText, toBytes32Hex, toHex } from './hex.ts'
export { sha256Bytes, sha256File } from './digest.ts'
export { FactTopologyError, walkFactTree, type FactTopology } from './fact-tree.ts'
