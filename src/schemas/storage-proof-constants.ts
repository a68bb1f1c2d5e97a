/**
 * The storage-proof service's statuses and the property names seen in production. Plain values
 * with no zod, so that the main entry loads without the schemas; the client loads
 * schemas/storage-proof.ts on its first request.
 */

/** The statuses of a batch query; the service may send newer ones, which a wait takes as still running. */
export const BATCH_QUERY_STATUSES = ['RECEIVED', 'IN_PROGRESS', 'DONE', 'FAILED'] as const
/** The statuses a batch query ends in. */
export const TERMINAL_BATCH_QUERY_STATUSES = ['DONE', 'FAILED'] as const
/** Account properties seen in production; the field stays an open list of strings. */
export const KNOWN_ACCOUNT_PROPS = ['BALANCE', 'NONCE', 'STORAGE_ROOT', 'CODE_HASH'] as const
/** Block header fields a query may ask for among `props`; open too. */
export const KNOWN_HEADER_PROPS = [
  'PARENT_HASH',
  'STATE_ROOT',
  'TRANSACTIONS_ROOT',
  'RECEIPTS_ROOT',
  'NUMBER',
  'TIMESTAMP',
  'BASE_FEE_PER_GAS',
] as const

/** A batch query's status: one of {@link BATCH_QUERY_STATUSES}. */
export type BatchQueryStatus = (typeof BATCH_QUERY_STATUSES)[number]
