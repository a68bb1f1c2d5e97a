import { EXAMPLE } from '../helpers/example-pie.ts'
import { readFile } from 'node:fs/promises'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import {
  docsQueryListResponse,
  docsQueryResponse,
  queryRecord,
  queryRecordWithStatus,
  queryResponse,
} from '../../src/schemas/proving.ts'
import { FIELDS_D, FIELDS_L } from '../helpers/records.ts'
import { FIXTURE_PIE, KEY, OTHER_KEY, queryForm, submitFixturePie, useEmulator } from '../helpers/emulator.ts'

// interface.md's columns D and L (the schemas accept more: production.md's records).
const D_KEYS = [...FIELDS_D].sort()
const L_KEYS = [...FIELDS_L].sort()

describe('reading queries', () => {
  const emulator = useEmulator()
  const docs = (path: string, apiKey: string | null = KEY, query: Record<string, string | number | undefined> = {}) =>
    emulator().call('GET', path, { headers: apiKey ? { 'api-key': apiKey } : {}, query })

  it('GET /proving-query/{id}: no auth, record D with exactly the table fields (no status), metadataUrls', async () => {
    const id = await submitFixturePie(emulator())
    const answer = await emulator().call('GET', `/proving-query/${id}`)
    expect(answer.status).toBe(200)
    queryResponse.parse(answer.body)
    const record = queryRecord.strict().parse(answer.body.provingQuery)
    expect(Object.keys(answer.body.provingQuery).sort()).toEqual(D_KEYS)
    expect(answer.body.provingQuery).not.toHaveProperty('status')
    expect(record).toMatchObject({
      id,
      isRetriable: null,
      retryCount: 0,
      isJobSizeValid: true,
      submittedByWallet: null,
    })
    expect(record.client).toMatchObject({ isEmailVerified: true })
    expect(answer.body.metadataUrls).toHaveLength(3)
  })

  it('GET /proving-query/{unknown}: 404 PROVING_QUERY_NOT_FOUND', async () => {
    expect(await emulator().call('GET', '/proving-query/nope')).toMatchObject({
      status: 404,
      body: { message: 'PROVING_QUERY_NOT_FOUND' },
    })
  })

  it('GET /docs/proving-query/{id}: record L with exactly the table fields; 401 without a key; 404 for another key', async () => {
    const id = await submitFixturePie(emulator())
    const answer = await docs(`/docs/proving-query/${id}`)
    expect(answer.status).toBe(200)
    docsQueryResponse.parse(answer.body)
    queryRecordWithStatus.strict().parse(answer.body.provingQuery)
    expect(Object.keys(answer.body.provingQuery).sort()).toEqual(L_KEYS)
    expect(await docs(`/docs/proving-query/${id}`, null)).toMatchObject({
      status: 401,
      body: { message: 'INVALID_API_KEY' },
    })
    expect(await docs(`/docs/proving-query/${id}`, OTHER_KEY)).toMatchObject({
      status: 404,
      body: { message: 'PROVING_QUERY_NOT_FOUND' },
    })
  })

  it('metadataUrls: empty until DONE, then absolute URLs that need no key', async () => {
    await emulator().control('PUT', '/timing', { receivedMs: 60_000, stepMs: 60_000 })
    const id = await submitFixturePie(emulator())
    const running = (await emulator().call('GET', `/proving-query/${id}`)).body
    expect(running.metadataUrls).toEqual([])
    expect((await emulator().call('GET', `/_emulator/artifacts/${id}/proof.json`)).status).toBe(404)

    await emulator().control('POST', `/queries/${id}/complete`)
    const { metadataUrls, provingQuery } = (await emulator().call('GET', `/proving-query/${id}`)).body
    expect(metadataUrls).toEqual([
      `${emulator().url}/_emulator/artifacts/${id}/proof.json`,
      `${emulator().url}/_emulator/artifacts/${id}/pie.cairo0.zip`,
      `${emulator().url}/_emulator/artifacts/${id}/metadata.json`,
    ])
    const [proofUrl, pieUrl, metadataUrl] = metadataUrls as string[]

    const proof = await request(proofUrl!)
    expect(proof.statusCode).toBe(200)
    expect(await proof.body.json()).toMatchObject({ emulated: true, queryId: id })

    const pie = await request(pieUrl!)
    expect(pie.statusCode).toBe(200)
    expect(pie.headers['content-type']).toBe('application/zip')
    expect(Buffer.from(await pie.body.arrayBuffer()).equals(await readFile(FIXTURE_PIE))).toBe(true)

    const metadata = await request(metadataUrl!)
    const body = (await metadata.body.json()) as { program_hash: string; child_program_hash: string; output: string[] }
    // Proved inside the bootloader: its hash, the PIE's as the child, the bootloader's output.
    expect(body).toEqual({
      program_hash: '0x5ab580b04e3532b6b18f81cfa654a05e29dd8e2352d88df1e765a84072db07',
      child_program_hash: provingQuery.programHash,
      output: ['0x1', '0x4', provingQuery.programHash, ...EXAMPLE.output],
    })
  })

  it('metadataUrls of a proof-only or programHash query leave out the pie', async () => {
    const answer = await emulator().call('POST', '/proving-query', {
      headers: { 'api-key': KEY },
      form: await queryForm({ programHash: '0x1234' }, { pie: false }),
    })
    const { metadataUrls } = (await emulator().call('GET', `/proving-query/${answer.body.provingQueryId}`)).body
    expect(metadataUrls.map((url: string) => url.split('/').at(-1))).toEqual(['proof.json', 'metadata.json'])
    expect(await request(metadataUrls[0]).then((response) => response.statusCode)).toBe(200)
  })

  it('GET /proving-queries (production.md): the same list, the key as header or apiKey query parameter, filtered by clientId', async () => {
    const mine = [await submitFixturePie(emulator()), await submitFixturePie(emulator())]
    await submitFixturePie(emulator(), OTHER_KEY)
    const byHeader = await docs('/proving-queries')
    const byQuery = await emulator().call('GET', '/proving-queries', { query: { apiKey: KEY } })
    expect(byHeader.status).toBe(200)
    expect(byQuery.body).toEqual(byHeader.body)
    expect(byHeader.body.provingQueries.map((query: { id: string }) => query.id)).toEqual([...mine].reverse())
    const clientId = byHeader.body.provingQueries[0].client.clientId
    expect((await docs('/proving-queries', KEY, { clientId })).body.total).toBe(2)
    expect((await docs('/proving-queries', KEY, { clientId: 'someone-else' })).body.total).toBe(0)
    expect(await docs('/proving-queries', null)).toMatchObject({ status: 401, body: { message: 'INVALID_API_KEY' } })
  })

  describe('GET /docs/proving-queries', () => {
    it("lists only the caller's queries, newest first, { provingQueries: [L], total }", async () => {
      const mine = [
        await submitFixturePie(emulator()),
        await submitFixturePie(emulator()),
        await submitFixturePie(emulator()),
      ]
      await submitFixturePie(emulator(), OTHER_KEY)
      const answer = await docs('/docs/proving-queries')
      expect(answer.status).toBe(200)
      const list = docsQueryListResponse.parse(answer.body)
      expect(list.total).toBe(3)
      expect(list.provingQueries.map((query) => query.id)).toEqual([...mine].reverse())
      for (const record of answer.body.provingQueries) {
        queryRecordWithStatus.strict().parse(record)
        expect(Object.keys(record).sort()).toEqual(L_KEYS)
      }
      expect(await docs('/docs/proving-queries', null)).toMatchObject({
        status: 401,
        body: { message: 'INVALID_API_KEY' },
      })
    })

    it('paginates with limit (default 10, max 100) and offset (default 0)', async () => {
      const ids: string[] = []
      for (let i = 0; i < 12; i++) ids.push(await submitFixturePie(emulator()))
      const newestFirst = [...ids].reverse()
      const first = (await docs('/docs/proving-queries')).body
      expect(first.total).toBe(12)
      expect(first.provingQueries.map((query: { id: string }) => query.id)).toEqual(newestFirst.slice(0, 10))
      const second = (await docs('/docs/proving-queries', KEY, { limit: 5, offset: 10 })).body
      expect(second.provingQueries.map((query: { id: string }) => query.id)).toEqual(newestFirst.slice(10))
      expect((await docs('/docs/proving-queries', KEY, { limit: 100 })).body.provingQueries).toHaveLength(12)
      for (const [name, value] of [
        ['limit', 101],
        ['limit', 0],
        ['offset', -1],
        ['limit', 'ten'],
      ] as const) {
        const refused = await docs('/docs/proving-queries', KEY, { [name]: value })
        expect(refused.status).toBe(400)
        expect(refused.body.details).toMatch(new RegExp(`^${name} must be`))
      }
    })

    it('filters by search (id or externalId) and by network', async () => {
      const submit = async (fields: Record<string, string>) =>
        (
          await emulator().call('POST', '/proving-query', {
            headers: { 'api-key': KEY },
            form: await queryForm(fields),
          })
        ).body.provingQueryId as string
      const alpha = await submit({ externalId: 'release-alpha', network: 'MAINNET' })
      const beta = await submit({ externalId: 'release-beta' })
      const other = await submit({ externalId: 'nightly' })

      const byExternal = (await docs('/docs/proving-queries', KEY, { search: 'RELEASE' })).body
      expect(byExternal.provingQueries.map((query: { id: string }) => query.id)).toEqual([beta, alpha])
      expect(byExternal.total).toBe(2)
      const byId = (await docs('/docs/proving-queries', KEY, { search: other.slice(0, 13) })).body
      expect(byId.provingQueries.map((query: { id: string }) => query.id)).toEqual([other])
      const mainnet = (await docs('/docs/proving-queries', KEY, { network: 'MAINNET' })).body
      expect(mainnet.provingQueries.map((query: { id: string }) => query.id)).toEqual([alpha])
      expect((await docs('/docs/proving-queries', KEY, { network: 'MOON' })).status).toBe(400)
    })

    it('iterates every page through the ProvingClient', async () => {
      for (let i = 0; i < 7; i++) await submitFixturePie(emulator())
      const seen: string[] = []
      for await (const record of emulator().client().iterateQueries({ limit: 3 })) seen.push(record.id)
      expect(new Set(seen).size).toBe(7)
    })
  })

  it('with real time and the configured timing, a query reaches DONE after receivedMs + steps x stepMs', async () => {
    // A long RECEIVED, so the first read sees it even on a loaded machine.
    await emulator().control('PUT', '/timing', { receivedMs: 400, stepMs: 100 })
    const id = await submitFixturePie(emulator(), KEY, { mockFactHash: 'true' })
    const first = (await docs(`/docs/proving-query/${id}`)).body.provingQuery
    expect(first).toMatchObject({ status: 'RECEIVED', step: null, steps: [] })
    const { provingQuery } = await emulator()
      .client()
      .waitForQuery(id, { schedule: { minIntervalMs: 50 } })
    expect(provingQuery).toMatchObject({ status: 'DONE', isFactMocked: true })
    expect(Date.parse(provingQuery.completedAt!) - Date.parse(provingQuery.createdAt!)).toBe(700)
  })
})
