import type { Readable } from 'node:stream'
export { isLoopback } from './checks.ts'
import type { Dispatcher } from 'undici'
import type { z } from 'zod'
import {
  AbortedError,
  AmbiguousSubmissionError,
  InvalidInputError,
  InvalidResponseError,
  NetworkError,
  ProvingKitError,
  RequestTimeoutError,
  ServiceError,
} from './errors.ts'
import { checkHeaderValue, isLoopback } from './checks.ts'
import { classifyFailure, mayRepeat } from './classify.ts'
import { currentDeadline } from './deadline.ts'
import { DEFAULT_CONNECT_MS } from './dispatcher-state.ts'
import { MAX_JSON_BODY_BYTES, serializeJsonBody } from './json-limits.ts'
import { redact, redactUrl, SecretRedactor, showUrl } from './redact.ts'
import { type Clock, type Logger, silentLogger, systemClock } from './runtime.ts'
import { NOT_JSON, parseJsonLoosely, parseResponse } from './parse.ts'
import { VERSION } from './version.ts'

/**
 * The one place where requests are sent. Every client goes through `HttpClient.request`, so the
 * retry, timeout, redaction and User-Agent policy is the same everywhere (undici's own advice:
 * compose behaviour around one dispatcher rather than at every call site).
 *
 * Retry policy: a request is sent again only when that cannot duplicate work on the server:
 * - idempotent requests (GET, HEAD): on network failures, timeouts, 408, 429, 500, 502, 503, 504;
 * - any request the server refused before processing: connection refused or connect timeout
 *   (nothing reached the server), 429, and 503 with Retry-After.
 * A POST whose connection dropped after the body went out, or that got a 500/502/504, is never
 * repeated here: the caller decides (see AmbiguousSubmissionError and the dedupId lookup).
 * Delays grow exponentially with full jitter; `Retry-After` is honoured up to a cap; all of it
 * within a time budget per request.
 */

export type HttpTimeouts = {
  /** Establishing the TCP/TLS connection. */
  connectMs: number
  /** From sending the request to receiving the response headers. */
  headersMs: number
  /** Longest silence while receiving the body. */
  bodyMs: number
}

export type RetryPolicy = {
  /** Attempts in all, the first included. */
  maxAttempts: number
  /** Time allowed for the attempts and the waits between them. */
  budgetMs: number
  baseDelayMs: number
  maxDelayMs: number
  /** A `Retry-After` longer than this is cut to it. */
  maxRetryAfterMs: number
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: DEFAULT_CONNECT_MS, headersMs: 30_000, bodyMs: 30_000 }

export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 6,
  budgetMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 30_000,
}

/** How a client reaches its service; every client takes these and hands them to its HttpClient. */
export type ConnectionOptions = {
  /** Base URL of the service, e.g. `https://api.example.com`; paths are appended to it. */
  baseUrl: string
  dispatcher?: Dispatcher | undefined
  timeouts?: Partial<HttpTimeouts> | undefined
  retry?: Partial<RetryPolicy> | undefined
  logger?: Logger | undefined
  clock?: Clock | undefined
  /**
   * Allows plain http to a host that is not this machine. Off by default: the API key (in the
   * URL on the L2 endpoints), tokens and sign-in signatures would cross the network in clear.
   */
  allowInsecureHttp?: boolean | undefined
}

export type HttpClientConfig = ConnectionOptions & {
  /** What the service is called in messages: "proving service", "task service", ... */
  serviceName: string
  redactor?: SecretRedactor | undefined
  /** Extra headers on every request (e.g. `api-key`). */
  headers?: Record<string, string> | undefined
  /** Random source for jitter; tests pin it. */
  random?: (() => number) | undefined
}

/** The connection settings out of a client's options, without its other fields. */
export function connectionOf(options: ConnectionOptions): ConnectionOptions {
  const { baseUrl, dispatcher, timeouts, retry, logger, clock, allowInsecureHttp } = options
  return { baseUrl, dispatcher, timeouts, retry, logger, clock, allowInsecureHttp }
}

export type QueryValue = string | number | boolean | undefined | null

export type RequestBody = {
  stream: Readable | AsyncIterable<Uint8Array>
  headers: Record<string, string>
  /** Called once the request is over, whatever its outcome. */
  release?: (() => void) | undefined
}

/**
 * What a body factory is told: `ownDispatcher` when the request goes through the library's own
 * agent rather than a caller's dispatcher (a multipart body reuses its read buffers only then).
 */
export type BodyContext = { ownDispatcher: boolean }

export type RequestSpec<T> = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD'
  path: string
  query?: Record<string, QueryValue> | undefined
  headers?: Record<string, string | undefined> | undefined
  /** A JSON body. */
  json?: unknown
  /** A streamed body; a factory so that a retry can open it anew. */
  body?: ((context: BodyContext) => RequestBody) | undefined
  /**
   * Validates and types a successful body. A promise of it is awaited only once a successful
   * answer is in: an upload can start while the schema's module is still loading.
   */
  schema?: z.ZodType<T> | Promise<z.ZodType<T>> | undefined
  /** Statuses that count as success; any 2xx by default. */
  successStatuses?: readonly number[] | undefined
  signal?: AbortSignal | undefined
  /** Overrides the headers timeout (uploads of large files want more). */
  headersTimeoutMs?: number | undefined
  /** Overrides the retry policy for this request. */
  retry?: Partial<RetryPolicy> | undefined
  /**
   * Whether sending the request twice is harmless. Defaults to true for GET and HEAD; a POST
   * that only reads (a JSON-RPC call) sets it to get the same retries.
   */
  idempotent?: boolean | undefined
  /** A short name of the operation for messages: "get query q-1". */
  operation?: string | undefined
  /** The largest successful body read (bytes); MAX_JSON_BODY_BYTES by default. */
  maxBodyBytes?: number | undefined
  /**
   * No attempt, timeout or pause runs past this time (ms since the epoch, by the client's
   * clock). A wait's deadline applies on its own (see ./deadline.ts); the earlier one wins.
   */
  deadline?: number | undefined
}

export type HttpResponse<T> = {
  status: number
  headers: Record<string, string | string[] | undefined>
  data: T
  attempts: number
}

// undici loads with the first request (core/dispatcher.ts), not with this module; later requests
// reuse that import's promise rather than asking the module loader again.
export { closeDefaultDispatcher } from './dispatcher-state.ts'
let dispatcherModule: Promise<typeof import('./dispatcher.ts')> | undefined
const loadDispatcher = () => (dispatcherModule ??= import('./dispatcher.ts'))

const MAX_ERROR_BODY_BYTES = 64 * 1024

export class HttpClient {
  readonly baseUrl: string
  readonly serviceName: string
  readonly logger: Logger
  readonly clock: Clock
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
    let base: URL
    try {
      base = new URL(config.baseUrl)
    } catch {
      throw new InvalidInputError(
        `The ${config.serviceName} URL is not a valid URL: "${showUrl(String(config.baseUrl))}"; give an absolute http(s) URL.`,
        { input: 'baseUrl' },
      )
    }
    if (base.protocol !== 'http:' && base.protocol !== 'https:') {
      throw new InvalidInputError(
        `The ${config.serviceName} URL must use http or https, got "${base.protocol}"; give an absolute http(s) URL.`,
        { input: 'baseUrl' },
      )
    }
    if (base.protocol === 'http:' && !config.allowInsecureHttp && !isLoopback(base.hostname)) {
      throw new InvalidInputError(
        `The ${config.serviceName} URL ${showUrl(base)} is plain http to another machine: the API key, tokens and signatures would cross the network in clear. Use https, or allow it with --allow-insecure-http (allow-insecure-http: true in the action).`,
        { input: 'baseUrl' },
      )
    }
    this.baseUrl = base.toString().replace(/\/+$/, '')
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
   * The service's clock minus this machine's (ms), from the `Date` header of the latest answer
   * (undefined before one). A lower bound: the header is truncated to the second and read once
   * the answer arrived. Times the service stamps (a query's createdAt) are compared through it.
   */
  serviceOffsetMs(): number | undefined {
    return this.#serviceOffsetMs
  }

  /** Builds the absolute URL of a path with its query string. */
  url(path: string, query?: Record<string, QueryValue>): URL {
    const url = new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`))
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value !== undefined && value !== null) url.searchParams.set(key, String(value))
    }
    return url
  }

  /**
   * A POST the service accepted did its work (a query created, paid for): when its answer cannot
   * be read because its schema did not load, that must not look like a failure to submit again.
   */
  #acceptedUnread(operation: string, status: number, loadError: unknown): AmbiguousSubmissionError {
    const reason = loadError instanceof Error ? loadError.message : String(loadError)
    return new AmbiguousSubmissionError(
      `The ${this.serviceName} accepted ${operation} (HTTP ${status}), but its answer could not be read: the schema to check it did not load (${reason}).`,
      { cause: loadError },
    )
  }

  /** undici's request and the dispatcher to send it through, loaded with the first request. */
  async #transport(): Promise<{ undiciRequest: typeof import('undici').request; dispatcher: Dispatcher }> {
    const { undiciRequest, defaultDispatcher } = await loadDispatcher()
    return { undiciRequest, dispatcher: this.#dispatcher ?? defaultDispatcher(this.#timeouts.connectMs) }
  }

  async request<T = unknown>(spec: RequestSpec<T>): Promise<HttpResponse<T>> {
    // A schema still loading is awaited only for a successful answer. If it fails to load, that
    // is never taken for a network failure and retried; when no answer needed it, it is
    // dropped: never an unhandled rejection (hence first, before anything here can throw).
    const schemaLoading: Promise<{ schema: z.ZodType<T> } | { error: unknown }> | undefined =
      spec.schema instanceof Promise ? spec.schema.then((schema) => ({ schema }), (error: unknown) => ({ error })) : undefined
    // Inside a wait, a read is tried once: the wait itself tries again at its poll schedule,
    // with a visible warning, until its deadline (see ./poll.ts). Elsewhere the policy applies.
    const inWait = currentDeadline() !== undefined && spec.retry === undefined
    const policy = { ...this.#retry, ...spec.retry, ...(inWait ? { maxAttempts: 1 } : {}) }
    const started = this.clock.now()
    const url = this.url(spec.path, spec.query)
    const operation = spec.operation ?? `${spec.method} ${spec.path.split('?')[0]}`
    const idempotent = spec.idempotent ?? (spec.method === 'GET' || spec.method === 'HEAD')
    const deadline = minDefined(spec.deadline, currentDeadline())
    // Serialised once, before anything is sent: a body that cannot be JSON is the caller's input
    // problem, never a network failure to retry.
    const jsonText = spec.json === undefined ? undefined : serializeJsonBody(spec.json, { input: 'body', what: `the body of ${operation}` })
    const headers = this.#headersOf(spec)
    let schemaFailure: { error: unknown } | undefined
    for (let attempt = 1; ; attempt++) {
      if (spec.signal?.aborted) throw this.#aborted(operation, spec.signal)
      let failure: ProvingKitError
      const remaining = deadline === undefined ? undefined : deadline - this.clock.now()
      if (remaining !== undefined && remaining <= 0) throw this.#deadlineError(operation, attempt - 1)
      // The wait's deadline bounds the whole attempt, body included: undici's timeouts only
      // bound each silence, which a server trickling a byte every few seconds never makes.
      const limit = remaining === undefined ? undefined : new AbortController()
      const timer = limit && setTimeout(() => limit.abort(), remaining)
      const signal = limit ? (spec.signal ? AbortSignal.any([spec.signal, limit.signal]) : limit.signal) : spec.signal
      try {
        const response = await this.#send(spec, url, jsonText, headers, signal, remaining)
        if (isSuccess(response.status, spec.successStatuses)) {
          const loaded = schemaLoading ? await schemaLoading : { schema: spec.schema as z.ZodType<T> | undefined }
          if ('error' in loaded) {
            schemaFailure = idempotent ? loaded : { error: this.#acceptedUnread(operation, response.status, loaded.error) }
            break
          }
          const data = parseResponse(loaded.schema, response.json, {
            logger: this.logger,
            what: `${this.serviceName} response to ${operation}`,
            redactor: this.redactor,
          })
          return { status: response.status, headers: response.headers, data: data as T, attempts: attempt }
        }
        failure = this.#serviceError(response, operation, idempotent)
      } catch (error) {
        if (limit?.signal.aborted && !spec.signal?.aborted) {
          failure = this.#deadlineError(operation, attempt)
        } else {
          failure = this.#networkError(error, operation, spec.signal)
          if (failure instanceof AbortedError) throw failure
        }
      } finally {
        if (timer) clearTimeout(timer)
      }
      const { retryAfterMs } = classifyFailure(failure)
      const repeat = mayRepeat(failure, idempotent) && failure.code !== DEADLINE_CODE
      const elapsed = this.clock.now() - started
      const delay = retryAfterMs === undefined ? this.#backoff(attempt, policy) : Math.min(retryAfterMs, policy.maxRetryAfterMs)
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
        throw this.#aborted(operation, spec.signal)
      }
    }
    // Only a schema that failed to load leaves the loop.
    throw schemaFailure!.error
  }

  /**
   * Streams a file from `url` (absolute) into `write`, through the same dispatcher, header
   * checks and deadline as every request. At most `maxBytes` (an announced Content-Length over
   * it is refused before a byte is read; a body that runs over is cut and refused). Redirects
   * are followed only within the URL's own origin (at most 5): an artifact link that sends the
   * client elsewhere is refused, never followed. No retries: the caller decides.
   */
  async download(
    url: string,
    options: {
      maxBytes: number
      write: (body: AsyncIterable<Uint8Array>) => Promise<void>
      signal?: AbortSignal | undefined
      what?: string | undefined
    },
  ): Promise<{ bytes: number }> {
    let current: URL
    try {
      current = new URL(url)
    } catch {
      throw new InvalidResponseError(`The ${this.serviceName} gave a download link that is not a URL: ${showUrl(url)}.`)
    }
    const what = options.what ?? `the download from ${showUrl(current)}`
    const origin = current.origin
    if (current.protocol === 'http:' && !this.#allowInsecureHttp && !isLoopback(current.hostname)) {
      throw new InvalidResponseError(`Refused to download ${what} over plain http from another machine; allow it with --allow-insecure-http.`)
    }
    const deadline = currentDeadline()
    for (let hop = 0; ; hop++) {
      const remaining = deadline === undefined ? undefined : deadline - this.clock.now()
      let response: Dispatcher.ResponseData
      try {
        const { undiciRequest, dispatcher } = await this.#transport()
        response = await undiciRequest(current, {
          method: 'GET',
          headers: { 'user-agent': this.#headers['user-agent'] ?? `proving-kit/${VERSION}` },
          dispatcher,
          signal: options.signal,
          headersTimeout: minDefined(this.#timeouts.headersMs, remaining),
          bodyTimeout: minDefined(this.#timeouts.bodyMs, remaining),
        })
      } catch (error) {
        throw this.#networkError(error, `download ${what}`, options.signal)
      }
      const status = response.statusCode
      if (status >= 300 && status < 400 && response.headers.location) {
        discard(response.body)
        const location = Array.isArray(response.headers.location) ? response.headers.location[0]! : response.headers.location
        const next = new URL(location, current)
        if (next.origin !== origin) {
          throw new InvalidResponseError(`Refused to follow ${what} to another origin (${showUrl(next)}); downloads stay on ${showUrl(current)}.`)
        }
        if (hop >= 5) throw new InvalidResponseError(`Gave up on ${what} after 5 redirects.`)
        current = next
        continue
      }
      if (status < 200 || status >= 300) {
        discard(response.body)
        throw new ServiceError(`Downloading ${what} failed with ${status}.`, { status, retryable: [408, 429, 500, 502, 503, 504].includes(status) })
      }
      const announced = Number(response.headers['content-length'])
      if (Number.isFinite(announced) && announced > options.maxBytes) {
        discard(response.body)
        throw new InvalidResponseError(`${capitalize(what)} announces ${announced} bytes, more than the ${formatBytes(options.maxBytes)} allowed; refused unread.`)
      }
      let bytes = 0
      const limit = options.maxBytes
      const body = response.body
      async function* capped(): AsyncIterable<Uint8Array> {
        for await (const chunk of body) {
          bytes += (chunk as Buffer).length
          if (bytes > limit) {
            discard(body)
            throw new InvalidResponseError(`${capitalize(what)} is larger than the ${formatBytes(limit)} allowed; cut and refused.`)
          }
          yield chunk as Buffer
        }
      }
      await options.write(capped())
      return { bytes }
    }
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

  #deadlineError(operation: string, attempts: number): RequestTimeoutError {
    return new RequestTimeoutError(`The ${this.serviceName} at ${hostOf(this.baseUrl)} had not answered ${operation} when the wait's deadline came.`, {
      code: DEADLINE_CODE,
      details: attempts > 0 ? `${attempts} attempt${attempts === 1 ? '' : 's'} made` : undefined,
    })
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
        headersTimeout: minDefined(spec.headersTimeoutMs ?? this.#timeouts.headersMs, remainingMs),
        bodyTimeout: minDefined(this.#timeouts.bodyMs, remainingMs),
      })
      const served = typeof response.headers.date === 'string' ? Date.parse(response.headers.date) : Number.NaN
      if (Number.isFinite(served)) this.#serviceOffsetMs = served - Date.now()
      const ok = isSuccess(response.statusCode, spec.successStatuses)
      // An error body only feeds a code and an excerpt: a large one is cut, never an error of its
      // own (that would hide the status, and with it whether a submission is ambiguous).
      const text = ok
        ? await readCapped(response.body, spec.maxBodyBytes ?? MAX_JSON_BODY_BYTES, { what: `The ${this.serviceName}'s answer to ${spec.operation ?? spec.method}` })
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

  #serviceError(
    response: { status: number; text: string; json: unknown; headers: Record<string, string | string[] | undefined> },
    operation: string,
    idempotent: boolean,
  ): ServiceError {
    const retryAfterMs = parseRetryAfter(response.headers['retry-after'], this.clock.now())
    // Whether trying this request again can help: refused before processing (429, a 503 that
    // says when), or a transient status on a request that may be sent twice.
    const refused = response.status === 429 || (response.status === 503 && retryAfterMs !== undefined)
    const code = serviceCode(response.json)
    const bodyIsJson = response.json !== NOT_JSON
    const excerpt = bodyIsJson ? undefined : summarizeText(response.text)
    const label = code ? `${response.status} ${code}` : `${response.status}`
    const shortMessage = `The ${this.serviceName} answered ${label} to ${operation}.`
    const serverMessage = bodyIsJson ? messageOf(response.json) : undefined
    // A page that is not the service's JSON came from something in between (a proxy, a gateway,
    // a load balancer): say so on the error's face, not only in its details.
    const between =
      !bodyIsJson && excerpt && excerpt !== '(empty)'
        ? [
            this.#scrub(
              `The answer was not the service's JSON but ${excerpt}: a proxy or gateway answered${response.status === 404 || response.status === 405 ? '; check the service URL' : ''}.`,
            ),
          ]
        : undefined
    return new ServiceError(this.#scrub(shortMessage), {
      status: response.status,
      code,
      metaMessages: between,
      body: bodyIsJson ? this.#scrubJson(response.json) : undefined,
      details: serverMessage
        ? this.#scrub(serverMessage)
        : excerpt
          ? this.#scrub(`the body was not JSON: ${excerpt}`)
          : undefined,
      retryAfterMs,
      gatewayPage: !bodyIsJson && excerpt !== undefined && excerpt !== '(empty)',
      retryable: refused || (idempotent && [408, 500, 502, 503, 504].includes(response.status)),
    })
  }

  #networkError(error: unknown, operation: string, signal: AbortSignal | undefined): ProvingKitError {
    if (error instanceof ProvingKitError) return error
    if (signal?.aborted) return this.#aborted(operation, signal)
    const code = errorCode(error)
    const where = `${this.serviceName} at ${hostOf(this.baseUrl)}`
    const details = this.#scrub(error instanceof Error ? error.message : String(error))
    switch (code) {
      case 'ECONNREFUSED':
        return new NetworkError(`Could not connect to the ${where}: connection refused. Is it running, and is the URL right?`, {
          cause: error, details, code, beforeProcessing: true,
        })
      case 'ENOTFOUND':
      case 'EAI_AGAIN':
        return new NetworkError(`Could not resolve the host of the ${where}; check the URL.`, {
          cause: error, details, code, beforeProcessing: true,
        })
      case 'UND_ERR_CONNECT_TIMEOUT':
        return new RequestTimeoutError(`Timed out connecting to the ${where}.`, {
          cause: error, details, code, beforeProcessing: true,
        })
      case 'UND_ERR_HEADERS_TIMEOUT':
        return new RequestTimeoutError(`The ${where} did not answer ${operation} in time.`, {
          cause: error, details, code,
        })
      case 'UND_ERR_BODY_TIMEOUT':
        return new RequestTimeoutError(`The ${where} stopped sending its answer to ${operation}.`, {
          cause: error, details, code,
        })
      default:
        return new NetworkError(`The connection to the ${where} failed during ${operation}.`, {
          cause: error, details, code,
        })
    }
  }

  #aborted(operation: string, signal: AbortSignal | undefined): AbortedError {
    return new AbortedError(`Cancelled during ${operation}.`, { cause: signal?.reason })
  }

  #scrub(text: string): string {
    return redact(text, this.redactor)
  }

  /** A server that echoes the key in an error body must not put it in `error.body` either. */
  #scrubJson(value: unknown): unknown {
    if (this.redactor.size === 0) return value
    try {
      return JSON.parse(this.#scrub(JSON.stringify(value)))
    } catch {
      return undefined
    }
  }
}

const DEADLINE_CODE = 'DEADLINE_REACHED'

/** The user-facing input behind a header, for the message when its value cannot be sent. */
const HEADER_INPUTS: Record<string, string> = {
  'api-key': 'the API key (--api-key, PROVING_API_KEY, the api-key input)',
  'x-api-key': 'the API key (--api-key, PROVING_API_KEY, the api-key input)',
  authorization: 'the access token',
}

function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b)
}

/** The host of the service, the only part of its URL messages show. */
function hostOf(baseUrl: string): string {
  return new URL(redactUrl(baseUrl)).host
}

function isSuccess(status: number, accepted: readonly number[] | undefined): boolean {
  return accepted ? accepted.includes(status) : status >= 200 && status < 300
}


async function readCapped(
  body: Dispatcher.ResponseData['body'],
  limit: number,
  options: { truncate?: boolean; what?: string } = {},
): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size > limit) {
      body.destroy()
      if (!options.truncate) throw new InvalidResponseError(`${options.what ?? 'The answer'} is larger than ${formatBytes(limit)}; refused unread.`)
      chunks.push(buffer.subarray(0, buffer.length - (size - limit)))
      break
    }
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Stops reading a body: no error event left unhandled. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {})
  body.destroy()
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : bytes >= 1024 ? `${bytes / 1024} KiB` : `${bytes} bytes`
}

/** The service's machine-readable code, where its body carries one (`{ message: "X_Y" }`). */
function serviceCode(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined
  for (const key of ['error', 'message', 'code']) {
    const value = (body as Record<string, unknown>)[key]
    if (typeof value === 'string' && /^[A-Z][A-Z0-9_]{2,}$/.test(value)) return value
  }
  return undefined
}

function messageOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object') return undefined
  const record = body as Record<string, unknown>
  const parts = [record.error, record.message, record.details]
    .filter((value): value is string => typeof value === 'string' && value.length > 0)
  const unique = [...new Set(parts)]
  return unique.length ? unique.join(': ').slice(0, 500) : undefined
}

function summarizeText(text: string): string {
  const plain = text
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  if (!plain) return '(empty)'
  return JSON.stringify(plain.length > 120 ? `${plain.slice(0, 120)}…` : plain)
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error
  for (let depth = 0; current && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string') return code
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/** Seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value
  if (!raw) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(raw)) return Math.max(0, Math.round(Number(raw) * 1000))
  const date = Date.parse(raw)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

function annotateAttempts(error: ProvingKitError, attempts: number, elapsedMs: number): ProvingKitError {
  const note = `Gave up after ${attempts} attempts over ${(elapsedMs / 1000).toFixed(1)} s.`
  const Kind = error.constructor as new (message: string, options: object) => ProvingKitError
  try {
    return new Kind(error.shortMessage, {
      cause: error.cause ?? error,
      details: error.details,
      metaMessages: [...(error.metaMessages ?? []), note],
      status: error.status,
      code: error.code,
      retryable: error.retryable,
      body: (error as ServiceError).body,
      retryAfterMs: (error as ServiceError).retryAfterMs,
      gatewayPage: (error as ServiceError).gatewayPage,
      beforeProcessing: (error as NetworkError).beforeProcessing,
    })
  } catch {
    return error
  }
}
