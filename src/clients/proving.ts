import type { HttpClient } from '../core/http.ts'
import type {
  BucketDetailsResponse,
  BucketRecord,
  DocsQueryResponse,
  QueryListResponse,
  QueryRecord,
  QueryRecordWithStatus,
  QueryResponse,
  RetryResponse,
} from '../schemas/proving.ts'
import { closeBucket, type CreateBucketOptions, createBucket, getBucket } from './proving/buckets.ts'
import { findQueryByDedupId, resolveDedupId } from './proving/dedup.ts'
import type {
  SubmitPieOptions,
  SubmitPieStreamOptions,
  SubmitProofOptions,
  SubmitQueryOptions,
} from './proving/forms.ts'
import { iterateQueries, type ListQueriesOptions, listQueries } from './proving/lists.ts'
import { getQuery, getQueryDetails, type QueryResult, readQuery } from './proving/reads.ts'
import {
  checkService,
  type ClientOptions,
  isAlive,
  type ProvingService,
  provingServiceOf,
  type ReadPaths,
} from './proving/service.ts'
import { type FailedQueryRetry, type RetriedQuery, retryFailedQuery, retryQuery } from './proving/retries.ts'
import {
  type SubmittedQuery,
  submitPie,
  submitPieStream,
  submitProofVerification,
  submitQuery,
} from './proving/submissions.ts'
import { type WaitForQueryOptions, waitForQuery } from './proving/wait.ts'

// The types of the client's options and answers, where its users look for them.
export type { CreateBucketOptions } from './proving/buckets.ts'
export { deriveDedupId } from './proving/dedup.ts'
export type {
  SubmitPieOptions,
  SubmitPieStreamOptions,
  SubmitProofOptions,
  SubmitQueryOptions,
  UploadProgress,
} from './proving/forms.ts'
export type { ListQueriesOptions } from './proving/lists.ts'
export type { QueryResult } from './proving/reads.ts'
export { describeRetry, type FailedQueryRetry, type RetriedQuery } from './proving/retries.ts'
export type { ClientOptions, ReadPaths } from './proving/service.ts'
export type { SubmittedQuery } from './proving/submissions.ts'
export type { QueryProgress, WaitForQueryOptions } from './proving/wait.ts'

/**
 * A client of the proving service: submit a PIE, a program or a proof, wait for the query, read
 * and list queries, retry a FAILED one, open and close buckets.
 *
 * Every body is checked before it is sent (a problem is an {@link InvalidInputError} naming the
 * option); reads are retried after a transient failure (network, 429, 5xx), a submission only when that
 * cannot create a second query. Answers are parsed with the schemas of `proving-kit/schemas`,
 * loaded with the first request.
 *
 * @example
 * ```ts
 * import { ProvingClient } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const { provingQueryId } = await client.submitPie({ pieZip: 'build/pie.zip' })
 * const { provingQuery } = await client.waitForQuery(provingQueryId, { timeoutMs: 3_600_000 })
 * console.log(provingQuery.status, provingQuery.integrityFactHash)
 * ```
 */
export class ProvingClient {
  /** The HTTP client every request of this client goes through (its base URL, logger, clock and redactor). */
  readonly http: HttpClient
  /** Where this client reads queries and lists from (`ClientOptions.readPaths`). */
  readonly readPaths: ReadPaths
  readonly #service: ProvingService

  /**
   * @param options The service's base URL, the API key, and how to reach the service.
   * @throws {InvalidInputError} When the base URL is not an absolute http(s) URL (or plain http to
   * another machine), or `readPaths` is not `auto`, `docs` or `production`.
   */
  constructor(options: ClientOptions) {
    this.#service = provingServiceOf(options)
    this.http = this.#service.http
    this.readPaths = this.#service.readPaths
  }

  /** Whether the client was given an API key (submissions, lists, retries and buckets need one). */
  get hasApiKey(): boolean {
    return this.#service.apiKey !== undefined
  }

  /**
   * Sends a FAILED, retriable query back to RECEIVED (`POST /proving-queries/{id}/retry`): the same
   * query runs again, nothing new is paid for.
   *
   * @param queryId The FAILED query's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns The service's answer: the query's record, with its new status and `retryCount`.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {ServiceError} When the service refuses the retry: `code` is one of `RETRY_ERROR_CODES`
   * (`QUERY_NOT_RETRIABLE`, `MAX_RETRIES_REACHED`, ...).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQuery } = await client.retryQuery('a1b2c3')
   * console.log(provingQuery.status, provingQuery.retryCount)
   * ```
   */
  retryQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<RetryResponse> {
    return retryQuery(this.#service, queryId, options)
  }

  /**
   * Retries a FAILED query when the service allows it, or says why not: retriable and fewer than 3
   * retries used, the same query runs again; otherwise the caller submits a new one. A query another
   * caller has just retried is reported as retried (`byAnother`).
   *
   * @param queryId The FAILED query's id.
   * @param options.signal Cancels the requests (the promise rejects with AbortedError).
   * @returns `{ retried: true, queryId, retryCount, errorReason, byAnother }`, or `{ retried: false,
   * queryId, reason }`.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {ServiceError} When the retry failed in a way that leaves its effect unknown (nothing
   * should be submitted then).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const retry = await client.retryFailedQuery('a1b2c3')
   * if (!retry.retried) console.log(`submit anew: ${retry.reason}`)
   * ```
   */
  retryFailedQuery(queryId: string, options: { signal?: AbortSignal | undefined } = {}): Promise<FailedQueryRetry> {
    return retryFailedQuery(this.#service, queryId, options)
  }

  /**
   * Reads a query and the URLs of its artifacts (`GET /proving-query/{id}`). Needs no API key; the
   * record may lack `status` (production's carries it): {@link ProvingClient.readQuery} always has it.
   *
   * @param queryId The query's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ provingQuery, metadataUrls }`: the query's record and its artifacts' URLs.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQuery, metadataUrls } = await client.getQuery('a1b2c3')
   * console.log(provingQuery.programHash, metadataUrls)
   * ```
   */
  getQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<QueryResponse> {
    return getQuery(this.#service, queryId, options)
  }

  /**
   * Reads a query with its status (`GET /docs/proving-query/{id}`, which needs the API key).
   *
   * @param queryId The query's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ provingQuery, metadataUrls }`, the record with its `status`.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQuery } = await client.getQueryDetails('a1b2c3')
   * console.log(provingQuery.status, provingQuery.step)
   * ```
   */
  getQueryDetails(queryId: string, options: { signal?: AbortSignal } = {}): Promise<DocsQueryResponse> {
    return getQueryDetails(this.#service, queryId, options)
  }

  /**
   * Reads a query with its status from whichever path serves it: `GET /proving-query/{id}` when
   * its record carries `status`, else `GET /docs/proving-query/{id}` (with the API key).
   *
   * @param queryId The query's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @param options.path Fixes the path for this read, as `ClientOptions.readPaths` does. Default: the
   * client's `readPaths`.
   * @returns `{ provingQuery, metadataUrls }`, the record with its `status`.
   * @throws {InvalidInputError} When the status can only be read with an API key and the client has none.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQuery } = await client.readQuery('a1b2c3')
   * if (provingQuery.status === 'FAILED') console.log(provingQuery.errorReason)
   * ```
   */
  readQuery(queryId: string, options: { signal?: AbortSignal; path?: ReadPaths } = {}): Promise<QueryResult> {
    return readQuery(this.#service, queryId, options)
  }

  /**
   * Lists one page of the queries submitted with this API key, newest first. With `readPaths`
   * `auto` the client finds the list path the service serves and keeps to it.
   *
   * @param options The page (`limit`, `offset`) and the filters.
   * @returns `{ provingQueries, total }`: the page's records (each with its `status`) and, when the
   * service says, how many there are.
   * @throws {InvalidInputError} When the client has no API key, or `limit`, `offset` or `network` is out of range.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQueries, total } = await client.listQueries({ limit: 20, network: 'TESTNET' })
   * for (const query of provingQueries) console.log(query.id, query.status, `of ${total}`)
   * ```
   */
  listQueries(options: ListQueriesOptions = {}): Promise<QueryListResponse> {
    return listQueries(this.#service, options)
  }

  /**
   * Yields every query submitted with this API key, page after page.
   *
   * @param options The filters of {@link ProvingClient.listQueries}, and `limit`: the page size. Default `limit`: 100.
   * @returns An async iterator of the records, each with its `status`.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * for await (const query of client.iterateQueries({ search: 'nightly' })) {
   *   if (query.status === 'FAILED') console.log(query.id, query.errorReason)
   * }
   * ```
   */
  iterateQueries(options: Omit<ListQueriesOptions, 'offset'> = {}): AsyncGenerator<QueryRecordWithStatus> {
    return iterateQueries(this.#service, options)
  }

  /**
   * Closes a bucket (`POST /buckets/close`): its queries are aggregated and proved. Closing a closed
   * bucket again is harmless.
   *
   * @param bucketId The bucket's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns The bucket's record.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const bucket = await client.closeBucket('bkt-1')
   * console.log(bucket.status)
   * ```
   */
  closeBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketRecord> {
    return closeBucket(this.#service, bucketId, options)
  }

  /**
   * Opens a bucket (`POST /buckets`): queries submitted with its `bucketId` are proved together when it is closed.
   *
   * @param options The aggregator version and the bucket's settings.
   * @returns The new bucket's record (its `id` goes into `SubmitQueryOptions.bucketId`).
   * @throws {InvalidInputError} When the client has no API key, `aggregatorVersion` is empty, or
   * `nodeWidth` or `aggregatorParams` is malformed.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const bucket = await client.createBucket({ aggregatorVersion: 'v1', aggregatorParams: { use_kzg_da: true } })
   * console.log(bucket.id)
   * ```
   */
  createBucket(options: CreateBucketOptions): Promise<BucketRecord> {
    return createBucket(this.#service, options)
  }

  /**
   * Reads a bucket and its queries (`GET /buckets/{id}`).
   *
   * @param bucketId The bucket's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ bucket, queries }`: the bucket's record and the records of its queries.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { bucket, queries } = await client.getBucket('bkt-1')
   * console.log(bucket.status, queries.length)
   * ```
   */
  getBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketDetailsResponse> {
    return getBucket(this.#service, bucketId, options)
  }

  /**
   * Makes sure the base URL reaches the proving service before anything is submitted (and paid
   * for): `GET /is-alive` must answer with the service's JSON, not a gateway's or a web server's
   * page. Any answer of the service itself passes, even an error. Asked once per client; the
   * submissions call it themselves.
   *
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @throws {InvalidInputError} When something other than the proving service answers at the base URL.
   * @throws {NetworkError} When nothing answers.
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * await client.checkService()
   * ```
   */
  checkService(options: { signal?: AbortSignal | undefined } = {}): Promise<void> {
    return checkService(this.#service, options)
  }

  /**
   * Asks the service whether it is up (`GET /is-alive`).
   *
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns The service's `alive`.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * if (!(await client.isAlive())) console.log('the proving service is down')
   * ```
   */
  isAlive(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    return isAlive(this.#service, options)
  }

  /**
   * Uploads a pie.zip for proof generation and verification on L2
   * (`POST /v1/l2/proving-query/proof-generation-verification`), streamed from disk. This endpoint
   * has no dedupId: a submission whose answer was lost is never sent again (the error says how to
   * look for the query).
   *
   * @param options The pie.zip and the layout, prover and mock setting.
   * @returns `{ provingQueryId }`: the new query's id, to wait for.
   * @throws {InvalidInputError} When an option is refused before anything is sent (a layout the
   * endpoint does not take, no API key, no file).
   * @throws {SubmissionOutcomeUnknownError} When the upload may have reached the service but its answer was lost.
   * @throws {ServiceError} When the service refuses the submission.
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQueryId } = await client.submitPie({ pieZip: 'build/pie.zip', layout: 'recursive' })
   * const { provingQuery } = await client.waitForQuery(provingQueryId)
   * ```
   */
  submitPie(options: SubmitPieOptions): Promise<{ provingQueryId: string }> {
    return submitPie(this.#service, options)
  }

  /**
   * The same submission as {@link ProvingClient.submitPie}, with the pie.zip's bytes sent as they
   * are produced (chunked transfer encoding, the file last). Tried once: the bytes cannot be produced
   * again, so a refusal before processing (a server that wants a length answers 411) is thrown as it
   * is, and the caller sends the finished file with `submitPie` instead.
   *
   * @param options The bytes of the pie.zip, and the layout, prover and mock setting.
   * @returns `{ provingQueryId }`: the new query's id.
   * @throws {InvalidInputError} When an option is refused before anything is sent.
   * @throws {SubmissionOutcomeUnknownError} When the upload may have reached the service but its answer was lost.
   * @throws {ServiceError} When the service refuses the submission (411 when it wants the length first).
   * @example
   * ```ts
   * import { createReadStream } from 'node:fs'
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const pieBytes = createReadStream('build/pie.zip')
   * const { provingQueryId } = await client.submitPieStream({ pieBytes })
   * ```
   */
  submitPieStream(options: SubmitPieStreamOptions): Promise<{ provingQueryId: string }> {
    return submitPieStream(this.#service, options)
  }

  /**
   * Uploads an existing Stone proof to be verified on L2 (`POST /v1/l2/proving-query/proof-verification`).
   *
   * @param options The proof file, the Stone version and the memory verification.
   * @returns `{ provingQueryId }`: the new query's id.
   * @throws {InvalidInputError} When an option is refused before anything is sent.
   * @throws {SubmissionOutcomeUnknownError} When the upload may have reached the service but its answer was lost.
   * @throws {ServiceError} When the service refuses the submission.
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQueryId } = await client.submitProofVerification({
   *   proof: 'proof.json',
   *   stoneVersion: 'stone6',
   *   memoryVerification: 'relaxed',
   * })
   * ```
   */
  submitProofVerification(options: SubmitProofOptions): Promise<{ provingQueryId: string }> {
    return submitProofVerification(this.#service, options)
  }

  /**
   * Submits a query through the general endpoint (`POST /proving-query`): a PIE, a compiled program
   * (with its input) or a program hash, for any result kind and chain. Safe to send again: a
   * `dedupId` (derived from the file's digest and the options unless given) names the submission,
   * and after an answer is lost the client looks the dedupId up before it sends anything again, so
   * exactly one query exists. A dedupId whose query FAILED leads to a new query under the next dedupId
   * of its chain; the answer says which queries failed.
   *
   * @param options What to prove (exactly one of `pieZip`, `programFile`, `programHash`), the
   * declared job size, and the query's settings.
   * @returns `{ provingQueryId, deduplicated, dedupId, failedQueryIds }`: the query to wait for;
   * `deduplicated` when the dedupId already had one and nothing was sent.
   * @throws {InvalidInputError} When an option is refused before anything is sent (a value the
   * service does not take, a combination it refuses, no file).
   * @throws {SubmissionOutcomeUnknownError} When the submission may have reached the service and the
   * lookup could not tell.
   * @throws {ServiceError} When the service refuses the submission.
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const submitted = await client.submitQuery({
   *   pieZip: 'build/pie.zip',
   *   declaredJobSize: 'S',
   *   result: 'PROOF_VERIFICATION_ON_L2',
   *   network: 'TESTNET',
   * })
   * console.log(submitted.provingQueryId, submitted.deduplicated)
   * ```
   */
  submitQuery(options: SubmitQueryOptions): Promise<SubmittedQuery> {
    return submitQuery(this.#service, options)
  }

  /**
   * Finds the query a dedupId stands for, past the FAILED ones of its chain: a FAILED query whose
   * error is retriable is retried and followed (`retried` says so); another FAILED query leads to the
   * next dedupId of the chain. So running the same submission again after a success, or after a lost
   * answer, finds the same query, and after a failure submits anew.
   *
   * @param dedupId The dedupId the submission was (or would be) sent under.
   * @param options.signal Cancels the requests (the promise rejects with AbortedError).
   * @returns `{ dedupId, existing, failedQueryIds, retried }`: the query to follow (`existing`, or
   * null: submit under `dedupId`).
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { existing, dedupId } = await client.resolveDedupId('release-v1.2.0')
   * if (existing) console.log(`follow ${existing.id}`)
   * else console.log(`submit with dedupId ${dedupId}`)
   * ```
   */
  resolveDedupId(
    dedupId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{
    dedupId: string
    existing: QueryRecord | null
    failedQueryIds: string[]
    retried?: RetriedQuery | undefined
  }> {
    return resolveDedupId(this.#service, dedupId, options)
  }

  /**
   * Looks up the query submitted with a dedupId (`GET /proving-query-by-dedup-id`).
   *
   * @param dedupId The dedupId.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns The query's record (production leaves out `client` and may omit other fields), or null when there is none.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const query = await client.findQueryByDedupId('release-v1.2.0')
   * console.log(query?.id ?? 'not submitted yet')
   * ```
   */
  findQueryByDedupId(dedupId: string, options: { signal?: AbortSignal } = {}): Promise<QueryRecord | null> {
    return findQueryByDedupId(this.#service, dedupId, options)
  }

  /**
   * Waits for a query to end and returns its final record: DONE or FAILED (a result, not an
   * exception: the caller decides). Polls at a growing interval (1 s to 30 s), reports every change of
   * status or step, and warns once when a step lasts far longer than expected.
   *
   * @param queryId The query's id.
   * @param options The timeout, the progress callbacks, the signal and the poll schedule.
   * @returns `{ provingQuery, metadataUrls }`: the final record, with its `status`.
   * @throws {WaitTimeoutError} When the query has not ended within `timeoutMs` (`waitedFor` says what to resume).
   * @throws {AbortedError} When `signal` aborts.
   * @throws {UnknownStatusError} When the query reports a status this version does not know.
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { provingQuery } = await client.waitForQuery('a1b2c3', {
   *   timeoutMs: 2 * 3_600_000,
   *   onProgress: ({ status, step, elapsedMs }) => console.log(status, step, elapsedMs),
   * })
   * if (provingQuery.status !== 'DONE') throw new Error(provingQuery.errorReason ?? 'FAILED')
   * ```
   */
  waitForQuery(queryId: string, options: WaitForQueryOptions = {}): Promise<QueryResult> {
    return waitForQuery(this.#service, queryId, options)
  }
}
