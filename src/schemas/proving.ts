import { z } from 'zod'
import { openEnum } from './open-enum.ts'
import {
  BUCKET_STATUSES,
  BUCKET_TYPES,
  CAIRO_VERSIONS,
  CAIRO_VMS,
  CHAINS,
  HINTS,
  JOB_SIZES,
  KNOWN_STEPS,
  LAYOUTS,
  NETWORKS,
  QUERY_STATUSES,
  RESULTS,
  SHARP_PROVERS,
} from './proving-constants.ts'

/**
 * The proving service's records, as its documentation's field table and production's answers
 * describe them. One schema per record, liberal in what it accepts: a field is required only
 * when the client acts on it (the id; the status where a reader decides on it); every other
 * field may be absent or null, because production omits or nulls fields the table marks
 * present. Enums are open (unknown values pass with a debug note), extra
 * fields pass (noted). Types stay checked; the form of a fact hash is the gate's to judge.
 */

const INT32_MIN = -2_147_483_648
const INT32_MAX = 2_147_483_647
const int32 = () => z.number().int().min(INT32_MIN).max(INT32_MAX)
/** ISO 8601, with an offset or Z, or without one (local time): what services send. */
const dateTime = () => z.iso.datetime({ offset: true, local: true })
/** May be absent, may be null: what production does to most fields. */
const maybe = <T extends z.ZodType>(schema: T) => schema.nullable().optional()
/** A list the service may leave out or null: read as empty. */
const listOf = <T extends z.ZodType>(schema: T) =>
  z
    .array(schema)
    .nullable()
    .optional()
    .transform((value) => value ?? [])
/**
 * The schema of a fact or program hash in a record: read as the text the service sent. A malformed
 * one (not 0x hex of at most 64 digits) does not fail the read, which would lose the rest of the
 * record: the release gate refuses it, naming the field.
 *
 * @returns A string schema.
 * @example
 * ```ts
 * import { factHash } from 'proving-kit/schemas'
 *
 * factHash().parse('0x5ab1') // '0x5ab1'
 * ```
 */
export const factHash = () => z.string()

/** Who submitted the query. In production, `email` and `image` may be null or absent. */
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
 * only `id` is required. Readers that decide on `status` use `queryRecordWithStatus` (below).
 */
export const queryRecord = z.looseObject(fields)

/** A record a reader decides on: `status` must be there (an open string; the wait judges it). */
export const queryRecordWithStatus = z.looseObject({ ...fields, status: openEnum(QUERY_STATUSES) })

/** @deprecated Use `queryRecordWithStatus`: the record of a retry's answer, which carries its status. */
export const queryRecordR = queryRecordWithStatus
/** @deprecated Use `queryRecord`: the record of `GET /proving-query/{id}`, whose status may be absent. */
export const queryRecordD = queryRecord
/** @deprecated Use `queryRecordWithStatus`: the record of the lists and of `GET /docs/proving-query/{id}`. */
export const queryRecordL = queryRecordWithStatus

/** A query record as any endpoint sends it: only `id` is sure to be there. */
export type QueryRecord = z.infer<typeof queryRecord>
/** A query record with its `status`: what a wait, a list or a retry answers with. */
export type QueryRecordWithStatus = z.infer<typeof queryRecordWithStatus>
/** @deprecated Use `QueryRecordWithStatus`. */
export type QueryRecordR = QueryRecordWithStatus
/** @deprecated Use `QueryRecord`. */
export type QueryRecordD = QueryRecord
/** @deprecated Use `QueryRecordWithStatus`. */
export type QueryRecordL = QueryRecordWithStatus
/** Who submitted a query: the client's id, name, email and image, any of them possibly missing. */
export type ClientObject = z.infer<typeof clientObject>

/**
 * The bucket record: the documented table, or production's (no aggregatorParams or mockProof,
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
/** A bucket's record: only `id` is sure to be there. */
export type BucketRecord = z.infer<typeof bucketRecord>

// --- Responses -------------------------------------------------------------------------------

/** The answer of `POST /proving-queries/{id}/retry`: the query's record, with its status. */
export const retryResponse = z.looseObject({
  provingQuery: queryRecordWithStatus,
  message: maybe(z.string()),
})

/** The answer of `GET /proving-query/{id}`: the record (its status may be absent) and the artifact URLs. */
export const queryResponse = z.looseObject({
  provingQuery: queryRecord,
  metadataUrls: listOf(z.string()),
})

/** The answer of `GET /docs/proving-query/{id}`: the record with its status, and the artifact URLs. */
export const docsQueryResponse = z.looseObject({
  provingQuery: queryRecordWithStatus,
  metadataUrls: listOf(z.string()),
})

/** Both list paths: /docs/proving-queries and production's GET /proving-queries. */
export const queryListResponse = z.looseObject({
  provingQueries: z.array(queryRecordWithStatus),
  total: maybe(z.number().int().nonnegative()),
})
/** The same as `queryListResponse`. */
export const docsQueryListResponse = queryListResponse

/** The answer of a submission: the new query's id. */
export const submissionResponse = z.looseObject({ provingQueryId: z.string().min(1) })

/** The lookup by dedupId: production answers it without `client`. */
export const dedupLookupResponse = z.looseObject({ provingQuery: queryRecord })

/** The answer of `POST /buckets` and `POST /buckets/close`: the bucket's record. */
export const bucketResponse = z.looseObject({ provingBucket: bucketRecord })

/** The answer of `GET /buckets/{id}`: the bucket and its queries. */
export const bucketDetailsResponse = z.looseObject({
  bucket: bucketRecord,
  queries: listOf(queryRecord),
})

/** The answer of `GET /is-alive`. */
export const isAliveResponse = z.looseObject({ alive: z.boolean() })

/** What a retry answers: the query's record, with its status. */
export type RetryResponse = z.infer<typeof retryResponse>
/** A query's record (its status may be absent) and its artifact URLs. */
export type QueryResponse = z.infer<typeof queryResponse>
/** A query's record with its status, and its artifact URLs. */
export type DocsQueryResponse = z.infer<typeof docsQueryResponse>
/** One page of queries: the records, each with its status, and the total when the service gives it. */
export type QueryListResponse = z.infer<typeof queryListResponse>
/** The same as `QueryListResponse`. */
export type DocsQueryListResponse = QueryListResponse
/** A bucket and the records of its queries. */
export type BucketDetailsResponse = z.infer<typeof bucketDetailsResponse>
