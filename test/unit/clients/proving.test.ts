import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import busboy from 'busboy'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { deriveDedupId, ProvingClient, type QueryProgress } from '../../../src/clients/proving.ts'
import {
  AbortedError,
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  NetworkError,
  ServiceError,
  UnknownStatusError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { VERSION } from '../../../src/core/version.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { bucket, metadataUrls, recordD, recordL, recordR, type Overrides } from '../../helpers/records.ts'
import { failure } from '../../helpers/failure.ts'

const BASE = 'https://proving.test'
const KEY = 'pk_test_0123456789abcdef'
const UA = `proving-kit/${VERSION}`
const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
const L2_PROOF = '/v1/l2/proving-query/proof-verification'
const FIXTURE_PIE = new URL('../../../examples/fib/pie.zip', import.meta.url)

type Seen = { method: string; url: URL; headers: Headers }
type Upload = {
  url: URL
  headers: Headers
  length: number
  fields: Record<string, string>
  files: Record<string, { filename: string; mimeType: string; data: Buffer }>
}

let dir: string
let pie: string
let otherPie: string
let proof: string
let clock: FakeClock
let logs: { level: string; message: string }[]

const logger: Logger = {
  debug: (message) => logs.push({ level: 'debug', message }),
  info: (message) => logs.push({ level: 'info', message }),
  warn: (message) => logs.push({ level: 'warn', message }),
  error: (message) => logs.push({ level: 'error', message }),
}

function connectionError(code: string): Error {
  return Object.assign(new Error(`simulated ${code}`), { code })
}

function provingClient(options: { apiKey?: string | undefined } = { apiKey: KEY }) {
  return new ProvingClient({ baseUrl: BASE, apiKey: options.apiKey, logger, clock })
}

/**
 * The fake service. Every interceptor requires the User-Agent, so a request without it gets
 * nock's 501 and fails the test; every request that reached it is in `seen`.
 */
function service(options: { badheaders?: string[]; reqheaders?: Record<string, string> } = {}) {
  const scope = nock(BASE, {
    reqheaders: { 'user-agent': UA, ...options.reqheaders },
    badheaders: options.badheaders ?? [],
  })
  const seen: Seen[] = []
  scope.on('request', (request: Request) => {
    seen.push({ method: request.method, url: new URL(request.url), headers: request.headers })
  })
  return { scope, seen }
}

/** Reads a multipart request as a server would. */
async function readUpload(request: Request): Promise<Upload> {
  const bytes = Buffer.from(await request.arrayBuffer())
  const upload: Upload = {
    url: new URL(request.url),
    headers: request.headers,
    length: bytes.length,
    fields: {},
    files: {},
  }
  await new Promise<void>((resolve, reject) => {
    const parser = busboy({ headers: { 'content-type': request.headers.get('content-type') ?? '' } })
    parser.on('field', (name, value) => {
      upload.fields[name] = value
    })
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        upload.files[name] = { filename: info.filename ?? '', mimeType: info.mimeType, data: Buffer.concat(chunks) }
      })
    })
    parser.on('close', resolve)
    parser.on('error', reject)
    parser.end(bytes)
  })
  return upload
}

/** A reply function that records the upload and answers `status` with `body`. */
function recordUpload(uploads: Upload[], status: number, body: unknown) {
  return async (request: Request) => {
    uploads.push(await readUpload(request))
    return [status, body as nock.ReplyBody] as const
  }
}

/** Catches any request to the service: used to prove that bad input sends nothing. */
function trap() {
  const scope = nock(BASE)
  let count = 0
  scope.on('request', () => count++)
  for (const method of ['get', 'post', 'put', 'delete'] as const) {
    scope[method](() => true)
      .query(true)
      .reply(599, {})
      .persist()
  }
  return { scope, count: () => count }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pk-proving-client-'))
  pie = join(dir, 'pie.zip')
  otherPie = join(dir, 'other-pie.zip')
  proof = join(dir, 'my-proof.json')
  await copyFile(FIXTURE_PIE, pie)
  await writeFile(otherPie, Buffer.concat([await readFile(FIXTURE_PIE), Buffer.from([0])]))
  await writeFile(proof, JSON.stringify({ proof_parameters: { stark: {} }, proof_hex: '0x01' }))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

beforeEach(() => {
  nock.disableNetConnect()
  clock = new FakeClock()
  logs = []
})

afterEach(() => {
  nock.cleanAll()
  nock.enableNetConnect()
})

describe('endpoints: method, path, headers', () => {
  it('retryQuery: POST /proving-queries/{id}/retry with the api-key header, record R back', async () => {
    const { scope, seen } = service({ reqheaders: { 'api-key': KEY } })
    scope.post('/proving-queries/q-1/retry').reply(200, { provingQuery: recordR(), message: 'Query retry initiated' })
    const response = await provingClient().retryQuery('q-1')
    expect(response.message).toBe('Query retry initiated')
    expect(response.provingQuery.status).toBe('RECEIVED')
    expect(seen).toHaveLength(1)
    expect(seen[0]!.url.search).toBe('')
  })

  it('retryQuery: 400 QUERY_NOT_RETRIABLE is a ServiceError with the code, sent once', async () => {
    const { scope, seen } = service()
    scope.post('/proving-queries/q-1/retry').times(3).reply(400, { message: 'QUERY_NOT_RETRIABLE' })
    const error = await failure(provingClient().retryQuery('q-1'))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 400, code: 'QUERY_NOT_RETRIABLE', retryable: false })
    expect(seen).toHaveLength(1)
  })

  it('retryQuery: the id is path-encoded', async () => {
    const { scope } = service()
    scope
      .post('/proving-queries/q%3A1%2Bx/retry')
      .reply(200, { provingQuery: recordR(), message: 'Query retry initiated' })
    await provingClient().retryQuery('q:1+x')
  })

  it('getQuery: GET /proving-query/{id} with no key at all, record D back', async () => {
    const { scope, seen } = service({ badheaders: ['api-key', 'x-api-key'] })
    scope.get('/proving-query/q-1').reply(200, { provingQuery: recordD(), metadataUrls: metadataUrls() })
    const response = await provingClient().getQuery('q-1')
    expect(response.provingQuery.id).toBe('q-1')
    expect(response.metadataUrls).toHaveLength(3)
    expect(seen[0]!.url.search).toBe('')
  })

  it('getQueryDetails: GET /docs/proving-query/{id} with the api-key header, record L back', async () => {
    const { scope, seen } = service({ reqheaders: { 'api-key': KEY } })
    scope
      .get('/docs/proving-query/q-1')
      .reply(200, { provingQuery: recordL({ status: 'DONE' }), metadataUrls: metadataUrls() })
    const response = await provingClient().getQueryDetails('q-1')
    expect(response.provingQuery.status).toBe('DONE')
    expect(seen[0]!.url.search).toBe('')
  })

  it('listQueries: GET /docs/proving-queries with limit, offset, search, network and the api-key header', async () => {
    const { scope } = service({ reqheaders: { 'api-key': KEY } })
    scope
      .get('/docs/proving-queries')
      .query({ limit: '20', offset: '40', search: 'build-42', network: 'MAINNET' })
      .reply(200, { provingQueries: [recordL()], total: 41 })
    const page = await provingClient().listQueries({ limit: 20, offset: 40, search: 'build-42', network: 'MAINNET' })
    expect(page.total).toBe(41)
    expect(page.provingQueries).toHaveLength(1)
  })

  it('closeBucket: POST /buckets/close?bucketId= with the api-key header, no body', async () => {
    const { scope } = service({ reqheaders: { 'api-key': KEY } })
    let body = ''
    scope
      .post('/buckets/close')
      .query({ bucketId: 'b-1' })
      .reply(async (request: Request) => {
        body = await request.text()
        return [200, { provingBucket: bucket({ status: 'IN_PROGRESS' }) }] as const
      })
    const closed = await provingClient().closeBucket('b-1')
    expect(closed.status).toBe('IN_PROGRESS')
    expect(body).toBe('')
  })

  it('closeBucket: 404 { error: BUCKET_NOT_FOUND } gives the code', async () => {
    const { scope, seen } = service()
    scope.post('/buckets/close').query({ bucketId: 'b-9' }).reply(404, { error: 'BUCKET_NOT_FOUND' })
    const error = await failure(provingClient().closeBucket('b-9'))
    expect(error).toMatchObject({ status: 404, code: 'BUCKET_NOT_FOUND' })
    expect(seen).toHaveLength(1)
  })

  it('createBucket: POST /buckets with a JSON body and the api-key header', async () => {
    const { scope } = service({ reqheaders: { 'api-key': KEY, 'content-type': 'application/json' } })
    scope
      .post('/buckets', { aggregatorVersion: 'v1', nodeWidth: '4', mockProof: true })
      .reply(200, { provingBucket: bucket({ nodeWidth: 4, mockProof: true }) })
    const created = await provingClient().createBucket({ aggregatorVersion: 'v1', nodeWidth: 4, mockProof: true })
    expect(created).toMatchObject({ id: 'b-1', nodeWidth: 4, status: 'OPEN' })
  })

  it('getBucket and isAlive', async () => {
    const { scope } = service()
    scope
      .get('/buckets/b-1')
      .reply(200, { bucket: bucket(), queries: [recordD({ bucketId: 'b-1', bucketJobIndex: 0 })] })
      .get('/is-alive')
      .reply(200, { alive: true })
    const details = await provingClient().getBucket('b-1')
    expect(details.queries[0]!.bucketJobIndex).toBe(0)
    expect(await provingClient().isAlive()).toBe(true)
  })
})

describe('L2 submissions: apiKey in the query, multipart body', () => {
  it('submitPie sends pieFile (pie.zip, application/zip), mockFactHash, prover, layout; the length is exact', async () => {
    const pieBytes = await readFile(pie)
    const uploads: Upload[] = []
    const { scope } = service()
    scope
      .post(L2_PIE)
      .query({ apiKey: KEY })
      .reply(recordUpload(uploads, 201, { provingQueryId: 'q-77' }))
    const result = await provingClient().submitPie({ pieZip: pie })
    expect(result).toEqual({ provingQueryId: 'q-77' })
    const [upload] = uploads
    expect(upload!.url.searchParams.get('apiKey')).toBe(KEY)
    expect(upload!.headers.get('content-type')).toMatch(/^multipart\/form-data; boundary=/)
    expect(Number(upload!.headers.get('content-length'))).toBe(upload!.length)
    expect(upload!.fields).toEqual({ mockFactHash: 'false', prover: 'svc_sharp', layout: 'auto' })
    expect(upload!.files.pieFile!.filename).toBe('pie.zip')
    expect(upload!.files.pieFile!.mimeType).toBe('application/zip')
    expect(upload!.files.pieFile!.data.equals(pieBytes)).toBe(true)
  })

  it('submitPie sends the options it is given; booleans as "true"/"false"', async () => {
    const uploads: Upload[] = []
    const { scope } = service()
    scope
      .post(L2_PIE)
      .query({ apiKey: KEY })
      .reply(recordUpload(uploads, 201, { provingQueryId: 'q-78' }))
    await provingClient().submitPie({
      pieZip: pie,
      mockFactHash: true,
      prover: 'other_prover',
      layout: 'recursive_with_poseidon',
    })
    expect(uploads[0]!.fields).toEqual({
      mockFactHash: 'true',
      prover: 'other_prover',
      layout: 'recursive_with_poseidon',
    })
  })

  it('submitPie accepts any 2xx', async () => {
    const { scope } = service()
    scope.post(L2_PIE).query(true).reply(200, { provingQueryId: 'q-79' })
    expect(await provingClient().submitPie({ pieZip: pie })).toEqual({ provingQueryId: 'q-79' })
  })

  it('submitProofVerification sends proofFile (application/json), mockFactHash, stoneVersion, memoryVerification', async () => {
    const proofBytes = await readFile(proof)
    const uploads: Upload[] = []
    const { scope } = service()
    scope
      .post(L2_PROOF)
      .query({ apiKey: KEY })
      .reply(recordUpload(uploads, 201, { provingQueryId: 'q-80' }))
    const result = await provingClient().submitProofVerification({
      proof,
      stoneVersion: 'stone6',
      memoryVerification: 'relaxed',
      mockFactHash: true,
    })
    expect(result).toEqual({ provingQueryId: 'q-80' })
    const [upload] = uploads
    expect(Number(upload!.headers.get('content-length'))).toBe(upload!.length)
    expect(upload!.fields).toEqual({ mockFactHash: 'true', stoneVersion: 'stone6', memoryVerification: 'relaxed' })
    expect(upload!.files.proofFile!.mimeType).toBe('application/json')
    expect(upload!.files.proofFile!.filename).toMatch(/\.json$/)
    expect(upload!.files.proofFile!.data.equals(proofBytes)).toBe(true)
  })

  it('submitPie after a connection reset mid-request: SubmissionOutcomeUnknownError, not sent again', async () => {
    const { scope, seen } = service()
    scope.post(L2_PIE).query(true).times(5).replyWithError(connectionError('ECONNRESET'))
    const error = await failure(provingClient().submitPie({ pieZip: pie }))
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(error.message).toContain('not sent again')
    expect(error.message).toMatch(
      /Look for a new query among your queries \(ProvingClient.listQueries\) before submitting again/,
    )
    expect((error as SubmissionOutcomeUnknownError).nextStep).toEqual({ kind: 'look-for-query' })
    expect(error.walk((e) => e instanceof NetworkError)).toBeInstanceOf(NetworkError)
    expect(seen).toHaveLength(1)
  })

  it.each([500, 502, 504])('submitPie answered %i: SubmissionOutcomeUnknownError, sent once', async (status) => {
    const { scope, seen } = service()
    scope.post(L2_PIE).query(true).times(5).reply(status, '<html>gateway</html>')
    const error = await failure(provingClient().submitPie({ pieZip: pie }))
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(seen).toHaveLength(1)
  })

  it('submitPie answered 502 with a gateway page larger than the error-body cap: still ambiguous, sent once', async () => {
    const { scope, seen } = service()
    const page = `<html><head><title>502 Bad Gateway</title></head><body>${'<p>x</p>'.repeat(20_000)}</body></html>`
    scope.post(L2_PIE).query(true).times(5).reply(502, page, { 'content-type': 'text/html' })
    const error = await failure(provingClient().submitPie({ pieZip: pie }))
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(error.walk((e) => e instanceof ServiceError)).toMatchObject({ status: 502 })
    expect(seen).toHaveLength(1)
  })

  it('submitProofVerification after a timeout: SubmissionOutcomeUnknownError, sent once', async () => {
    const { scope, seen } = service()
    scope.post(L2_PROOF).query(true).times(5).replyWithError(connectionError('UND_ERR_HEADERS_TIMEOUT'))
    const error = await failure(
      provingClient().submitProofVerification({ proof, stoneVersion: 'stone6', memoryVerification: 'strict' }),
    )
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(seen).toHaveLength(1)
  })

  it('submitPie refused before processing (connection refused, 429) is sent again and succeeds', async () => {
    const uploads: Upload[] = []
    const { scope, seen } = service()
    scope
      .post(L2_PIE)
      .query(true)
      .replyWithError(connectionError('ECONNREFUSED'))
      .post(L2_PIE)
      .query(true)
      .reply(429, { error: 'Rate limit exceeded' })
      .post(L2_PIE)
      .query(true)
      .reply(recordUpload(uploads, 201, { provingQueryId: 'q-81' }))
    expect(await provingClient().submitPie({ pieZip: pie })).toEqual({ provingQueryId: 'q-81' })
    expect(seen).toHaveLength(3)
    expect(uploads[0]!.files.pieFile!.data.equals(await readFile(pie))).toBe(true)
  })

  it('submitPie answered 400: a plain ServiceError (nothing ambiguous about it)', async () => {
    const { scope } = service()
    scope.post(L2_PIE).query(true).reply(400, { message: 'Invalid layout' })
    const error = await failure(provingClient().submitPie({ pieZip: pie }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).not.toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(error.status).toBe(400)
  })
})

describe('bad input is rejected before any request', () => {
  let catcher: ReturnType<typeof trap>
  beforeEach(() => {
    catcher = trap()
  })
  afterEach(() => {
    expect(catcher.count()).toBe(0)
    expect(catcher.scope.isDone()).toBe(false)
  })

  async function rejected(call: () => Promise<unknown>, input: string): Promise<InvalidInputError> {
    const error = await failure(call())
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).input).toBe(input)
    return error as InvalidInputError
  }

  it('layout "fast layout" (not a name)', async () => {
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    const error = await rejected(() => provingClient().submitPie({ pieZip: pie, layout: 'fast layout' }), 'layout')
    expect(error.message).toContain('auto, recursive')
  })

  it('stoneVersion "stone7"', async () => {
    const error = await rejected(
      // @ts-expect-error a JavaScript caller's wrong value: refused at run time
      () => provingClient().submitProofVerification({ proof, stoneVersion: 'stone7', memoryVerification: 'strict' }),
      'stoneVersion',
    )
    expect(error.message).toContain('stone5, stone6')
  })

  it('memoryVerification "loose"', async () => {
    await rejected(
      // @ts-expect-error a JavaScript caller's wrong value: refused at run time
      () => provingClient().submitProofVerification({ proof, stoneVersion: 'stone6', memoryVerification: 'loose' }),
      'memoryVerification',
    )
  })

  it('a missing file', async () => {
    const error = await rejected(() => provingClient().submitPie({ pieZip: join(dir, 'nope.zip') }), 'pieZip')
    expect(error.message).toContain('no file at')
    await rejected(
      () =>
        provingClient().submitProofVerification({
          proof: join(dir, 'nope.json'),
          stoneVersion: 'stone6',
          memoryVerification: 'strict',
        }),
      'proof',
    )
  })

  it('a directory instead of a file', async () => {
    await rejected(() => provingClient().submitPie({ pieZip: dir }), 'pieZip')
  })

  it('an empty prover', async () => {
    await rejected(() => provingClient().submitPie({ pieZip: pie, prover: '  ' }), 'prover')
  })

  it('an empty or malformed query id', async () => {
    await rejected(() => provingClient().getQuery(''), 'queryId')
    await rejected(() => provingClient().getQuery('   '), 'queryId')
    await rejected(() => provingClient().getQueryDetails('a/b'), 'queryId')
    await rejected(() => provingClient().retryQuery(''), 'queryId')
    await rejected(() => provingClient().waitForQuery(''), 'queryId')
    await rejected(() => provingClient().closeBucket(''), 'bucketId')
  })

  it('limit 101, limit 0, a negative offset, an unknown network', async () => {
    const error = await rejected(() => provingClient().listQueries({ limit: 101 }), 'limit')
    expect(error.message).toContain('1 to 100')
    await rejected(() => provingClient().listQueries({ limit: 0 }), 'limit')
    await rejected(() => provingClient().listQueries({ limit: 2.5 }), 'limit')
    await rejected(() => provingClient().listQueries({ offset: -1 }), 'offset')
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    await rejected(() => provingClient().listQueries({ network: 'DEVNET' }), 'network')
    await rejected(async () => {
      for await (const _ of provingClient().iterateQueries({ limit: 101 })) void _
    }, 'limit')
  })

  it('no API key where one is needed', async () => {
    const keyless = provingClient({ apiKey: undefined })
    await rejected(() => keyless.retryQuery('q-1'), 'apiKey')
    await rejected(() => keyless.submitPie({ pieZip: pie }), 'apiKey')
    await rejected(() => keyless.listQueries(), 'apiKey')
    await rejected(() => provingClient({ apiKey: '   ' }).closeBucket('b-1'), 'apiKey')
  })

  it('submitQuery: unknown job size, no source, two sources', async () => {
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    await rejected(() => provingClient().submitQuery({ declaredJobSize: 'XL', pieZip: pie }), 'declaredJobSize')
    await rejected(() => provingClient().submitQuery({ declaredJobSize: 'S' }), 'pieZip')
    await rejected(
      () => provingClient().submitQuery({ declaredJobSize: 'S', pieZip: pie, programHash: '0x1' }),
      'pieZip',
    )
    await rejected(
      () => provingClient().submitQuery({ declaredJobSize: 'S', pieZip: pie, bucketJobIndex: -1 }),
      'bucketJobIndex',
    )
  })

  it('createBucket without aggregatorVersion', async () => {
    await rejected(() => provingClient().createBucket({ aggregatorVersion: ' ' }), 'aggregatorVersion')
  })
})

describe('iterateQueries', () => {
  it('walks every page with limit/offset and stops at total', async () => {
    const { scope, seen } = service({ reqheaders: { 'api-key': KEY } })
    const all = ['q-1', 'q-2', 'q-3', 'q-4', 'q-5'].map((id) => recordL({ id }))
    for (const offset of [0, 2, 4]) {
      scope
        .get('/docs/proving-queries')
        .query({ limit: '2', offset: String(offset) })
        .reply(200, { provingQueries: all.slice(offset, offset + 2), total: 5 })
    }
    const ids: string[] = []
    for await (const query of provingClient().iterateQueries({ limit: 2 })) ids.push(query.id)
    expect(ids).toEqual(['q-1', 'q-2', 'q-3', 'q-4', 'q-5'])
    expect(seen).toHaveLength(3)
    expect(scope.isDone()).toBe(true)
  })

  it('uses 100 per page by default and stops on an empty page even if total says more', async () => {
    const { scope, seen } = service()
    scope
      .get('/docs/proving-queries')
      .query({ limit: '100', offset: '0' })
      .reply(200, { provingQueries: [recordL()], total: 10 })
      .get('/docs/proving-queries')
      .query({ limit: '100', offset: '1' })
      .reply(200, { provingQueries: [], total: 10 })
    const ids: string[] = []
    for await (const query of provingClient().iterateQueries()) ids.push(query.id)
    expect(ids).toEqual(['q-1'])
    expect(seen).toHaveLength(2)
  })

  it('makes one request for an empty account', async () => {
    const { scope, seen } = service()
    scope.get('/docs/proving-queries').query(true).reply(200, { provingQueries: [], total: 0 })
    const ids: string[] = []
    for await (const query of provingClient().iterateQueries()) ids.push(query.id)
    expect(ids).toEqual([])
    expect(seen).toHaveLength(1)
  })
})

describe('submitQuery (extension): dedupId makes a lost answer safe', () => {
  it('sends the general fields with the api-key header and a derived dedupId', async () => {
    const uploads: Upload[] = []
    const { scope } = service({ reqheaders: { 'api-key': KEY } })
    scope.post('/proving-query').reply(recordUpload(uploads, 201, { provingQueryId: 'q-100' }))
    const result = await provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie, externalId: 'build-42' })
    expect(result).toEqual({ provingQueryId: 'q-100', deduplicated: false })
    const [upload] = uploads
    expect(upload!.url.search).toBe('')
    expect(Number(upload!.headers.get('content-length'))).toBe(upload!.length)
    expect(upload!.fields).toMatchObject({
      declaredJobSize: 'XS',
      layout: 'auto',
      cairoVm: 'rust',
      cairoVersion: 'cairo0',
      result: 'PROOF_GENERATION',
      mockFactHash: 'false',
      network: 'TESTNET',
      externalId: 'build-42',
    })
    expect(upload!.fields.dedupId).toMatch(/^pk-[0-9a-f]{40}$/)
    expect(upload!.files.pieFile!.mimeType).toBe('application/zip')
  })

  // The first POST is read in full (to learn the dedupId it carried), then the connection is
  // reset: throwing from a nock reply function is replyWithError after the body arrived.
  it('after a lost answer, finds the query by dedupId and returns it without a second POST', async () => {
    const uploads: Upload[] = []
    const { scope, seen } = service()
    let lookedUp: string | null = null
    scope
      .post('/proving-query')
      .reply(async (request: Request) => {
        uploads.push(await readUpload(request))
        throw connectionError('ECONNRESET')
      })
      .get('/proving-query-by-dedup-id')
      .query(true)
      .reply((request: Request) => {
        lookedUp = new URL(request.url).searchParams.get('dedupId')
        return [200, { provingQuery: recordD({ id: 'q-7', dedupId: lookedUp }) }] as const
      })
      .post('/proving-query')
      .reply(201, { provingQueryId: 'q-duplicate' })
    const result = await provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie })
    expect(result).toEqual({ provingQueryId: 'q-7', deduplicated: true })
    expect(lookedUp).toBe(uploads[0]!.fields.dedupId)
    expect(seen.filter((request) => request.method === 'POST')).toHaveLength(1)
    expect(seen.find((request) => request.method === 'GET')!.headers.get('api-key')).toBe(KEY)
    expect(logs.some((line) => line.level === 'warn' && line.message.includes(uploads[0]!.fields.dedupId!))).toBe(true)
  })

  it('after a lost answer with no such query (404), resubmits exactly once with the same dedupId', async () => {
    const uploads: Upload[] = []
    const { scope, seen } = service()
    scope
      .post('/proving-query')
      .reply(async (request: Request) => {
        uploads.push(await readUpload(request))
        throw connectionError('ECONNRESET')
      })
      .get('/proving-query-by-dedup-id')
      .query(true)
      .reply(404, { message: 'PROVING_QUERY_NOT_FOUND' })
      .post('/proving-query')
      .reply(recordUpload(uploads, 201, { provingQueryId: 'q-8' }))
    const result = await provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie })
    expect(result).toEqual({ provingQueryId: 'q-8', deduplicated: false })
    expect(seen.filter((request) => request.method === 'POST')).toHaveLength(2)
    expect(uploads).toHaveLength(2)
    expect(uploads[1]!.fields.dedupId).toBe(uploads[0]!.fields.dedupId)
    expect(uploads[1]!.files.pieFile!.data.equals(uploads[0]!.files.pieFile!.data)).toBe(true)
  })

  it('a second lost answer is not followed by a third POST', async () => {
    const { scope, seen } = service()
    scope
      .post('/proving-query')
      .times(2)
      .replyWithError(connectionError('ECONNRESET'))
      .get('/proving-query-by-dedup-id')
      .query(true)
      .reply(404, { message: 'PROVING_QUERY_NOT_FOUND' })
      .post('/proving-query')
      .reply(201, { provingQueryId: 'q-third' })
    await failure(provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie }))
    expect(seen.filter((request) => request.method === 'POST')).toHaveLength(2)
  })

  it('a plain 4xx is not treated as a lost answer: no lookup', async () => {
    const { scope, seen } = service()
    scope.post('/proving-query').reply(400, { message: 'Invalid declaredJobSize' })
    await failure(provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie }))
    expect(seen).toHaveLength(1)
  })

  it('the derived dedupId is stable for the same file and parameters, and differs when they differ', async () => {
    const uploads: Upload[] = []
    const { scope } = service()
    scope
      .post('/proving-query')
      .times(6)
      .reply(recordUpload(uploads, 201, { provingQueryId: 'q' }))
    const client = provingClient()
    await client.submitQuery({ declaredJobSize: 'XS', pieZip: pie, layout: 'recursive' })
    await client.submitQuery({ declaredJobSize: 'XS', pieZip: pie, layout: 'recursive' })
    await client.submitQuery({ declaredJobSize: 'XS', pieZip: pie, layout: 'small' })
    await client.submitQuery({ declaredJobSize: 'XS', pieZip: pie, layout: 'recursive', mockFactHash: true })
    await client.submitQuery({ declaredJobSize: 'XS', pieZip: otherPie, layout: 'recursive' })
    await client.submitQuery({ declaredJobSize: 'XS', pieZip: pie, layout: 'recursive', dedupId: 'my-own-id' })
    const ids = uploads.map((upload) => upload.fields.dedupId)
    expect(ids[1]).toBe(ids[0])
    expect(new Set(ids.slice(0, 5)).size).toBe(4)
    expect(ids[5]).toBe('my-own-id')
  })

  it('deriveDedupId ignores file parts and the order of parameters', () => {
    const a = deriveDedupId('abc', { layout: 'auto', network: 'TESTNET', pieFile: { path: '/x' } })
    const b = deriveDedupId('abc', { network: 'TESTNET', layout: 'auto', pieFile: { path: '/y' }, dedupId: 'zzz' })
    expect(a).toBe(b)
    expect(deriveDedupId('abd', { layout: 'auto', network: 'TESTNET' })).not.toBe(a)
  })
})

describe('waitForQuery', () => {
  /** These cases script the docs path; the choice of path has its own tests (test/contract). */
  const docsClient = () => new ProvingClient({ baseUrl: BASE, apiKey: KEY, logger, clock, readPaths: 'docs' })
  type State = { status: string; step?: string | null } | number | 'reset'

  /** The docs endpoint answers the states in order; the last one repeats. */
  function statuses(states: State[], overrides: Overrides = {}) {
    const { scope, seen } = service({ reqheaders: { 'api-key': KEY } })
    let index = 0
    scope
      .get('/docs/proving-query/q-1')
      .times(10_000)
      .reply(() => {
        const state = states[Math.min(index++, states.length - 1)]!
        if (state === 'reset') throw connectionError('ECONNRESET')
        if (typeof state === 'number')
          return [state, { message: state === 404 ? 'PROVING_QUERY_NOT_FOUND' : 'UNAVAILABLE' }] as const
        return [200, { provingQuery: recordL({ ...overrides, ...state }), metadataUrls: metadataUrls() }] as const
      })
    return { scope, seen }
  }

  it('polls until DONE and returns the record with its artifact URLs', async () => {
    const { seen } = statuses([
      { status: 'RECEIVED', step: null },
      { status: 'IN_PROGRESS', step: 'TRACE_GENERATION' },
      { status: 'IN_PROGRESS', step: 'PROOF_GENERATION' },
      { status: 'DONE', step: 'PROOF_VERIFICATION_ON_L2' },
    ])
    const result = await docsClient().waitForQuery('q-1')
    expect(result.provingQuery.status).toBe('DONE')
    expect(result.metadataUrls.at(-1)).toMatch(/\/metadata\.json$/)
    expect(seen).toHaveLength(4)
    expect(clock.sleeps).toHaveLength(3)
  })

  it('FAILED is a result, not an exception', async () => {
    statuses([{ status: 'IN_PROGRESS' }, { status: 'FAILED', step: 'PROOF_GENERATION' }], {
      errorReason: 'OUT_OF_RESOURCES',
    })
    const result = await docsClient().waitForQuery('q-1')
    expect(result.provingQuery).toMatchObject({ status: 'FAILED', errorReason: 'OUT_OF_RESOURCES' })
  })

  it('onProgress is called once per change of status or step', async () => {
    statuses([
      { status: 'RECEIVED', step: null },
      { status: 'RECEIVED', step: null },
      { status: 'IN_PROGRESS', step: 'TRACE_GENERATION' },
      { status: 'IN_PROGRESS', step: 'TRACE_GENERATION' },
      { status: 'IN_PROGRESS', step: 'PROOF_GENERATION' },
      { status: 'IN_PROGRESS', step: 'PROOF_GENERATION' },
      { status: 'IN_PROGRESS', step: 'PROOF_GENERATION' },
      { status: 'DONE', step: 'PROOF_GENERATION' },
    ])
    const progress: QueryProgress[] = []
    await docsClient().waitForQuery('q-1', { onProgress: (p) => progress.push(p) })
    expect(progress.map((p) => `${p.status}/${p.step}`)).toEqual([
      'RECEIVED/null',
      'IN_PROGRESS/TRACE_GENERATION',
      'IN_PROGRESS/PROOF_GENERATION',
      'DONE/PROOF_GENERATION',
    ])
    expect(progress[0]!.queryId).toBe('q-1')
    expect(progress[0]!.elapsedMs).toBe(0)
    expect(progress[3]!.elapsedMs).toBe(clock.slept)
  })

  it('times out with WaitTimeoutError and what it waited for, no CLI advice in the message', async () => {
    statuses([{ status: 'IN_PROGRESS', step: 'PROOF_GENERATION' }])
    const error = await failure(docsClient().waitForQuery('q-1', { timeoutMs: 120_000 }))
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect(error.message).toContain('Timed out after 2m waiting for query q-1')
    expect(error.message).not.toContain('proving query wait')
    expect((error as WaitTimeoutError).waitedFor).toEqual({ kind: 'query', id: 'q-1' })
    expect((error as WaitTimeoutError).lastSeen).toMatchObject({ id: 'q-1', status: 'IN_PROGRESS' })
    expect(clock.slept).toBe(120_000)
  })

  it('an abort ends the wait with AbortedError', async () => {
    const { seen } = statuses([{ status: 'IN_PROGRESS' }])
    const controller = new AbortController()
    clock.onSleep = () => {
      if (clock.sleeps.length === 3) controller.abort()
    }
    const error = await failure(docsClient().waitForQuery('q-1', { signal: controller.signal }))
    expect(error).toBeInstanceOf(AbortedError)
    expect((error as AbortedError).waitedFor).toEqual({ kind: 'query', id: 'q-1' })
    expect(seen).toHaveLength(3)
  })

  it('an unknown status ends the wait with UnknownStatusError (never loops)', async () => {
    const { seen } = statuses([{ status: 'IN_PROGRESS' }, { status: 'ARCHIVED' }])
    const error = await failure(docsClient().waitForQuery('q-1'))
    expect(error).toBeInstanceOf(UnknownStatusError)
    expect(error.message).toContain('"ARCHIVED"')
    expect(seen).toHaveLength(2)
  })

  it("a burst of 503s and resets longer than one request's retries does not end it", async () => {
    const { seen } = statuses([
      { status: 'IN_PROGRESS' },
      ...Array<State>(8).fill(503),
      'reset',
      'reset',
      { status: 'DONE' },
    ])
    const result = await docsClient().waitForQuery('q-1')
    expect(result.provingQuery.status).toBe('DONE')
    expect(seen).toHaveLength(12)
    expect(logs.some((line) => line.level === 'warn' && line.message.includes('still waiting'))).toBe(true)
  })

  it('a 404 ends it with the service error', async () => {
    const { seen } = statuses([{ status: 'IN_PROGRESS' }, 404])
    const error = await failure(docsClient().waitForQuery('q-1'))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 404, code: 'PROVING_QUERY_NOT_FOUND' })
    expect(seen).toHaveLength(2)
  })

  it('warns once when a step lasts longer than stuckAfterMs', async () => {
    const { scope } = service()
    const start = clock.now()
    scope
      .get('/docs/proving-query/q-1')
      .times(1_000)
      .reply(() => {
        const elapsed = clock.now() - start
        const state =
          elapsed < 30_000
            ? { status: 'IN_PROGRESS', step: 'TRACE_GENERATION' }
            : elapsed < 600_000
              ? { status: 'IN_PROGRESS', step: 'PROOF_GENERATION' }
              : { status: 'DONE', step: 'PROOF_GENERATION' }
        return [200, { provingQuery: recordL(state), metadataUrls: [] }] as const
      })
    const stuck: (QueryProgress & { stepElapsedMs: number })[] = []
    await docsClient().waitForQuery('q-1', { stuckAfterMs: 120_000, onStuck: (p) => stuck.push(p) })
    expect(stuck).toHaveLength(1)
    expect(stuck[0]!.step).toBe('PROOF_GENERATION')
    expect(stuck[0]!.stepElapsedMs).toBeGreaterThan(120_000)
    const warnings = logs.filter((line) => line.level === 'warn' && line.message.includes('longer than expected'))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]!.message).toContain('PROOF_GENERATION')
  })

  it('without an API key, reads record D and uses its status when the service sends one', async () => {
    const { scope, seen } = service({ badheaders: ['api-key'] })
    scope
      .get('/proving-query/q-1')
      .reply(200, { provingQuery: recordD({ status: 'IN_PROGRESS' }), metadataUrls: [] })
      .get('/proving-query/q-1')
      .reply(200, { provingQuery: recordD({ status: 'DONE' }), metadataUrls: metadataUrls() })
    const result = await provingClient({ apiKey: undefined }).waitForQuery('q-1')
    expect(result.provingQuery.status).toBe('DONE')
    expect(seen).toHaveLength(2)
  })

  it('without an API key and without status in D, says a key is needed', async () => {
    const { scope } = service()
    scope.get('/proving-query/q-1').reply(200, { provingQuery: recordD(), metadataUrls: [] })
    const error = await failure(provingClient({ apiKey: undefined }).waitForQuery('q-1'))
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).input).toBe('apiKey')
  })

  describe('polling cost', () => {
    function jobFinishingAt(finishAt: number) {
      const { scope, seen } = service()
      const start = clock.now()
      let seenDoneAt: number | undefined
      scope
        .get('/docs/proving-query/q-1')
        .times(10_000)
        .reply(() => {
          const done = clock.now() - start >= finishAt
          if (done) seenDoneAt ??= clock.now() - start
          return [200, { provingQuery: recordL({ status: done ? 'DONE' : 'IN_PROGRESS' }), metadataUrls: [] }] as const
        })
      return { seen, latency: () => seenDoneAt! - finishAt }
    }

    it('a 10-minute job costs at most half the requests of a `sleep 5` loop run against the same job', async () => {
      const { seen, latency } = jobFinishingAt(600_000)
      await docsClient().waitForQuery('q-1')
      expect(latency()).toBeLessThanOrEqual(30_000)
      const clientRequests = seen.length

      // The peer, measured the same way: read the query, `sleep 5`, until it is DONE.
      nock.cleanAll()
      clock = new FakeClock()
      const peer = jobFinishingAt(600_000)
      const client = docsClient()
      while ((await client.getQueryDetails('q-1')).provingQuery.status !== 'DONE') await clock.sleep(5_000)
      expect(peer.seen.length).toBeGreaterThan(100)
      expect(clientRequests).toBeLessThanOrEqual(peer.seen.length / 2)
    })

    it('a job done at 10 s is seen within 2.5 s', async () => {
      for (let run = 0; run < 10; run++) {
        nock.cleanAll()
        clock = new FakeClock()
        const { latency } = jobFinishingAt(10_000)
        await docsClient().waitForQuery('q-1')
        expect(latency()).toBeGreaterThanOrEqual(0)
        expect(latency()).toBeLessThan(2_500)
      }
    })
  })
})

describe('which path a wait reads (item 3 of issue 14: either shape)', () => {
  const client = () => new ProvingClient({ baseUrl: BASE, apiKey: KEY, logger, clock })
  const paths = (seen: Seen[]) => seen.map((request) => request.url.pathname)

  it("production's record carries status: GET /proving-query/{id} only", async () => {
    const { scope, seen } = service()
    scope.get('/proving-query/q-1').reply(200, { provingQuery: recordD({ status: 'IN_PROGRESS' }), metadataUrls: [] })
    scope
      .get('/proving-query/q-1')
      .reply(200, { provingQuery: recordD({ status: 'DONE' }), metadataUrls: metadataUrls() })
    expect((await client().waitForQuery('q-1')).provingQuery.status).toBe('DONE')
    expect(paths(seen)).toEqual(['/proving-query/q-1', '/proving-query/q-1'])
  })

  it("interface.md's record has none: the /docs/ path for the rest of the wait", async () => {
    const { scope, seen } = service()
    scope.get('/proving-query/q-1').reply(200, { provingQuery: recordD(), metadataUrls: [] })
    scope
      .get('/docs/proving-query/q-1')
      .reply(200, { provingQuery: recordL({ status: 'IN_PROGRESS' }), metadataUrls: [] })
    scope.get('/docs/proving-query/q-1').reply(200, { provingQuery: recordL({ status: 'DONE' }), metadataUrls: [] })
    expect((await client().waitForQuery('q-1')).provingQuery.status).toBe('DONE')
    expect(paths(seen)).toEqual(['/proving-query/q-1', '/docs/proving-query/q-1', '/docs/proving-query/q-1'])
  })

  it.each([
    ["a framework's JSON", { message: 'Cannot GET /proving-query/q-1', error: 'Not Found', statusCode: 404 }],
    ["a gateway's page", '<html><body>404 Not Found</body></html>'],
  ])('a no-route 404 (%s) on GET /proving-query/{id}: the /docs/ path for the rest', async (_name, body) => {
    const { scope, seen } = service()
    scope.get('/proving-query/q-1').reply(404, body)
    scope
      .get('/docs/proving-query/q-1')
      .reply(200, { provingQuery: recordL({ status: 'IN_PROGRESS' }), metadataUrls: [] })
    scope.get('/docs/proving-query/q-1').reply(200, { provingQuery: recordL({ status: 'DONE' }), metadataUrls: [] })
    expect((await client().waitForQuery('q-1')).provingQuery.status).toBe('DONE')
    expect(paths(seen)).toEqual(['/proving-query/q-1', '/docs/proving-query/q-1', '/docs/proving-query/q-1'])
  })

  it('readPaths fixes the path: docs reads /docs/ only, and its 404 ends the wait', async () => {
    const { scope, seen } = service()
    scope
      .get('/docs/proving-query/q-1')
      .reply(404, { message: 'Cannot GET /docs/proving-query/q-1', error: 'Not Found' })
    const fixed = new ProvingClient({ baseUrl: BASE, apiKey: KEY, logger, clock, readPaths: 'docs' })
    const error = await failure(fixed.waitForQuery('q-1'))
    expect(error).toMatchObject({ status: 404 })
    expect(paths(seen)).toEqual(['/docs/proving-query/q-1'])
    // And per call: production's path only, even when its record has no status.
    scope.get('/proving-query/q-1').reply(200, { provingQuery: recordD(), metadataUrls: [] })
    const noStatus = await failure(client().waitForQuery('q-1', { path: 'production' }))
    expect(noStatus).toBeInstanceOf(InvalidInputError)
    expect(paths(seen)).toEqual(['/docs/proving-query/q-1', '/proving-query/q-1'])
  })

  it("the service's own 404 (PROVING_QUERY_NOT_FOUND) is an answer, not a missing route: the wait ends", async () => {
    const { scope, seen } = service()
    scope.get('/proving-query/q-1').reply(404, { message: 'PROVING_QUERY_NOT_FOUND' })
    const error = await failure(client().waitForQuery('q-1'))
    expect(error).toMatchObject({ status: 404, code: 'PROVING_QUERY_NOT_FOUND' })
    expect(seen).toHaveLength(1)
  })

  it('both paths without a route: the second 404 ends the wait (no ping-pong)', async () => {
    const { scope, seen } = service()
    scope.get('/proving-query/q-1').reply(404, 'Cannot GET')
    scope.get('/docs/proving-query/q-1').reply(404, 'Cannot GET')
    const error = await failure(client().waitForQuery('q-1'))
    expect(error).toMatchObject({ status: 404 })
    expect(seen).toHaveLength(2)
  })
})

describe("submitQuery and production's dedup refusal", () => {
  it('refused as a duplicate, found by dedupId: that query, deduplicated, sent once', async () => {
    const { scope, seen } = service()
    scope.post('/proving-query').reply(400, { message: 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS' })
    scope
      .get('/proving-query-by-dedup-id')
      .query({ dedupId: 'rel-1' })
      .reply(200, { provingQuery: { id: 'q-first', status: 'DONE' } })
    const result = await provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie, dedupId: 'rel-1' })
    expect(result).toEqual({ provingQueryId: 'q-first', deduplicated: true })
    expect(seen.map((request) => request.method)).toEqual(['POST', 'GET'])
  })

  it('refused as a duplicate but not found: a ServiceError that says so and keeps the code', async () => {
    const { scope } = service()
    scope.post('/proving-query').reply(409, { message: 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS' })
    scope.get('/proving-query-by-dedup-id').query(true).reply(404, { message: 'PROVING_QUERY_NOT_FOUND' })
    const error = await failure(provingClient().submitQuery({ declaredJobSize: 'XS', pieZip: pie, dedupId: 'rel-2' }))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 409, code: 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS' })
    expect(error.message).toMatch(/duplicate of dedupId rel-2, but finds no query with it/)
  })
})
