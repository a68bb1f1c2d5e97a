import { isNoRoute } from '../../core/errors.ts'
import { checkEnum, checkInteger } from '../../core/checks.ts'
import type { QueryListResponse, QueryRecordWithStatus } from '../../schemas/proving.ts'
import { NETWORKS, type ProvingNetwork } from '../../schemas/proving-constants.ts'
import { apiKeyFor, type ProvingService, provingSchemas, type ReadPaths } from './service.ts'

/** Which page of the queries {@link ProvingClient.listQueries} reads, and its filters. */
export type ListQueriesOptions = {
  /** Queries per page, 1 to 100 (the service's default when omitted). */
  limit?: number | undefined
  /**
   * How many queries to skip, from the newest.
   * @default 0
   */
  offset?: number | undefined
  /** Only the queries whose id or external id contains this text (case-insensitive). */
  search?: string | undefined
  /** Only the queries of this client (production's GET /proving-queries filter). */
  clientId?: string | undefined
  /** Only the queries of this network. */
  network?: ProvingNetwork | undefined
  /** Overrides the client's readPaths for this call. */
  path?: ReadPaths | undefined
  /** Cancels the request (the promise rejects with AbortedError). */
  signal?: AbortSignal | undefined
}

/**
 * One page of the queries submitted with this key, from GET /docs/proving-queries or
 * production's GET /proving-queries (which takes the key as the `apiKey` query parameter too).
 * With readPaths `auto` the docs path is asked first and, on a no-route 404, the other; the
 * path that answered is kept for later pages.
 */
export async function listQueries(
  service: ProvingService,
  options: ListQueriesOptions = {},
): Promise<QueryListResponse> {
  if (options.limit !== undefined) checkInteger(options.limit, 'limit', 1, 100)
  if (options.offset !== undefined) checkInteger(options.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
  if (options.network !== undefined) checkEnum(options.network, 'network', NETWORKS)
  const key = apiKeyFor(service, 'Listing queries')
  const chosen = options.path ?? service.readPaths
  const first = chosen === 'auto' ? (service.listPath ?? 'docs') : chosen
  const query = {
    limit: options.limit,
    offset: options.offset,
    search: options.search,
    clientId: options.clientId,
    network: options.network,
  }
  const ask = async (path: 'docs' | 'production') => {
    const { data } = await service.http.request({
      method: 'GET',
      path: path === 'docs' ? '/docs/proving-queries' : '/proving-queries',
      headers: { 'api-key': key },
      query: path === 'docs' ? query : { ...query, apiKey: key },
      schema: (await provingSchemas()).queryListResponse,
      operation: 'list queries',
      signal: options.signal,
    })
    if (chosen === 'auto') service.listPath = path
    return data
  }
  try {
    return await ask(first)
  } catch (error) {
    if (chosen !== 'auto' || !isNoRoute(error)) throw error
    const other = first === 'docs' ? 'production' : 'docs'
    service.http.logger.debug(
      `The list path of ${first === 'docs' ? '/docs/proving-queries' : '/proving-queries'} has no route here; listing from the other path.`,
    )
    return ask(other)
  }
}

/** Every query, page after page (`limit` per request, 100 by default). */
export async function* iterateQueries(
  service: ProvingService,
  options: Omit<ListQueriesOptions, 'offset'> = {},
): AsyncGenerator<QueryRecordWithStatus> {
  const limit = options.limit ?? 100
  let offset = 0
  for (;;) {
    const page = await listQueries(service, { ...options, limit, offset })
    yield* page.provingQueries
    offset += page.provingQueries.length
    // A service that leaves `total` out ends the list with a short page.
    const ended = typeof page.total === 'number' ? offset >= page.total : page.provingQueries.length < limit
    if (page.provingQueries.length === 0 || ended) return
  }
}
