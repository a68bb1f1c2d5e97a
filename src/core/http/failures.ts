/**
 * What a failed request becomes: the service's answer as a ServiceError (its code, its message, a
 * gateway's page said for what it is), a network failure as a NetworkError or RequestTimeoutError
 * (with whether it was refused before processing), a cancellation, the wait's deadline, and the
 * attempts made. Every text the service or the network gave is scrubbed of the client's secrets.
 */
import { AbortedError, NetworkError, ProvingKitError, RequestTimeoutError, ServiceError } from '../errors.ts'
import { NOT_JSON } from '../parse.ts'
import { redact, redactUrl, type SecretRedactor } from '../redact.ts'
import type { Clock } from '../runtime.ts'
import { describeRedirect, isRedirect } from './network-rule.ts'

/** Who was asked, as every message about a failed request names it (an HttpClient is one). */
export type FailureContext = {
  readonly serviceName: string
  readonly baseUrl: string
  readonly redactor: SecretRedactor
  readonly clock: Clock
}

export const DEADLINE_CODE = 'DEADLINE_REACHED'

/** Whether a request failed because the wait's deadline came (see ../deadline.ts), not for its own reasons. */
export function isDeadlineError(error: unknown): boolean {
  return error instanceof RequestTimeoutError && error.code === DEADLINE_CODE
}

export function deadlineError(context: FailureContext, operation: string, attempts: number): RequestTimeoutError {
  // No attempt made: nothing was sent, so nothing can have been processed (a submission refused
  // here is known not to exist, never "may have been created").
  if (attempts === 0) {
    return new RequestTimeoutError(
      `The deadline came before ${operation} could be sent to the ${context.serviceName} at ${hostOf(context.baseUrl)}; nothing was sent.`,
      {
        code: DEADLINE_CODE,
        beforeProcessing: true,
      },
    )
  }
  return new RequestTimeoutError(
    `The ${context.serviceName} at ${hostOf(context.baseUrl)} had not answered ${operation} when the wait's deadline came.`,
    {
      code: DEADLINE_CODE,
      details: `${attempts} attempt${attempts === 1 ? '' : 's'} made`,
    },
  )
}

export function abortedError(operation: string, signal: AbortSignal | undefined): AbortedError {
  return new AbortedError(`Cancelled during ${operation}.`, { cause: signal?.reason })
}

export function serviceError(
  context: FailureContext,
  response: { status: number; text: string; json: unknown; headers: Record<string, string | string[] | undefined> },
  operation: string,
  idempotent: boolean,
): ServiceError {
  const retryAfterMs = parseRetryAfter(response.headers['retry-after'], context.clock.now())
  // Whether trying this request again can help: refused before processing (429, a 503 that
  // says when), or a transient status on a request that may be sent twice.
  const refused = response.status === 429 || (response.status === 503 && retryAfterMs !== undefined)
  const code = serviceCode(response.json)
  const bodyIsJson = response.json !== NOT_JSON
  const excerpt = bodyIsJson ? undefined : summarizeText(response.text)
  const label = code ? `${response.status} ${code}` : `${response.status}`
  // A redirect is never followed (network-rule.ts): say where it led, by scheme and host only.
  const location = response.headers.location
  const redirect = isRedirect(response.status)
    ? describeRedirect(response.status, Array.isArray(location) ? location[0] : location, context.baseUrl)
    : undefined
  const shortMessage = redirect
    ? `The ${context.serviceName} at ${hostOf(context.baseUrl)} answered ${operation} with ${redirect} (refused, not followed: the answer must come from the URL given).`
    : `The ${context.serviceName} answered ${label} to ${operation}.`
  const serverMessage = bodyIsJson ? messageOf(response.json) : undefined
  // A page that is not the service's JSON came from something in between (a proxy, a gateway,
  // a load balancer): say so on the error's face, not only in its details.
  const between =
    !bodyIsJson && excerpt && excerpt !== '(empty)'
      ? [
          scrub(
            context,
            `The answer was not the service's JSON but ${excerpt}: a proxy or gateway answered${response.status === 404 || response.status === 405 ? '; check the service URL' : ''}.`,
          ),
        ]
      : undefined
  return new ServiceError(scrub(context, shortMessage), {
    status: response.status,
    code,
    metaMessages: between,
    body: bodyIsJson ? scrubJson(context, response.json) : undefined,
    details: serverMessage
      ? scrub(context, serverMessage)
      : excerpt
        ? scrub(context, `the body was not JSON: ${excerpt}`)
        : undefined,
    retryAfterMs,
    gatewayPage: !bodyIsJson && excerpt !== undefined && excerpt !== '(empty)',
    retryable: refused || (idempotent && [408, 500, 502, 503, 504].includes(response.status)),
  })
}

export function networkError(
  context: FailureContext,
  error: unknown,
  operation: string,
  signal: AbortSignal | undefined,
): ProvingKitError {
  if (error instanceof ProvingKitError) return error
  if (signal?.aborted) return abortedError(operation, signal)
  const code = errorCode(error)
  const where = `${context.serviceName} at ${hostOf(context.baseUrl)}`
  const details = scrub(context, error instanceof Error ? error.message : String(error))
  switch (code) {
    case 'ECONNREFUSED':
      return new NetworkError(
        `Could not connect to the ${where}: connection refused. Is it running, and is the URL right?`,
        {
          cause: error,
          details,
          code,
          beforeProcessing: true,
        },
      )
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new NetworkError(`Could not resolve the host of the ${where}; check the URL.`, {
        cause: error,
        details,
        code,
        beforeProcessing: true,
      })
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new RequestTimeoutError(`Timed out connecting to the ${where}.`, {
        cause: error,
        details,
        code,
        beforeProcessing: true,
      })
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new RequestTimeoutError(`The ${where} did not answer ${operation} in time.`, {
        cause: error,
        details,
        code,
      })
    case 'UND_ERR_BODY_TIMEOUT':
      return new RequestTimeoutError(`The ${where} stopped sending its answer to ${operation}.`, {
        cause: error,
        details,
        code,
      })
    default:
      return new NetworkError(`The connection to the ${where} failed during ${operation}.`, {
        cause: error,
        details,
        code,
      })
  }
}

function scrub(context: FailureContext, text: string): string {
  return redact(text, context.redactor)
}

/** A server that echoes the key in an error body must not put it in `error.body` either. */
function scrubJson(context: FailureContext, value: unknown): unknown {
  if (context.redactor.size === 0) return value
  try {
    return JSON.parse(scrub(context, JSON.stringify(value)))
  } catch {
    return undefined
  }
}

/** The host of the service, the only part of its URL messages show. */
function hostOf(baseUrl: string): string {
  return new URL(redactUrl(baseUrl)).host
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
  const parts = [record.error, record.message, record.details].filter(
    (value): value is string => typeof value === 'string' && value.length > 0,
  )
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

/** The failure that ends a request tried more than once, saying how many attempts it took. */
export function annotateAttempts(error: ProvingKitError, attempts: number, elapsedMs: number): ProvingKitError {
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
