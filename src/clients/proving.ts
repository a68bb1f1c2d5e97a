import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import {
  AbortedError,
  InvalidInputError,
  ProvingKitError,
  ServiceError,
  UnknownStatusError,
} from '../core/errors.ts'
import { type ConnectionOptions, connectionOf, HttpClient } from '../core/http.ts'
import { explainSubmissionFailure, mayHaveBeenProcessed } from '../core/submission.ts'
import { prepareMultipart } from '../core/multipart.ts'
import { DEFAULT_WAIT_TIMEOUT_MS, DEFAULT_STUCK_AFTER_MS, type PollSchedule, pollUntil, formatDuration } from '../core/poll.ts'
import { SecretRedactor } from '../core/redact.ts'
import {
  bucketDetailsResponse,
  bucketResponse,
  type BucketDetailsResponse,
  type BucketRecord,
  CAIRO_VERSIONS,
  CAIRO_VMS,
  dedupLookupResponse,
  HINTS,
  docsQueryListResponse,
  docsQueryResponse,
  type DocsQueryListResponse,
  type DocsQueryResponse,
  isAliveResponse,
  JOB_SIZES,
  LAYOUTS,
  MEMORY_VERIFICATIONS,
  NETWORKS,
  type QueryRecordD,
  type QueryRecordL,
  queryResponse,
  type QueryResponse,
  QUERY_STATUSES,
  RESULTS,
  retryResponse,
  type RetryResponse,
  SHARP_PROVERS,
  STONE_VERSIONS,
  submissionResponse,
} from '../schemas/proving.ts'

export type ClientOptions = ConnectionOptions & {
  apiKey?: string | undefined
  /** Extra values to keep out of messages (the API key is always kept out). */
  secrets?: string[] | undefined
}

export type SubmitPieOptions = {
  /** Path of the pie.zip to upload; streamed from disk. */
  pieZip: string
  layout?: string | undefined
  prover?: string | undefined
  mockFactHash?: boolean | undefined
  signal?: AbortSignal | undefined
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
  programFile?: string | undefined
  inputFile?: string | undefined
  programHash?: string | undefined
  layout?: string | undefined
  cairoVm?: string | undefined
  cairoVersion?: string | undefined
  result?: string | undefined
  mockFactHash?: boolean | undefined
  network?: string | undefined
  sharpProver?: string | undefined
  hints?: string | undefined
  externalId?: string | undefined
  bucketId?: string | undefined
  bucketJobIndex?: number | undefined
  /** Identifies this submission so a resubmission after a lost answer is safe; derived when omitted. */
  dedupId?: string | undefined
  signal?: AbortSignal | undefined
}

export type ListQueriesOptions = {
  limit?: number | undefined
  offset?: number | undefined
  search?: string | undefined
  network?: string | undefined
  signal?: AbortSignal | undefined
}

export type CreateBucketOptions = {
  aggregatorVersion: string
  externalId?: string | undefined
  nodeWidth?: number | undefined
  aggregatorParams?: string | undefined
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
  timeoutMs?: number | undefined
  signal?: AbortSignal | undefined
  /** Called on every change of status or step (and once for the first state seen). */
  onProgress?: ((progress: QueryProgress) => void) | undefined
  /** Warn when one step lasts longer than this (default 30 min). */
  stuckAfterMs?: number | undefined
  onStuck?: ((progress: QueryProgress & { stepElapsedMs: number }) => void) | undefined
  schedule?: Partial<PollSchedule> | undefined
}

export type QueryResult = { provingQuery: QueryRecordL; metadataUrls: string[] }

const L2_PIE_PATH = '/v1/l2/proving-query/proof-generation-verification'
const L2_PROOF_PATH = '/v1/l2/proving-query/proof-verification'
/** Uploads of large files: the service may take long to answer after the last byte. */
const UPLOAD_HEADERS_TIMEOUT_MS = 10 * 60_000

/**
 * The proving service: queries, buckets and the two L2 submission endpoints of interface.md,
 * plus the production extensions of contract.md (general submission with dedupId, lookup by
 * dedupId, bucket create/get, is-alive).
 */
export class ProvingClient {
  readonly http: HttpClient
  readonly #apiKey: string | undefined

  constructor(options: ClientOptions) {
    this.#apiKey = options.apiKey?.trim() || undefined
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
      schema: retryResponse,
      operation: `retry query ${id}`,
      signal: options.signal,
    })
    return data
  }

  /** GET /proving-query/{id}: record D (no status field in the spec) and the artifact URLs. */
  async getQuery(queryId: string, options: { signal?: AbortSignal } = {}): Promise<QueryResponse> {
    const id = requireId(queryId, 'queryId')
    const { data } = await this.http.request({
      method: 'GET',
      path: `/proving-query/${encodeURIComponent(id)}`,
      schema: queryResponse,
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
      schema: docsQueryResponse,
      operation: `get query ${id}`,
      signal: options.signal,
    })
    return data
  }

  /** GET /docs/proving-queries: one page of the queries submitted with this key. */
  async listQueries(options: ListQueriesOptions = {}): Promise<DocsQueryListResponse> {
    if (options.limit !== undefined) checkIntegerRange(options.limit, 'limit', 1, 100)
    if (options.offset !== undefined) checkIntegerRange(options.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    if (options.network !== undefined) checkEnum(options.network, 'network', NETWORKS)
    const { data } = await this.http.request({
      method: 'GET',
      path: '/docs/proving-queries',
      headers: { 'api-key': this.#key('Listing queries') },
      query: { limit: options.limit, offset: options.offset, search: options.search, network: options.network },
      schema: docsQueryListResponse,
      operation: 'list queries',
      signal: options.signal,
    })
    return data
  }

  /** Every query, page after page (`limit` per request, 100 by default). */
  async *iterateQueries(options: Omit<ListQueriesOptions, 'offset'> = {}): AsyncGenerator<QueryRecordL> {
    const limit = options.limit ?? 100
    let offset = 0
    for (;;) {
      const page = await this.listQueries({ ...options, limit, offset })
      yield* page.provingQueries
      offset += page.provingQueries.length
      if (page.provingQueries.length === 0 || offset >= page.total) return
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
      schema: bucketResponse,
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
    if (options.nodeWidth !== undefined) checkIntegerRange(options.nodeWidth, 'nodeWidth', 1, 2_147_483_647)
    const { signal, ...body } = options
    const { data } = await this.http.request({
      method: 'POST',
      path: '/buckets',
      headers: { 'api-key': this.#key('Creating a bucket') },
      json: body,
      schema: bucketResponse,
      operation: 'create bucket',
      signal,
    })
    return data.provingBucket
  }

  /** GET /buckets/{id} (extension): the bucket and its queries. */
  async getBucket(bucketId: string, options: { signal?: AbortSignal } = {}): Promise<BucketDetailsResponse> {
    const id = requireId(bucketId, 'bucketId')
    const { data } = await this.http.request({
      method: 'GET',
      path: `/buckets/${encodeURIComponent(id)}`,
      headers: this.#apiKey ? { 'api-key': this.#apiKey } : {},
      schema: bucketDetailsResponse,
      operation: `get bucket ${id}`,
      signal: options.signal,
    })
    return data
  }

  /** GET /is-alive (extension). */
  async isAlive(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    const { data } = await this.http.request({
      method: 'GET',
      path: '/is-alive',
      schema: isAliveResponse,
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
    const layout = checkEnum(options.layout ?? 'auto', 'layout', LAYOUTS)
    const prover = (options.prover ?? 'svc_sharp').trim()
    if (!prover) throw new InvalidInputError('prover must not be empty; omit it to use svc_sharp.', { input: 'prover' })
    await requireFile(options.pieZip, 'pieZip')
    const body = await prepareMultipart({
      pieFile: { path: options.pieZip, fileName: 'pie.zip', contentType: 'application/zip' },
      mockFactHash: String(options.mockFactHash ?? false),
      prover,
      layout,
    })
    return this.#submitOnce(L2_PIE_PATH, body, 'submit the PIE for proof generation and verification', options.signal)
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
    body: Awaited<ReturnType<typeof prepareMultipart>>,
    operation: string,
    signal: AbortSignal | undefined,
  ): Promise<{ provingQueryId: string }> {
    try {
      const { data } = await this.http.request({
        method: 'POST',
        path,
        query: { apiKey: this.#key('Submitting') },
        body,
        schema: submissionResponse,
        operation,
        signal,
        headersTimeoutMs: UPLOAD_HEADERS_TIMEOUT_MS,
      })
      return { provingQueryId: data.provingQueryId }
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
   * service has no such query, so exactly one query exists.
   */
  async submitQuery(options: SubmitQueryOptions): Promise<{ provingQueryId: string; deduplicated: boolean }> {
    const fields = await this.#generalFields(options)
    const dedupId = fields.dedupId!
    const body = await prepareMultipart(fields.parts)
    const attempt = async () => {
      const { data } = await this.http.request({
        method: 'POST',
        path: '/proving-query',
        headers: { 'api-key': this.#key('Submitting') },
        body,
        schema: submissionResponse,
        operation: 'submit the query',
        signal: options.signal,
        headersTimeoutMs: UPLOAD_HEADERS_TIMEOUT_MS,
      })
      return data.provingQueryId
    }
    try {
      return { provingQueryId: await attempt(), deduplicated: false }
    } catch (error) {
      if (!mayHaveBeenProcessed(error)) throw error
      this.http.logger.warn(
        `The answer to the submission was lost (${(error as ProvingKitError).shortMessage}); looking up dedupId ${dedupId} before sending again.`,
      )
      const existing = await this.findQueryByDedupId(dedupId, { signal: options.signal })
      if (existing) return { provingQueryId: existing.id, deduplicated: true }
      return { provingQueryId: await attempt(), deduplicated: false }
    }
  }

  /** GET /proving-query-by-dedup-id (extension): the query with this dedupId, or null. */
  async findQueryByDedupId(dedupId: string, options: { signal?: AbortSignal } = {}): Promise<QueryRecordD | null> {
    const id = requireId(dedupId, 'dedupId')
    try {
      const { data } = await this.http.request({
        method: 'GET',
        path: '/proving-query-by-dedup-id',
        query: { dedupId: id },
        headers: { 'api-key': this.#key('Looking up a dedupId') },
        schema: dedupLookupResponse,
        operation: `look up dedupId ${id}`,
        signal: options.signal,
      })
      return data.provingQuery
    } catch (error) {
      if (error instanceof ServiceError && error.status === 404) return null
      throw error
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
      checkIntegerRange(options.bucketJobIndex, 'bucketJobIndex', 0, 2_147_483_647)
    }
    const parts: Record<string, string | { path: string; fileName: string; contentType: string }> = {
      declaredJobSize,
      layout: checkEnum(options.layout ?? 'auto', 'layout', LAYOUTS),
      cairoVm: checkEnum(options.cairoVm ?? 'rust', 'cairoVm', CAIRO_VMS),
      cairoVersion: checkEnum(options.cairoVersion ?? 'cairo0', 'cairoVersion', CAIRO_VERSIONS),
      result: checkEnum(options.result ?? 'PROOF_GENERATION', 'result', RESULTS),
      mockFactHash: String(options.mockFactHash ?? false),
      network: checkEnum(options.network ?? 'TESTNET', 'network', NETWORKS),
    }
    if (options.sharpProver !== undefined) parts.sharpProver = checkEnum(options.sharpProver, 'sharpProver', SHARP_PROVERS)
    if (options.hints !== undefined) parts.hints = checkEnum(options.hints, 'hints', HINTS)
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
        parts.inputFile = { path: options.inputFile, fileName: 'input.json', contentType: 'application/json' }
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
    return pollUntil<QueryResult>(
      async () => {
        const current = await this.#readStatus(id, options.signal)
        const record = current.provingQuery
        const now = clock.now()
        const key = `${record.status}|${record.step ?? ''}`
        const progress: QueryProgress = {
          queryId: id,
          status: record.status,
          step: record.step,
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
            `Query ${id} has been ${record.status}${record.step ? ` in step ${record.step}` : ''} for ${formatDuration(stepElapsedMs)}, far longer than expected; still waiting until the timeout.`,
          )
          options.onStuck?.({ ...progress, stepElapsedMs })
        }
        if (record.status === 'DONE' || record.status === 'FAILED') return { done: true, value: current }
        if (!(QUERY_STATUSES as readonly string[]).includes(record.status)) {
          throw new UnknownStatusError(
            `Query ${id} reports status "${record.status}", which this version of proving-kit does not know; check it on the service and update proving-kit.`,
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
      },
    )
  }

  /** The record with `status`: the docs endpoint when there is a key, else D if it carries one. */
  async #readStatus(id: string, signal: AbortSignal | undefined): Promise<QueryResult> {
    if (this.#apiKey) return this.getQueryDetails(id, { signal })
    const response = await this.getQuery(id, { signal })
    const status = response.provingQuery.status
    if (typeof status !== 'string') {
      throw new InvalidInputError(
        `Waiting for query ${id} needs an API key: without one the service does not show its status.`,
        { input: 'apiKey' },
      )
    }
    return { provingQuery: recordDAsL(response.provingQuery, status), metadataUrls: response.metadataUrls }
  }
}

function recordDAsL(record: QueryRecordD, status: string): QueryRecordL {
  return {
    chain: null, jobSize: null, declaredJobSize: null, cairoVm: 'rust', cairoVersion: 'cairo0',
    result: null, network: null, hints: null,
    ...record,
    status,
  } as QueryRecordL
}


export function deriveDedupId(digest: string, parts: Record<string, unknown>): string {
  const parameters = Object.keys(parts)
    .filter((key) => !['pieFile', 'programFile', 'inputFile', 'dedupId'].includes(key))
    .sort()
    .map((key) => `${key}=${String(parts[key])}`)
    .join('&')
  return `pk-${createHash('sha256').update(`${digest}\n${parameters}`).digest('hex').slice(0, 40)}`
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256')
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

function requireId(value: string, name: string): string {
  const id = typeof value === 'string' ? value.trim() : ''
  if (!id) throw new InvalidInputError(`${name} is empty; give the identifier the service returned.`, { input: name })
  if (id.length > 256 || /[\s/?#]/.test(id)) {
    throw new InvalidInputError(`${name} "${id.slice(0, 40)}" is not a valid identifier; copy it as the service returned it.`, {
      input: name,
    })
  }
  return id
}

export function checkEnum<T extends string>(value: string, name: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new InvalidInputError(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}.`, { input: name })
  }
  return value as T
}

function checkIntegerRange(value: number, name: string, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(`${name} must be a whole number from ${min} to ${max}; got ${value}.`, { input: name })
  }
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


