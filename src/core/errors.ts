/**
 * One error hierarchy for the whole toolkit, after viem's `BaseError`: a `shortMessage` a person
 * can act on, optional `metaMessages` (extra context lines), `details` (usually the cause's
 * message), plus what a caller needs to decide what to do next: the HTTP `status`, the service's
 * `code` (`QUERY_NOT_RETRIABLE`, `BUCKET_NOT_FOUND`, ...) and whether trying again can help.
 *
 * Messages never carry secrets: everything that builds one from remote or user text passes it
 * through `redact` first (see ./redact.ts). Nor terminal escapes: the constructor renders what
 * it is given through ./service-text.ts.
 */
import { forTerminal, serviceLine } from './service-text.ts'

/**
 * What the caller can do next, as data: each adapter words it in its own terms (the CLI a
 * command, the action an input), so the library's messages name neither a command nor a flag.
 */
export type NextStep =
  /** A submission may have created a query: look among the key's queries before submitting again (and submit anew only if none came of it). */
  | { kind: 'look-for-query'; thenSubmitAnew?: boolean | undefined }
  /** Queries that may be a PIE's: follow them; remove the journal's entry (when one holds it) only once none is. */
  | { kind: 'follow-candidates'; ids: readonly string[]; key?: string | undefined }
  /** The same for a data-processor task. */
  | { kind: 'look-for-task' }
  /** Read this query's record (why it failed, whether it can be retried). */
  | { kind: 'read-query'; id: string }
  /** Read this task's record. */
  | { kind: 'read-task'; id: string }
  /** The wallet's project has no API key: create one. */
  | { kind: 'create-api-key' }
  /** See the sign-in challenge the service sent, as it was refused. */
  | { kind: 'show-challenge' }
  /** Remove an entry (by key) or every entry of the local submission journal. */
  | { kind: 'clear-journal'; key?: string | undefined }

export type ProvingKitErrorOptions = {
  cause?: unknown
  /** What the caller can do next (see NextStep). */
  nextStep?: NextStep | undefined
  details?: string | undefined
  metaMessages?: string[] | undefined
  status?: number | undefined
  code?: string | undefined
  retryable?: boolean | undefined
}

export class ProvingKitError extends Error {
  override name = 'ProvingKitError'
  readonly shortMessage: string
  readonly details: string | undefined
  readonly metaMessages: string[] | undefined
  readonly status: number | undefined
  readonly code: string | undefined
  readonly retryable: boolean
  readonly nextStep: NextStep | undefined

  constructor(shortMessage: string, options: ProvingKitErrorOptions = {}) {
    // Messages quote what services and other programs said: no escape sequence or control
    // character survives into one, and the details (a service's message, a cause's) are one line.
    shortMessage = forTerminal(shortMessage)
    const metaMessages = options.metaMessages?.map(forTerminal)
    const given =
      options.details ??
      (options.cause instanceof ProvingKitError
        ? options.cause.details ?? options.cause.shortMessage
        : options.cause instanceof Error
          ? options.cause.message
          : undefined)
    const details = given === undefined ? undefined : serviceLine(given)
    const lines = [shortMessage]
    if (metaMessages?.length) lines.push('', ...metaMessages)
    if (details && details !== shortMessage) lines.push('', `Details: ${details}`)
    super(lines.join('\n'), options.cause === undefined ? undefined : { cause: options.cause })
    this.shortMessage = shortMessage
    this.details = details
    this.metaMessages = metaMessages
    this.status = options.status
    this.code = options.code
    this.retryable = options.retryable ?? false
    this.nextStep = options.nextStep
  }

  /** Follows the cause chain; returns the deepest error, or the first one `predicate` accepts. */
  walk(predicate?: (error: unknown) => boolean): unknown {
    let current: unknown = this
    while (current) {
      if (predicate?.(current)) return current
      const next = (current as { cause?: unknown }).cause
      if (!next || next === current) return predicate ? null : current
      current = next
    }
    return predicate ? null : current
  }
}

/** The first next step along an error's cause chain, if any. */
export function nextStepOf(error: unknown): NextStep | undefined {
  const link = error instanceof ProvingKitError ? (error.walk((each) => each instanceof ProvingKitError && each.nextStep !== undefined) as ProvingKitError | null) : null
  return link?.nextStep
}

/** How a host words each kind of next step (the ids in a step are the service's: shown as its text). */
export type NextStepWords = { readonly [K in NextStep['kind']]: (step: Extract<NextStep, { kind: K }>) => string }

/** The host's words for the first next step along an error's cause chain, if any. */
export function wordNextStep(error: unknown, words: NextStepWords): string | undefined {
  const step = nextStepOf(error)
  return step ? (words[step.kind] as (step: NextStep) => string)(step) : undefined
}

/** The user gave something the toolkit cannot use (a flag, an input, a file). Nothing was sent. */
export class InvalidInputError extends ProvingKitError {
  override name = 'InvalidInputError'
  /** The input's name as the user wrote it: a flag, an action input or a body field. */
  readonly input: string | undefined
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { input?: string } = {}) {
    super(shortMessage, options)
    this.input = options.input
  }
}

/** The request never got an HTTP answer: refused, reset, DNS failure, TLS failure. */
export class NetworkError extends ProvingKitError {
  override name = 'NetworkError'
  /** True when the failure happened before any byte of the request could have been processed. */
  readonly beforeProcessing: boolean
  constructor(
    shortMessage: string,
    options: ProvingKitErrorOptions & { beforeProcessing?: boolean } = {},
  ) {
    super(shortMessage, { retryable: true, ...options })
    this.beforeProcessing = options.beforeProcessing ?? false
  }
}

/** A connect, headers or body timeout of one request. */
export class RequestTimeoutError extends NetworkError {
  override name = 'RequestTimeoutError'
}

/** The service answered with a status the endpoint does not succeed with. */
export class ServiceError extends ProvingKitError {
  override name = 'ServiceError'
  /** The parsed error body, when it was JSON. */
  readonly body: unknown
  /** The answer's `Retry-After`, in ms from when it came; undefined when absent or unreadable. */
  readonly retryAfterMs: number | undefined
  /** The body was a page (HTML, text), not the service's JSON: something in between answered. */
  readonly gatewayPage: boolean
  constructor(
    shortMessage: string,
    options: ProvingKitErrorOptions & { body?: unknown; retryAfterMs?: number | undefined; gatewayPage?: boolean | undefined } = {},
  ) {
    super(shortMessage, options)
    this.body = options.body
    this.retryAfterMs = options.retryAfterMs
    this.gatewayPage = options.gatewayPage ?? false
  }
}

/** The service answered 2xx with a body that does not match the specification. */
export class InvalidResponseError extends ProvingKitError {
  override name = 'InvalidResponseError'
}

/**
 * A submission that may have reached the service: it failed in a way that leaves open whether
 * the service processed it (the connection dropped after the body was sent, a 502 from a
 * gateway, ...). It is never sent again blindly; the message says how to check.
 */
export class SubmissionOutcomeUnknownError extends ProvingKitError {
  override name = 'SubmissionOutcomeUnknownError'
}

/**
 * An earlier upload of this PIE may have reached the service and the journal cannot tell whether
 * a query came of it: nothing was sent this time (sending would risk paying twice).
 */
export class EarlierUploadOutcomeUnknownError extends SubmissionOutcomeUnknownError {
  override name = 'EarlierUploadOutcomeUnknownError'
}

/** @deprecated Renamed {@link SubmissionOutcomeUnknownError}; this alias goes in the next minor release. */
export const AmbiguousSubmissionError = SubmissionOutcomeUnknownError
/** @deprecated Renamed {@link SubmissionOutcomeUnknownError}; this alias goes in the next minor release. */
export type AmbiguousSubmissionError = SubmissionOutcomeUnknownError

/**
 * What an ended wait was waiting for, which goes on running on the service: each adapter says how
 * to resume it in its own words (the CLI a command, the action its `wait` sub-action), so the
 * library's messages carry neither.
 */
export type WaitedFor = {
  kind: 'query' | 'task' | 'batch query' | 'bucket'
  id: string
  /** A query's: the one result kind the waiting gate expected, so a resumed wait expects it too. */
  expectedResult?: string | undefined
}

/** A wait (query, task, batch query, fact registration) ran past its deadline. */
export class WaitTimeoutError extends ProvingKitError {
  override name = 'WaitTimeoutError'
  readonly lastSeen: unknown
  readonly waitedFor: WaitedFor | undefined
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { lastSeen?: unknown; waitedFor?: WaitedFor | undefined } = {}) {
    super(shortMessage, options)
    this.lastSeen = options.lastSeen
    this.waitedFor = options.waitedFor
  }
}

/** The caller's abort signal fired. */
export class AbortedError extends ProvingKitError {
  override name = 'AbortedError'
  /** Set when a wait was cancelled: what it was waiting for. */
  readonly waitedFor: WaitedFor | undefined
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { waitedFor?: WaitedFor | undefined } = {}) {
    super(shortMessage, options)
    this.waitedFor = options.waitedFor
  }
}

/** The remote job ended in failure (query FAILED, task `*Failed`, batch query FAILED). */
export class RemoteFailureError extends ProvingKitError {
  override name = 'RemoteFailureError'
  readonly record: unknown
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { record?: unknown } = {}) {
    super(shortMessage, options)
    this.record = options.record
  }
}

/** A status the toolkit does not know and cannot safely treat as "still running". */
export class UnknownStatusError extends ProvingKitError {
  override name = 'UnknownStatusError'
}

/** A PIE that breaks a validity rule; `problems` lists every rule broken (capped). */
export class InvalidPieError extends InvalidInputError {
  override name = 'InvalidPieError'
  readonly problems: readonly string[]
  constructor(
    shortMessage: string,
    options: ProvingKitErrorOptions & { input?: string; problems: readonly string[] },
  ) {
    super(shortMessage, { ...options, metaMessages: options.metaMessages ?? [...options.problems] })
    this.problems = options.problems
  }
}

/** What the service says was proved differs from what the toolkit computes from the PIE. */
export class FactMismatchError extends ProvingKitError {
  override name = 'FactMismatchError'
}

/** The release gate refused the result (mocked fact, wrong program hash, not on chain, ...). */
export class GateError extends ProvingKitError {
  override name = 'GateError'
}

/** A check on chain could not be carried out (RPC down, wrong chain, no code at the address). */
export class ChainError extends ProvingKitError {
  override name = 'ChainError'
}

export function isProvingKitError(error: unknown): error is ProvingKitError {
  return error instanceof ProvingKitError
}

/**
 * A 404 that says the path itself is unknown (a framework's "Cannot GET", a gateway's page, the
 * emulator's NOT_FOUND), as opposed to the service's own answer about a record it does not have
 * (PROVING_QUERY_NOT_FOUND, ...): a client that knows two paths for one read tries the other.
 */
export function isNoRoute(error: unknown): boolean {
  if (!(error instanceof ServiceError) || error.status !== 404) return false
  return error.code === undefined || error.code === 'NOT_FOUND'
}
