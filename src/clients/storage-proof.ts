import {
  InvalidInputError,
} from '../core/errors.ts'
import { isNoRoute } from '../core/errors.ts'
import { type ConnectionOptions, connectionOf, HttpClient } from '../core/http.ts'
import { explainSubmissionFailure } from '../core/submission.ts'
import { apiKeyOf, checkServiceId, requireId } from '../core/checks.ts'
import { serviceLine } from '../core/service-text.ts'
import { DEFAULT_WAIT_TIMEOUT_MS, pollUntil, type WaitOptions } from '../core/poll.ts'
import { SecretRedactor } from '../core/redact.ts'
import type {
  BatchQueryBody,
  BatchQueryStatusResponse,
} from '../schemas/storage-proof.ts'
import { BATCH_QUERY_STATUSES } from '../schemas/storage-proof-constants.ts'
import type { ApiKeyProvider } from './account.ts'

/** The schemas load with the first request, not with the client: zod stays off the import path (bench figure 8). */
const storageProofSchemas = () => import('../schemas/storage-proof.ts')

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

export type BatchQueryProgress = {
  internalId: string
  queryStatus: string
  elapsedMs: number
}

/** `onProgress` is called on every change of status (and once for the first status seen). */
export type WaitForBatchQueryOptions = WaitOptions<BatchQueryProgress>

export type BatchQueryResult = { internalId: string; queryStatus: string }


/**
 * The storage-proof service: `POST /batch-query` and `GET /batch-query-status?batchQueryId=`,
 * with a wait that follows the shared polling discipline.
 */
export class StorageProofClient {
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
    if (!key) throw new InvalidInputError(`${operation}: the API key provider returned an empty key.`, { input: 'apiKey' })
    this.http.redactor.add(key)
    return key
  }

  /**
   * POST /batch-query. The body is checked first (nothing is sent when it is malformed). The
   * service has no deduplication, so a submission whose answer was lost is not sent again.
   */
  async submitBatchQuery(body: BatchQueryBody, options: { signal?: AbortSignal } = {}): Promise<{ internalId: string }> {
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
      return { internalId: checkServiceId(data.internalId, 'The batch query id the storage-proof service returned', 'The service may hold the batch query: check the dashboard explorer before submitting again.') }
    } catch (error) {
      throw explainSubmissionFailure(error, {
        ambiguous: 'The batch query may or may not have reached the storage-proof service; it was not sent again, to avoid paying its fee twice.',
        howToCheck: 'Check the dashboard explorer for a new batch query before submitting again.',
        ifCancelled: 'If the request had gone out, the batch query may exist anyway: check the dashboard explorer before submitting again.',
      })
    }
  }

  /**
   * GET /batch-query-status?batchQueryId= (as public clients of production read it). A service without that route (a no-route 404) is asked on the older
   * GET /batch-query/{internalId}/status, and this client stays there.
   */
  async getBatchQueryStatus(internalId: string, options: { signal?: AbortSignal } = {}): Promise<BatchQueryStatusResponse> {
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
   * Waits for DONE or FAILED and returns the last status (FAILED is a result, not an
   * exception: the caller decides). A status this client does not know is not
   * terminal, so the wait goes on, with one warning, until the timeout.
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
        if (queryStatus === 'DONE' || queryStatus === 'FAILED') return { done: true, value: { internalId: id, queryStatus } }
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
