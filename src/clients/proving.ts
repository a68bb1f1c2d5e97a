import { createHash } from 'node:crypto'
import { sha256File } from '../pie/shared/index.ts'
import { stat } from 'node:fs/promises'
import {
  AbortedError,
  InvalidInputError,
  InvalidResponseError,
  isNoRoute,
  type ProvingKitError,
  ServiceError,
  UnknownStatusError,
} from '../core/errors.ts'
import { apiKeyOf, checkEnum, checkInteger, checkOpenEnum, checkServiceId, requireId } from '../core/checks.ts'
import { serviceLine } from '../core/service-text.ts'
import { type ConnectionOptions, connectionOf, HttpClient, type RequestBody } from '../core/http.ts'
import { streamedMultipart } from '../core/multipart-stream.ts'
import { explainSubmissionFailure, mayHaveBeenProcessed } from '../core/submission.ts'
import { prepareMultipart } from '../core/multipart.ts'
import { DEFAULT_WAIT_TIMEOUT_MS, DEFAULT_STUCK_AFTER_MS, type PollSchedule, pollUntil, formatDuration } from '../core/poll.ts'
import { SecretRedactor } from '../core/redact.ts'
import type {
  BucketDetailsResponse,
  BucketRecord,
  DocsQueryResponse,
  QueryRecord,
  QueryRecordL,
  QueryListResponse,
  QueryResponse,
  RetryResponse,
} from '../schemas/proving.ts'
import {
  CAIRO_VERSIONS,
  CAIRO_VMS,
  HINTS,
  JOB_SIZES,
  L2_LAYOUTS,
  LAYOUTS,
  MEMORY_VERIFICATIONS,
  NETWORKS,
  QUERY_STATUSES,
  RESULTS,
  SHARP_PROVERS,
  STONE_VERSIONS,
} from '../schemas/proving-constants.ts'

/** The schemas load with the first request, not with the client: zod stays off the import path (bench figure 8). */
const provingSchemas = () => import('../schemas/proving.ts')

export { checkEnum }

/**
 * Which paths a client reads queries from. interface.md's `/docs/proving-query/{id}` and
 * `/docs/proving-queries`, or production's `GET /proving-query/{id}` (whose record carries
 * `status` there) and `GET /proving-queries`. `auto` (the default) finds out: see waitForQuery
 * and listQueries.
 */
export type ReadPaths = 'auto' | 'docs' | 'production'

export type ClientOptions = ConnectionOptions & {
  apiKey?: string | undefined
  /** Extra values to keep out of messages (the API key is always kept out). */
  secrets?: string[] | undefined
  /** Where queries and lists are read: `auto` (default) finds out; `docs` or `production` fixes it. */
  readPaths?: ReadPaths | undefined
}

export type SubmitPieOptions = {
  /** Path of the pie.zip to upload; streamed from disk. */
  pieZip: string
  /** One of L2_LAYOUTS; another value is sent as given, with a warning. */
  layout?: string | undefined
  prover?: string | undefined
  mockFactHash?: boolean | undefined
  signal?: AbortSignal | undefined
  /** Called as the upload's bytes leave (for a progress line); not called when nothing is sent. */
  onUploadProgress?: ((progress: UploadProgress) => void) | undefined
}

export type UploadProgress = { sentBytes: number; totalBytes: number }

export type SubmitPieStreamOptions = Omit<SubmitPieOptions, 'pieZip' | 'onUploadProgress'> & {
  /**
   * The pie.zip's bytes as they are produced (e.g. by the packer). Should the iterable throw,
   * the upload is cut before the body's end: the service never gets a complete form.
   */
  pieBytes: AsyncIterable<Uint8Array>
}

export type SubmitProofOptions = {
  /** Path of the proof JSON file. */
  proof: string
  stoneVersion: string
  memoryVerification: string
  mockFactHash?: boolean | undefined
  signal?: AbortSignal | undefined
}

export type SubmitQueryOptions = {
  declaredJobSize: string
  pieZip?: string | undefined
  /** A compiled program (JSON), with an optional inputFile. */
  programFile?: string | undefined
  /**
   * The program's input: JSON for cairo0 (sent as input.json, python VM only), text for cairo1
   * (sent as input.txt, text/plain), as production requires.
   */
  inputFile?: string | undefined
  programHash?: string | undefined
  /** One of LAYOUTS (default auto); another value is sent as given, with a warning. */
  layout?: string | undefined
  cairoVm?: string | undefined
  cairoVersion?: string | undefined
  result?: string | undefined
  mockFactHash?: boolean | undefined
  network?: string | undefined
  /** stone or stwo; another value is sent as given, with a warning. */
  sharpProver?: string | undefined
  /** One of HINTS (svc_evm_grower, svc_sn_grower); another value is sent with a warning. */
  hints?: string | undefined
  externalId?: string | undefined
  bucketId?: string | undefined
  bucketJobIndex?: number | undefined
  /** Identifies this submission so a resubmission after a lost answer is safe; derived when omitted. */
  dedupId?: string | undefined
  signal?: AbortSignal | undefined
  /** Called as the upload's bytes leave (for a progress line). */
  onUploadProgress?: ((progress: UploadProgress) => void) | undefined
}

/** What the general submission answers: the query, and the dedupId it went under. */
export type SubmittedQuery = {
  provingQueryId: string
  /** The dedupId already had a (not FAILED) query: that one is followed, nothing was sent. */
  deduplicated: boolean
  /** After a FAILED query only: the dedupId this submission went under instead (its successor in the chain). */
  dedupId?: string | undefined
  /** After a FAILED query only: the FAILED queries of the same submission that this one replaces, oldest first. */
  failedQueryIds?: string[] | undefined
}

export type ListQueriesOptions = {
  limit?: number | undefined
  offset?: number | undefined
  search?: string | undefined
  /** Only the queries of this client (production's GET /proving-queries filter). */
  clientId?: string | undefined
  network?: string | undefined
  /** Overrides the client's readPaths for this call. */
  path?: ReadPaths | undefined
  signal?: AbortSignal | undefined
}

export type CreateBucketOptions = {
  aggregatorVersion: string
  externalId?: string | undefined
  /** Sent as a string, as production takes it. */
  nodeWidth?: number | undefined
  /**
   * The aggregator's parameters: a JSON object with the aggregator's (snake_case) keys, for
   * example `{ use_kzg_da: true, full_output: false }`. A string must hold such an object.
   */
  aggregatorParams?: Record<string, unknown> | string | undefined
  mockProof?: boolean | undefined
  signal?: AbortSignal | undefined
}

export type QueryProgress = {
  queryId: string
  status: string
  step: string | null
  elapsedMs: number
  record: QueryRecordL
}

export type WaitForQueryOptions = {
  /** Overrides the client's readPaths for this wait. */
  path?: ReadPaths | undefined
  timeoutMs?: number | undefined
  signal?: AbortSignal | undefined
  /** Called on every change of status or step (and once for the first state seen). */
  onProgress?: ((progress: QueryProgress) => void) | undefined
  /** Warn when one step lasts longer than this (default 30 min). */
  stuckAfterMs?: number | undefined
  onStuck?: ((progress: QueryProgress & { stepElapsedMs: number }) => void) | undefined
  schedule?: Partial<PollSchedule> | undefined
  /**
   * The query was just accepted by this service (the wait follows a submission): a page from
   * something in between, even a 404 on both read paths, is then a gateway hiccup and the wait
   * goes on until its timeout. Otherwise such a 404 before any successful read ends the wait
   * (a wrong URL).
   */
  afterSubmission?: boolean | undefined
}

export type QueryResult = { provingQuery: QueryRecordL; metadataUrls: string[] }

const L2_PIE_PATH = '/v1/l2/proving-query/proof-generation-verification'
const PIE_OPERATION = 'submit the PIE for proof generation and verification'
const L2_PROOF_PATH = '/v1/l2/proving-query/proof-verification'
/** Uploads of large files: the service may take long to answer after the last byte. */
const UPLOAD_HEADERS_TIMEOUT_MS = 10 * 60_000

/** What to do after a submission whose answer held an unusable query id: the query may exist (and be paid for). */
const QUERY_ID_REFUSED = 'The service may hold a new query for it: check `proving query list` (or ProvingClient.listQueries) before submitting again.'

/**
 * The proving service: queries, buckets and the two L2 submission endpoints of interface.md,
 * plus the production extensions of contract.md (general submission with dedupId, lookup by
 * dedupId, bucket create/get, is-alive).
 */
export class ProvingClient {
  readonly http: HttpClient
  readonly readPaths: ReadPaths
  #serviceChecked = false
  readonly #apiKey: string | undefined
  /** The list path this client found answering (auto), so later pages go straight there. */
  #listPath: 'docs' | 'production' | undefined

  constructor(options: ClientOptions) {
    this.#apiKey = apiKeyOf(options.apiKey)
    this.readPaths = options.readPaths ?? 'auto'
    if (!['auto', 'docs', 'production'].includes(this.readPaths)) {
      throw new InvalidInputError(`readPaths must be auto, docs or production; got ${JSON.stringify(this.readPaths)}.`, { input: 'readPaths' })
    }
    this.http = new HttpClient({
      ...connectionOf(options),
      serviceName: 'proving service',
      redactor: new SecretRedactor([this.#apiKey, ...(options.secrets ?? [])]),
    })
  }

  get hasApiKey(): boolean {
    return this.#apiKey !== undefined
  }

  #key(operation: string): string {
    if (!this.#apiKey) {
      throw new InvalidInputError(`${operation} needs an API key; pass apiKey when creating the ProvingClient.`, {
        input: 'apiKey',
      })
    }
    return this.#apiKey
  }

  /** POST /proving-queries/{id}/retry: sends a FAILED, retriable query back to RECEIVED. */
  async retryQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<RetryResponse> {
    const id = requireId(queryId, 'queryId')
    const { data } = await this.http.request({
      method: 'POST',
      path: `/proving-queries/${encodeURIComponent(id)}/retry`,
      headers: { 'api-key': this.#key('Retrying a query') },
      schema: (await provingSchemas()).retryResponse,
      operation: `retry query ${id}`,
      signal: options.signal,
    })
    return data
  }

  /**
   * GET /proving-query/{id}: record D and the artifact URLs. interface.md's record has no
   * status; production's carries one. No key needed. See readQuery for a record with status.
   */
  async getQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<QueryResponse> {
    const id = requireId(queryId, 'queryId')
    const { data } = await this.http.request({
      method: 'GET',
      path: `/proving-query/${encodeURIComponent(id)}`,
      schema: (await provingSchemas()).queryResponse,
      operation: `get query ${id}`,
      signal: options.signal,
    })
    return data
  }

  /** GET /docs/proving-query/{id}: record L, which carries `status`. */
  async getQueryDetails(queryId: string, options: { signal?: AbortSignal } = {}): Promise<DocsQueryResponse> {
    const id = requireId(queryId, 'queryId')
    const { data } = await this.http.request({
      method: 'GET',
      path: `/docs/proving-query/${encodeURIComponent(id)}`,
      headers: { 'api-key': this.#key('Reading query details') },
      schema: (await provingSchemas()).docsQueryResponse,
      operation: `get query ${id}`,
      signal: options.signal,
    })
    return data
  }

  /**
   * The query with its status, from whichever path the service serves: production's
   * GET /proving-query/{id} when its record carries `status`, else /docs/proving-query/{id}
   * (with the key). readPaths fixes the path instead.
   */
  async readQuery(queryId: string, options: { signal?: AbortSignal; path?: ReadPaths } = {}): Promise<QueryResult> {
    const id = requireId(queryId, 'queryId')
    return new StatusReader(this, id, options.path ?? this.readPaths).read(options.signal)
  }

  /**
   * One page of the queries submitted with this key: interface.md's GET /docs/proving-queries
   * or production's GET /proving-queries (same parameters; production takes the key as the
   * `apiKey` query parameter too). With readPaths `auto` the docs path is asked first and a
   * service that has no such route (a 404 that is not the service's own answer) is asked on
   * the other; the client then stays there.
   */
  async listQueries(options: ListQueriesOptions = {}): Promise<QueryListResponse> {
    if (options.limit !== undefined) checkInteger(options.limit, 'limit', 1, 100)
    if (options.offset !== undefined) checkInteger(options.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    if (options.network !== undefined) checkEnum(options.network, 'network', NETWORKS)
    const key = this.#key('Listing queries')
    const chosen = options.path ?? this.readPaths
    const first = chosen === 'auto' ? (this.#listPath ?? 'docs') : chosen
    const query = {
      limit: options.limit,
      offset: options.offset,
      search: options.search,
      clientId: options.clientId,
      network: options.network,
    }
    const ask = async (path: 'docs' | 'production') => {
      const { data } = await this.http.request({
        method: 'GET',
        path: path === 'docs' ? '/docs/proving-queries' : '/proving-queries',
        headers: { 'api-key': key },
        query: path === 'docs' ? query : { ...query, apiKey: key },
        schema: (await provingSchemas()).queryListResponse,
        operation: 'list queries',
        signal: options.signal,
      })
      if (chosen === 'auto') this.#listPath = path
      return data
    }
    try {
      return await ask(first)
    } catch (error) {
      if (chosen !== 'auto' || !isNoRoute(error)) throw error
      const other = first === 'docs' ? 'production' : 'docs'
      this.http.logger.debug(`The list path of ${first === 'docs' ? '/docs/proving-queries' : '/proving-queries'} has no route here; listing from the other path.`)
      return ask(other)
    }
  }

  /** Every query, page after page (`limit` per request, 100 by default). */
  async *iterateQueries(options: Omit<ListQueriesOptions, 'offset'> = {}): AsyncGenerator<QueryRecordL> {
    const limit = options.limit ?? 100
    let offset = 0
    for (;;) {
      const page = await this.listQueries({ ...options, limit, offset })
      yield* page.provingQueries
      offset += page.provingQueries.length
      // A service that leaves `total` out ends the list with a short page.
      const ended = typeof page.total === 'number' ? offset >= page.total : page.provingQueries.length < limit
      if (page.provingQueries.length === 0 || ended) return
    }
  }

  /** POST /buckets/close?bucketId=: finalizes the bucket's queries; idempotent. */
  async closeBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketRecord> {
    const id = requireId(bucketId, 'bucketId')
    const { data } = await this.http.request({
      method: 'POST',
      path: '/buckets/close',
      query: { bucketId: id },
      headers: { 'api-key': this.#key('Closing a bucket') },
      schema: (await provingSchemas()).bucketResponse,
      operation: `close bucket ${id}`,
      signal: options.signal,
    })
    return data.provingBucket
  }

  /** POST /buckets (extension): opens a bucket. */
  async createBucket(options: CreateBucketOptions): Promise<BucketRecord> {
    if (!options.aggregatorVersion?.trim()) {
      throw new InvalidInputError('aggregatorVersion is required to create a bucket; name the aggregator version to use.', {
        input: 'aggregatorVersion',
      })
    }
    const { signal, nodeWidth, aggregatorParams, ...rest } = options
    const body: Record<string, unknown> = { ...rest }
    // production.md: nodeWidth travels as a string, aggregatorParams as a JSON object.
    if (nodeWidth !== undefined) body.nodeWidth = String(checkInteger(nodeWidth, 'nodeWidth', 1, 2_147_483_647))
    if (aggregatorParams !== undefined) body.aggregatorParams = aggregatorParamsObject(aggregatorParams)
    const { data } = await this.http.request({
      method: 'POST',
      path: '/buckets',
      headers: { 'api-key': this.#key('Creating a bucket') },
      json: body,
      schema: (await provingSchemas()).bucketResponse,
      operation: 'create bucket',
      signal,
    })
    checkServiceId(data.provingBucket.id, 'The bucket id the proving service returned', 'The service may have opened the bucket anyway; it was not used.')
    return data.provingBucket
  }

  /** GET /buckets/{id} (extension): the bucket and its queries. */
  async getBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketDetailsResponse> {
    const id = requireId(bucketId, 'bucketId')
    const { data } = await this.http.request({
      method: 'GET',
      path: `/buckets/${encodeURIComponent(id)}`,
      headers: this.#apiKey ? { 'api-key': this.#apiKey } : {},
      schema: (await provingSchemas()).bucketDetailsResponse,
      operation: `get bucket ${id}`,
      signal: options.signal,
    })
    return data
  }

  /**
   * Makes sure the base URL reaches the proving service before anything is submitted (and
   * paid for): `GET /is-alive` must not be a page from something else (a gateway's text/plain
   * 404, an HTML page, a non-JSON 200). The service's own answers pass, even an error (its JSON
   * 404, a 5xx: the submission handles those). Asked once per client. So a wrong URL is an
   * input error before the upload, never a failed wait after it.
   */
  async checkService(options: { signal?: AbortSignal | undefined } = {}): Promise<void> {
    if (this.#serviceChecked) return
    try {
      await this.http.request({ method: 'GET', path: '/is-alive', operation: 'check the service URL', signal: options.signal })
    } catch (error) {
      const page = error instanceof ServiceError ? error.gatewayPage && (error.status ?? 0) < 500 : error instanceof InvalidResponseError
      if (!page) {
        if (error instanceof ServiceError) {
          this.#serviceChecked = true
          return
        }
        throw error
      }
      throw new InvalidInputError(
        `The proving service URL (${new URL(this.http.baseUrl).origin}) does not answer like the proving service: GET /is-alive got ${error instanceof ServiceError ? `${error.status} and a page that is not its JSON` : 'an answer that is not its JSON'}. Check the base URL (--base-url, PROVING_BASE_URL, the base-url input); nothing was submitted.`,
        { input: 'baseUrl', cause: error },
      )
    }
    this.#serviceChecked = true
  }

  /** GET /is-alive (extension). */
  async isAlive(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const { data } = await this.http.request({
      method: 'GET',
      path: '/is-alive',
      schema: (await provingSchemas()).isAliveResponse,
      operation: 'check the service is alive',
      signal: options.signal,
    })
    return data.alive
  }

  /**
   * POST /v1/l2/proving-query/proof-generation-verification: uploads pie.zip (streamed from
   * disk, flat memory) for proof generation and L2 verification. This endpoint has no dedupId,
   * so a submission whose answer was lost is never sent again: the error says how to check.
   */
  async submitPie(options: SubmitPieOptions): Promise<{ provingQueryId: string }> {
    const fields = this.#pieFields(options)
    await requireFile(options.pieZip, 'pieZip')
    const body = await prepareMultipart(
      { pieFile: { path: options.pieZip, fileName: 'pie.zip', contentType: 'application/zip' }, ...fields },
      { onProgress: options.onUploadProgress },
    )
    return this.#submitOnce(L2_PIE_PATH, body, PIE_OPERATION, options.signal)
  }

  /**
   * The same submission with the pie.zip sent while it is produced (chunked transfer encoding,
   * the text fields first and the file last: see core/multipart-stream.ts). Tried once: the
   * bytes cannot be produced again, so a refusal before processing (a server that wants a
   * length answers 411) is thrown as it is, and the caller sends the finished file with
   * `submitPie` instead.
   */
  async submitPieStream(options: SubmitPieStreamOptions): Promise<{ provingQueryId: string }> {
    const body = streamedMultipart(this.#pieFields(options), { field: 'pieFile', fileName: 'pie.zip', contentType: 'application/zip', bytes: options.pieBytes })
    return this.#submitOnce(L2_PIE_PATH, body, PIE_OPERATION, options.signal, { maxAttempts: 1 })
  }

  /** The text fields of a PIE submission, checked (the same for a file and for bytes in flight). */
  #pieFields(options: SubmitPieStreamOptions | SubmitPieOptions): { mockFactHash: string; prover: string; layout: string } {
    const layout = checkOpenEnum(options.layout ?? 'auto', 'layout', L2_LAYOUTS, this.http.logger)
    const prover = (options.prover ?? 'svc_sharp').trim()
    if (!prover) throw new InvalidInputError('prover must not be empty; omit it to use svc_sharp.', { input: 'prover' })
    return { mockFactHash: String(options.mockFactHash ?? false), prover, layout }
  }

  /** POST /v1/l2/proving-query/proof-verification: verifies an existing proof file on L2. */
  async submitProofVerification(options: SubmitProofOptions): Promise<{ provingQueryId: string }> {
    const stoneVersion = checkEnum(options.stoneVersion, 'stoneVersion', STONE_VERSIONS)
    const memoryVerification = checkEnum(options.memoryVerification, 'memoryVerification', MEMORY_VERIFICATIONS)
    await requireFile(options.proof, 'proof')
    const body = await prepareMultipart({
      proofFile: { path: options.proof, fileName: 'proof.json', contentType: 'application/json' },
      mockFactHash: String(options.mockFactHash ?? false),
      stoneVersion,
      memoryVerification,
    })
    return this.#submitOnce(L2_PROOF_PATH, body, 'submit the proof for verification', options.signal)
  }

  async #submitOnce(
    path: string,
    body: () => RequestBody,
    operation: string,
    signal: AbortSignal | undefined,
    retry?: { maxAttempts: number },
  ): Promise<{ provingQueryId: string }> {
    this.#key('Submitting')
    await this.checkService({ signal })
    try {
      const { data } = await this.http.request({
        method: 'POST',
        path,
        query: { apiKey: this.#key('Submitting') },
        body,
        // Not awaited here: the upload starts while zod loads (~0.1-0.2 s of the main thread).
        schema: provingSchemas().then((schemas) => schemas.submissionResponse),
        operation,
        signal,
        headersTimeoutMs: UPLOAD_HEADERS_TIMEOUT_MS,
        ...(retry ? { retry } : {}),
      })
      return { provingQueryId: checkServiceId(data.provingQueryId, 'The query id the proving service returned', QUERY_ID_REFUSED) }
    } catch (error) {
      throw explainSubmissionFailure(error, {
        ambiguous: 'The submission may or may not have reached the proving service; it was not sent again, to avoid paying twice.',
        howToCheck: 'Check whether a new query exists before submitting again: `proving query list` (or ProvingClient.listQueries).',
        // Cancelled mid-upload is as ambiguous as a lost answer: say where to look.
        ifCancelled: 'If the upload had started, the service may have created a query anyway: check `proving query list` (or ProvingClient.listQueries) before submitting again.',
      })
    }
  }

  /**
   * POST /proving-query (extension): the general submission. A `dedupId` (derived from the
   * file's digest and the parameters unless given) makes it safe to send again: after an
   * ambiguous failure the client looks the dedupId up first and only resubmits when the
   * service has no such query, so exactly one query exists. A dedupId whose query FAILED is
   * not handed back as the result: the PIE is submitted again under the next dedupId of its
   * chain ({@link dedupIdAfterFailure}), and the answer says which query failed.
   */
  async submitQuery(options: SubmitQueryOptions): Promise<SubmittedQuery> {
    const fields = await this.#generalFields(options)
    let dedupId = fields.dedupId!
    const failedQueryIds: string[] = []
    let body = await prepareMultipart(fields.parts, { onProgress: options.onUploadProgress })
    this.#key('Submitting')
    await this.checkService({ signal: options.signal })
    const answer = (provingQueryId: string, deduplicated: boolean): SubmittedQuery => ({
      provingQueryId,
      deduplicated,
      ...(failedQueryIds.length ? { dedupId, failedQueryIds } : {}),
    })
    const attempt = async () => {
      const { data } = await this.http.request({
        method: 'POST',
        path: '/proving-query',
        headers: { 'api-key': this.#key('Submitting') },
        body,
        schema: provingSchemas().then((schemas) => schemas.submissionResponse),
        operation: 'submit the query',
        signal: options.signal,
        headersTimeoutMs: UPLOAD_HEADERS_TIMEOUT_MS,
      })
      return checkServiceId(data.provingQueryId, 'The query id the proving service returned', QUERY_ID_REFUSED)
    }
    /** Past the FAILED queries of the chain: the live one to follow, or the next dedupId to use. */
    const resolve = async (): Promise<QueryRecord | null> => {
      const found = await this.resolveDedupId(dedupId, { signal: options.signal })
      if (found.failedQueryIds.length) {
        this.http.logger.warn(
          `Query ${found.failedQueryIds.join(', then ')} with this PIE and these parameters FAILED; ${found.existing ? `following query ${found.existing.id}, submitted after it` : 'submitting it again, as a new query'} (dedupId ${found.dedupId}).`,
        )
        failedQueryIds.push(...found.failedQueryIds)
        if (found.dedupId !== dedupId) {
          dedupId = found.dedupId
          fields.parts.dedupId = dedupId
          body = await prepareMultipart(fields.parts, { onProgress: options.onUploadProgress })
        }
      }
      return found.existing
    }
    const existingFor = async (refusal: ServiceError): Promise<SubmittedQuery> => {
      const refused = dedupId
      const existing = await resolve()
      if (existing) {
        this.http.logger.info(`A query with dedupId ${dedupId} exists already (${existing.id}); following it instead of submitting again.`)
        return answer(existing.id, true)
      }
      if (dedupId !== refused) return answer(await attempt(), false)
      throw new ServiceError(
        `The proving service refused the submission as a duplicate of dedupId ${dedupId}, but finds no query with it; give another dedupId or check \`proving query list\`.`,
        { status: refusal.status, code: refusal.code, details: refusal.details, cause: refusal },
      )
    }
    try {
      return answer(await attempt(), false)
    } catch (error) {
      // production.md: a used dedupId is refused, not answered with the first id: look it up.
      if (isDedupRefusal(error)) return existingFor(error)
      if (!mayHaveBeenProcessed(error)) throw error
      this.http.logger.warn(
        `The answer to the submission was lost (${(error as ProvingKitError).shortMessage}); looking up dedupId ${dedupId} before sending again.`,
      )
      const existing = await resolve()
      if (existing) return answer(existing.id, true)
      try {
        return answer(await attempt(), false)
      } catch (again) {
        // The lost first answer may land between the lookup and this attempt.
        if (isDedupRefusal(again)) return existingFor(again)
        throw again
      }
    }
  }

  /**
   * The query a dedupId stands for, past FAILED ones: a FAILED query's dedupId leads to the next
   * one of the chain ({@link dedupIdAfterFailure}), so re-running after a failure submits anew
   * while re-running after a success (or a lost answer) finds the same query. `existing` is the
   * query to follow (null: none yet, submit with `dedupId`).
   */
  async resolveDedupId(
    dedupId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ dedupId: string; existing: QueryRecord | null; failedQueryIds: string[] }> {
    const failedQueryIds: string[] = []
    let current = dedupId
    for (let link = 0; link <= MAX_FAILED_RESUBMISSIONS; link++) {
      const existing = await this.findQueryByDedupId(current, options)
      if (!existing || (await this.#statusOf(existing, options)) !== 'FAILED') return { dedupId: current, existing, failedQueryIds }
      failedQueryIds.push(existing.id)
      current = dedupIdAfterFailure(current, existing.id)
    }
    throw new ServiceError(
      `This submission FAILED ${failedQueryIds.length} times (${failedQueryIds.slice(-3).join(', ')}, ...); nothing was sent again. Read why with \`proving query get ${failedQueryIds.at(-1)}\`, then give another dedupId.`,
    )
  }

  /**
   * GET /proving-query-by-dedup-id (extension): the query with this dedupId, or null.
   * Production answers it without the `client` object and may omit other fields.
   */
  async findQueryByDedupId(dedupId: string, options: { signal?: AbortSignal } = {}): Promise<QueryRecord | null> {
    const id = requireId(dedupId, 'dedupId')
    try {
      const { data } = await this.http.request({
        method: 'GET',
        path: '/proving-query-by-dedup-id',
        query: { dedupId: id },
        headers: { 'api-key': this.#key('Looking up a dedupId') },
        schema: (await provingSchemas()).dedupLookupResponse,
        operation: `look up dedupId ${id}`,
        signal: options.signal,
      })
      const found = data.provingQuery
      // Its id is followed and logged next: the same check as a submission's answer.
      if (found) checkServiceId(found.id, `The query id the proving service gave for dedupId ${id}`, 'Look the query up with `proving query list` before submitting again.')
      return found
    } catch (error) {
      if (error instanceof ServiceError && error.status === 404 && !isNoRoute(error)) return null
      throw error
    }
  }

  /** A record's status; read from a path that carries it when the record has none (interface.md's record D). Unreadable: undefined. */
  async #statusOf(record: QueryRecord, options: { signal?: AbortSignal }): Promise<string | undefined> {
    if (typeof record.status === 'string') return record.status
    try {
      return (await this.readQuery(record.id, options)).provingQuery.status
    } catch (error) {
      if (error instanceof AbortedError) throw error
      return undefined
    }
  }

  async #generalFields(options: SubmitQueryOptions) {
    const declaredJobSize = checkEnum(options.declaredJobSize, 'declaredJobSize', JOB_SIZES)
    const sources = [options.pieZip, options.programFile, options.programHash].filter((value) => value !== undefined)
    if (sources.length !== 1) {
      throw new InvalidInputError(
        'Give exactly one of pieZip, programFile or programHash to submit a query.',
        { input: 'pieZip' },
      )
    }
    if (options.inputFile !== undefined && options.programFile === undefined) {
      throw new InvalidInputError('inputFile goes with programFile; give programFile too or drop inputFile.', {
        input: 'inputFile',
      })
    }
    if (options.bucketJobIndex !== undefined) {
      checkInteger(options.bucketJobIndex, 'bucketJobIndex', 0, 2_147_483_647)
    }
    const logger = this.http.logger
    const cairoVm = checkEnum(options.cairoVm ?? 'rust', 'cairoVm', CAIRO_VMS)
    const cairoVersion = checkEnum(options.cairoVersion ?? 'cairo0', 'cairoVersion', CAIRO_VERSIONS)
    refuseWhatProductionRefuses({ cairoVm, cairoVersion, hasInputFile: options.inputFile !== undefined })
    const parts: Record<string, string | { path: string; fileName: string; contentType: string }> = {
      declaredJobSize,
      layout: checkOpenEnum(options.layout ?? 'auto', 'layout', LAYOUTS, logger),
      cairoVm,
      cairoVersion,
      result: checkEnum(options.result ?? 'PROOF_GENERATION', 'result', RESULTS),
      mockFactHash: String(options.mockFactHash ?? false),
      network: checkEnum(options.network ?? 'TESTNET', 'network', NETWORKS),
    }
    if (options.sharpProver !== undefined) parts.sharpProver = checkOpenEnum(options.sharpProver, 'sharpProver', SHARP_PROVERS, logger)
    if (options.hints !== undefined) parts.hints = checkOpenEnum(options.hints, 'hints', HINTS, logger)
    if (options.externalId !== undefined) parts.externalId = options.externalId
    if (options.bucketId !== undefined) parts.bucketId = options.bucketId
    if (options.bucketJobIndex !== undefined) parts.bucketJobIndex = String(options.bucketJobIndex)
    let digestSource: string
    if (options.pieZip !== undefined) {
      await requireFile(options.pieZip, 'pieZip')
      parts.pieFile = { path: options.pieZip, fileName: 'pie.zip', contentType: 'application/zip' }
      digestSource = await sha256File(options.pieZip)
    } else if (options.programFile !== undefined) {
      await requireFile(options.programFile, 'programFile')
      parts.programFile = { path: options.programFile, fileName: 'program.json', contentType: 'application/json' }
      digestSource = await sha256File(options.programFile)
      if (options.inputFile !== undefined) {
        await requireFile(options.inputFile, 'inputFile')
        // production.md: cairo1 input is text (input.txt), cairo0 input JSON.
        parts.inputFile =
          cairoVersion === 'cairo1'
            ? { path: options.inputFile, fileName: 'input.txt', contentType: 'text/plain' }
            : { path: options.inputFile, fileName: 'input.json', contentType: 'application/json' }
        digestSource += await sha256File(options.inputFile)
      }
    } else {
      const programHash = options.programHash!.trim()
      if (!/^0x[0-9a-fA-F]{1,64}$/.test(programHash)) {
        throw new InvalidInputError(
          `programHash must be a 0x-prefixed hexadecimal hash of at most 64 digits; got ${JSON.stringify(programHash.slice(0, 80))}.`,
          { input: 'programHash' },
        )
      }
      parts.programHash = programHash
      digestSource = programHash
    }
    const dedupId = options.dedupId ?? deriveDedupId(digestSource, parts)
    if (dedupId.length > 128) {
      throw new InvalidInputError('dedupId is longer than 128 characters; use a shorter identifier.', { input: 'dedupId' })
    }
    parts.dedupId = dedupId
    return { parts, dedupId }
  }

  /**
   * Waits for a query to reach DONE or FAILED and returns its final record (FAILED is a
   * result, not an exception: the caller decides). Ends with WaitTimeoutError, AbortedError,
   * or UnknownStatusError for a status this client does not know.
   */
  async waitForQuery(queryId: string, options: WaitForQueryOptions = {}): Promise<QueryResult> {
    const id = requireId(queryId, 'queryId')
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS
    const stuckAfterMs = options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS
    const clock = this.http.clock
    const started = clock.now()
    let lastKey: string | undefined
    let stepStarted = started
    let stuckReported = false
    const reader = new StatusReader(this, id, options.path ?? this.readPaths)
    return pollUntil<QueryResult>(
      async () => {
        const current = await reader.read(options.signal)
        const record = current.provingQuery
        const now = clock.now()
        const key = `${record.status}|${record.step ?? ''}`
        const progress: QueryProgress = {
          queryId: id,
          status: record.status,
          step: record.step ?? null,
          elapsedMs: now - started,
          record,
        }
        if (key !== lastKey) {
          lastKey = key
          stepStarted = now
          stuckReported = false
          options.onProgress?.(progress)
        } else if (!stuckReported && now - stepStarted > stuckAfterMs) {
          stuckReported = true
          const stepElapsedMs = now - stepStarted
          this.http.logger.warn(
            `Query ${id} has been ${serviceLine(record.status, 200)}${record.step ? ` in step ${serviceLine(record.step, 200)}` : ''} for ${formatDuration(stepElapsedMs)}, far longer than expected; still waiting until the timeout.`,
          )
          options.onStuck?.({ ...progress, stepElapsedMs })
        }
        if (record.status === 'DONE' || record.status === 'FAILED') return { done: true, value: current }
        if (!(QUERY_STATUSES as readonly string[]).includes(record.status)) {
          throw new UnknownStatusError(
            `Query ${id} reports status "${serviceLine(record.status, 200)}", which this version of proving-kit does not know; check it on the service and update proving-kit.`,
          )
        }
        return { done: false, state: record }
      },
      {
        what: `query ${id}`,
        timeoutMs,
        signal: options.signal,
        clock,
        logger: this.http.logger,
        schedule: options.schedule,
        resumeHint: `Resume with: proving query wait ${id}`,
        pagesAreTransient: options.afterSubmission === true,
      },
    )
  }

}

/**
 * Reads one query's status for a wait (or once, for readQuery), from the path that answers:
 *
 * - `production`: GET /proving-query/{id}, whose record carries `status` in production;
 * - `docs`: GET /docs/proving-query/{id} (interface.md's record L), which needs the key;
 * - `auto`: production's path first; when its record has no `status` (interface.md's record
 *   D) the docs path, for the rest of the wait. A no-route 404 on either path (a 404 that is not
 *   the service's PROVING_QUERY_NOT_FOUND) moves the wait to the other path once, for good.
 */
class StatusReader {
  #route: 'docs' | 'production'
  #switched = false
  readonly #client: ProvingClient
  readonly #id: string
  readonly #fixed: boolean

  constructor(client: ProvingClient, id: string, paths: ReadPaths) {
    this.#client = client
    this.#id = id
    this.#fixed = paths !== 'auto'
    this.#route = paths === 'docs' ? 'docs' : 'production'
  }

  async read(signal: AbortSignal | undefined): Promise<QueryResult> {
    for (;;) {
      try {
        const found = this.#route === 'docs' ? await this.#client.getQueryDetails(this.#id, { signal }) : await this.#production(signal)
        if (found) return found
      } catch (error) {
        if (this.#fixed || this.#switched || !isNoRoute(error)) throw error
        if (this.#route === 'production' && !this.#client.hasApiKey) throw error
        this.#client.http.logger.debug(`No route for the ${this.#route} path of query ${this.#id}; reading it from the other path.`)
      }
      // The record had no status (or the path has no route): the other path, for the rest.
      this.#switched = true
      this.#route = this.#route === 'docs' ? 'production' : 'docs'
    }
  }

  /** The record of GET /proving-query/{id} when it carries a status; undefined when it does not. */
  async #production(signal: AbortSignal | undefined): Promise<QueryResult | undefined> {
    const response = await this.#client.getQuery(this.#id, { signal })
    const status = response.provingQuery.status
    if (typeof status === 'string') {
      return { provingQuery: { ...response.provingQuery, status }, metadataUrls: response.metadataUrls }
    }
    if (this.#fixed || this.#switched || !this.#client.hasApiKey) {
      throw new InvalidInputError(
        this.#client.hasApiKey
          ? `The proving service's record of query ${this.#id} carries no status on GET /proving-query/{id}; read it from the docs path (readPaths: 'docs' or 'auto').`
          : `Waiting for query ${this.#id} needs an API key: without one the service does not show its status.`,
        { input: 'apiKey' },
      )
    }
    return undefined
  }
}


function isDedupRefusal(error: unknown): error is ServiceError {
  return error instanceof ServiceError && error.code === 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS'
}

/**
 * The combinations production refuses (production.md), refused here before anything is sent,
 * with the service's code in the message so either refusal reads the same.
 */
function refuseWhatProductionRefuses(choice: { cairoVm: string; cairoVersion: string; hasInputFile: boolean }): void {
  if (choice.cairoVersion === 'cairo1' && choice.cairoVm === 'python') {
    throw new InvalidInputError(
      'cairoVersion cairo1 does not run on the python VM (CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON); use cairoVm rust.',
      { input: 'cairoVm', code: 'CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON' },
    )
  }
  if (choice.hasInputFile && choice.cairoVersion === 'cairo0' && choice.cairoVm === 'rust') {
    throw new InvalidInputError(
      'An inputFile with cairo0 is not accepted on the rust VM (INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM); use cairoVm python, or submit a PIE.',
      { input: 'inputFile', code: 'INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM' },
    )
  }
}

/** aggregatorParams as production takes it: a JSON object (a string must hold one). */
function aggregatorParamsObject(value: Record<string, unknown> | string): Record<string, unknown> {
  let parsed: unknown = value
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value)
    } catch {
      parsed = undefined
    }
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new InvalidInputError(
      'aggregatorParams must be a JSON object of the aggregator\'s parameters, for example {"use_kzg_da": true}.',
      { input: 'aggregatorParams' },
    )
  }
  return parsed as Record<string, unknown>
}

/** How many FAILED queries a dedupId chain passes before the client stops submitting again. */
const MAX_FAILED_RESUBMISSIONS = 16

/**
 * The dedupId to submit with after the query of `dedupId` FAILED: derived from both, so every
 * re-run after that failure agrees on it (and finds the query it creates), and it differs from
 * the one production would refuse as reused.
 */
export function dedupIdAfterFailure(dedupId: string, failedQueryId: string): string {
  return `pk-${createHash('sha256').update(`${dedupId}\nafter FAILED ${failedQueryId}`).digest('hex').slice(0, 40)}`
}

export function deriveDedupId(digest: string, parts: Record<string, unknown>): string {
  const parameters = Object.keys(parts)
    .filter((key) => !['pieFile', 'programFile', 'inputFile', 'dedupId'].includes(key))
    .sort()
    .map((key) => `${key}=${String(parts[key])}`)
    .join('&')
  return `pk-${createHash('sha256').update(`${digest}\n${parameters}`).digest('hex').slice(0, 40)}`
}

async function requireFile(path: string, name: string): Promise<void> {
  let info
  try {
    info = await stat(path)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError(
      code === 'ENOENT'
        ? `${name}: no file at ${path}; check the path.`
        : `${name}: cannot read ${path} (${code ?? 'error'}); check the path and its permissions.`,
      { input: name, cause: error },
    )
  }
  if (!info.isFile()) throw new InvalidInputError(`${name}: ${path} is not a file; give the path of a file.`, { input: name })
}
