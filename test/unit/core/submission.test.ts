import { describe, expect, it } from 'vitest'
import {
  AbortedError,
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  NetworkError,
  ServiceError,
} from '../../../src/core/errors.ts'
import { explainSubmissionFailure, mayHaveBeenProcessed } from '../../../src/core/submission.ts'

const ADVICE = {
  ambiguous: 'The submission may or may not have reached the service; it was not sent again.',
  howToCheck: 'Check the list of queries before submitting again.',
  ifCancelled: 'If the upload had started, check the list of queries.',
}

describe('mayHaveBeenProcessed', () => {
  it('a connection lost after the request went out may have been processed; one refused before it was sent was not', () => {
    expect(mayHaveBeenProcessed(new NetworkError('socket hang up'))).toBe(true)
    expect(mayHaveBeenProcessed(new NetworkError('connect ECONNREFUSED', { beforeProcessing: true }))).toBe(false)
  })

  it('a 5xx may have been processed; a 4xx was refused', () => {
    expect(mayHaveBeenProcessed(new ServiceError('Internal Server Error', { status: 500 }))).toBe(true)
    expect(mayHaveBeenProcessed(new ServiceError('Bad Gateway', { status: 502 }))).toBe(true)
    expect(mayHaveBeenProcessed(new ServiceError('Bad Request', { status: 400 }))).toBe(false)
    expect(mayHaveBeenProcessed(new ServiceError('Too Many Requests', { status: 429, retryable: true }))).toBe(false)
  })

  it('an error of the input, or a cancellation, says nothing about the service', () => {
    expect(mayHaveBeenProcessed(new InvalidInputError('bad layout'))).toBe(false)
    expect(mayHaveBeenProcessed(new AbortedError('cancelled'))).toBe(false)
    expect(mayHaveBeenProcessed(new Error('bug'))).toBe(false)
  })
})

describe('explainSubmissionFailure', () => {
  it('turns a failure that may have been processed into an SubmissionOutcomeUnknownError with the way to check', () => {
    const cause = new NetworkError('socket hang up')
    const explained = explainSubmissionFailure(cause, ADVICE)
    expect(explained).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(explained).toMatchObject({ shortMessage: ADVICE.ambiguous, metaMessages: [ADVICE.howToCheck], cause })
  })

  it('gives a cancellation the advice for a cancelled upload, keeping it an AbortedError', () => {
    const cause = new AbortedError('Cancelled.')
    const explained = explainSubmissionFailure(cause, ADVICE)
    expect(explained).toBeInstanceOf(AbortedError)
    expect(explained).toMatchObject({ shortMessage: 'Cancelled.', metaMessages: [ADVICE.ifCancelled], cause })
  })

  it('adds the way to check to a submission already known to be accepted but unread, keeping its message', () => {
    const accepted = new SubmissionOutcomeUnknownError(
      'The proving service accepted submit the PIE (HTTP 201), but its answer could not be read.',
    )
    const explained = explainSubmissionFailure(accepted, ADVICE)
    expect(explained).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(explained).toMatchObject({
      shortMessage: accepted.shortMessage,
      metaMessages: [ADVICE.howToCheck],
      cause: accepted,
    })
  })

  it('returns a refusal as it was', () => {
    const refused = new ServiceError('Bad Request', { status: 400 })
    expect(explainSubmissionFailure(refused, ADVICE)).toBe(refused)
  })
})
