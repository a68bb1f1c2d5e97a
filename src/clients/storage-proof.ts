import { InvalidInputError } from '../core/errors.ts'
import { isNoRoute } from '../core/errors.ts'
import { type ConnectionOptions, connectionOf, HttpClient } from '../core/http.ts'
import { explainSubmissionFailure } from '../core/submission.ts'
import { apiKeyOf, checkServiceId, requireId } from '../core/checks.ts'
import { serviceLine } from '../core/service-text.ts'
import { DEFAULT_WAIT_TIMEOUT_MS, pollUntil, type WaitOptions } from '../core/poll.ts'
import { SecretRedactor } from '../core/redact.ts'
import type { BatchQueryBody, BatchQueryStatusResponse } from '../schemas/storage-proof.ts'
import { BATCH_QUERY_STATUSES } from '../schemas/storage-proof-constants.ts'
import type { ApiKeyProvider } from './account.ts'

/** The schemas load with the first request, not with the client: zod stays off the import path (bench figure 8). */
const storageProofSchemas = () => import('../schemas/storage-proof.ts')

/** How {@link StorageProofClient} reaches the storage-proof service. */
export type StorageProofClientOptions = ConnectionOptions & {
  /**
   * The API key, or a provider asked before every request: an `AccountClient.apiKeyProvider()`
   * keeps its session refreshed during long waits.
   */
  apiKey?: string | ApiKeyProvider | undefined
  /** Shared with the caller so its logs mask the same values; a new one when omitted. */
  redactor?: SecretRedactor | undefined
  /** Extra values to keep out of messages (the API key is always kept out). */
  secrets?: string[] | undefined
}

/** A batch query's status as a wait sees it, given to `onProgress` on every change. */
export type BatchQueryProgress = {
  internalId: string
  queryStatus: string
  elapsedMs: number
}

/** How {@link StorageProofClient.waitForBatchQuery} waits: its timeout, signal, progress callback and schedule. */
export type WaitForBatchQueryOptions = WaitOptions<BatchQueryProgress>

/** How a batch query ended: its id and its final status (`DONE` or `FAILED`). */
export type BatchQueryResult = { internalId: string; queryStatus: string }

/**
 * A client of the storage-proof service: submit a batch query (`POST /batch-query`), read its
 * status, and wait for it to end.
 *
 * @example
 * ```ts
 * import { StorageProofClient } from 'proving-kit'
 *
 * const storage = new StorageProofClient({
 *   baseUrl: process.env.STORAGE_PROOF_BASE_URL!,
 *   apiKey: process.env.STORAGE_PROOF_API_KEY,
 * })
 * const { internalId } = await storage.submitBatchQuery({
 *   destinationChainId: 'SN_SEPOLIA',
 *   fee: '0',
 *   data: {
 *     '11155111': {
 *       'block:7000000': { accounts: { '0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D': { props: ['BALANCE'] } } },
 *     },
 *   },
 * })
 * const { queryStatus } = await storage.waitForBatchQuery(internalId)
 * ```
 */
export class StorageProofClient {
  /** The HTTP client every request of this client goes through. */
  readonly http: HttpClient
  readonly #apiKey: string | ApiKeyProvider | undefined
  /** Set once a service answered the status path with no route. */
  #statusPath: 'older' | undefined

  constructor(options: StorageProofClientOptions) {
    const key = typeof options.apiKey === 'string' ? apiKeyOf(options.apiKey) : options.apiKey
    this.#apiKey = key
    const redactor = options.redactor ?? new SecretRedactor()
    if (typeof key === 'string') redactor.add(key)
    for (const secret of options.secrets ?? []) redactor.add(secret)
    this.http = new HttpClient({
      ...connectionOf(options),
      serviceName: 'storage-proof service',
      redactor,
    })
  }

  async #key(operation: string, signal: AbortSignal | undefined): Promise<string> {
    if (this.#apiKey === undefined) {
      throw new InvalidInputError(`${operation} needs an API key; pass apiKey when creating the StorageProofClient.`, {
        input: 'apiKey',
      })
    }
    if (typeof this.#apiKey === 'string') return this.#apiKey
    const key = (await this.#apiKey({ signal })).trim()
    if (!key)
      throw new InvalidInputError(`${operation}: the API key provider returned an empty key.`, { input: 'apiKey' })
    this.http.redactor.add(key)
    return key
  }

  /**
   * Submits a batch query (`POST /batch-query`). The body is checked first (nothing is sent when it
   * is malformed). The service has no deduplication: a submission whose answer was lost is not sent
   * again (the error says how to check).
   *
   * @param body The destination chain, the fee, and per chain, block and account what to prove.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ internalId }`: the batch query's id, to wait for.
   * @throws {InvalidInputError} When the body is malformed (every problem listed), or the client has no API key.
   * @throws {SubmissionOutcomeUnknownError} When the batch query may have reached the service but the answer was lost.
   * @throws {ServiceError} When the service refuses it.
   * @example
   * ```ts
   * import { StorageProofClient } from 'proving-kit'
   *
   * const storage = new StorageProofClient({
   *   baseUrl: process.env.STORAGE_PROOF_BASE_URL!,
   *   apiKey: process.env.STORAGE_PROOF_API_KEY,
   * })
   * const { internalId } = await storage.submitBatchQuery({
   *   destinationChainId: 'SN_SEPOLIA',
   *   fee: '0',
   *   data: {
   *     '11155111': {
   *       'timestamp:1717243200': { accounts: { '0x7a250d5630B4cF539739dF2C5dAcb4c659F2488D': { slots: ['0x0'] } } },
   *     },
   *   },
   * })
   * ```
   */
  async submitBatchQuery(
    body: BatchQueryBody,
    options: { signal?: AbortSignal } = {},
  ): Promise<{ internalId: string }> {
    const checked = (await storageProofSchemas()).checkBatchQueryBody(body)
    const apiKey = await this.#key('Submitting a batch query', options.signal)
    try {
      const { data } = await this.http.request({
        method: 'POST',
        path: '/batch-query',
        headers: { 'api-key': apiKey },
        json: checked,
        schema: (await storageProofSchemas()).batchQueryResponse,
        operation: 'submit the batch query',
        signal: options.signal,
      })
      return {
        internalId: checkServiceId(
          data.internalId,
          'The batch query id the storage-proof service returned',
          'The service may hold the batch query: check the dashboard explorer before submitting again.',
        ),
      }
    } catch (error) {
      throw explainSubmissionFailure(error, {
        ambiguous:
          'The batch query may or may not have reached the storage-proof service; it was not sent again, to avoid paying its fee twice.',
        howToCheck: 'Check the dashboard explorer for a new batch query before submitting again.',
        ifCancelled:
          'If the request had gone out, the batch query may exist anyway: check the dashboard explorer before submitting again.',
      })
    }
  }

  /**
   * Reads a batch query's status (`GET /batch-query-status?batchQueryId=`). A service without that
   * route is asked on the older `GET /batch-query/{internalId}/status`, and the client stays there.
   *
   * @param internalId The batch query's id.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ queryStatus }`: one of `BATCH_QUERY_STATUSES`, or a newer one.
   * @throws {InvalidInputError} When the client has no API key.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { StorageProofClient } from 'proving-kit'
   *
   * const storage = new StorageProofClient({
   *   baseUrl: process.env.STORAGE_PROOF_BASE_URL!,
   *   apiKey: process.env.STORAGE_PROOF_API_KEY,
   * })
   * const { queryStatus } = await storage.getBatchQueryStatus('bq-1')
   * ```
   */
  async getBatchQueryStatus(
    internalId: string,
    options: { signal?: AbortSignal } = {},
  ): Promise<BatchQueryStatusResponse> {
    const id = requireId(internalId, 'internalId')
    const apiKey = await this.#key('Reading a batch query status', options.signal)
    const ask = async (path: 'current' | 'older') => {
      const { data } = await this.http.request({
        method: 'GET',
        path: path === 'current' ? '/batch-query-status' : `/batch-query/${encodeURIComponent(id)}/status`,
        query: path === 'current' ? { batchQueryId: id } : undefined,
        headers: { 'api-key': apiKey },
        schema: (await storageProofSchemas()).batchQueryStatusResponse,
        operation: `get the status of batch query ${id}`,
        signal: options.signal,
      })
      return data
    }
    if (this.#statusPath === 'older') return ask('older')
    try {
      return await ask('current')
    } catch (error) {
      if (!isNoRoute(error)) throw error
      this.#statusPath = 'older'
      return ask('older')
    }
  }

  /**
   * Waits for a batch query to end and returns its last status: DONE or FAILED (a result, not an
   * exception: the caller decides). A status this client does not know is taken as still running,
   * with one warning, until the timeout.
   *
   * @param internalId The batch query's id.
   * @param options The timeout, the progress callback, the signal and the poll schedule.
   * @returns `{ internalId, queryStatus }`.
   * @throws {WaitTimeoutError} When it has not ended within `timeoutMs`.
   * @throws {AbortedError} When `signal` aborts.
   * @example
   * ```ts
   * import { StorageProofClient } from 'proving-kit'
   *
   * const storage = new StorageProofClient({
   *   baseUrl: process.env.STORAGE_PROOF_BASE_URL!,
   *   apiKey: process.env.STORAGE_PROOF_API_KEY,
   * })
   * const { queryStatus } = await storage.waitForBatchQuery('bq-1', { timeoutMs: 3_600_000 })
   * if (queryStatus === 'FAILED') throw new Error('the batch query failed')
   * ```
   */
  async waitForBatchQuery(internalId: string, options: WaitForBatchQueryOptions = {}): Promise<BatchQueryResult> {
    const id = requireId(internalId, 'internalId')
    const clock = this.http.clock
    const started = clock.now()
    let last: string | undefined
    const warned = new Set<string>()
    return pollUntil<BatchQueryResult>(
      async () => {
        const { queryStatus } = await this.getBatchQueryStatus(id, { signal: options.signal })
        if (queryStatus !== last) {
          last = queryStatus
          options.onProgress?.({ internalId: id, queryStatus, elapsedMs: clock.now() - started })
        }
        if (queryStatus === 'DONE' || queryStatus === 'FAILED')
          return { done: true, value: { internalId: id, queryStatus } }
        if (!(BATCH_QUERY_STATUSES as readonly string[]).includes(queryStatus) && !warned.has(queryStatus)) {
          warned.add(queryStatus)
          this.http.logger.warn(
            `Batch query ${id} reports status "${serviceLine(queryStatus, 200)}", which this version of proving-kit does not know; treating it as still running.`,
          )
        }
        return { done: false, state: queryStatus }
      },
      {
        what: `batch query ${id}`,
        timeoutMs: options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS,
        signal: options.signal,
        clock,
        logger: this.http.logger,
        schedule: options.schedule,
        waitedFor: { kind: 'batch query', id },
      },
    )
  }
}
