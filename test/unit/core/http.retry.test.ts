import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import nock from 'nock'
import { Agent } from 'undici'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AbortedError, NetworkError, RequestTimeoutError, ServiceError } from '../../../src/core/errors.ts'
import { DEFAULT_RETRY, HttpClient, type HttpClientConfig } from '../../../src/core/http.ts'
import { parseRetryAfter } from '../../../src/core/http/failures.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { failure } from '../../helpers/failure.ts'

/**
 * The retry policy of HttpClient (src/core/http.ts): what is sent again, how often, how long
 * it waits in between. Time is a FakeClock, so every backoff sleep is recorded and costs nothing.
 */

const BASE = 'https://svc.test'

type Step = number | { status: number; body?: unknown; headers?: Record<string, string> } | { error: string }

/** An error as undici reports it: an Error with a `code`. (A plain object never reaches undici.) */
function connectionError(code: string): Error {
  return Object.assign(new Error(`simulated ${code}`), { code })
}

/** Answers `method path` with `steps` in order; records every request that reached the server. */
function script(method: 'GET' | 'POST', path: string, steps: Step[]) {
  const scope = nock(BASE)
  const requests: { url: string; headers: Headers; body: string }[] = []
  scope.on('request', (request: Request, _interceptor: unknown, body: string) => {
    requests.push({ url: request.url, headers: request.headers, body })
  })
  for (const step of steps) {
    const interceptor = method === 'GET' ? scope.get(path) : scope.post(path)
    if (typeof step === 'number') interceptor.reply(step, step < 300 ? { ok: true } : {})
    else if ('error' in step) interceptor.replyWithError(connectionError(step.error))
    else interceptor.reply(step.status, (step.body ?? {}) as nock.Body, step.headers)
  }
  return { scope, requests }
}

/** Fails the same way forever. */
function always(method: 'GET' | 'POST', path: string, step: Step) {
  const scope = nock(BASE)
  const requests: string[] = []
  scope.on('request', (request: Request) => requests.push(request.url))
  const interceptor = (method === 'GET' ? scope.get(path) : scope.post(path)).times(1_000)
  if (typeof step === 'number') interceptor.reply(step, {})
  else if ('error' in step) interceptor.replyWithError(connectionError(step.error))
  else interceptor.reply(step.status, (step.body ?? {}) as nock.Body, step.headers)
  return { scope, requests }
}

let clock: FakeClock

function client(config: Partial<HttpClientConfig> = {}) {
  return new HttpClient({ baseUrl: BASE, serviceName: 'test service', clock, random: () => 0.5, ...config })
}

beforeEach(() => {
  nock.disableNetConnect()
  clock = new FakeClock()
})

afterEach(() => {
  nock.cleanAll()
  nock.enableNetConnect()
})

describe('GET is retried on transient failures', () => {
  it.each([500, 502, 503, 504, 408, 429])('GET answered %i, then 200: one retry, success', async (status) => {
    const { requests, scope } = script('GET', '/thing', [status, 200])
    const response = await client().request({ method: 'GET', path: '/thing' })
    expect(response.data).toEqual({ ok: true })
    expect(response.attempts).toBe(2)
    expect(requests).toHaveLength(2)
    expect(clock.sleeps).toHaveLength(1)
    expect(scope.isDone()).toBe(true)
  })

  it.each(['ECONNRESET', 'ECONNREFUSED', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_SOCKET'])(
    'GET failing with %s, then 200: one retry, success',
    async (code) => {
      const { requests } = script('GET', '/thing', [{ error: code }, 200])
      const response = await client().request({ method: 'GET', path: '/thing' })
      expect(response.attempts).toBe(2)
      expect(requests).toHaveLength(2)
    },
  )
})

describe('POST is retried only when the server cannot have processed it', () => {
  it('429 without Retry-After: retried, with the same body', async () => {
    const { requests } = script('POST', '/submit', [429, { status: 201, body: { id: 'x' } }])
    const response = await client().request({ method: 'POST', path: '/submit', json: { n: 1 } })
    expect(response).toMatchObject({ status: 201, data: { id: 'x' }, attempts: 2 })
    expect(requests.map((request) => request.body)).toEqual(['{"n":1}', '{"n":1}'])
  })

  it('429 with Retry-After: retried after that long', async () => {
    script('POST', '/submit', [{ status: 429, headers: { 'retry-after': '2' } }, 201])
    const response = await client().request({ method: 'POST', path: '/submit', json: {} })
    expect(response.attempts).toBe(2)
    expect(clock.sleeps).toEqual([2_000])
  })

  it('503 with Retry-After: retried', async () => {
    const { requests } = script('POST', '/submit', [{ status: 503, headers: { 'retry-after': '1' } }, 201])
    await client().request({ method: 'POST', path: '/submit', json: {} })
    expect(requests).toHaveLength(2)
    expect(clock.sleeps).toEqual([1_000])
  })

  it('connection refused (nothing reached the server): retried', async () => {
    const { requests } = script('POST', '/submit', [{ error: 'ECONNREFUSED' }, 201])
    const response = await client().request({ method: 'POST', path: '/submit', json: {} })
    expect(response.attempts).toBe(2)
    expect(requests).toHaveLength(2)
  })

  it('connect timeout (nothing reached the server): retried', async () => {
    const { requests } = script('POST', '/submit', [{ error: 'UND_ERR_CONNECT_TIMEOUT' }, 201])
    await client().request({ method: 'POST', path: '/submit', json: {} })
    expect(requests).toHaveLength(2)
  })

  it.each([500, 502, 504, 408])('%i: not retried (the server may have processed it)', async (status) => {
    const { requests, scope } = script('POST', '/submit', [status, 201])
    const error = await failure(client().request({ method: 'POST', path: '/submit', json: {} }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.status).toBe(status)
    expect(error.retryable).toBe(false)
    expect(requests).toHaveLength(1)
    expect(scope.isDone()).toBe(false)
    expect(clock.sleeps).toEqual([])
    expect(error.message).not.toContain('Gave up')
  })

  it('503 without Retry-After: not retried', async () => {
    const { requests } = script('POST', '/submit', [503, 201])
    const error = await failure(client().request({ method: 'POST', path: '/submit', json: {} }))
    expect(error.status).toBe(503)
    expect(error.retryable).toBe(false)
    expect(requests).toHaveLength(1)
  })

  it('503 with an unreadable Retry-After: not retried', async () => {
    const { requests } = script('POST', '/submit', [{ status: 503, headers: { 'retry-after': 'soon' } }, 201])
    await failure(client().request({ method: 'POST', path: '/submit', json: {} }))
    expect(requests).toHaveLength(1)
  })

  it.each(['ECONNRESET', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_SOCKET'])(
    '%s after the body went out: not retried',
    async (code) => {
      const { requests } = script('POST', '/submit', [{ error: code }, 201])
      const error = await failure(client().request({ method: 'POST', path: '/submit', json: {} }))
      expect(error).toBeInstanceOf(NetworkError)
      expect((error as NetworkError).beforeProcessing).toBe(false)
      expect(error.code).toBe(code)
      expect(requests).toHaveLength(1)
      expect(clock.sleeps).toEqual([])
    },
  )

  it('a timeout is reported as RequestTimeoutError', async () => {
    script('POST', '/submit', [{ error: 'UND_ERR_HEADERS_TIMEOUT' }])
    const error = await failure(client().request({ method: 'POST', path: '/submit', json: {} }))
    expect(error).toBeInstanceOf(RequestTimeoutError)
    expect(error.shortMessage).toMatch(/did not answer .* in time/)
  })
})

describe('a real refused connection', () => {
  it('a POST to a port nobody listens on is tried maxAttempts times, then says so', async () => {
    nock.enableNetConnect('127.0.0.1')
    // A port that was free a moment ago: nothing listens there now.
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as AddressInfo
    await new Promise((resolve) => server.close(resolve))
    const http = client({ baseUrl: `http://127.0.0.1:${port}`, dispatcher: new Agent(), retry: { maxAttempts: 3 } })
    const error = await failure(http.request({ method: 'POST', path: '/submit', json: {} }))
    expect(error).toBeInstanceOf(NetworkError)
    expect(error).toMatchObject({ code: 'ECONNREFUSED', beforeProcessing: true })
    expect(error.shortMessage).toContain('connection refused')
    expect(error.message).toContain('Gave up after 3 attempts')
    expect(clock.sleeps).toHaveLength(2)
  })
})

describe('typed 4xx answers are final', () => {
  it.each([
    [400, { message: 'QUERY_NOT_RETRIABLE' }, 'QUERY_NOT_RETRIABLE'],
    [400, { message: 'MAX_RETRIES_REACHED' }, 'MAX_RETRIES_REACHED'],
    [403, { message: 'FORBIDDEN' }, 'FORBIDDEN'],
    [404, { message: 'PROVING_QUERY_NOT_FOUND' }, 'PROVING_QUERY_NOT_FOUND'],
    [409, { message: 'QUERY_NOT_IN_FAILED_STATUS' }, 'QUERY_NOT_IN_FAILED_STATUS'],
    [401, { error: 'UNAUTHORIZED' }, 'UNAUTHORIZED'],
  ] as const)('%i %j is never retried, GET or POST', async (status, body, code) => {
    for (const method of ['GET', 'POST'] as const) {
      const { requests, scope } = script(method, '/q', [{ status, body }, 200])
      const error = await failure(client().request({ method, path: '/q' }))
      expect(error).toBeInstanceOf(ServiceError)
      expect(error).toMatchObject({ status, code, retryable: false })
      expect(requests).toHaveLength(1)
      expect(scope.isDone()).toBe(false)
      nock.cleanAll()
    }
    expect(clock.sleeps).toEqual([])
  })
})

describe('attempts are capped', () => {
  it('by maxAttempts (default 6), and the error says how many were made', async () => {
    const { requests } = always('GET', '/thing', 503)
    const error = await failure(client().request({ method: 'GET', path: '/thing' }))
    expect(requests).toHaveLength(DEFAULT_RETRY.maxAttempts)
    expect(clock.sleeps).toHaveLength(DEFAULT_RETRY.maxAttempts - 1)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 503, retryable: true })
    expect(error.message).toContain(`Gave up after ${DEFAULT_RETRY.maxAttempts} attempts`)
  })

  it('by a custom maxAttempts', async () => {
    const { requests } = always('GET', '/thing', { error: 'ECONNRESET' })
    const error = await failure(client({ retry: { maxAttempts: 3 } }).request({ method: 'GET', path: '/thing' }))
    expect(requests).toHaveLength(3)
    expect(error).toBeInstanceOf(NetworkError)
    expect(error.code).toBe('ECONNRESET')
    expect(error.message).toContain('Gave up after 3 attempts')
  })

  it('per request, overriding the client policy', async () => {
    const { requests } = always('GET', '/thing', 500)
    await failure(client().request({ method: 'GET', path: '/thing', retry: { maxAttempts: 2 } }))
    expect(requests).toHaveLength(2)
  })

  it('maxAttempts 1 means no retry, and no "gave up" note', async () => {
    const { requests } = always('GET', '/thing', 503)
    const error = await failure(client({ retry: { maxAttempts: 1 } }).request({ method: 'GET', path: '/thing' }))
    expect(requests).toHaveLength(1)
    expect(error.message).not.toContain('Gave up')
  })

  it('by the time budget: no wait may end past it', async () => {
    const { requests } = always('GET', '/thing', 502)
    const http = client({
      random: () => 0.999,
      retry: { budgetMs: 2_000, baseDelayMs: 400, maxAttempts: 20 },
    })
    const error = await failure(http.request({ method: 'GET', path: '/thing' }))
    // Delays just under 400, 800, 1600: the third would end at 2 797 ms > 2 000.
    expect(clock.sleeps).toEqual([399, 799])
    expect(requests).toHaveLength(3)
    expect(clock.slept).toBeLessThanOrEqual(2_000)
    expect(error.message).toContain('Gave up after 3 attempts')
  })

  it('a Retry-After beyond the budget ends the retries', async () => {
    const { requests } = always('GET', '/thing', { status: 503, headers: { 'retry-after': '20' } })
    const error = await failure(client({ retry: { budgetMs: 10_000 } }).request({ method: 'GET', path: '/thing' }))
    expect(requests).toHaveLength(1)
    expect(clock.sleeps).toEqual([])
    expect(error.status).toBe(503)
  })
})

describe('backoff: exponential with full jitter', () => {
  it('delay ceilings double from baseDelayMs', async () => {
    always('GET', '/thing', 503)
    // random just below 1: each delay sits just below its ceiling.
    await failure(client({ random: () => 0.999_999 }).request({ method: 'GET', path: '/thing' }))
    const ceilings = [250, 500, 1_000, 2_000, 4_000]
    expect(clock.sleeps).toHaveLength(ceilings.length)
    clock.sleeps.forEach((delay, index) => {
      expect(delay).toBeLessThan(ceilings[index]!)
      expect(delay).toBeGreaterThanOrEqual(ceilings[index]! - 1)
    })
  })

  it('ceilings stop growing at maxDelayMs', async () => {
    always('GET', '/thing', 503)
    const http = client({
      random: () => 0.999_999,
      retry: { baseDelayMs: 1_000, maxDelayMs: 3_000, maxAttempts: 7, budgetMs: 600_000 },
    })
    await failure(http.request({ method: 'GET', path: '/thing' }))
    expect(clock.sleeps.map((delay) => Math.ceil(delay / 1_000) * 1_000)).toEqual([
      1_000, 2_000, 3_000, 3_000, 3_000, 3_000,
    ])
  })

  it('each delay is random * ceiling (full jitter: anywhere from 0 to the ceiling)', async () => {
    always('GET', '/thing', 503)
    const draws = [0, 0.25, 0.5, 0.75, 0.1]
    let index = 0
    await failure(client({ random: () => draws[index++ % draws.length]! }).request({ method: 'GET', path: '/thing' }))
    expect(clock.sleeps).toEqual([0, 125, 500, 1_500, 400])
  })
})

describe('Retry-After', () => {
  it('in seconds is honoured instead of the backoff', async () => {
    script('GET', '/thing', [{ status: 503, headers: { 'retry-after': '7' } }, 200])
    await client().request({ method: 'GET', path: '/thing' })
    expect(clock.sleeps).toEqual([7_000])
  })

  it('as an HTTP date is honoured (relative to the clock)', async () => {
    const when = new Date(clock.now() + 12_000).toUTCString()
    script('GET', '/thing', [{ status: 429, headers: { 'retry-after': when } }, 200])
    await client().request({ method: 'GET', path: '/thing' })
    expect(clock.sleeps).toEqual([12_000])
  })

  it('a date in the past means now', async () => {
    const when = new Date(clock.now() - 60_000).toUTCString()
    script('GET', '/thing', [{ status: 503, headers: { 'retry-after': when } }, 200])
    await client().request({ method: 'GET', path: '/thing' })
    expect(clock.sleeps).toEqual([0])
  })

  it('is capped by maxRetryAfterMs (default 30 s)', async () => {
    script('GET', '/thing', [{ status: 503, headers: { 'retry-after': '3600' } }, 200])
    await client().request({ method: 'GET', path: '/thing' })
    expect(clock.sleeps).toEqual([DEFAULT_RETRY.maxRetryAfterMs])
  })

  it('is capped by a custom maxRetryAfterMs, for dates too', async () => {
    const when = new Date(clock.now() + 3_600_000).toUTCString()
    script('POST', '/submit', [{ status: 429, headers: { 'retry-after': when } }, 201])
    await client({ retry: { maxRetryAfterMs: 5_000 } }).request({ method: 'POST', path: '/submit' })
    expect(clock.sleeps).toEqual([5_000])
  })

  it('parseRetryAfter reads seconds, fractions, dates; ignores garbage', () => {
    const now = Date.parse('2025-06-01T12:00:00Z')
    expect(parseRetryAfter('5', now)).toBe(5_000)
    expect(parseRetryAfter(' 1.5 ', now)).toBe(1_500)
    expect(parseRetryAfter('Sun, 01 Jun 2025 12:00:30 GMT', now)).toBe(30_000)
    expect(parseRetryAfter(['2', '9'], now)).toBe(2_000)
    expect(parseRetryAfter(undefined, now)).toBeUndefined()
    expect(parseRetryAfter('', now)).toBeUndefined()
    expect(parseRetryAfter('later', now)).toBeUndefined()
  })
})

describe('cancellation', () => {
  it('an abort during a backoff sleep ends with AbortedError, without another request', async () => {
    const { requests, scope } = script('GET', '/thing', [503, 200])
    const controller = new AbortController()
    clock.onSleep = () => controller.abort(new Error('user pressed ctrl-c'))
    const error = await failure(client().request({ method: 'GET', path: '/thing', signal: controller.signal }))
    expect(error).toBeInstanceOf(AbortedError)
    expect(requests).toHaveLength(1)
    expect(scope.isDone()).toBe(false)
  })

  it('an already aborted signal sends nothing', async () => {
    const { requests } = script('GET', '/thing', [200])
    const error = await failure(client().request({ method: 'GET', path: '/thing', signal: AbortSignal.abort() }))
    expect(error).toBeInstanceOf(AbortedError)
    expect(requests).toHaveLength(0)
  })

  it('an abort while the request is in flight ends with AbortedError, not a network error', async () => {
    // A real server that never answers (nock's mock socket and undici's abort do not mix).
    nock.enableNetConnect('127.0.0.1')
    // Aborted once the server has the request (an event, not a fixed delay): it is in flight.
    const controller = new AbortController()
    const server = createServer(() => controller.abort())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const http = client({ baseUrl: `http://127.0.0.1:${port}`, dispatcher: new Agent() })
      const pending = http.request({ method: 'GET', path: '/slow', signal: controller.signal })
      const error = await failure(pending)
      expect(error).toBeInstanceOf(AbortedError)
      expect(clock.sleeps).toEqual([])
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('what a retry logs', () => {
  it('one debug line per retry, naming the attempt and the wait', async () => {
    const lines: string[] = []
    script('GET', '/thing', [503, 503, 200])
    const logger = { debug: (m: string) => lines.push(m), info() {}, warn() {}, error() {} }
    await client({ logger }).request({ method: 'GET', path: '/thing', operation: 'get thing' })
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(/^get thing: .*503.*attempt 2 of 6/)
    expect(lines[1]).toMatch(/attempt 3 of 6/)
  })
})
