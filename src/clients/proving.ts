import type { HttpClient } from '../core/http.ts'
import type { BucketDetailsResponse, BucketRecord, DocsQueryResponse, QueryListResponse, QueryRecord, QueryRecordWithStatus, QueryResponse, RetryResponse } from '../schemas/proving.ts'
import { closeBucket, type CreateBucketOptions, createBucket, getBucket } from './proving/buckets.ts'
import { findQueryByDedupId, resolveDedupId } from './proving/dedup.ts'
import type { SubmitPieOptions, SubmitPieStreamOptions, SubmitProofOptions, SubmitQueryOptions } from './proving/forms.ts'
import { iterateQueries, type ListQueriesOptions, listQueries } from './proving/lists.ts'
import { getQuery, getQueryDetails, type QueryResult, readQuery } from './proving/reads.ts'
import { checkService, type ClientOptions, isAlive, type ProvingService, provingServiceOf, type ReadPaths } from './proving/service.ts'
import { type FailedQueryRetry, type RetriedQuery, retryFailedQuery, retryQuery } from './proving/retries.ts'
import { type SubmittedQuery, submitPie, submitPieStream, submitProofVerification, submitQuery } from './proving/submissions.ts'
import { type WaitForQueryOptions, waitForQuery } from './proving/wait.ts'

// The types of the client's options and answers, where its users look for them.
export type { CreateBucketOptions } from './proving/buckets.ts'
export { deriveDedupId } from './proving/dedup.ts'
export type { SubmitPieOptions, SubmitPieStreamOptions, SubmitProofOptions, SubmitQueryOptions, UploadProgress } from './proving/forms.ts'
export type { ListQueriesOptions } from './proving/lists.ts'
export type { QueryResult } from './proving/reads.ts'
export { describeRetry, type FailedQueryRetry, type RetriedQuery } from './proving/retries.ts'
export type { ClientOptions, ReadPaths } from './proving/service.ts'
export type { SubmittedQuery } from './proving/submissions.ts'
export type { QueryProgress, WaitForQueryOptions } from './proving/wait.ts'

/**
 * The proving service: queries, buckets and the two L2 submission endpoints,
 * plus the production extensions (general submission with dedupId, lookup by
 * dedupId, bucket create/get, is-alive). Each concern is a module of ./proving/: the service's
 * connection and key (service.ts), reads and waits (reads.ts, wait.ts), lists, buckets, the
 * submissions with their forms, and the dedupId lookup.
 */
export class ProvingClient {
  readonly http: HttpClient
  readonly readPaths: ReadPaths
  readonly #service: ProvingService

  constructor(options: ClientOptions) {
    this.#service = provingServiceOf(options)
    this.http = this.#service.http
    this.readPaths = this.#service.readPaths
  }

  get hasApiKey(): boolean {
    return this.#service.apiKey !== undefined
  }

  /** POST /proving-queries/{id}/retry: sends a FAILED, retriable query back to RECEIVED. */
  retryQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<RetryResponse> {
    return retryQuery(this.#service, queryId, options)
  }

  /**
   * A re-run found its earlier query FAILED: retries it when its error is retriable and fewer
   * than 3 retries are used (the same query runs again, nothing new is paid for), else says why
   * not. See clients/proving/retries.ts.
   */
  retryFailedQuery(queryId: string, options: { signal?: AbortSignal | undefined } = {}): Promise<FailedQueryRetry> {
    return retryFailedQuery(this.#service, queryId, options)
  }

  /**
   * GET /proving-query/{id}: record D and the artifact URLs. the documented record has no
   * status; production's carries one. No key needed. See readQuery for a record with status.
   */
  getQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<QueryResponse> {
    return getQuery(this.#service, queryId, options)
  }

  /** GET /docs/proving-query/{id}: record L, which carries `status`. */
  getQueryDetails(queryId: string, options: { signal?: AbortSignal } = {}): Promise<DocsQueryResponse> {
    return getQueryDetails(this.#service, queryId, options)
  }

  /**
   * The query with its status, from whichever path the service serves: production's
   * GET /proving-query/{id} when its record carries `status`, else /docs/proving-query/{id}
   * (with the key). readPaths fixes the path instead.
   */
  readQuery(queryId: string, options: { signal?: AbortSignal; path?: ReadPaths } = {}): Promise<QueryResult> {
    return readQuery(this.#service, queryId, options)
  }

  /**
   * One page of the queries submitted with this key: the documented GET /docs/proving-queries
   * or production's GET /proving-queries (same parameters; production takes the key as the
   * `apiKey` query parameter too). With readPaths `auto` the docs path is asked first and a
   * service that has no such route (a 404 that is not the service's own answer) is asked on
   * the other; the client then stays there.
   */
  listQueries(options: ListQueriesOptions = {}): Promise<QueryListResponse> {
    return listQueries(this.#service, options)
  }

  /** Every query, page after page (`limit` per request, 100 by default). */
  iterateQueries(options: Omit<ListQueriesOptions, 'offset'> = {}): AsyncGenerator<QueryRecordWithStatus> {
    return iterateQueries(this.#service, options)
  }

  /** POST /buckets/close?bucketId=: finalizes the bucket's queries; idempotent. */
  closeBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketRecord> {
    return closeBucket(this.#service, bucketId, options)
  }

  /** POST /buckets (extension): opens a bucket. */
  createBucket(options: CreateBucketOptions): Promise<BucketRecord> {
    return createBucket(this.#service, options)
  }

  /** GET /buckets/{id} (extension): the bucket and its queries. */
  getBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketDetailsResponse> {
    return getBucket(this.#service, bucketId, options)
  }

  /**
   * Makes sure the base URL reaches the proving service before anything is submitted (and
   * paid for): `GET /is-alive` must not be a page from something else (a gateway's text/plain
   * 404, an HTML page, a non-JSON 200). The service's own answers pass, even an error (its JSON
   * 404, a 5xx: the submission handles those). Asked once per client. So a wrong URL is an
   * input error before the upload, never a failed wait after it.
   */
  checkService(options: { signal?: AbortSignal | undefined } = {}): Promise<void> {
    return checkService(this.#service, options)
  }

  /** GET /is-alive (extension). */
  isAlive(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    return isAlive(this.#service, options)
  }

  /**
   * POST /v1/l2/proving-query/proof-generation-verification: uploads pie.zip (streamed from
   * disk, flat memory) for proof generation and L2 verification. This endpoint has no dedupId,
   * so a submission whose answer was lost is never sent again: the error says how to check.
   */
  submitPie(options: SubmitPieOptions): Promise<{ provingQueryId: string }> {
    return submitPie(this.#service, options)
  }

  /**
   * The same submission with the pie.zip sent while it is produced (chunked transfer encoding,
   * the text fields first and the file last: see core/multipart-stream.ts). Tried once: the
   * bytes cannot be produced again, so a refusal before processing (a server that wants a
   * length answers 411) is thrown as it is, and the caller sends the finished file with
   * `submitPie` instead.
   */
  submitPieStream(options: SubmitPieStreamOptions): Promise<{ provingQueryId: string }> {
    return submitPieStream(this.#service, options)
  }

  /** POST /v1/l2/proving-query/proof-verification: verifies an existing proof file on L2. */
  submitProofVerification(options: SubmitProofOptions): Promise<{ provingQueryId: string }> {
    return submitProofVerification(this.#service, options)
  }

  /**
   * POST /proving-query (extension): the general submission. A `dedupId` (derived from the
   * file's digest and the parameters unless given) makes it safe to send again: after an
   * ambiguous failure the client looks the dedupId up first and only resubmits when the
   * service has no such query, so exactly one query exists. A dedupId whose query FAILED is
   * not handed back as the result: the PIE is submitted again under the next dedupId of its
   * chain (derived from the failed query's id: every re-run after that failure agrees on it),
   * and the answer says which query failed.
   */
  submitQuery(options: SubmitQueryOptions): Promise<SubmittedQuery> {
    return submitQuery(this.#service, options)
  }

  /**
   * The query a dedupId stands for, past FAILED ones: a FAILED query whose error is retriable
   * (fewer than 3 retries used) is retried and is the one to follow (`retried` says so); another
   * FAILED query's dedupId leads to the next one of the chain (derived from the failed query's id), so
   * re-running after such a failure submits anew while re-running after a success (or a lost
   * answer) finds the same query. `existing` is the query to follow (null: none yet, submit
   * with `dedupId`).
   */
  resolveDedupId(
    dedupId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ dedupId: string; existing: QueryRecord | null; failedQueryIds: string[]; retried?: RetriedQuery | undefined }> {
    return resolveDedupId(this.#service, dedupId, options)
  }

  /**
   * GET /proving-query-by-dedup-id (extension): the query with this dedupId, or null.
   * Production answers it without the `client` object and may omit other fields.
   */
  findQueryByDedupId(dedupId: string, options: { signal?: AbortSignal } = {}): Promise<QueryRecord | null> {
    return findQueryByDedupId(this.#service, dedupId, options)
  }

  /**
   * Waits for a query to reach DONE or FAILED and returns its final record (FAILED is a
   * result, not an exception: the caller decides). Ends with WaitTimeoutError, AbortedError,
   * or UnknownStatusError for a status this client does not know.
   */
  waitForQuery(queryId: string, options: WaitForQueryOptions = {}): Promise<QueryResult> {
    return waitForQuery(this.#service, queryId, options)
  }
}
