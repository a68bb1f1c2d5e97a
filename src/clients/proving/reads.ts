import { requestBudgetFor } from '../../core/budget.ts'
import { currentBound } from '../../core/deadline.ts'
import { AbortedError, InvalidInputError, isNoRoute } from '../../core/errors.ts'
import { requireId } from '../../core/checks.ts'
import type { DocsQueryResponse, QueryRecordWithStatus, QueryResponse } from '../../schemas/proving.ts'
import { apiKeyFor, type ProvingService, provingSchemas, type ReadPaths } from './service.ts'

/** A query's record with its `status`, and the URLs of its artifacts (the proof, the PIE, the metadata). */
export type QueryResult = { provingQuery: QueryRecordWithStatus; metadataUrls: string[] }

/**
 * GET /proving-query/{id}: record D and the artifact URLs (production's record carries a status, the
 * documented one does not).
 */
export async function getQuery(
  service: ProvingService,
  queryId: string,
  options: { signal?: AbortSignal } = {},
): Promise<QueryResponse> {
  const id = requireId(queryId, 'queryId')
  const { data } = await service.http.request({
    method: 'GET',
    path: `/proving-query/${encodeURIComponent(id)}`,
    schema: (await provingSchemas()).queryResponse,
    operation: `get query ${id}`,
    signal: options.signal,
  })
  return data
}

/** GET /docs/proving-query/{id}: record L, which carries `status`; needs the key. */
export async function getQueryDetails(
  service: ProvingService,
  queryId: string,
  options: { signal?: AbortSignal } = {},
): Promise<DocsQueryResponse> {
  const id = requireId(queryId, 'queryId')
  const { data } = await service.http.request({
    method: 'GET',
    path: `/docs/proving-query/${encodeURIComponent(id)}`,
    headers: { 'api-key': apiKeyFor(service, 'Reading query details') },
    schema: (await provingSchemas()).docsQueryResponse,
    operation: `get query ${id}`,
    signal: options.signal,
  })
  return data
}

/** The query with its status, from the path that serves it (see StatusReader). */
export async function readQuery(
  service: ProvingService,
  queryId: string,
  options: { signal?: AbortSignal; path?: ReadPaths } = {},
): Promise<QueryResult> {
  const id = requireId(queryId, 'queryId')
  return new StatusReader(service, id, options.path ?? service.readPaths).read(options.signal)
}

/**
 * Reads one query's status for a wait (or once, for readQuery), from the path that answers:
 *
 * - `production`: GET /proving-query/{id}, whose record carries `status` in production;
 * - `docs`: GET /docs/proving-query/{id} (the documented record L), which needs the key;
 * - `auto`: production's path first; when its record has no `status` (the documented record
 *   D) the docs path, for the rest of the wait and the client's later waits (one read a check). A no-route 404 on either path (a 404 that is not
 *   the service's PROVING_QUERY_NOT_FOUND) moves the wait to the other path once, for good.
 */
export class StatusReader {
  #route: 'docs' | 'production'
  #switched = false
  readonly #service: ProvingService
  readonly #id: string
  readonly #fixed: boolean

  constructor(service: ProvingService, id: string, paths: ReadPaths) {
    this.#service = service
    this.#id = id
    this.#fixed = paths !== 'auto'
    this.#route = paths === 'docs' ? 'docs' : paths === 'auto' ? (service.statusPath ?? 'production') : 'production'
  }

  async read(signal: AbortSignal | undefined): Promise<QueryResult> {
    for (;;) {
      // What another wait of this client learned meanwhile (a batch's waits start together, and
      // their first reads take turns): the path that serves the status, so it is not asked again.
      if (!this.#fixed && !this.#switched && this.#service.statusPath) this.#route = this.#service.statusPath
      try {
        const found =
          this.#route === 'docs'
            ? await getQueryDetails(this.#service, this.#id, { signal })
            : await this.#production(signal)
        if (found) return found
      } catch (error) {
        if (this.#fixed || this.#switched || !isNoRoute(error)) throw error
        if (this.#route === 'production' && this.#service.apiKey === undefined) throw error
        this.#service.http.logger.debug(
          `No route for the ${this.#route} path of query ${this.#id}; reading it from the other path.`,
        )
      }
      // The record had no status (or the path has no route): the other path, for the rest.
      this.#switched = true
      this.#route = this.#route === 'docs' ? 'production' : 'docs'
      if (!this.#fixed) this.#service.statusPath = this.#route
      // The other path is a second request: it takes its own turn of the process's budget.
      const { clock } = this.#service.http
      try {
        await requestBudgetFor(clock).take(clock.now(), { signal, deadline: currentBound() })
      } catch (error) {
        throw new AbortedError(`Reading query ${this.#id} was cancelled.`, { cause: error })
      }
    }
  }

  /** The record of GET /proving-query/{id} when it carries a status; undefined when it does not. */
  async #production(signal: AbortSignal | undefined): Promise<QueryResult | undefined> {
    const response = await getQuery(this.#service, this.#id, { signal })
    const status = response.provingQuery.status
    if (typeof status === 'string') {
      return { provingQuery: { ...response.provingQuery, status }, metadataUrls: response.metadataUrls }
    }
    const hasApiKey = this.#service.apiKey !== undefined
    if (this.#fixed || this.#switched || !hasApiKey) {
      throw new InvalidInputError(
        hasApiKey
          ? `The proving service's record of query ${this.#id} carries no status on GET /proving-query/{id}; read it from the docs path (readPaths: 'docs' or 'auto').`
          : `Waiting for query ${this.#id} needs an API key: without one the service does not show its status.`,
        { input: 'apiKey' },
      )
    }
    return undefined
  }
}
