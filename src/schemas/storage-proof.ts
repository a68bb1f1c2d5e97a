import { z } from 'zod'
import { InvalidInputError } from '../core/errors.ts'
import { serializeJsonBody } from '../core/json-limits.ts'
import { article, describeValue } from './issue-words.ts'
import { openEnum } from './open-enum.ts'
import { BATCH_QUERY_STATUSES } from './storage-proof-constants.ts'

/**
 * The storage-proof service: one batch query proving
 * account properties at given blocks, and the status of that query.
 *
 * The request schema is strict, because it checks what we are about to send (and the emulator
 * checks what it receives with the same rules), but accepts every body production takes:
 * chains keyed by decimal id or by name (`SN_SEPOLIA`), blocks by
 * `block:<n>` or `timestamp:<n>`, accounts by 0x hex address (20-byte EVM or 32-byte Starknet),
 * an account with only `slots` (or only `props`), and props that name header fields as well as
 * account fields. The response schemas are tolerant, as everywhere.
 */

const NUMERIC = /^\d+(\.\d+)?$/
/** A chain by decimal id ("11155111") or by name ("SN_SEPOLIA"). */
const CHAIN_KEY = /^((0|[1-9]\d*)|[A-Z][A-Z0-9_]{1,63})$/
const BLOCK_KEY = /^(block|timestamp):(0|[1-9]\d*)$/
/** An EVM address (20 bytes) or a Starknet one (a felt, up to 32 bytes). */
const ADDRESS = /^0x[0-9a-fA-F]{1,64}$/
/** A storage slot: a 32-byte key, hex (0x-prefixed, at most 64 digits) or decimal. */
const SLOT = /^(0x[0-9a-fA-F]{1,64}|\d{1,78})$/

/** A chain of a batch query: its decimal id (`"11155111"`) or its name (`"SN_SEPOLIA"`). */
export const chainKey = z
  .string()
  .regex(CHAIN_KEY, 'must be a decimal chain id ("11155111") or a chain name ("SN_SEPOLIA")')

/** What a batch query asks of one account: `props` (`BALANCE`, `NONCE`, ...) and storage `slots`; at least one. */
export const accountRequest = z
  .strictObject({
    props: z.array(z.string().min(1, 'must not be empty')).optional(),
    slots: z
      .array(z.string().regex(SLOT, 'must be a storage slot: 0x-prefixed hex (32 bytes at most) or decimal'))
      .optional(),
  })
  // A query that asks nothing of an account proves nothing and still costs a fee.
  .refine(
    (account) => (account.props?.length ?? 0) + (account.slots?.length ?? 0) > 0,
    'asks for no props and no slots',
  )

/** What a batch query asks of one block: the accounts, by address. */
export const blockRequest = z.strictObject({
  accounts: z
    .record(
      z.string().regex(ADDRESS, 'must be a 0x-prefixed hex address (20 bytes, or 32 for Starknet)'),
      accountRequest,
    )
    .refine((accounts) => Object.keys(accounts).length > 0, 'names no account'),
})

/** What a batch query asks of one chain: the blocks, by `block:<number>` or `timestamp:<unix seconds>`. */
export const chainRequest = z
  .record(z.string().regex(BLOCK_KEY, 'must be "block:<number>" or "timestamp:<unix seconds>"'), blockRequest)
  .refine((blocks) => Object.keys(blocks).length > 0, 'names no block')

/** The body of `POST /batch-query` (strict): the destination chain, the fee, and per chain what to prove. */
export const batchQueryBody = z.strictObject({
  destinationChainId: chainKey,
  fee: z.string().regex(NUMERIC, 'must be a numeric string, e.g. "0" or "1000000"'),
  data: z.record(chainKey, chainRequest).refine((chains) => Object.keys(chains).length > 0, 'names no chain'),
})

/** What a batch query asks of one account. */
export type AccountRequest = z.infer<typeof accountRequest>
/** What a batch query asks of one block. */
export type BlockRequest = z.infer<typeof blockRequest>
/** A batch query: the destination chain, the fee (a numeric string), and per chain, block and account what to prove. */
export type BatchQueryBody = z.infer<typeof batchQueryBody>

/**
 * Turns zod's issues with a batch query body into one line per problem, with the JSON path:
 * `data.1.block:x: must be ...`.
 *
 * @param error The error of `batchQueryBody.safeParse(body, { reportInput: true })`.
 * @param limit How many problems to describe.
 * @returns The lines.
 * @default limit 5
 * @example
 * ```ts
 * import { batchQueryBody, describeBatchQueryProblems } from 'proving-kit/schemas'
 *
 * const result = batchQueryBody.safeParse({ fee: 1 }, { reportInput: true })
 * if (!result.success) console.log(describeBatchQueryProblems(result.error))
 * ```
 */
export function describeBatchQueryProblems(error: z.ZodError, limit = 5): string[] {
  return error.issues.slice(0, limit).map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join('.') : '(body)'
    // The same words as a task body's check: "x is required", "x must be a string, got number 5".
    // Only from a parse with reportInput: without it, an absent field cannot be told from a wrong one.
    if (issue.code === 'invalid_type' && 'input' in issue) {
      return issue.input === undefined
        ? `${where} is required`
        : `${where} must be ${article(issue.expected)}, got ${describeValue(issue.input)}`
    }
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => `${issue.path.length ? `${where}.` : ''}${key} is not a known field`).join('; ')
    // A bad record key (chain id, block, address) carries the key rule's message one level down.
    const nested = issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined
    return nested
      ? `${where}: the key ${JSON.stringify(String(issue.path.at(-1)))} ${nested}`
      : `${where}: ${issue.message}`
  })
}

// --- Responses -------------------------------------------------------------------------------

/** The answer of `POST /batch-query`: the batch query's id. */
export const batchQueryResponse = z.looseObject({ internalId: z.string().min(1) })

/** The answer of the status read: `queryStatus`, an open list (a newer value is taken as still running). */
export const batchQueryStatusResponse = z.looseObject({
  // Open: contract.md says to treat unknown values as non-terminal.
  queryStatus: openEnum(BATCH_QUERY_STATUSES),
})

/** A submitted batch query's id. */
export type BatchQueryResponse = z.infer<typeof batchQueryResponse>
/** A batch query's status. */
export type BatchQueryStatusResponse = z.infer<typeof batchQueryStatusResponse>

/**
 * Checks a batch query body as {@link StorageProofClient.submitBatchQuery} does before sending it.
 *
 * @param body The body.
 * @returns The body, parsed.
 * @throws {InvalidInputError} When it is malformed: the first problem on the error's face, every one in `metaMessages`.
 * @example
 * ```ts
 * import { checkBatchQueryBody } from 'proving-kit/schemas'
 *
 * // Throws InvalidInputError: data names no chain.
 * const body = checkBatchQueryBody({ destinationChainId: 'SN_SEPOLIA', fee: '0', data: {} })
 * ```
 */
export function checkBatchQueryBody(body: unknown): BatchQueryBody {
  // Nesting and size first: a hostile body must not reach the schema, nor JSON.stringify.
  serializeJsonBody(body, { input: 'body', what: 'the batch query' })
  // reportInput: an absent field is told from a wrong one ("is required" or "must be a string, got 5").
  const result = batchQueryBody.safeParse(body, { reportInput: true })
  if (result.success) return result.data
  const problems = describeBatchQueryProblems(result.error)
  const more = result.error.issues.length - 1
  // The first problem on the error's face (it names the field); every one listed below it.
  throw new InvalidInputError(
    `The batch query is malformed: ${problems[0] ?? 'the body is not valid'}${more > 0 ? ` (and ${more} more, listed below)` : ''}; fix it before sending.`,
    { input: 'body', metaMessages: more > 0 ? problems : undefined },
  )
}
