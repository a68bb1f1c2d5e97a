import { describe, expect, it } from 'vitest'
import { classifyFailure, keepsWaiting, mayRepeat } from '../../../src/core/classify.ts'
import {
  AbortedError,
  ChainError,
  InvalidInputError,
  InvalidResponseError,
  NetworkError,
  RequestTimeoutError,
  ServiceError,
} from '../../../src/core/errors.ts'

/**
 * The one judgement of a failed request. What a user loses when it is wrong: a paid POST sent
 * twice (a failure that may have been processed read as refused), a wait given up on a restart,
 * or a wait that polls forever on an answer that will not change.
 */
const status = (code: number, extra: { retryAfterMs?: number; gatewayPage?: boolean } = {}) =>
  new ServiceError(`HTTP ${code}`, { status: code, ...extra })

describe('classifyFailure', () => {
  it('refused before processing: a connection refused, a 429, a 503 that says when to come back', () => {
    expect(classifyFailure(new NetworkError('connect ECONNREFUSED', { beforeProcessing: true }))).toEqual({
      kind: 'refused',
      gatewayPage: false,
    })
    expect(classifyFailure(status(429))).toEqual({ kind: 'refused', gatewayPage: false })
    expect(classifyFailure(status(429, { retryAfterMs: 2_000 }))).toEqual({
      kind: 'retry-after',
      retryAfterMs: 2_000,
      gatewayPage: false,
    })
    expect(classifyFailure(status(503, { retryAfterMs: 0 }))).toEqual({
      kind: 'retry-after',
      retryAfterMs: 0,
      gatewayPage: false,
    })
  })

  it('a 5xx other than a 503 with Retry-After may have been processed, Retry-After or not (a paid POST is not sent again)', () => {
    for (const code of [500, 502, 504]) {
      expect(classifyFailure(status(code, { retryAfterMs: 1_000 })), `${code} with Retry-After`).toEqual({
        kind: 'retry',
        gatewayPage: false,
      })
      expect(classifyFailure(status(code)), `${code}`).toEqual({ kind: 'retry', gatewayPage: false })
    }
    expect(classifyFailure(status(503))).toEqual({ kind: 'retry', gatewayPage: false })
    expect(classifyFailure(status(408))).toEqual({ kind: 'retry', gatewayPage: false })
    expect(mayRepeat(status(500, { retryAfterMs: 1_000 }), false)).toBe(false)
    expect(mayRepeat(status(502, { retryAfterMs: 1_000 }), false)).toBe(false)
  })

  it('a connection lost after the request went out, or a timeout, may have been processed', () => {
    expect(classifyFailure(new NetworkError('socket hang up'))).toEqual({ kind: 'retry', gatewayPage: false })
    expect(classifyFailure(new RequestTimeoutError('headers timeout'))).toEqual({ kind: 'retry', gatewayPage: false })
  })

  it('a typed 4xx, a 5xx the service means (501), a status-less ServiceError: final', () => {
    for (const code of [400, 401, 403, 404, 409, 413, 422, 501, 505]) {
      expect(classifyFailure(status(code)), `${code}`).toEqual({ kind: 'final', gatewayPage: false })
    }
    expect(classifyFailure(new ServiceError('no status'))).toEqual({ kind: 'final', gatewayPage: false })
    expect(classifyFailure(new ServiceError('no status', { retryAfterMs: 1_000 }))).toEqual({
      kind: 'final',
      gatewayPage: false,
    })
  })

  it('says whether the answer was a page from something in between, whatever its kind', () => {
    expect(classifyFailure(status(404, { gatewayPage: true }))).toEqual({ kind: 'final', gatewayPage: true })
    expect(classifyFailure(status(502, { gatewayPage: true }))).toEqual({ kind: 'retry', gatewayPage: true })
    expect(classifyFailure(status(429, { gatewayPage: true }))).toEqual({ kind: 'refused', gatewayPage: true })
    expect(classifyFailure(status(503, { gatewayPage: true, retryAfterMs: 5 }))).toEqual({
      kind: 'retry-after',
      retryAfterMs: 5,
      gatewayPage: true,
    })
  })

  it('a cut or non-JSON 2xx may pass next time; a body of the wrong shape will not', () => {
    expect(classifyFailure(new InvalidResponseError('truncated JSON', { retryable: true }))).toEqual({
      kind: 'retry',
      gatewayPage: false,
    })
    expect(classifyFailure(new InvalidResponseError('provingQuery.status: expected string'))).toEqual({
      kind: 'final',
      gatewayPage: false,
    })
  })

  it('other transports say themselves whether they may pass; bad input, a cancellation and a bug are final', () => {
    expect(classifyFailure(new ChainError('RPC node: 502', { retryable: true }))).toEqual({
      kind: 'retry',
      gatewayPage: false,
    })
    expect(classifyFailure(new ChainError('no code at the address'))).toEqual({ kind: 'final', gatewayPage: false })
    expect(classifyFailure(new InvalidInputError('bad layout'))).toEqual({ kind: 'final', gatewayPage: false })
    expect(classifyFailure(new AbortedError('Cancelled.'))).toEqual({ kind: 'final', gatewayPage: false })
    expect(classifyFailure(new Error('bug'))).toEqual({ kind: 'final', gatewayPage: false })
    expect(classifyFailure(Object.assign(new Error('looks retryable'), { retryable: true }))).toEqual({
      kind: 'final',
      gatewayPage: false,
    })
  })
})

describe('mayRepeat', () => {
  it('a request refused before processing is sent again, a submission included', () => {
    expect(mayRepeat(new NetworkError('connect ECONNREFUSED', { beforeProcessing: true }), false)).toBe(true)
    expect(mayRepeat(status(429), false)).toBe(true)
    expect(mayRepeat(status(503, { retryAfterMs: 1_000 }), false)).toBe(true)
  })

  it('one that may have been processed is sent again only when sending it twice is harmless', () => {
    for (const error of [
      new NetworkError('socket hang up'),
      status(500),
      status(503),
      status(408),
      new InvalidResponseError('cut', { retryable: true }),
    ]) {
      expect(mayRepeat(error, true), error.message).toBe(true)
      expect(mayRepeat(error, false), error.message).toBe(false)
    }
  })

  it('a final failure is never sent again', () => {
    for (const error of [
      status(400),
      status(404, { gatewayPage: true }),
      new AbortedError('Cancelled.'),
      new Error('bug'),
    ]) {
      expect(mayRepeat(error, true), error.message).toBe(false)
    }
  })
})

describe('keepsWaiting', () => {
  it('a wait outlives a restart, a gateway hiccup and a rate limit', () => {
    expect(keepsWaiting(status(502))).toBe(true)
    expect(keepsWaiting(status(503))).toBe(true)
    expect(keepsWaiting(status(429, { retryAfterMs: 1_000 }))).toBe(true)
    expect(keepsWaiting(new NetworkError('connect ECONNREFUSED', { beforeProcessing: true }))).toBe(true)
    expect(keepsWaiting(new NetworkError('socket hang up'), { pagesAreTransient: false })).toBe(true)
  })

  it('a 4xx page from something in between is a hiccup once the service is known to be there, else a wrong URL', () => {
    const page = status(404, { gatewayPage: true })
    expect(keepsWaiting(page)).toBe(true)
    expect(keepsWaiting(page, { pagesAreTransient: true })).toBe(true)
    expect(keepsWaiting(page, { pagesAreTransient: false })).toBe(false)
  })

  it("the service's own typed answer, a body of the wrong shape, a cancellation or a bug end the wait", () => {
    expect(keepsWaiting(status(404))).toBe(false)
    expect(keepsWaiting(status(401), { pagesAreTransient: true })).toBe(false)
    expect(keepsWaiting(new InvalidResponseError('provingQuery.status: expected string'))).toBe(false)
    expect(keepsWaiting(new AbortedError('Cancelled.'))).toBe(false)
    expect(keepsWaiting(new Error('bug'))).toBe(false)
    expect(keepsWaiting(Object.assign(new Error('bug'), { gatewayPage: true }))).toBe(false)
  })
})
