/** How a client reaches its service: the URL, the timeouts and retry policy, and what every request is sent with. */
import type { Dispatcher } from 'undici'
import { InvalidInputError } from '../errors.ts'
import { inputNames } from '../checks.ts'
import { DEFAULT_CONNECT_MS } from '../dispatcher-state.ts'
import { type SecretRedactor, showGivenUrl, showUrl } from '../redact.ts'
import type { Clock, Logger } from '../runtime.ts'
import { refusesPlainHttp } from './network-rule.ts'

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
