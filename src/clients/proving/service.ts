import { InvalidInputError, InvalidResponseError, ServiceError } from '../../core/errors.ts'
import { apiKeyOf } from '../../core/checks.ts'
import { type ConnectionOptions, connectionOf, HttpClient } from '../../core/http.ts'
import { SecretRedactor } from '../../core/redact.ts'

/** The schemas load with the first request, not with the client: zod stays off the import path (bench figure 8). */
export const provingSchemas = () => import('../../schemas/proving.ts')

/**
 * Which paths a client reads queries from. The documented `/docs/proving-query/{id}` and
 * `/docs/proving-queries`, or production's `GET /proving-query/{id}` (whose record carries
 * `status` there) and `GET /proving-queries`. `auto` (the default) finds out: see waitForQuery
 * and listQueries.
 */
export type ReadPaths = 'auto' | 'docs' | 'production'

/** How {@link ProvingClient} reaches the proving service. */
export type ClientOptions = ConnectionOptions & {
  /**
   * The API key (sent as `api-key`); submissions, lists, retries and buckets need one, reads of one
   * query do not. Kept out of every message.
   */
  apiKey?: string | undefined
  /** Extra values to keep out of messages (the API key is always kept out). */
  secrets?: string[] | undefined
  /**
   * Where queries and lists are read: `auto` finds out; `docs` or `production` fixes it.
   * @default 'auto'
   */
  readPaths?: ReadPaths | undefined
}

/**
 * The proving service as one ProvingClient reaches it: its HttpClient, its key and read paths,
 * and what the client has learned on the way (the list path that answers, whether the URL was
 * checked). Every operation of this folder takes it first; ProvingClient holds one.
 */
export type ProvingService = {
  readonly http: HttpClient
  readonly apiKey: string | undefined
  readonly readPaths: ReadPaths
  /** The list path this client found answering (auto), so later pages go straight there. */
  listPath: 'docs' | 'production' | undefined
  /**
   * With readPaths `auto`: the path a status read settled on (the production record had no status,
   * or a path had no route), so the next wait starts there instead of asking both.
   */
  statusPath: 'docs' | 'production' | undefined
  /** GET /is-alive answered like the proving service (checkService): not asked again. */
  serviceChecked: boolean
}

export function provingServiceOf(options: ClientOptions): ProvingService {
  const apiKey = apiKeyOf(options.apiKey)
  const readPaths = options.readPaths ?? 'auto'
  if (!['auto', 'docs', 'production'].includes(readPaths)) {
    throw new InvalidInputError(`readPaths must be auto, docs or production; got ${JSON.stringify(readPaths)}.`, {
      input: 'readPaths',
    })
  }
  const http = new HttpClient({
    ...connectionOf(options),
    serviceName: 'proving service',
    redactor: new SecretRedactor([apiKey, ...(options.secrets ?? [])]),
  })
  return { http, apiKey, readPaths, listPath: undefined, statusPath: undefined, serviceChecked: false }
}

/** The API key for an operation that needs one; without it, an input error that says so. */
export function apiKeyFor(service: ProvingService, operation: string): string {
  if (!service.apiKey) {
    throw new InvalidInputError(`${operation} needs an API key; pass apiKey when creating the ProvingClient.`, {
      input: 'apiKey',
    })
  }
  return service.apiKey
}

/** See ProvingClient.checkService: the base URL must reach the proving service before anything is submitted. */
export async function checkService(
  service: ProvingService,
  options: { signal?: AbortSignal | undefined } = {},
): Promise<void> {
  if (service.serviceChecked) return
  try {
    await service.http.request({
      method: 'GET',
      path: '/is-alive',
      operation: 'check the service URL',
      signal: options.signal,
    })
  } catch (error) {
    const page =
      error instanceof ServiceError
        ? error.gatewayPage && (error.status ?? 0) < 500
        : error instanceof InvalidResponseError
    if (!page) {
      if (error instanceof ServiceError) {
        service.serviceChecked = true
        return
      }
      throw error
    }
    const got =
      error instanceof ServiceError
        ? `${error.status} and a page that is not its JSON`
        : 'an answer that is not its JSON'
    throw new InvalidInputError(
      `The proving service URL (${new URL(service.http.baseUrl).origin}) does not answer like the proving service; nothing was submitted.`,
      {
        input: 'baseUrl',
        cause: error,
        metaMessages: [
          `GET /is-alive got ${got}.`,
          'Check the base URL (--base-url, PROVING_BASE_URL, the base-url input).',
        ],
      },
    )
  }
  service.serviceChecked = true
}

/** GET /is-alive (extension). */
export async function isAlive(service: ProvingService, options: { signal?: AbortSignal } = {}): Promise<boolean> {
  const { data } = await service.http.request({
    method: 'GET',
    path: '/is-alive',
    schema: (await provingSchemas()).isAliveResponse,
    operation: 'check the service is alive',
    signal: options.signal,
  })
  return data.alive
}
