import {
  AbortedError,
  SubmissionOutcomeUnknownError,
  ChainError,
  FactMismatchError,
  GateError,
  InvalidInputError,
  InvalidResponseError,
  NetworkError,
  ProvingKitError,
  RemoteFailureError,
  ServiceError,
  UnknownStatusError,
  WaitTimeoutError,
} from '../core/errors.ts'

/** The CLI's documented exit codes; README.md lists the same table. */
export const EXIT = {
  ok: 0,
  /** The remote job failed: query FAILED, task *Failed, facts differ, fact not registered. */
  remoteFailure: 1,
  /** Bad input or usage: nothing was sent. */
  usage: 2,
  /** The service or the network failed (including a malformed answer). */
  service: 3,
  /** A wait ran past its timeout. */
  timeout: 4,
  /** Interrupted by SIGINT/SIGTERM. */
  interrupted: 130,
} as const

export type ExitCode = (typeof EXIT)[keyof typeof EXIT]

/** The one place where kinds of failure become exit codes. */
export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof AbortedError) return EXIT.interrupted
  if (error instanceof WaitTimeoutError) return EXIT.timeout
  if (error instanceof InvalidInputError) return EXIT.usage
  if (error instanceof RemoteFailureError || error instanceof FactMismatchError || error instanceof GateError) {
    return EXIT.remoteFailure
  }
  if (error instanceof ServiceError) {
    // A typed 4xx answer means the request itself was wrong (unknown id, not retriable, ...).
    const status = error.status ?? 0
    return status >= 400 && status < 500 && status !== 408 && status !== 429 ? EXIT.usage : EXIT.service
  }
  if (
    error instanceof NetworkError ||
    error instanceof InvalidResponseError ||
    error instanceof SubmissionOutcomeUnknownError ||
    error instanceof UnknownStatusError ||
    error instanceof ChainError
  ) {
    return EXIT.service
  }
  if (error instanceof ProvingKitError) return EXIT.service
  return EXIT.service
}

/** From least to most severe: what a batch's exit code is when its items end differently. */
const SEVERITY: number[] = [EXIT.ok, EXIT.remoteFailure, EXIT.timeout, EXIT.service, EXIT.usage, EXIT.interrupted]

/** The most severe of several exit codes (0 for none). */
export function worstExitCode(codes: readonly number[]): number {
  return codes.reduce(
    (worst, code) => (SEVERITY.indexOf(code) > SEVERITY.indexOf(worst) ? code : worst),
    EXIT.ok as number,
  )
}
