/** How a client reaches its service: the URL, the timeouts and retry policy, and what every request is sent with. */
import type { Dispatcher } from 'undici'
import { InvalidInputError } from '../errors.ts'
import { inputNames } from '../checks.ts'
import { DEFAULT_CONNECT_MS } from '../dispatcher-state.ts'
import { type SecretRedactor, showGivenUrl, showUrl } from '../redact.ts'
import type { Clock, Logger } from '../runtime.ts'
import { refusesPlainHttp } from './network-rule.ts'

/** The timeouts of one request, in milliseconds. */
export type HttpTimeouts = {
  /** Establishing the TCP/TLS connection. */
  connectMs: number
  /** From sending the request to receiving the response headers. */
  headersMs: number
  /** Longest silence while receiving the body. */
  bodyMs: number
}

/** When and how long a request is sent again (only requests that cannot duplicate work are). */
export type RetryPolicy = {
  /** Attempts in all, the first included. */
  maxAttempts: number
  /** Time allowed for the attempts and the waits between them. */
  budgetMs: number
  /** The first delay between attempts; each later one grows exponentially, with full jitter. */
  baseDelayMs: number
  /** The longest delay between two attempts. */
  maxDelayMs: number
  /** A `Retry-After` longer than this is cut to it. */
  maxRetryAfterMs: number
}

/**
 * The timeouts of a request when a client is given none: 10 s to connect, 30 s for the headers, 30 s
 * of silence in the body.
 */
export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: DEFAULT_CONNECT_MS, headersMs: 30_000, bodyMs: 30_000 }

/**
 * The retry policy when a client is given none: 6 attempts within 60 s, delays from 250 ms to 10 s, a
 * `Retry-After` cut to 30 s.
 */
export const DEFAULT_RETRY: RetryPolicy = {
  maxAttempts: 6,
  budgetMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 30_000,
}

/** How a client reaches its service; every client takes these. */
export type ConnectionOptions = {
  /** Base URL of the service, e.g. `https://api.example.com`; paths are appended to it. */
  baseUrl: string
  /**
   * The undici dispatcher to send through (a proxy agent, a mock). Default: an agent of the library's
   * own, made on first use.
   */
  dispatcher?: Dispatcher | undefined
  /**
   * The timeouts of each request.
   * @default DEFAULT_TIMEOUTS
   */
  timeouts?: Partial<HttpTimeouts> | undefined
  /**
   * When requests are sent again.
   * @default DEFAULT_RETRY
   */
  retry?: Partial<RetryPolicy> | undefined
  /**
   * Where the client's warnings and debug lines go.
   * @default silentLogger
   */
  logger?: Logger | undefined
  /**
   * The time a client reads and sleeps by (a test's clock makes hours of waiting instant).
   * @default systemClock
   */
  clock?: Clock | undefined
  /**
   * Allows plain http to a host that is not this machine. Off by default: the API key (in the
   * URL on the L2 endpoints), tokens and sign-in signatures would cross the network in clear.
   */
  allowInsecureHttp?: boolean | undefined
}

/** What an {@link HttpClient} is made with: the connection, and what every request carries. */
export type HttpClientConfig = ConnectionOptions & {
  /** What the service is called in messages: "proving service", "task service", ... */
  serviceName: string
  /** The secrets kept out of every message and log line. Default: a new, empty one. */
  redactor?: SecretRedactor | undefined
  /** Extra headers on every request (e.g. `api-key`). */
  headers?: Record<string, string> | undefined
  /** Random source for jitter; tests pin it. */
  random?: (() => number) | undefined
}

/**
 * The connection settings of a client's options, without its other fields (to make another client
 * that reaches the same way).
 *
 * @param options A client's options.
 * @returns `baseUrl`, `dispatcher`, `timeouts`, `retry`, `logger`, `clock` and `allowInsecureHttp`, nothing else.
 * @example
 * ```ts
 * import { connectionOf, TaskClient, type ClientOptions } from 'proving-kit'
 *
 * const options: ClientOptions = {
 *   baseUrl: 'https://proving.example',
 *   apiKey: 'secret',
 *   timeouts: { headersMs: 60_000 },
 * }
 * const tasks = new TaskClient({ ...connectionOf(options), baseUrl: 'https://tasks.example' })
 * ```
 */
export function connectionOf(options: ConnectionOptions): ConnectionOptions {
  const { baseUrl, dispatcher, timeouts, retry, logger, clock, allowInsecureHttp } = options
  return { baseUrl, dispatcher, timeouts, retry, logger, clock, allowInsecureHttp }
}

/** The base URL of a service, checked: absolute http(s), and plain http only to this machine unless allowed. No trailing slash. */
export function baseUrlOf(config: HttpClientConfig): string {
  let base: URL
  try {
    base = new URL(config.baseUrl)
  } catch {
    throw new InvalidInputError(
      `The ${config.serviceName} URL is not a valid URL: ${showGivenUrl(String(config.baseUrl))}; give an absolute http(s) URL.`,
      { input: 'baseUrl' },
    )
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') {
    throw new InvalidInputError(
      `The ${config.serviceName} URL must use http or https, got "${base.protocol}"; give an absolute http(s) URL.`,
      { input: 'baseUrl' },
    )
  }
  if (refusesPlainHttp(base, config.allowInsecureHttp)) {
    throw new InvalidInputError(
      `The ${config.serviceName} URL ${showUrl(base)} is plain http to another machine: use https, or allow it (${inputNames('allow-insecure-http', 'allowInsecureHttp')}).`,
      { input: 'baseUrl', metaMessages: ['The API key, tokens and signatures would cross the network in clear.'] },
    )
  }
  return base.toString().replace(/\/+$/, '')
}
