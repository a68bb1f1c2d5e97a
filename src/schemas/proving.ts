import { z } from 'zod'
import { openEnum } from '../core/parse.ts'

/**
 * The proving service's records, as interface.md's field table, contract.md and production.md
 * describe them. One schema per record, liberal in what it accepts: a field is required only
 * when the client acts on it (the id; the status where a reader decides on it); every other
 * field may be absent or null, because production omits or nulls fields the table marks
 * present (production.md). Enums are open (unknown values pass with a debug note), extra
 * fields pass (noted). Types stay checked, and so do the fact hashes a gate compares.
 */

export const QUERY_STATUSES = ['RECEIVED', 'IN_PROGRESS', 'DONE', 'FAILED'] as const
export const TERMINAL_QUERY_STATUSES = ['DONE', 'FAILED'] as const
export const CHAINS = ['L1', 'L2', 'APE_CHAIN', 'OFFCHAIN', 'WORLD_CHAIN'] as const
export const JOB_SIZES = ['XS', 'S', 'M', 'L'] as const
export const CAIRO_VMS = ['rust', 'python'] as const
export const CAIRO_VERSIONS = ['cairo0', 'cairo1'] as const
export const RESULTS = [
  'TRACE_GENERATION',
  'PROOF_GENERATION',
  'PROOF_VERIFICATION_ON_L1',
  'PROOF_VERIFICATION_ON_L2',
  'PROOF_VERIFICATION_ON_APE_CHAIN',
  'PROOF_VERIFICATION_ON_WORLD_CHAIN',
] as const
export const NETWORKS = ['MAINNET', 'TESTNET'] as const
export const HINTS = ['svc_evm_grower', 'svc_sn_grower'] as const
export const SHARP_PROVERS = ['stone', 'stwo'] as const
/** The layouts of interface.md's L2 endpoint (what the emulator's L2 endpoint accepts). */
export const L2_LAYOUTS = [
  'auto',
  'recursive',
  'recursive_with_poseidon',
  'small',
  'dex',
  'starknet',
  'starknet_with_keccak',
  'dynamic',
] as const
/** Every layout production accepts on a submission (production.md): the L2 ones and four more. */
export const LAYOUTS = [
  'auto',
  'plain',
  'recursive',
  'recursive_with_poseidon',
  'recursive_large_output',
  'all_solidity',
  'all_cairo',
  'dynamic',
  'small',
  'dex',
  'starknet',
  'starknet_with_keccak',
] as const
export const STONE_VERSIONS = ['stone5', 'stone6'] as const
export const MEMORY_VERIFICATIONS = ['strict', 'relaxed', 'cairo1'] as const
/** Steps seen in production (contract.md); `step` stays an open string. */
export const KNOWN_STEPS = [
  'TRACE_GENERATION',
  'TRACE_AND_METADATA_GENERATION',
  'PROOF_GENERATION',
  'PROOF_GENERATION_AND_VERIFICATION',
  'FACT_HASH_REGISTRATION',
  'BRIDGE_FACT_HASH',
  'PROOF_VERIFICATION_ON_L1',
  'PROOF_VERIFICATION_ON_L2',
] as const

export type QueryStatus = (typeof QUERY_STATUSES)[number]
export type JobSize = (typeof JOB_SIZES)[number]
export type Layout = (typeof LAYOUTS)[number]
export type StoneVersion = (typeof STONE_VERSIONS)[number]
export type MemoryVerification = (typeof MEMORY_VERIFICATIONS)[number]

const INT32_MIN = -2_147_483_648
const INT32_MAX = 2_147_483_647
const int32 = () => z.number().int().min(INT32_MIN).max(INT32_MAX)
/** ISO 8601, with an offset or Z, or without one (local time): what services send. */
const dateTime = () => z.iso.datetime({ offset: true, local: true })
/** May be absent, may be null: what production does to most fields. */
const maybe = <T extends z.ZodType>(schema: T) => schema.nullable().optional()
/** A list the service may leave out or null: read as empty. */
const listOf = <T extends z.ZodType>(schema: T) => z.array(schema).nullable().optional().transform((value) => value ?? [])
/**
 * A fact or program hash: a gate compares it with what the client computed, so it must be a
 * 0x-prefixed hex number (at most 256 bits); a malformed one is refused, never compared.
 */
export const factHash = () => z.string().regex(/^0x[0-9a-fA-F]{1,64}$/, 'expected a 0x-prefixed hex hash of at most 64 digits')

/** Who submitted the query. production.md: `email` and `image` may be null or absent. */
export const clientObject = z.looseObject({
  clientId: maybe(z.string()),
  name: maybe(z.string()),
  email: maybe(z.string()),
  isEmailVerified: maybe(z.boolean()),
  image: maybe(z.string()),
})

/** Every field of the table (plus production's), each optional and nullable. */
const fields = {
  id: z.string().min(1),
  externalId: maybe(z.string()),
  dedupId: maybe(z.string()),
  transactionId: maybe(z.string()),
  status: maybe(openEnum(QUERY_STATUSES)),
  step: maybe(openEnum(KNOWN_STEPS)),
  programHash: maybe(factHash()),
  integrityFactHash: maybe(factHash()),
  sharpFactHash: maybe(factHash()),
  layout: maybe(openEnum(LAYOUTS)),
  isFactMocked: maybe(z.boolean()),
  isProofMocked: maybe(z.boolean()),
  chain: maybe(openEnum(CHAINS)),
  jobSize: maybe(openEnum(JOB_SIZES)),
  declaredJobSize: maybe(openEnum(JOB_SIZES)),
  cairoVm: maybe(openEnum(CAIRO_VMS)),
  cairoVersion: maybe(openEnum(CAIRO_VERSIONS)),
  steps: maybe(z.array(z.string())),
  result: maybe(openEnum(RESULTS)),
  network: maybe(openEnum(NETWORKS)),
  hints: maybe(openEnum(HINTS)),
  sharpProver: maybe(openEnum(SHARP_PROVERS)),
  errorReason: maybe(z.string()),
  submittedByClient: maybe(z.string()),
  projectId: maybe(z.string()),
  submittedByWallet: maybe(z.string()),
  bucketId: maybe(z.string()),
  bucketJobIndex: maybe(int32()),
  customerName: maybe(z.string()),
  isJobSizeValid: maybe(z.boolean()),
  retryCount: maybe(int32()),
  createdAt: maybe(dateTime()),
  completedAt: maybe(dateTime()),
  client: maybe(clientObject),
  isRetriable: maybe(z.boolean()),
}

/**
 * A query record as any endpoint may send it (R, D, L, production's D, the dedupId lookup):
 * only `id` is required. Readers that decide on `status` use {@link queryRecordWithStatus}.
 */
export const queryRecord = z.looseObject(fields)

/** A record a reader decides on: `status` must be there (an open string; the wait judges it). */
export const queryRecordWithStatus = z.looseObject({ ...fields, status: openEnum(QUERY_STATUSES) })

/** Record R (the retry response): carries `status` by interface.md, which the CLI reports. */
export const queryRecordR = queryRecordWithStatus
/** Record D (GET /proving-query/{id}): no status by interface.md; production adds one. */
export const queryRecordD = queryRecord
/** Record L (the /docs/ endpoints and production's GET /proving-queries): carries `status`. */
export const queryRecordL = queryRecordWithStatus

export type QueryRecord = z.infer<typeof queryRecord>
export type QueryRecordWithStatus = z.infer<typeof queryRecordWithStatus>
export type QueryRecordR = QueryRecordWithStatus
export type QueryRecordD = QueryRecord
export type QueryRecordL = QueryRecordWithStatus
export type ClientObject = z.infer<typeof clientObject>

export const BUCKET_STATUSES = ['OPEN', 'IN_PROGRESS', 'DONE', 'FAILED'] as const
export const BUCKET_TYPES = ['SNOS', 'SVC_AR'] as const

/**
 * The bucket record: interface.md's table, or production's (no aggregatorParams or mockProof,
 * nullable leaves and nodeWidth, plus status, bucketType and chain). Only `id` is required.
 * nodeWidth is a number in the table and may come back as the string production is sent.
 */
export const bucketRecord = z.looseObject({
  id: z.string().min(1),
  externalId: maybe(z.string()),
  aggregatorParams: maybe(z.union([z.string(), z.record(z.string(), z.unknown())])),
  nodeWidth: maybe(z.union([int32(), z.string()])),
  leaves: maybe(int32()),
  mockProof: maybe(z.boolean()),
  projectId: maybe(z.string()),
  createdByClient: maybe(z.string()),
  createdAt: maybe(dateTime()),
  status: maybe(openEnum(BUCKET_STATUSES)),
  bucketType: maybe(openEnum(BUCKET_TYPES)),
  chain: maybe(openEnum(CHAINS)),
  aggregatorVersion: maybe(z.string()),
})
export type BucketRecord = z.infer<typeof bucketRecord>

// --- Responses -------------------------------------------------------------------------------

export const retryResponse = z.looseObject({
  provingQuery: queryRecordR,
  message: maybe(z.string()),
})

export const queryResponse = z.looseObject({
  provingQuery: queryRecordD,
  metadataUrls: listOf(z.string()),
})

export const docsQueryResponse = z.looseObject({
  provingQuery: queryRecordL,
  metadataUrls: listOf(z.string()),
})

/** Both list paths: /docs/proving-queries and production's GET /proving-queries. */
export const queryListResponse = z.looseObject({
  provingQueries: z.array(queryRecordL),
  total: maybe(z.number().int().nonnegative()),
})
export const docsQueryListResponse = queryListResponse

export const submissionResponse = z.looseObject({ provingQueryId: z.string().min(1) })

/** The lookup by dedupId: production answers it without `client` (production.md). */
export const dedupLookupResponse = z.looseObject({ provingQuery: queryRecord })

export const bucketResponse = z.looseObject({ provingBucket: bucketRecord })

export const bucketDetailsResponse = z.looseObject({
  bucket: bucketRecord,
  queries: listOf(queryRecord),
})

export const isAliveResponse = z.looseObject({ alive: z.boolean() })

export type RetryResponse = z.infer<typeof retryResponse>
export type QueryResponse = z.infer<typeof queryResponse>
export type DocsQueryResponse = z.infer<typeof docsQueryResponse>
export type QueryListResponse = z.infer<typeof queryListResponse>
export type DocsQueryListResponse = QueryListResponse
export type BucketDetailsResponse = z.infer<typeof bucketDetailsResponse>

// --- Error bodies (interface.md "Errors", contract.md status codes) --------------------------

export const RETRY_ERROR_CODES = [
  'QUERY_NOT_RETRIABLE',
  'MAX_RETRIES_REACHED',
  'FORBIDDEN',
  'PROVING_QUERY_NOT_FOUND',
  'QUERY_NOT_IN_FAILED_STATUS',
] as const
