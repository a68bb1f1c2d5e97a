import type { Readable } from 'node:stream'
import type { Dispatcher } from 'undici'
import { AbortedError, type ProvingKitError } from './errors.ts'
import { checkHeaderValue } from './checks.ts'
import { classifyFailure, mayRepeat } from './classify.ts'
import { currentBound, currentDeadline } from './deadline.ts'
import { MAX_JSON_BODY_BYTES, serializeJsonBody } from './json-limits.ts'
import { SecretRedactor } from './redact.ts'
import { type Clock, type Logger, realMillisecondsOf, silentLogger, startTimer, systemClock } from './runtime.ts'
import { parseJsonLoosely, parseResponse } from './parse.ts'
import { VERSION } from './version.ts'
import { MAX_ERROR_BODY_BYTES, readCapped } from './http/bodies.ts'
import {
  baseUrlOf,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUTS,
  type HttpClientConfig,
  type HttpTimeouts,
  type RetryPolicy,
} from './http/config.ts'
import { download, type DownloadOptions, type DownloadSource } from './http/download.ts'
import {
  abortedError,
  DEADLINE_CODE,
  deadlineError,
  networkError,
  serviceError,
  annotateAttempts,
} from './http/failures.ts'
import type { HttpResponse, QueryValue, RequestBody, RequestSpec } from './http/request-spec.ts'
import { acceptedUnread, settleSchema } from './http/schema.ts'
import { minDefined, type Transport, timeoutsWithin, transportFor } from './http/transport.ts'

// What the clients and hosts import with HttpClient: its configuration, the shape of a request,
// and the few facts about a failure a caller asks.
export {
  type ConnectionOptions,
  connectionOf,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUTS,
  type HttpClientConfig,
  type HttpTimeouts,
  type RetryPolicy,
} from './http/config.ts'
export type { BodyContext, RequestBody } from './http/request-spec.ts'
export { isDeadlineError } from './http/failures.ts'
export { closeDefaultDispatcher } from './dispatcher-state.ts'

/**
 * Sends one service's requests with the library's policies: timeouts, retries, redaction of
 * secrets, the User-Agent. Every client holds one (`client.http`); use it for an endpoint the
 * clients do not cover.
 *
 * A request is sent again only when that cannot duplicate work on the server: an idempotent one
 * (GET, HEAD) after a network failure, a timeout, 408, 429, 500, 502, 503 or 504; any request the server
 * refused before processing (connection refused, 429, 503 with `Retry-After`). A POST whose
 * connection dropped after the body went out is never repeated: the caller decides. Delays grow
 * exponentially with full jitter, within the policy's time budget.
 *
 * @example
 * ```ts
 * import { HttpClient } from 'proving-kit'
 *
 * const http = new HttpClient({ baseUrl: 'https://proving.example', serviceName: 'proving service' })
 * const { status, data } = await http.request({ method: 'GET', path: '/is-alive' })
 * console.log(status, data)
 * ```
 */
export class HttpClient {
  /** The service's base URL, checked, without a trailing slash. */
  readonly baseUrl: string
  /** What messages call the service: "proving service", "task service", ... */
  readonly serviceName: string
  /** Where warnings (a retry, a slow answer) and debug lines go. */
  readonly logger: Logger
  /** The clock requests, retries and waits are timed by. */
  readonly clock: Clock
  /** The secrets kept out of every message and log line of this client; add yours to it. */
  readonly redactor: SecretRedactor
  /** The caller's dispatcher; none: the shared agent (core/dispatcher.ts), made on first use. */
  readonly #dispatcher: Dispatcher | undefined
  readonly #timeouts: HttpTimeouts
  readonly #retry: RetryPolicy
  readonly #headers: Record<string, string>
  readonly #random: () => number
  readonly #allowInsecureHttp: boolean
  /** No dispatcher was given: requests go through the shared agent built here. */
  readonly #ownDispatcher: boolean
  /** The service's clock minus ours, from the latest answer with a `Date` header. */
  #serviceOffsetMs: number | undefined

  constructor(config: HttpClientConfig) {
    this.baseUrl = baseUrlOf(config)
    this.serviceName = config.serviceName
    this.logger = config.logger ?? silentLogger
    this.clock = config.clock ?? systemClock
    this.redactor = config.redactor ?? new SecretRedactor()
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...config.timeouts }
    this.#retry = { ...DEFAULT_RETRY, ...config.retry }
    this.#ownDispatcher = config.dispatcher === undefined
    this.#dispatcher = config.dispatcher
    this.#headers = { 'user-agent': `proving-kit/${VERSION}`, ...config.headers }
    this.#random = config.random ?? Math.random
    this.#allowInsecureHttp = config.allowInsecureHttp ?? false
  }

  /**
   * The service's clock minus this machine's, in ms, from the `Date` header of the latest answer. A
   * lower bound: the header is truncated to the second. Times the service stamps (a query's
   * `createdAt`) are compared through it.
   *
   * @returns The offset, or undefined before an answer with a `Date` header.
   * @example
   * ```ts
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL! })
   * await client.isAlive()
   * console.log(`the service's clock is ${client.http.serviceOffsetMs() ?? 0} ms ahead`)
   * ```
   */
  serviceOffsetMs(): number | undefined {
    return this.#serviceOffsetMs
  }

  /**
   * Builds the absolute URL of a path with its query string (`undefined` and `null` values left out).
   *
   * @param path The path, with or without its leading slash.
   * @param query The query parameters.
   * @returns The URL, under the base URL.
   * @example
   * ```ts
   * import { HttpClient } from 'proving-kit'
   *
   * const http = new HttpClient({ baseUrl: 'https://proving.example', serviceName: 'proving service' })
   * console.log(http.url('/docs/proving-queries', { limit: 10, search: undefined }).href)
   * // https://proving.example/docs/proving-queries?limit=10
   * ```
   */
  url(path: string, query?: Record<string, QueryValue>): URL {
    const url = new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`))
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value))
    }
    return url
  }

  /** undici's request and the dispatcher to send it through, loaded with the first request. */
  #transport(): Promise<Transport> {
    return transportFor(this.#dispatcher, this.#timeouts.connectMs)
  }

  /**
   * Streams a file from `url` into `write`, through the same dispatcher, timeouts and deadline as
   * every request. At most `options.maxBytes`: an announced Content-Length over it is refused before
   * a byte is read, a body that runs over is cut and refused. Redirects are followed only within
   * the URL's origin (at most 5). Not retried: the caller decides.
   *
   * @param url The file's absolute URL (an artifact link of a query).
   * @param options `maxBytes`, the `write` that consumes the body, a `signal`, and `what` for messages.
   * @returns How many bytes were written.
   * @throws {ServiceError} When the server answers with an error status.
   * @throws {InvalidResponseError} When the body is larger than `maxBytes`, or a redirect leaves the link's origin.
   * @throws {NetworkError} When the download fails on the way.
   * @example
   * ```ts
   * import { createWriteStream } from 'node:fs'
   * import { pipeline } from 'node:stream/promises'
   * import { ProvingClient } from 'proving-kit'
   *
   * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
   * const { metadataUrls } = await client.getQuery('a1b2c3')
   * const { bytes } = await client.http.download(metadataUrls[0]!, {
   *   maxBytes: 512 * 1024 * 1024,
   *   write: (body) => pipeline(body, createWriteStream('proof.json')),
   * })
   * ```
   */
  download(url: string, options: DownloadOptions): Promise<{ bytes: number }> {
    const source: DownloadSource = {
      serviceName: this.serviceName,
      baseUrl: this.baseUrl,
      redactor: this.redactor,
      clock: this.clock,
      timeouts: this.#timeouts,
      allowInsecureHttp: this.#allowInsecureHttp,
      userAgent: this.#headers['user-agent'] ?? `proving-kit/${VERSION}`,
      transport: () => this.#transport(),
    }
    return download(source, url, options)
  }

  /**
   * Sends one request with the client's policies, and parses a successful answer with
   * `spec.schema` when one is given.
   *
   * @param spec The method, path, query, headers and body; the schema of a successful answer; per-
   * request overrides (retry, timeouts, success statuses, deadline).
   * @returns `{ status, headers, data, attempts }`: `data` is the parsed body (typed by the schema).
   * @throws {ServiceError} When the answer's status is not a success.
   * @throws {InvalidResponseError} When a successful body is not JSON or does not match the schema.
   * @throws {NetworkError} When no answer came within the retries (a {@link RequestTimeoutError} for a timeout).
   * @throws {AbortedError} When `spec.signal` aborts.
   * @example
   * ```ts
   * import { HttpClient } from 'proving-kit'
   *
   * const http = new HttpClient({
   *   baseUrl: 'https://proving.example',
   *   serviceName: 'proving service',
   *   headers: { 'api-key': 'secret' },
   * })
   * const { data } = await http.request<{ alive: boolean }>({
   *   method: 'GET',
   *   path: '/is-alive',
   *   operation: 'check the service',
   * })
   * console.log(data.alive)
   * ```
   */
  async request<T = unknown>(spec: RequestSpec<T>): Promise<HttpResponse<T>> {
    // A schema still loading is awaited only for a successful answer (./http/schema.ts); settled
    // first, before anything here can throw, so that its rejection is never left unhandled.
    const schema = settleSchema(spec.schema)
    // Inside a wait, a read is tried once: the wait itself tries again at its poll schedule,
    // with a visible warning, until its deadline (see ./poll.ts). Elsewhere the policy applies.
    const inWait = currentDeadline() !== undefined && spec.retry === undefined
    const policy = { ...this.#retry, ...spec.retry, ...(inWait ? { maxAttempts: 1 } : {}) }
    const started = this.clock.now()
    const url = this.url(spec.path, spec.query)
    const operation = spec.operation ?? `${spec.method} ${spec.path.split('?')[0]}`
    const idempotent = spec.idempotent ?? (spec.method === 'GET' || spec.method === 'HEAD')
    const deadline = minDefined(spec.deadline, currentBound())
    // Serialised once, before anything is sent: a body that cannot be JSON is the caller's input
    // problem, never a network failure to retry.
    const jsonText =
      spec.json === undefined
        ? undefined
        : serializeJsonBody(spec.json, { input: 'body', what: `the body of ${operation}` })
    const headers = this.#headersOf(spec)
    let schemaFailure: { error: unknown } | undefined
    for (let attempt = 1; ; attempt++) {
      if (spec.signal?.aborted) throw abortedError(operation, spec.signal)
      let failure: ProvingKitError
      const remaining = deadline === undefined ? undefined : deadline - this.clock.now()
      if (remaining !== undefined && remaining <= 0) throw deadlineError(this, operation, attempt - 1)
      // The wait's deadline bounds the whole attempt, body included: undici's timeouts only
      // bound each silence, which a server trickling a byte every few seconds never makes.
      const limit = remaining === undefined ? undefined : new AbortController()
      const realRemaining = realMillisecondsOf(this.clock, remaining)
      const cancelTimer = limit && startTimer(this.clock, remaining!, () => limit.abort())
      const signal = limit ? (spec.signal ? AbortSignal.any([spec.signal, limit.signal]) : limit.signal) : spec.signal
      try {
        const response = await this.#send(spec, url, jsonText, headers, signal, realRemaining)
        if (isSuccess(response.status, spec.successStatuses)) {
          const loaded = await schema
          if ('error' in loaded) {
            schemaFailure = idempotent
              ? loaded
              : { error: acceptedUnread(this.serviceName, operation, response.status, loaded.error) }
            break
          }
          const data = parseResponse(loaded.schema, response.json, {
            logger: this.logger,
            what: `${this.serviceName} response to ${operation}`,
            redactor: this.redactor,
          })
          return { status: response.status, headers: response.headers, data: data as T, attempts: attempt }
        }
        failure = serviceError(this, response, operation, idempotent)
      } catch (error) {
        // undici's own timeouts are cut to the time left (#send): one of them firing a moment
        // before the deadline's timer is the deadline too.
        const cutToDeadline =
          realRemaining !== undefined &&
          realRemaining <=
            undiciTimeoutOf(error, spec.headersTimeoutMs ?? this.#timeouts.headersMs, this.#timeouts.bodyMs)
        if ((limit?.signal.aborted || cutToDeadline) && !spec.signal?.aborted) {
          failure = deadlineError(this, operation, attempt)
        } else {
          failure = networkError(this, error, operation, spec.signal)
          if (failure instanceof AbortedError) throw failure
        }
      } finally {
        cancelTimer?.()
      }
      const { retryAfterMs } = classifyFailure(failure)
      const repeat = mayRepeat(failure, idempotent) && failure.code !== DEADLINE_CODE
      const elapsed = this.clock.now() - started
      const delay =
        retryAfterMs === undefined ? this.#backoff(attempt, policy) : Math.min(retryAfterMs, policy.maxRetryAfterMs)
      const pastDeadline = deadline !== undefined && this.clock.now() + delay >= deadline
      if (!repeat || attempt >= policy.maxAttempts || elapsed + delay > policy.budgetMs || pastDeadline) {
        if (repeat && attempt > 1) throw annotateAttempts(failure, attempt, elapsed)
        throw failure
      }
      this.logger.debug(
        `${operation}: ${failure.shortMessage} Trying again in ${(delay / 1000).toFixed(1)} s (attempt ${attempt + 1} of ${policy.maxAttempts}).`,
      )
      try {
        await this.clock.sleep(delay, spec.signal)
      } catch {
        throw abortedError(operation, spec.signal)
      }
    }
    // Only a schema that failed to load leaves the loop.
    throw schemaFailure!.error
  }

  /** Every header of a request, each checked before anything is sent (a newline in a key is the caller's input problem). */
  #headersOf(spec: RequestSpec<unknown>): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.#headers }
    for (const [key, value] of Object.entries(spec.headers ?? {})) {
      if (value !== undefined) headers[key.toLowerCase()] = value
    }
    for (const [name, value] of Object.entries(headers)) {
      checkHeaderValue(value, HEADER_INPUTS[name] ?? `the ${name} header`, `The value of the ${name} header`)
    }
    return headers
  }

  #backoff(attempt: number, policy: RetryPolicy): number {
    const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
    return Math.floor(this.#random() * ceiling)
  }

  async #send(
    spec: RequestSpec<unknown>,
    url: URL,
    jsonText: string | undefined,
    baseHeaders: Record<string, string>,
    signal: AbortSignal | undefined,
    remainingMs: number | undefined,
  ) {
    const headers = { ...baseHeaders }
    let body: string | Readable | AsyncIterable<Uint8Array> | undefined
    let prepared: RequestBody | undefined
    if (jsonText !== undefined) {
      body = jsonText
      headers['content-type'] = 'application/json'
    } else if (spec.body) {
      prepared = spec.body({ ownDispatcher: this.#ownDispatcher })
      body = prepared.stream
      Object.assign(headers, prepared.headers)
    }
    try {
      const { undiciRequest, dispatcher } = await this.#transport()
      const response = await undiciRequest(url, {
        method: spec.method,
        headers,
        // undici sends an async iterable as it sends a stream (its types list only the stream).
        body: body as string | Readable | undefined,
        dispatcher,
        signal,
        ...timeoutsWithin(spec.headersTimeoutMs ?? this.#timeouts.headersMs, this.#timeouts.bodyMs, remainingMs),
      })
      const served = typeof response.headers.date === 'string' ? Date.parse(response.headers.date) : Number.NaN
      if (Number.isFinite(served)) this.#serviceOffsetMs = served - Date.now()
      const ok = isSuccess(response.statusCode, spec.successStatuses)
      // An error body only feeds a code and an excerpt: a large one is cut, never an error of its
      // own (that would hide the status, and with it whether a submission is ambiguous).
      const text = ok
        ? await readCapped(response.body, spec.maxBodyBytes ?? MAX_JSON_BODY_BYTES, {
            what: `The ${this.serviceName}'s answer to ${spec.operation ?? spec.method}`,
          })
        : await readCapped(response.body, MAX_ERROR_BODY_BYTES, { truncate: true })
      return {
        status: response.statusCode,
        headers: response.headers,
        text,
        json: parseJsonLoosely(text),
      }
    } finally {
      prepared?.release?.()
    }
  }
}

/** The limit of the undici timeout that `error` is (headers or body; #send cuts each to a wait's time left), or -1. */
function undiciTimeoutOf(error: unknown, headersMs: number, bodyMs: number): number {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'UND_ERR_HEADERS_TIMEOUT' ? headersMs : code === 'UND_ERR_BODY_TIMEOUT' ? bodyMs : -1
}

/** The user-facing input behind a header, for the message when its value cannot be sent. */
const HEADER_INPUTS: Record<string, string> = {
  'api-key': 'the API key (--api-key, PROVING_API_KEY, the api-key input)',
  'x-api-key': 'the API key (--api-key, PROVING_API_KEY, the api-key input)',
  authorization: 'the access token',
}

function isSuccess(status: number, accepted: readonly number[] | undefined): boolean {
  return accepted ? accepted.includes(status) : status >= 200 && status < 300
}
