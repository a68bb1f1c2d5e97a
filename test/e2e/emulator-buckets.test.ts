import { describe, expect, it } from 'vitest'
import { bucketDetailsResponse, bucketRecord, queryRecord } from '../../src/schemas/proving.ts'
import { KEY, OTHER_KEY, queryForm, useEmulator } from '../helpers/emulator.ts'

describe('buckets', () => {
  const emulator = useEmulator()
  const createBucket = async (body: Record<string, unknown> = { aggregatorVersion: 'v1' }, apiKey = KEY) =>
    emulator().call('POST', '/buckets', { headers: { 'api-key': apiKey }, json: body })
  const close = (bucketId: string | undefined, apiKey: string | null = KEY) =>
    emulator().call('POST', '/buckets/close', { headers: apiKey ? { 'api-key': apiKey } : {}, query: { bucketId } })
  const submitInto = async (bucketId: string, fields: Record<string, string> = {}) => {
    const answer = await emulator().call('POST', '/proving-query', {
      headers: { 'api-key': KEY },
      form: await queryForm({ bucketId, ...fields }),
    })
    expect(answer.status).toBe(201)
    return answer.body.provingQueryId as string
  }

  it('POST /buckets opens a bucket: { provingBucket } with status OPEN', async () => {
    const answer = await createBucket({
      aggregatorVersion: 'v2',
      externalId: 'b-1',
      nodeWidth: 4,
      aggregatorParams: '{"a":1}',
      mockProof: true,
    })
    expect(answer.status).toBe(201)
    const bucket = bucketRecord.strict().parse(answer.body.provingBucket)
    expect(bucket).toMatchObject({
      status: 'OPEN',
      externalId: 'b-1',
      nodeWidth: 4,
      aggregatorParams: '{"a":1}',
      mockProof: true,
      leaves: 0,
      aggregatorVersion: 'v2',
    })
    expect(bucket.projectId).toBeTruthy()
    expect(bucket.createdByClient).toBeTruthy()
  })

  it('POST /buckets refuses a missing aggregatorVersion (400) and a missing key (401)', async () => {
    expect(await createBucket({})).toMatchObject({ status: 400, body: { message: 'ZOD_INVALID_BODY_STRING' } })
    expect((await createBucket({ aggregatorVersion: 'v1', nodeWidth: 0 })).body.details).toMatch(/nodeWidth/)
    const anonymous = await emulator().call('POST', '/buckets', { json: { aggregatorVersion: 'v1' } })
    expect(anonymous).toMatchObject({ status: 401, body: { message: 'INVALID_API_KEY' } })
  })

  it("POST /buckets takes production's body too: aggregatorParams an object, nodeWidth a string", async () => {
    const answer = await createBucket({
      aggregatorVersion: 'v2',
      nodeWidth: '8',
      aggregatorParams: { use_kzg_da: true, full_output: false },
    })
    expect(answer.status).toBe(201)
    expect(answer.body.provingBucket).toMatchObject({ nodeWidth: 8 })
    expect(JSON.parse(answer.body.provingBucket.aggregatorParams)).toEqual({ use_kzg_da: true, full_output: false })
    expect((await createBucket({ aggregatorVersion: 'v2', aggregatorParams: [1] })).status).toBe(400)
    expect((await createBucket({ aggregatorVersion: 'v2', nodeWidth: 'wide' })).status).toBe(400)
  })

  describe('POST /buckets/close errors (interface.md order: {}, UNAUTHORIZED, BUCKET_NOT_FOUND, {})', () => {
    it('400 {} when bucketId is missing or malformed', async () => {
      expect(await close(undefined)).toMatchObject({ status: 400, body: {} })
      expect((await close(undefined)).body).toEqual({})
      expect((await close('not-a-bucket-id')).body).toEqual({})
      expect((await close('not-a-bucket-id')).status).toBe(400)
    })

    it("401 { error: UNAUTHORIZED } for a missing or unknown key, or another key's bucket", async () => {
      const { provingBucket } = (await createBucket()).body
      expect(await close(provingBucket.id, null)).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } })
      expect(await close(provingBucket.id, OTHER_KEY)).toMatchObject({ status: 401, body: { error: 'UNAUTHORIZED' } })
      // Still OPEN: a refused close changes nothing.
      expect((await emulator().call('GET', `/buckets/${provingBucket.id}`)).body.bucket.status).toBe('OPEN')
    })

    it('404 { error: BUCKET_NOT_FOUND } for an unknown bucket', async () => {
      const answer = await close('00000000-0000-4000-8000-000000000000')
      expect(answer).toMatchObject({ status: 404 })
      expect(answer.body).toEqual({ error: 'BUCKET_NOT_FOUND' })
    })

    it('500 {} on a server failure', async () => {
      const { provingBucket } = (await createBucket()).body
      await emulator().control('POST', '/faults', { method: 'POST', path: '/buckets/close', kind: 'error' })
      const answer = await close(provingBucket.id)
      expect(answer.status).toBe(500)
      expect(answer.body).toEqual({})
    })

    it('checks the id before the key: a malformed id without a key is 400, not 401', async () => {
      expect((await close('x', null)).status).toBe(400)
      expect((await close('00000000-0000-4000-8000-000000000000', null)).status).toBe(401)
    })
  })

  it('lifecycle: OPEN -> IN_PROGRESS (closed, aggregating) -> DONE; job indexes 0, 1, 2', async () => {
    await emulator().control('PUT', '/timing', { receivedMs: 0, stepMs: 0 })
    const { provingBucket } = (await createBucket({ aggregatorVersion: 'v1', mockProof: true })).body
    const ids = [
      await submitInto(provingBucket.id),
      await submitInto(provingBucket.id),
      await submitInto(provingBucket.id),
    ]

    const open = bucketDetailsResponse.parse((await emulator().call('GET', `/buckets/${provingBucket.id}`)).body)
    expect(open.bucket).toMatchObject({ status: 'OPEN', leaves: 3 })
    expect(open.queries.map((query) => query.bucketJobIndex)).toEqual([0, 1, 2])
    expect(open.queries.map((query) => query.id)).toEqual(ids)
    for (const query of open.queries) {
      queryRecord.strict().parse(query)
      expect(query).toMatchObject({
        bucketId: provingBucket.id,
        isProofMocked: true,
        completedAt: null,
        step: 'PROOF_GENERATION',
      })
      expect(query).not.toHaveProperty('status')
    }
    // Held until the bucket closes, even with instant timing.
    const waiting = (await emulator().call('GET', `/docs/proving-query/${ids[0]}`, { headers: { 'api-key': KEY } }))
      .body.provingQuery
    expect(waiting.status).toBe('IN_PROGRESS')

    await emulator().control('PUT', '/timing', { receivedMs: 0, stepMs: 60_000 })
    const closing = await close(provingBucket.id)
    expect(closing.status).toBe(200)
    expect(closing.body.provingBucket.status).toBe('DONE') // instant runs were timed before the change

    // Closing again returns the bucket unchanged.
    const again = await close(provingBucket.id)
    expect(again).toMatchObject({
      status: 200,
      body: { provingBucket: { id: provingBucket.id, status: 'DONE', leaves: 3 } },
    })

    const done = (await emulator().call('GET', `/buckets/${provingBucket.id}`)).body
    expect(done.queries.every((query: { completedAt: string | null }) => query.completedAt !== null)).toBe(true)

    // A closed bucket takes no more queries.
    const late = await emulator().call('POST', '/proving-query', {
      headers: { 'api-key': KEY },
      form: await queryForm({ bucketId: provingBucket.id }),
    })
    expect(late.status).toBe(400)
    expect(late.body.details).toMatch(/closed/)
  })

  it('a closed bucket stays IN_PROGRESS while its queries verify, then is DONE', async () => {
    await emulator().control('PUT', '/timing', { receivedMs: 0, stepMs: 150 })
    const { provingBucket } = (await createBucket()).body
    const id = await submitInto(provingBucket.id, { result: 'PROOF_VERIFICATION_ON_L1' })
    await new Promise((resolve) => setTimeout(resolve, 400))
    const held = (await emulator().call('GET', `/docs/proving-query/${id}`, { headers: { 'api-key': KEY } })).body
      .provingQuery
    expect(held).toMatchObject({ status: 'IN_PROGRESS', step: 'PROOF_GENERATION' })

    const closed = await close(provingBucket.id)
    expect(closed.body.provingBucket.status).toBe('IN_PROGRESS')
    const { provingQuery } = await emulator()
      .client()
      .waitForQuery(id, { schedule: { minIntervalMs: 50 } })
    expect(provingQuery).toMatchObject({ status: 'DONE', step: 'FACT_HASH_REGISTRATION' })
    expect((await emulator().call('GET', `/buckets/${provingBucket.id}`)).body.bucket.status).toBe('DONE')
  })

  it('a bucket with a failed query ends FAILED', async () => {
    const { provingBucket } = (await createBucket()).body
    await submitInto(provingBucket.id)
    const failing = await submitInto(provingBucket.id)
    await emulator().control('POST', `/queries/${failing}/fail`, { retriable: false, reason: 'boom' })
    await close(provingBucket.id)
    const { bucket, queries } = (await emulator().call('GET', `/buckets/${provingBucket.id}`)).body
    expect(bucket.status).toBe('FAILED')
    expect(queries[1]).toMatchObject({ errorReason: 'boom', isRetriable: false })
  })

  it('explicit bucketJobIndex is kept; a used one is refused; GET /buckets/{unknown} is 404', async () => {
    const { provingBucket } = (await createBucket()).body
    await submitInto(provingBucket.id, { bucketJobIndex: '5' })
    await submitInto(provingBucket.id)
    const duplicate = await emulator().call('POST', '/proving-query', {
      headers: { 'api-key': KEY },
      form: await queryForm({ bucketId: provingBucket.id, bucketJobIndex: '5' }),
    })
    expect(duplicate.status).toBe(400)
    const { queries } = (await emulator().call('GET', `/buckets/${provingBucket.id}`)).body
    expect(queries.map((query: { bucketJobIndex: number }) => query.bucketJobIndex)).toEqual([5, 6])
    expect(await emulator().call('GET', '/buckets/00000000-0000-4000-8000-000000000000')).toMatchObject({
      status: 404,
      body: { error: 'BUCKET_NOT_FOUND' },
    })
  })

  it('works through the ProvingClient', async () => {
    const client = emulator().client()
    const bucket = await client.createBucket({ aggregatorVersion: 'v1' })
    expect(bucket.status).toBe('OPEN')
    const { provingQueryId } = await client.submitQuery({
      pieZip: (await import('../helpers/emulator.ts')).FIXTURE_PIE,
      declaredJobSize: 'XS',
      bucketId: bucket.id,
    })
    const closed = await client.closeBucket(bucket.id)
    expect(closed.status).toBe('DONE')
    const details = await client.getBucket(bucket.id)
    expect(details.queries.map((query) => query.id)).toEqual([provingQueryId])
  })
})
