import { z } from 'zod'
import { openEnum } from '../core/parse.ts'

/**
 * The proving service's records, as interface.md's field table and contract.md define them.
 * Record R (retry response), D (GET /proving-query/{id}) and L (/docs/... endpoints) are three
 * schemas: a field is required where the table marks it present and not nullable, nullable
 * where it says so. Enums are open (unknown values pass with a debug note); types are not.
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
export const LAYOUTS = [
  'auto',
  'recursive',
  'recursive_with_poseidon',
  'small',
  'dex',
  'starknet',
  'starknet_with_keccak',
  'dynamic',
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
const dateTime = () => z.iso.datetime({ offset: true })

export const clientObject = z.looseObject({
  clientId: z.string(),
  name: z.string(),
  email: z.string(),
  isEmailVerified: z.boolean(),
  image: z.string(),
})

/** Fields of the table with their type and R-nullability, shared by the three representations. */
const fields = {
  id: z.string(),
  externalId: z.string().nullable(),
  dedupId: z.string().nullable(),
  transactionId: z.string().nullable(),
  status: openEnum(QUERY_STATUSES),
  step: openEnum(KNOWN_STEPS).nullable(),
  programHash: z.string().nullable(),
  integrityFactHash: z.string().nullable(),
  sharpFactHash: z.string().nullable(),
  layout: openEnum(LAYOUTS).nullable(),
  isFactMocked: z.boolean().nullable(),
  isProofMocked: z.boolean().nullable(),
  chain: openEnum(CHAINS).nullable(),
  jobSize: openEnum(JOB_SIZES).nullable(),
  declaredJobSize: openEnum(JOB_SIZES).nullable(),
  cairoVm: openEnum(CAIRO_VMS),
  cairoVersion: openEnum(CAIRO_VERSIONS),
  steps: z.array(z.string()),
  result: openEnum(RESULTS).nullable(),
  network: openEnum(NETWORKS).nullable(),
  hints: openEnum(HINTS).nullable(),
  sharpProver: openEnum(SHARP_PROVERS).nullable(),
  errorReason: z.string().nullable(),
  submittedByClient: z.string().nullable(),
  projectId: z.string().nullable(),
  submittedByWallet: z.string().max(64).nullable(),
  bucketId: z.string().nullable(),
  bucketJobIndex: int32().nullable(),
  customerName: z.string().nullable(),
  isJobSizeValid: z.boolean(),
  retryCount: int32(),
  createdAt: dateTime(),
  completedAt: dateTime().nullable(),
}

/**
 * Record R: the retry response. All R fields are always present; nullable ones carry null; no
 * extra properties by the spec (extras are still tolerated and noted, as everywhere).
 */
export const queryRecordR = z.looseObject({ ...fields })

/** Record D: GET /proving-query/{id}. No status (!), plus `client` and `isRetriable`. */
export const queryRecordD = z.looseObject({
  id: fields.id,
  externalId: fields.externalId,
  dedupId: fields.dedupId,
  transactionId: fields.transactionId,
  step: fields.step,
  programHash: fields.programHash,
  integrityFactHash: fields.integrityFactHash,
  sharpFactHash: fields.sharpFactHash,
  layout: fields.layout,
  isFactMocked: fields.isFactMocked,
  isProofMocked: fields.isProofMocked,
  steps: fields.steps,
  errorReason: fields.errorReason,
  submittedByClient: fields.submittedByClient,
  projectId: fields.projectId,
  submittedByWallet: fields.submittedByWallet,
  bucketId: fields.bucketId,
  bucketJobIndex: fields.bucketJobIndex,
  customerName: fields.customerName,
  isJobSizeValid: fields.isJobSizeValid,
  retryCount: fields.retryCount,
  createdAt: fields.createdAt,
  completedAt: fields.completedAt,
  client: clientObject.nullable(),
  isRetriable: z.boolean().nullable(),
  // Not in D by the table, but the production service sends it and completion is decided
  // from it when present (contract.md): optional here, never required.
  status: openEnum(QUERY_STATUSES).optional(),
})

/** Record L: the /docs/... endpoints. */
export const queryRecordL = z.looseObject({
  id: fields.id,
  externalId: fields.externalId,
  transactionId: fields.transactionId,
  status: fields.status,
  step: fields.step,
  programHash: fields.programHash,
  integrityFactHash: fields.integrityFactHash,
  sharpFactHash: fields.sharpFactHash,
  layout: fields.layout,
  isFactMocked: fields.isFactMocked,
  chain: fields.chain,
  jobSize: fields.jobSize,
  declaredJobSize: fields.declaredJobSize,
  cairoVm: fields.cairoVm,
  cairoVersion: fields.cairoVersion,
  steps: fields.steps,
  result: fields.result,
  network: fields.network,
  hints: fields.hints,
  errorReason: fields.errorReason,
  submittedByClient: fields.submittedByClient,
  projectId: fields.projectId,
  bucketId: fields.bucketId,
  bucketJobIndex: fields.bucketJobIndex,
  customerName: fields.customerName,
  createdAt: fields.createdAt,
  completedAt: fields.completedAt,
  client: clientObject.nullable(),
})

export type QueryRecordR = z.infer<typeof queryRecordR>
export type QueryRecordD = z.infer<typeof queryRecordD>
export type QueryRecordL = z.infer<typeof queryRecordL>
export type ClientObject = z.infer<typeof clientObject>

export const BUCKET_STATUSES = ['OPEN', 'IN_PROGRESS', 'DONE', 'FAILED'] as const

export const bucketRecord = z.looseObject({
  id: z.string(),
  externalId: z.string().nullable(),
  aggregatorParams: z.string().nullable(),
  nodeWidth: z.number().int().nullable(),
  leaves: z.number().int(),
  mockProof: z.boolean(),
  projectId: z.string().nullable(),
  createdByClient: z.string().nullable(),
  createdAt: dateTime(),
  // Bucket states are contract.md's; the table has no status column, so it is optional.
  status: openEnum(BUCKET_STATUSES).optional(),
  aggregatorVersion: z.string().nullable().optional(),
})
export type BucketRecord = z.infer<typeof bucketRecord>

// --- Responses -------------------------------------------------------------------------------

export const retryResponse = z.looseObject({
  provingQuery: queryRecordR,
  message: z.string(),
})

export const queryResponse = z.looseObject({
  provingQuery: queryRecordD,
  metadataUrls: z.array(z.string()),
})

export const docsQueryResponse = z.looseObject({
  provingQuery: queryRecordL,
  metadataUrls: z.array(z.string()),
})

export const docsQueryListResponse = z.looseObject({
  provingQueries: z.array(queryRecordL),
  total: z.number().int().nonnegative(),
})

export const submissionResponse = z.looseObject({ provingQueryId: z.string().min(1) })

export const dedupLookupResponse = z.looseObject({ provingQuery: queryRecordD })

export const bucketResponse = z.looseObject({ provingBucket: bucketRecord })

export const bucketDetailsResponse = z.looseObject({
  bucket: bucketRecord,
  queries: z.array(queryRecordD),
})

export const isAliveResponse = z.looseObject({ alive: z.boolean() })

export type RetryResponse = z.infer<typeof retryResponse>
export type QueryResponse = z.infer<typeof queryResponse>
export type DocsQueryResponse = z.infer<typeof docsQueryResponse>
export type DocsQueryListResponse = z.infer<typeof docsQueryListResponse>
export type BucketDetailsResponse = z.infer<typeof bucketDetailsResponse>

// --- Error bodies (interface.md "Errors", contract.md status codes) --------------------------

export const messageErrorBody = z.looseObject({ message: z.string() })
export const errorCodeBody = z.looseObject({ error: z.string() })

export const RETRY_ERROR_CODES = [
  'QUERY_NOT_RETRIABLE',
  'MAX_RETRIES_REACHED',
  'FORBIDDEN',
  'PROVING_QUERY_NOT_FOUND',
  'QUERY_NOT_IN_FAILED_STATUS',
] as const
