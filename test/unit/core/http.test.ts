import { readFileSync } from 'node:fs'
import nock from 'nock'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  InvalidResponseError,
  ProvingKitError,
  ServiceError,
} from '../../../src/core/errors.ts'
import { HttpClient, type HttpClientConfig } from '../../../src/core/http.ts'
import { VERSION } from '../../../src/core/version.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { failure } from '../../helpers/failure.ts'

/** What HttpClient turns answers into: errors a person can act on, typed data, the User-Agent. */

const BASE = 'https://svc.test'
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
).version

let clock: FakeClock

function client(config: Partial<HttpClientConfig> = {}) {
  return new HttpClient({ baseUrl: BASE, serviceName: 'proving service', clock, random: () => 0.5, ...config })
}

beforeEach(() => {
  nock.disableNetConnect()
  clock = new FakeClock()
})

afterEach(() => {
  nock.cleanAll()
  nock.enableNetConnect()
})

describe('service errors', () => {
  it('{ message: CODE } gives status, code, details and the body', async () => {
    nock(BASE).post('/proving-queries/q-1/retry').reply(400, { message: 'QUERY_NOT_RETRIABLE' })
    const error = await failure(
      client().request({ method: 'POST', path: '/proving-queries/q-1/retry', operation: 'retry query q-1' }),
    )
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({
      status: 400,
      code: 'QUERY_NOT_RETRIABLE',
      retryable: false,
      details: 'QUERY_NOT_RETRIABLE',
      body: { message: 'QUERY_NOT_RETRIABLE' },
    })
    expect(error.shortMessage).toBe('The proving service answered 400 QUERY_NOT_RETRIABLE to retry query q-1.')
    expect(error.name).toBe('ServiceError')
  })

  it('{ error: CODE } gives the code too', async () => {
    nock(BASE).post('/buckets/close').query({ bucketId: 'b-9' }).reply(404, { error: 'BUCKET_NOT_FOUND' })
    const error = await failure(
      client().request({ method: 'POST', path: '/buckets/close', query: { bucketId: 'b-9' } }),
    )
    expect(error).toMatchObject({ status: 404, code: 'BUCKET_NOT_FOUND', retryable: false })
    expect(error.message).toContain('404 BUCKET_NOT_FOUND')
  })

  it('a prose error has no code, but its text is the details', async () => {
    nock(BASE).post('/tasks').reply(400, { error: 'Invalid destination_chain_id format' })
    const error = await failure(client().request({ method: 'POST', path: '/tasks' }))
    expect(error.code).toBeUndefined()
    expect(error.details).toBe('Invalid destination_chain_id format')
    expect(error.message).toContain('Details: Invalid destination_chain_id format')
  })

  it('a general error body { error, details, message } keeps all three in the details', async () => {
    nock(BASE)
      .get('/tasks/t-1/status')
      .reply(404, { error: 'Not Found', details: 'no task t-1', message: 'Task not found', taskId: 't-1' })
    const error = await failure(client().request({ method: 'GET', path: '/tasks/t-1/status' }))
    expect(error.details).toBe('Not Found: Task not found: no task t-1')
  })

  it('an empty {} body still gives a readable error', async () => {
    nock(BASE).post('/buckets/close').reply(400, {})
    const error = await failure(client().request({ method: 'POST', path: '/buckets/close' }))
    expect(error).toMatchObject({ status: 400, code: undefined, details: undefined })
    expect(error.message).toBe('The proving service answered 400 to POST /buckets/close.')
  })

  it('retryable says whether trying later can help: a GET 503 yes, a POST 500 no', async () => {
    nock(BASE).get('/x').times(6).reply(503, { error: 'SERVICE_UNAVAILABLE' })
    const get = await failure(client().request({ method: 'GET', path: '/x' }))
    expect(get.retryable).toBe(true)
    nock(BASE).post('/x').reply(500, { error: 'INTERNAL_SERVER_ERROR' })
    const post = await failure(client().request({ method: 'POST', path: '/x' }))
    expect(post).toMatchObject({ status: 500, code: 'INTERNAL_SERVER_ERROR', retryable: false })
  })

  it('a 502 HTML page from a gateway gives a readable excerpt, not a JSON parse crash', async () => {
    const page = `<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n`
    nock(BASE).post('/submit').reply(502, page, { 'content-type': 'text/html' })
    const error = await failure(client().request({ method: 'POST', path: '/submit' }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.status).toBe(502)
    expect(error.shortMessage).toBe('The proving service answered 502 to POST /submit.')
    expect(error.details).toContain('not JSON')
    expect(error.details).toContain('502 Bad Gateway')
    expect(error.details).toContain('nginx/1.25.3')
    expect(error.details).not.toContain('<')
    expect(error.message).not.toMatch(/Unexpected token|SyntaxError|JSON\.parse/)
    expect((error as ServiceError).body).toBeUndefined()
  })

  it('an error page with inline styles and scripts gives its text, not its CSS', async () => {
    const page = [
      '<!DOCTYPE html><html><head><title>502 Bad Gateway</title>',
      '<style>body { font-family: sans-serif; margin: 0 auto; } .box { padding: 2em; }</style>',
      '<script>window.dataLayer = window.dataLayer || []; function gtag(){dataLayer.push(arguments);}</script>',
      '</head><body><div class="box"><h1>Bad gateway</h1><p>The origin did not answer.</p></div></body></html>',
    ].join('\n')
    nock(BASE).post('/submit').reply(502, page, { 'content-type': 'text/html' })
    const error = await failure(client().request({ method: 'POST', path: '/submit' }))
    expect(error.details).toContain('502 Bad Gateway')
    expect(error.details).toContain('Bad gateway')
    expect(error.details).not.toMatch(/font-family|dataLayer|[{}]/)
  })

  it('an error page larger than the error-body cap still gives the status, not a size error', async () => {
    const page = `<html><head><title>502 Bad Gateway</title></head><body>${'<p>padding</p>'.repeat(10_000)}</body></html>`
    expect(page.length).toBeGreaterThan(64 * 1024)
    nock(BASE).post('/submit').reply(502, page, { 'content-type': 'text/html' })
    const error = await failure(client().request({ method: 'POST', path: '/submit' }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.status).toBe(502)
    expect(error.details).toContain('502 Bad Gateway')
  })

  it('a large JSON error body keeps its status too', async () => {
    nock(BASE)
      .get('/x')
      .times(6)
      .reply(503, { error: 'SERVICE_UNAVAILABLE', trace: 'x'.repeat(100_000) })
    const error = await failure(client().request({ method: 'GET', path: '/x' }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 503, retryable: true })
  })

  it('a long non-JSON error body is cut to a short excerpt', async () => {
    nock(BASE).post('/submit').reply(500, 'x'.repeat(10_000))
    const error = await failure(client().request({ method: 'POST', path: '/submit' }))
    expect(error.details!.length).toBeLessThan(200)
  })
})

describe('invalid 2xx answers', () => {
  it('a 2xx body that is not JSON is an InvalidResponseError', async () => {
    nock(BASE).post('/submit').reply(201, '<html>Welcome to the captive portal</html>')
    const error = await failure(client().request({ method: 'POST', path: '/submit', operation: 'submit' }))
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toBe('The proving service response to submit is not JSON.')
  })

  it('a GET whose 2xx body is never JSON ends with InvalidResponseError too', async () => {
    nock(BASE).get('/x').times(6).reply(200, 'not json')
    const error = await failure(client().request({ method: 'GET', path: '/x' }))
    expect(error).toBeInstanceOf(InvalidResponseError)
  })

  it('a 2xx body that does not match the schema names the field', async () => {
    nock(BASE).post('/submit').reply(201, { provingQueryId: 42 })
    const schema = z.looseObject({ provingQueryId: z.string() })
    const error = await failure(client().request({ method: 'POST', path: '/submit', schema }))
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toContain('provingQueryId')
  })

  it('an empty 2xx body where a schema is expected is an InvalidResponseError', async () => {
    nock(BASE).post('/submit').reply(201, '')
    const error = await failure(
      client().request({ method: 'POST', path: '/submit', schema: z.object({ provingQueryId: z.string() }) }),
    )
    expect(error).toBeInstanceOf(InvalidResponseError)
  })

  it('a valid body is typed and returned with status and attempts', async () => {
    nock(BASE).post('/submit').reply(201, { provingQueryId: 'q-1' })
    const response = await client().request({
      method: 'POST',
      path: '/submit',
      schema: z.looseObject({ provingQueryId: z.string() }),
    })
    expect(response).toMatchObject({ status: 201, data: { provingQueryId: 'q-1' }, attempts: 1 })
  })

  it('a schema still loading does not hold the request back: it is awaited for the answer', async () => {
    let sent = false
    nock(BASE)
      .post('/submit')
      .reply(201, () => {
        sent = true
        return { provingQueryId: 42 }
      })
    let resolveSchema!: (schema: z.ZodType<{ provingQueryId: string }>) => void
    const schema = new Promise<z.ZodType<{ provingQueryId: string }>>((resolve) => (resolveSchema = resolve))
    const request = failure(client().request({ method: 'POST', path: '/submit', schema }))
    // The answer arrives while the schema is still pending; then the schema judges it.
    await expect.poll(() => sent).toBe(true)
    resolveSchema(z.looseObject({ provingQueryId: z.string() }))
    const error = await request
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.message).toContain('provingQueryId')
  })

  it('a schema that fails to load is reported only when an answer needs it, never as an unhandled rejection', async () => {
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    try {
      nock(BASE).post('/submit').reply(400, { message: 'BAD' })
      const failing = Promise.reject(new Error('schema module missing'))
      const refused = await failure(client().request({ method: 'POST', path: '/submit', schema: failing }))
      expect(refused).toBeInstanceOf(ServiceError)
      // A POST the service accepted: its work is done, so the failure says so (never a plain
      // failure that invites submitting again), and nothing is sent twice.
      const accepted = nock(BASE).post('/submit').once().reply(201, { provingQueryId: 'q-1' })
      const ambiguous = await failure(
        client().request({
          method: 'POST',
          path: '/submit',
          schema: Promise.reject(new Error('schema module missing')),
        }),
      )
      expect(ambiguous).toBeInstanceOf(SubmissionOutcomeUnknownError)
      expect(ambiguous.shortMessage).toBe(
        'The proving service accepted POST /submit (HTTP 201), but its answer could not be read: the schema to check it did not load (schema module missing).',
      )
      expect(accepted.isDone()).toBe(true)
      // A read: the loading error as it is, not taken for a network failure and retried.
      const read = nock(BASE).get('/queries').once().reply(200, { queries: [] })
      await expect(
        client().request({
          method: 'GET',
          path: '/queries',
          schema: Promise.reject(new Error('schema module missing')),
        }),
      ).rejects.toThrow(/^schema module missing$/)
      expect(read.isDone()).toBe(true)
      // Refused before anything is sent (a header with a line break): still no unhandled rejection.
      const refusedEarly = await failure(
        client().request({
          method: 'POST',
          path: '/submit',
          headers: { 'x-note': 'a\nb' },
          schema: Promise.reject(new Error('schema module missing')),
        }),
      )
      expect(refusedEarly).toBeInstanceOf(InvalidInputError)
      await new Promise((resolve) => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })

  it('successStatuses narrows what counts as success', async () => {
    nock(BASE).post('/submit').reply(200, { provingQueryId: 'q-1' })
    const error = await failure(client().request({ method: 'POST', path: '/submit', successStatuses: [201] }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.status).toBe(200)
  })
})

describe('User-Agent', () => {
  it('VERSION equals package.json version', () => {
    expect(VERSION).toBe(PACKAGE_VERSION)
  })

  it('every request carries User-Agent: proving-kit/<version>, retries and POSTs included', async () => {
    const agents: (string | null)[] = []
    const scope = nock(BASE)
    scope.on('request', (request: Request) => agents.push(request.headers.get('user-agent')))
    scope.get('/a').reply(503, {}).get('/a').reply(200, {}).post('/b').reply(201, {}).get('/c').reply(200, {})
    const http = client({ headers: { 'api-key': 'k-1234' } })
    await http.request({ method: 'GET', path: '/a' })
    await http.request({ method: 'POST', path: '/b', json: { a: 1 } })
    await http.request({ method: 'GET', path: '/c', headers: { 'x-extra': '1' } })
    expect(agents).toEqual(Array(4).fill(`proving-kit/${PACKAGE_VERSION}`))
  })
})

describe('requests', () => {
  it('sends client and request headers, JSON bodies with their content type, and skips empty query values', async () => {
    let seen: Request | undefined
    let body = ''
    nock(BASE)
      .post('/v1/things')
      .query({ a: '1', flag: 'true', n: '0' })
      .reply(async (request: Request) => {
        seen = request
        body = await request.text()
        return [201, { ok: true }]
      })
    await client({ baseUrl: `${BASE}/v1/`, headers: { 'api-key': 'k-1234' } }).request({
      method: 'POST',
      path: 'things',
      query: { a: '1', flag: true, n: 0, empty: undefined, none: null },
      headers: { 'X-Trace': 't-1', 'x-skip': undefined },
      json: { hello: 'world' },
    })
    expect(seen!.headers.get('api-key')).toBe('k-1234')
    expect(seen!.headers.get('x-trace')).toBe('t-1')
    expect(seen!.headers.has('x-skip')).toBe(false)
    expect(seen!.headers.get('content-type')).toBe('application/json')
    expect(seen!.headers.get('accept')).toBe('application/json')
    expect(JSON.parse(body)).toEqual({ hello: 'world' })
  })

  it('rejects a base URL that is not http(s)', () => {
    expect(() => client({ baseUrl: 'ftp://svc.test' })).toThrow(/http or https/)
  })

  it.each([
    'not a url?apiKey=sk_live_SECRET_9f8e7d',
    'api.example.com/v1?api-key=sk_live_SECRET_9f8e7d',
    'api.example.com?access_token=sk_live_SECRET_9f8e7d',
  ])('rejects the base URL %s without echoing its credential', (baseUrl) => {
    let thrown: unknown
    try {
      client({ baseUrl })
    } catch (error) {
      thrown = error
    }
    expect(thrown).toBeInstanceOf(ProvingKitError)
    expect(String(thrown)).toContain('not a valid URL')
    expect(String(thrown)).not.toContain('sk_live_SECRET_9f8e7d')
  })
})

describe('downloads', () => {
  it('a redirect to a location that is not a URL is an InvalidResponseError, not a TypeError', async () => {
    nock(BASE).get('/files/a.json').reply(302, '', { location: 'http://[not-a-host/x' })
    const error = await client()
      .download(`${BASE}/files/a.json`, { maxBytes: 1_000, write: async () => {} })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect((error as Error).message).toMatch(/Refused to follow .* to a location that is not a URL \(a 302 redirect/)
  })
})

describe("the service's clock (issue 24: the journal's re-run window)", () => {
  it("serviceOffsetMs: the service's time minus ours from the latest Date header, a lower bound; none before an answer with one", async () => {
    const http = client()
    expect(http.serviceOffsetMs()).toBeUndefined()
    nock(BASE).get('/no-date').reply(200, {})
    await http.request({ method: 'GET', path: '/no-date' })
    expect(http.serviceOffsetMs()).toBeUndefined()
    // The service's clock 90 s ahead of ours; the header is whole seconds.
    nock(BASE)
      .get('/ahead')
      .reply(200, {}, { date: new Date(Date.now() + 90_000).toUTCString() })
    await http.request({ method: 'GET', path: '/ahead' })
    const offset = http.serviceOffsetMs()!
    expect(offset).toBeLessThanOrEqual(90_000)
    expect(offset).toBeGreaterThan(90_000 - 1_000 - 5_000)
    nock(BASE).get('/garbled').reply(200, {}, { date: 'yesterday' })
    await http.request({ method: 'GET', path: '/garbled' })
    expect(http.serviceOffsetMs()).toBe(offset)
  })
})
