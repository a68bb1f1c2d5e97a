import { describe, expect, it } from 'vitest'
import {
  AbortedError,
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  InvalidPieError,
  InvalidResponseError,
  isProvingKitError,
  NetworkError,
  ProvingKitError,
  RemoteFailureError,
  RequestTimeoutError,
  ServiceError,
  UnknownStatusError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'

describe('ProvingKitError', () => {
  it('message = shortMessage, meta lines, then the details', () => {
    const error = new ProvingKitError('Could not submit.', {
      metaMessages: ['Check the key.', 'Then run again.'],
      details: 'socket hang up',
    })
    expect(error.message).toBe('Could not submit.\n\nCheck the key.\nThen run again.\n\nDetails: socket hang up')
    expect(error.shortMessage).toBe('Could not submit.')
    expect(String(error)).toBe(`ProvingKitError: ${error.message}`)
  })

  it('takes the details from the cause and keeps the cause', () => {
    const cause = new Error('ECONNRESET')
    const error = new ProvingKitError('The connection failed.', { cause })
    expect(error.details).toBe('ECONNRESET')
    expect(error.cause).toBe(cause)
  })

  it("takes a ProvingKitError cause's details, or else its short message", () => {
    const inner = new ServiceError('The service answered 500.', { details: 'INTERNAL_SERVER_ERROR' })
    expect(new ProvingKitError('Outer.', { cause: inner }).details).toBe('INTERNAL_SERVER_ERROR')
    const bare = new ServiceError('The service answered 500.')
    expect(new ProvingKitError('Outer.', { cause: bare }).details).toBe('The service answered 500.')
  })

  it('does not repeat details equal to the short message', () => {
    expect(new ProvingKitError('Same.', { details: 'Same.' }).message).toBe('Same.')
  })

  it('carries status, code and retryable (false unless said)', () => {
    const error = new ProvingKitError('x', { status: 400, code: 'QUERY_NOT_RETRIABLE' })
    expect(error).toMatchObject({ status: 400, code: 'QUERY_NOT_RETRIABLE', retryable: false })
  })

  it('walk() returns the root cause, or the first match', () => {
    const root = new Error('root')
    const middle = new NetworkError('middle', { cause: root })
    const top = new SubmissionOutcomeUnknownError('top', { cause: middle })
    expect(top.walk()).toBe(root)
    expect(top.walk((error) => error instanceof NetworkError)).toBe(middle)
    expect(top.walk((error) => error instanceof AbortedError)).toBeNull()
  })

  it('each kind has its own name and is a ProvingKitError', () => {
    const kinds = [
      [new InvalidInputError('x', { input: 'layout' }), 'InvalidInputError'],
      [new NetworkError('x'), 'NetworkError'],
      [new RequestTimeoutError('x'), 'RequestTimeoutError'],
      [new ServiceError('x', { body: {} }), 'ServiceError'],
      [new InvalidResponseError('x'), 'InvalidResponseError'],
      [new SubmissionOutcomeUnknownError('x'), 'SubmissionOutcomeUnknownError'],
      [new WaitTimeoutError('x', { lastSeen: 1 }), 'WaitTimeoutError'],
      [new AbortedError('x'), 'AbortedError'],
      [new RemoteFailureError('x', { record: {} }), 'RemoteFailureError'],
      [new UnknownStatusError('x'), 'UnknownStatusError'],
      [new InvalidPieError('x', { problems: ['a'] }), 'InvalidPieError'],
    ] as const
    for (const [error, name] of kinds) {
      expect(error.name).toBe(name)
      expect(isProvingKitError(error)).toBe(true)
      expect(String(error).startsWith(`${name}: `)).toBe(true)
    }
    expect(isProvingKitError(new Error('x'))).toBe(false)
  })

  it('network errors are retryable by default and say whether the server saw the request', () => {
    expect(new NetworkError('x').retryable).toBe(true)
    expect(new NetworkError('x').beforeProcessing).toBe(false)
    expect(new NetworkError('x', { beforeProcessing: true }).beforeProcessing).toBe(true)
    expect(new RequestTimeoutError('x')).toBeInstanceOf(NetworkError)
  })

  it('InvalidPieError lists its problems as meta lines', () => {
    const error = new InvalidPieError('The PIE is invalid.', { problems: ['no memory.bin', 'bad version.json'] })
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(error.message).toContain('no memory.bin\nbad version.json')
  })
})
