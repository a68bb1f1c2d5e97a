import { classifyFailure } from './classify.ts'
import { AbortedError, SubmissionOutcomeUnknownError, NetworkError, type NextStep, ServiceError } from './errors.ts'

/**
 * A submission (a POST that creates work the user pays for) is never repeated blindly. When it
 * fails, the caller needs to know whether the service may have processed it anyway; these two
 * helpers are that judgement, shared by every client that submits.
 */

/**
 * A failure after which the service may or may not have processed the POST: a `retry` of the
 * one classification (./classify.ts) that reached the service (a reset after the body went
 * out, a timeout, a 5xx). Refused before processing (a 429, a 503 with Retry-After, connection
 * refused) is not: nothing was done.
 */
export function mayHaveBeenProcessed(error: unknown): boolean {
  if (classifyFailure(error).kind !== 'retry') return false
  if (error instanceof NetworkError) return true
  if (error instanceof ServiceError) return (error.status ?? 0) >= 500
  return false
}

export type SubmissionAdvice = {
  /** The short message of an ambiguous failure: what may have happened and that nothing was resent. */
  ambiguous: string
  /** How to check whether the work exists, after an ambiguous failure. */
  howToCheck: string
  /** The same, after a cancellation that may have come after the request went out. */
  ifCancelled: string
  /** That check as data, for the adapters to word (the CLI names its command). */
  nextStep?: NextStep | undefined
}

/**
 * The error to throw for a failed submission: a cancellation or an ambiguous failure gets the
 * advice on how to check before submitting again; anything else is returned as it was.
 */
export function explainSubmissionFailure(error: unknown, advice: SubmissionAdvice): unknown {
  if (error instanceof AbortedError) {
    return new AbortedError(error.shortMessage, {
      cause: error,
      metaMessages: [advice.ifCancelled],
      nextStep: advice.nextStep,
    })
  }
  if (mayHaveBeenProcessed(error)) {
    return new SubmissionOutcomeUnknownError(advice.ambiguous, {
      cause: error,
      metaMessages: [advice.howToCheck],
      nextStep: advice.nextStep,
    })
  }
  // Already known ambiguous (an accepted submission whose answer could not be read): add how to check.
  if (error instanceof SubmissionOutcomeUnknownError && !error.metaMessages?.length) {
    return new SubmissionOutcomeUnknownError(error.shortMessage, {
      cause: error,
      metaMessages: [advice.howToCheck],
      nextStep: advice.nextStep,
    })
  }
  return error
}
