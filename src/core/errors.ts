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
 * What the caller can do next, as data (`nextStepOf(error)` finds it): a program words it in its
 * own terms, so the library's messages name no command or option of any program.
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

/** What a {@link ProvingKitError} is made with, besides its short message. */
export type ProvingKitErrorOptions = {
  /** The error this one wraps; its message becomes `details` unless `details` is given. */
  cause?: unknown
  /** What the caller can do next (see NextStep). */
  nextStep?: NextStep | undefined
  /** The technical detail (usually the cause's message), shown after the message. */
  details?: string | undefined
  /** Extra lines of context shown below the short message (what to check, the problems found). */
  metaMessages?: string[] | undefined
  /** The HTTP status of the answer that caused the error. */
  status?: number | undefined
  /** The service's error code (`QUERY_NOT_RETRIABLE`, `BUCKET_NOT_FOUND`, ...). */
  code?: string | undefined
  /**
   * Whether trying the same operation again can help.
   * @default false
   */
  retryable?: boolean | undefined
}

/**
 * The base of every error the library throws, after viem's `BaseError`: `shortMessage` is one line
 * a person can act on; `metaMessages` add context; `details` is the cause's message; `status`,
 * `code`, `retryable` and `nextStep` are what a program decides on. Messages never carry a secret
 * or a terminal escape sequence.
 *
 * @example
 * ```ts
 * import { isProvingKitError, ProvingClient, ServiceError } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * try {
 *   await client.retryQuery('a1b2c3')
 * } catch (error) {
 *   if (error instanceof ServiceError && error.code === 'MAX_RETRIES_REACHED') console.log('submit a new query')
 *   else if (isProvingKitError(error)) console.log(error.shortMessage, error.metaMessages)
 *   else throw error
 * }
 * ```
 */
export class ProvingKitError extends Error {
  override name = 'ProvingKitError'
  /** One line a person can act on (the `message` adds `metaMessages` and `details` below it). */
  readonly shortMessage: string
  /** The technical detail, usually the cause's message, as one line. */
  readonly details: string | undefined
  /** Extra lines of context: what to check, the problems found. */
  readonly metaMessages: string[] | undefined
  /** The HTTP status of the answer that caused the error, when there was one. */
  readonly status: number | undefined
  /** The service's error code, when it gave one. */
  readonly code: string | undefined
  /** Whether trying the same operation again can help. */
  readonly retryable: boolean
  /** What the caller can do next, when the library knows (see {@link nextStepOf}). */
  readonly nextStep: NextStep | undefined

  constructor(shortMessage: string, options: ProvingKitErrorOptions = {}) {
    // Messages quote what services and other programs said: no escape sequence or control
    // character survives into one, and the details (a service's message, a cause's) are one line.
    shortMessage = forTerminal(shortMessage)
    const metaMessages = options.metaMessages?.map(forTerminal)
    const given =
      options.details ??
      (options.cause instanceof ProvingKitError
        ? (options.cause.details ?? options.cause.shortMessage)
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

/**
 * The first next step along an error's cause chain: what the caller can do about it, as data.
 *
 * @param error Anything caught.
 * @returns The step (look for a query before submitting again, read a task, create an API key, ...), or undefined.
 * @example
 * ```ts
 * import { nextStepOf, ProvingClient } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * try {
 *   await client.submitPie({ pieZip: 'build/pie.zip' })
 * } catch (error) {
 *   if (nextStepOf(error)?.kind === 'look-for-query') console.log('the query may exist: list your queries first')
 *   throw error
 * }
 * ```
 */
export function nextStepOf(error: unknown): NextStep | undefined {
  const link =
    error instanceof ProvingKitError
      ? (error.walk((each) => each instanceof ProvingKitError && each.nextStep !== undefined) as ProvingKitError | null)
      : null
  return link?.nextStep
}

/** How a host words each kind of next step (the ids in a step are the service's: shown as its text). */
export type NextStepWords = { readonly [K in NextStep['kind']]: (step: Extract<NextStep, { kind: K }>) => string }

/** The host's words for the first next step along an error's cause chain, if any. */
export function wordNextStep(error: unknown, words: NextStepWords): string | undefined {
  const step = nextStepOf(error)
  return step ? (words[step.kind] as (step: NextStep) => string)(step) : undefined
}

/** An option, a body or a file the library cannot use. Nothing was sent. */
export class InvalidInputError extends ProvingKitError {
  override name = 'InvalidInputError'
  /** The name of the option or body field at fault, as the caller wrote it (`layout`, `input.params[1]`). */
  readonly input: string | undefined
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { input?: string } = {}) {
    super(shortMessage, options)
    this.input = options.input
  }
}

/** The request never got an HTTP answer: refused, reset, DNS failure, TLS failure. `retryable`. */
export class NetworkError extends ProvingKitError {
  override name = 'NetworkError'
  /** True when the failure happened before any byte of the request could have been processed. */
  readonly beforeProcessing: boolean
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { beforeProcessing?: boolean } = {}) {
    super(shortMessage, { retryable: true, ...options })
    this.beforeProcessing = options.beforeProcessing ?? false
  }
}

/** A connect, headers or body timeout of one request. */
export class RequestTimeoutError extends NetworkError {
  override name = 'RequestTimeoutError'
}

/**
 * The service answered with a status the operation does not succeed with; `status`, `code` and `body` say what it said.
 */
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
    options: ProvingKitErrorOptions & {
      body?: unknown
      retryAfterMs?: number | undefined
      gatewayPage?: boolean | undefined
    } = {},
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

/** What an ended wait was waiting for, which goes on running on the service: enough to resume the wait. */
export type WaitedFor = {
  kind: 'query' | 'task' | 'batch query' | 'bucket'
  id: string
  /** A query's: the one result kind the waiting gate expected, so a resumed wait expects it too. */
  expectedResult?: string | undefined
}

/**
 * A wait (a query, a task, a batch query, a fact registration) ran past its timeout; what it waited
 * for goes on on the service.
 */
export class WaitTimeoutError extends ProvingKitError {
  override name = 'WaitTimeoutError'
  /** The last state the wait read (a record, a status), when it read one. */
  readonly lastSeen: unknown
  /** What the wait was waiting for (a query, a task, ...): wait for it again to resume. */
  readonly waitedFor: WaitedFor | undefined
  constructor(
    shortMessage: string,
    options: ProvingKitErrorOptions & { lastSeen?: unknown; waitedFor?: WaitedFor | undefined } = {},
  ) {
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

/** The remote job ended in failure (a task `*Failed`); `code` is its status, `record` its record. */
export class RemoteFailureError extends ProvingKitError {
  override name = 'RemoteFailureError'
  /** The failed job's record, as the service sent it. */
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
  /** Every rule the PIE breaks, one line each (capped). */
  readonly problems: readonly string[]
  constructor(shortMessage: string, options: ProvingKitErrorOptions & { input?: string; problems: readonly string[] }) {
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

/**
 * Whether a value is an error of this library (a {@link ProvingKitError} or one of its subclasses).
 *
 * @param error Anything caught.
 * @returns true for a ProvingKitError, with the type narrowed.
 * @example
 * ```ts
 * import { isProvingKitError, validatePie } from 'proving-kit'
 *
 * try {
 *   await validatePie('build/pie.zip')
 * } catch (error) {
 *   if (isProvingKitError(error)) console.error(error.shortMessage)
 *   else throw error
 * }
 * ```
 */
export function isProvingKitError(error: unknown): error is ProvingKitError {
  return error instanceof ProvingKitError
}

/**
 * Whether an error is a 404 that says the path itself is unknown (a framework's "Cannot GET", a
 * gateway's page), as opposed to the service's own answer about a record it does not have
 * (`PROVING_QUERY_NOT_FOUND`, ...): a client that knows two paths for one read tries the other.
 *
 * @param error Anything caught.
 * @returns true for a {@link ServiceError} with status 404 and no code of the service's.
 * @example
 * ```ts
 * import { isNoRoute, ProvingClient } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const alive = await client.isAlive().catch((error: unknown) => {
 *   if (isNoRoute(error)) return true // an older service without GET /is-alive
 *   throw error
 * })
 * ```
 */
export function isNoRoute(error: unknown): boolean {
  if (!(error instanceof ServiceError) || error.status !== 404) return false
  return error.code === undefined || error.code === 'NOT_FOUND'
}
