import { AbortedError, NetworkError, ProvingKitError, ServiceError } from './errors.ts'

/**
 * The one judgement of a failed request, used by the HTTP layer (whether to send it again), by
 * submissions (whether the service may have processed it) and by waits (whether to keep
 * polling):
 * - `refused`: the service refused it before processing (connection refused, DNS failure,
 *   connect timeout, 429, a 503 with Retry-After): sending it again cannot duplicate anything;
 * - `retry-after`: refused likewise and says when to come back (`retryAfterMs`);
 * - `retry`: may work next time, but the service may have processed it (a reset, a 5xx, a
 *   408, a timeout, a cut or non-JSON answer): only an idempotent request is sent again;
 * - `final`: will not change (a typed 4xx, a body of the wrong shape, bad input, cancellation).
 * `gatewayPage` marks an answer that was a page from something in between (a proxy's HTML 502,
 * a load balancer's text/plain 404) rather than the service's JSON: a wait outlives those too.
 */
export type FailureKind = 'refused' | 'retry-after' | 'retry' | 'final'

export type FailureClass = { kind: FailureKind; retryAfterMs?: number | undefined; gatewayPage: boolean }

const TRANSIENT_STATUSES = new Set([408, 500, 502, 503, 504])

export function classifyFailure(error: unknown): FailureClass {
  if (error instanceof AbortedError) return { kind: 'final', gatewayPage: false }
  if (error instanceof NetworkError) return { kind: error.beforeProcessing ? 'refused' : 'retry', gatewayPage: false }
  if (error instanceof ServiceError) {
    const status = error.status ?? 0
    const gatewayPage = error.gatewayPage
    if (status === 429 || (status === 503 && error.retryAfterMs !== undefined)) {
      return error.retryAfterMs === undefined
        ? { kind: 'refused', gatewayPage }
        : { kind: 'retry-after', retryAfterMs: error.retryAfterMs, gatewayPage }
    }
    if (TRANSIENT_STATUSES.has(status)) return { kind: 'retry', gatewayPage }
    return { kind: 'final', gatewayPage }
  }
  // The rest say themselves whether they may pass: a truncated or non-JSON 2xx (a gateway's page,
  // an InvalidResponseError marked retryable) may be fine next time, a body of the wrong shape
  // will not be; so for failures of other transports (an RPC node).
  if (error instanceof ProvingKitError && error.retryable) return { kind: 'retry', gatewayPage: false }
  return { kind: 'final', gatewayPage: false }
}

/** Whether a request that failed so may be sent again (`idempotent`: sending it twice is harmless). */
export function mayRepeat(error: unknown, idempotent: boolean): boolean {
  const { kind } = classifyFailure(error)
  return kind === 'refused' || kind === 'retry-after' || (kind === 'retry' && idempotent)
}

/**
 * Whether a wait should keep polling after this failure of a read: anything that may pass
 * (a restart, a gateway hiccup, a page from a proxy even with a 404) does; a typed answer of
 * the service (its JSON 404, a 401) or a body of the wrong shape does not. A 4xx page counts as
 * a hiccup only when `pagesAreTransient` (the service is known to be there: it accepted the
 * query, or answered this wait before); otherwise it is a wrong URL.
 */
export function keepsWaiting(error: unknown, options: { pagesAreTransient?: boolean } = {}): boolean {
  // Anything but a ProvingKitError (a bug) is `final` without a page: the wait ends.
  const { kind, gatewayPage } = classifyFailure(error)
  return kind !== 'final' || (gatewayPage && options.pagesAreTransient !== false)
}
