import { describe, expect, it } from 'vitest'
import { ServiceError } from '../../src/core/errors.ts'
import { queryRecordWithStatus, retryResponse } from '../../src/schemas/proving.ts'
import { FIELDS_R } from '../helpers/records.ts'
import { KEY, OTHER_KEY, submitFixturePie, useEmulator } from '../helpers/emulator.ts'

/** interface.md, Errors, Retry endpoint: every row, and contract.md's order of checks. */
describe('POST /proving-queries/{id}/retry', () => {
  const emulator = useEmulator()
  const retry = (id: string, apiKey: string | undefined = KEY, carrier: 'header' | 'query' = 'header') =>
    emulator().call('POST', `/proving-queries/${id}/retry`, {
      headers: carrier === 'header' && apiKey ? { 'api-key': apiKey } : {},
      query: carrier === 'query' ? { apiKey } : {},
    })
  const submitFailing = async (retriable: boolean, apiKey = KEY, times = 1) => {
    await emulator().control('POST', '/next-query', { outcome: 'fail', retriable, times })
    return submitFixturePie(emulator(), apiKey)
  }

  it('404 PROVING_QUERY_NOT_FOUND for an unknown id', async () => {
    expect(await retry('00000000-0000-4000-8000-000000000000')).toMatchObject({
      status: 404,
      body: { message: 'PROVING_QUERY_NOT_FOUND' },
    })
  })

  it('403 FORBIDDEN for another key, and for no key at all', async () => {
    const id = await submitFailing(true)
    expect(await retry(id, OTHER_KEY)).toMatchObject({ status: 403, body: { message: 'FORBIDDEN' } })
    expect(await retry(id, '')).toMatchObject({ status: 403, body: { message: 'FORBIDDEN' } })
  })

  it('409 QUERY_NOT_IN_FAILED_STATUS for a DONE query and for a running one', async () => {
    const done = await submitFixturePie(emulator())
    expect(await retry(done)).toMatchObject({ status: 409, body: { message: 'QUERY_NOT_IN_FAILED_STATUS' } })
    await emulator().control('PUT', '/timing', { receivedMs: 60_000, stepMs: 60_000 })
    const running = await submitFixturePie(emulator())
    expect(await retry(running)).toMatchObject({ status: 409, body: { message: 'QUERY_NOT_IN_FAILED_STATUS' } })
  })

  it('400 QUERY_NOT_RETRIABLE when the failure is not retriable', async () => {
    const id = await submitFailing(false)
    expect(await retry(id)).toMatchObject({ status: 400, body: { message: 'QUERY_NOT_RETRIABLE' } })
  })

  it('400 MAX_RETRIES_REACHED once retryCount is 3', async () => {
    const id = await submitFailing(true, KEY, 4)
    for (let attempt = 1; attempt <= 3; attempt++) {
      const answer = await retry(id)
      expect(answer.status).toBe(200)
      expect(answer.body.provingQuery.retryCount).toBe(attempt)
    }
    const { provingQuery } = (await emulator().call('GET', `/proving-query/${id}`)).body
    expect(provingQuery).toMatchObject({ retryCount: 3, isRetriable: false })
    expect(await retry(id)).toMatchObject({ status: 400, body: { message: 'MAX_RETRIES_REACHED' } })
  })

  it('500 INTERNAL_SERVER_ERROR on a server failure', async () => {
    const id = await submitFailing(true)
    await emulator().control('POST', '/faults', { method: 'POST', path: '/proving-queries/:id/retry', kind: 'error' })
    expect(await retry(id)).toEqual(expect.objectContaining({ status: 500, body: { error: 'INTERNAL_SERVER_ERROR' } }))
    // The failure changed nothing: the next attempt goes through.
    expect((await retry(id)).status).toBe(200)
  })

  describe('order of checks: 404 -> 403 -> 409 -> 400 -> 400', () => {
    it('another key gets 403 even when the query is not FAILED (not 409)', async () => {
      const done = await submitFixturePie(emulator())
      expect((await retry(done, OTHER_KEY)).status).toBe(403)
    })

    it('another key gets 403 even when the failure is not retriable (not 400)', async () => {
      const id = await submitFailing(false)
      expect((await retry(id, OTHER_KEY)).status).toBe(403)
    })

    it('a non-retriable failure gives QUERY_NOT_RETRIABLE before MAX_RETRIES_REACHED', async () => {
      // Three retriable failures, then a fourth run (retryCount 3) that fails for good.
      const id = await submitFailing(true, KEY, 3)
      for (let attempt = 0; attempt < 2; attempt++) expect((await retry(id)).status).toBe(200)
      await emulator().control('PUT', '/timing', { receivedMs: 60_000, stepMs: 60_000 })
      expect((await retry(id)).body.provingQuery.retryCount).toBe(3)
      await emulator().control('POST', `/queries/${id}/fail`, { retriable: false })
      expect(await retry(id)).toMatchObject({ status: 400, body: { message: 'QUERY_NOT_RETRIABLE' } })
    })
  })

  it('accepts the key as the apiKey query parameter too', async () => {
    const id = await submitFailing(true)
    expect((await retry(id, KEY, 'query')).status).toBe(200)
  })

  it('200 returns record R (every field, nothing else) back in RECEIVED, then the query runs to DONE', async () => {
    await emulator().control('PUT', '/timing', { receivedMs: 0, stepMs: 0 })
    const id = await submitFailing(true)
    const before = (await emulator().call('GET', `/proving-query/${id}`)).body.provingQuery
    expect(before).toMatchObject({ isRetriable: true, retryCount: 0 })
    expect(before.errorReason).toBeTruthy()

    await emulator().control('PUT', '/timing', { receivedMs: 60_000, stepMs: 100 })
    const answer = await retry(id)
    expect(answer.status).toBe(200)
    expect(answer.body.message).toBe('Query retry initiated')
    const record = queryRecordWithStatus.strict().parse(answer.body.provingQuery)
    expect(Object.keys(answer.body.provingQuery).sort()).toEqual([...FIELDS_R].sort())
    expect(record).toMatchObject({
      id,
      status: 'RECEIVED',
      retryCount: 1,
      errorReason: null,
      step: null,
      steps: [],
      completedAt: null,
    })
    expect(retryResponse.parse(answer.body)).toBeTruthy()

    await emulator().control('POST', `/queries/${id}/complete`)
    const after = (await emulator().call('GET', `/docs/proving-query/${id}`, { headers: { 'api-key': KEY } })).body
      .provingQuery
    expect(after).toMatchObject({ status: 'DONE', errorReason: null })
  })

  it('the full flow through the ProvingClient: fail (retriable) -> retry -> DONE', async () => {
    const client = emulator().client()
    await emulator().control('PUT', '/timing', { receivedMs: 100, stepMs: 20 })
    await emulator().control('POST', '/next-query', { outcome: 'fail', retriable: true, atStep: 'PROOF_GENERATION' })
    const id = await submitFixturePie(emulator())
    const failed = await client.waitForQuery(id, { schedule: { minIntervalMs: 20 } })
    expect(failed.provingQuery).toMatchObject({
      status: 'FAILED',
      step: 'PROOF_GENERATION',
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION'],
    })

    const retried = await client.retryQuery(id)
    expect(retried.provingQuery.status).toBe('RECEIVED')
    const done = await client.waitForQuery(id, { schedule: { minIntervalMs: 20 } })
    expect(done.provingQuery).toMatchObject({ status: 'DONE', step: 'PROOF_VERIFICATION_ON_L2' })
    expect(done.provingQuery.completedAt).not.toBeNull()

    const error = await client.retryQuery(id).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 409, code: 'QUERY_NOT_IN_FAILED_STATUS' })
  })
})
