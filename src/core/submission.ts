import { AbortedError, AmbiguousSubmissionError, NetworkError, ServiceError } from './errors.ts'

/**
 * A submission (a POST that creates work the user pays for) is never repeated blindly. When it
 * fails, the caller needs to know whether the service may have processed it anyway; these two
 * helpers are that judgement, shared by every client that submits.
 */

/** A failure after which the service may or may not have processed the POST. */
export function mayHaveBeenProcessed(error: unknown): boolean {
  if (error instanceof NetworkError) return !error.beforeProcessing
  if (error instanceof ServiceError) {
    const status = error.status ?? 0
    // A 503 the HTTP layer marked retryable came with Retry-After: refused before processing.
    return status >= 500 && !(status === 503 && error.retryable)
  }
  return false
}

export type SubmissionAdvice = {
  /** The short message of an ambiguous failure: what may have happened and that nothing was resent. */
  ambiguous: string
  /** How to check whether the work exists, after an ambiguous failure. */
  howToCheck: string
  /** The same, after a cancellation that may have come after the request went out. */
  ifCancelled: string
}

/**
 * The error to throw for a failed submission: a cancellation or an ambiguous failure gets the
 * advice on how to check before submitting again; anything else is returned as it was.
 */
export function explainSubmissionFailure(error: unknown, advice: SubmissionAdvice): unknown {
  if (error instanceof AbortedError) {
    return new AbortedError(error.shortMessage, { cause: error, metaMessages: [advice.ifCancelled] })
  }
  if (mayHaveBeenProcessed(error)) {
    return new AmbiguousSubmissionError(advice.ambiguous, { cause: error, metaMessages: [advice.howToCheck] })
  }
  return error
}
