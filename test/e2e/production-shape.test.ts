import { openAsBlob } from 'node:fs'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { EXAMPLE } from '../helpers/example-pie.ts'
import { type ActionRun, FIXTURE_PIE, leakedSecret, runAction } from '../helpers/run-action.ts'

/**
 * The whole flow against both shapes of the emulator: interface.md's records (record D without
 * status, the /docs/ paths) and production's (`shape: 'production'`: status in
 * GET /proving-query/{id}, optional fields omitted, client email and image null, no /docs/
 * routes). The CLI (`prove --wait`, `query wait`, `query list`) and the actions (the root action
 * and the `wait` sub-action, their committed bundles) must end DONE on either.
 */
const API_KEY = 'pk_e2e_SHAPE_5d2c81a7f0b3'
const FIXTURE_PROGRAM_HASH = EXAMPLE.programHash

describe.each(['interface', 'production'] as const)('against the %s shape', (shape) => {
  let emulator: RunningEmulator
  const runs: ActionRun[] = []
  const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY })
  /** The paths the service was asked, in order (query strings dropped). */
  const paths = () =>
    emulator.requests().map((request) => `${request.method} ${request.path.split('?')[0]} ${request.status}`)

  beforeAll(async () => {
    emulator = await startEmulator({ shape, timing: { receivedMs: 50, stepMs: 50 } })
  })
  afterAll(async () => {
    await emulator.close()
  })
  afterEach(() => {
    for (const run of runs.splice(0)) expect(leakedSecret(run, API_KEY), 'the API key leaked').toBeUndefined()
  })

  it('the records are the shape asked for', async () => {
    const submitted = await runCli(['prove', FIXTURE_PIE, '--json'], { env: env() })
    expect(submitted.code, submitted.stderr).toBe(0)
    const { provingQueryId } = JSON.parse(submitted.stdout)
    const record = (
      (await (await fetch(`${emulator.url}/proving-query/${provingQueryId}`)).json()) as {
        provingQuery: Record<string, any>
      }
    ).provingQuery
    const docs = await fetch(`${emulator.url}/docs/proving-query/${provingQueryId}`, {
      headers: { 'api-key': API_KEY },
    })
    if (shape === 'production') {
      expect(record).toHaveProperty('status')
      expect(record.client).toMatchObject({ email: null, image: null })
      for (const field of [
        'dedupId',
        'isProofMocked',
        'submittedByWallet',
        'isJobSizeValid',
        'retryCount',
        'isRetriable',
      ]) {
        expect(record).not.toHaveProperty(field)
      }
      expect(docs.status).toBe(404)
    } else {
      expect(record).not.toHaveProperty('status')
      expect(docs.status).toBe(200)
    }
    await docs.arrayBuffer()
  })

  it('the dedupId lookup, the list and the bucket records are the shape asked for', async () => {
    const headers = { 'api-key': API_KEY }
    const form = new FormData()
    form.append('declaredJobSize', 'XS')
    form.append('dedupId', `shape-${shape}`)
    form.append('pieFile', await openAsBlob(FIXTURE_PIE), 'pie.zip')
    const submitted = await fetch(`${emulator.url}/proving-query`, { method: 'POST', headers, body: form })
    expect(submitted.status).toBe(201)
    await submitted.arrayBuffer()
    const lookup = (await (
      await fetch(`${emulator.url}/proving-query-by-dedup-id?dedupId=shape-${shape}`, { headers })
    ).json()) as { provingQuery: Record<string, unknown> }
    const list = (await (await fetch(`${emulator.url}/proving-queries?apiKey=${API_KEY}`)).json()) as {
      provingQueries: Record<string, unknown>[]
    }
    const created = await fetch(`${emulator.url}/buckets`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ aggregatorVersion: 'v1', nodeWidth: '4', aggregatorParams: { use_kzg_da: true } }),
    })
    const { provingBucket } = (await created.json()) as { provingBucket: Record<string, unknown> }
    if (shape === 'production') {
      expect(lookup.provingQuery).not.toHaveProperty('client')
      expect(lookup.provingQuery).toHaveProperty('status')
      expect(list.provingQueries[0]).not.toHaveProperty('dedupId')
      expect(provingBucket).toMatchObject({ bucketType: 'SNOS', leaves: null, nodeWidth: 4 })
      expect(provingBucket).not.toHaveProperty('aggregatorParams')
      expect(provingBucket).not.toHaveProperty('mockProof')
    } else {
      expect(lookup.provingQuery).toHaveProperty('client')
      expect(lookup.provingQuery).toMatchObject({ dedupId: `shape-${shape}` })
      expect(provingBucket).toMatchObject({ leaves: 0, mockProof: false, aggregatorParams: '{"use_kzg_da":true}' })
    }
  })

  it('CLI: prove --wait ends DONE with the facts checked', async () => {
    const result = await runCli(['prove', FIXTURE_PIE, '--wait'], { env: env() })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toMatch(/status\s+DONE/)
    expect(result.stderr).toMatch(/Facts checked locally/)
  })

  it('CLI: prove, then query wait, query get and query list', async () => {
    const submitted = await runCli(['prove', FIXTURE_PIE, '--json'], { env: env() })
    const { provingQueryId } = JSON.parse(submitted.stdout)
    const before = paths().length
    const waited = await runCli(['query', 'wait', provingQueryId, '--json'], { env: env() })
    expect(waited.code, waited.stderr).toBe(0)
    expect(JSON.parse(waited.stdout).provingQuery).toMatchObject({
      id: provingQueryId,
      status: 'DONE',
      programHash: FIXTURE_PROGRAM_HASH,
    })
    const reads = paths().slice(before)
    if (shape === 'production') {
      // Status comes from GET /proving-query/{id}; the /docs/ path is never needed.
      expect(reads.every((line) => line.startsWith(`GET /proving-query/${provingQueryId} 200`))).toBe(true)
    } else {
      // Record D carries no status: one read of it, then the /docs/ path for the rest.
      expect(reads[0]).toBe(`GET /proving-query/${provingQueryId} 200`)
      expect(reads.slice(1).every((line) => line.startsWith(`GET /docs/proving-query/${provingQueryId} 200`))).toBe(
        true,
      )
    }

    const got = await runCli(['query', 'get', provingQueryId, '--json'], { env: env() })
    expect(got.code, got.stderr).toBe(0)
    expect(JSON.parse(got.stdout).provingQuery).toMatchObject({ id: provingQueryId, status: 'DONE' })

    const listed = await runCli(['query', 'list', '--all', '--json'], { env: env() })
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).provingQueries.map((query: { id: string }) => query.id)).toContain(provingQueryId)
  })

  it('the root action proves to DONE, and the wait action follows a query to DONE', async () => {
    const proved = await runAction('', { inputs: { pie: FIXTURE_PIE, 'api-key': API_KEY, 'base-url': emulator.url } })
    runs.push(proved)
    expect(proved.code, proved.stdout + proved.stderr).toBe(0)
    expect(proved.outputs).toMatchObject({
      status: 'DONE',
      'program-hash': FIXTURE_PROGRAM_HASH,
      'facts-verified': 'true',
    })

    const submitted = await runCli(['prove', FIXTURE_PIE, '--json'], { env: env() })
    const { provingQueryId } = JSON.parse(submitted.stdout)
    const waited = await runAction('wait', {
      inputs: { 'query-id': provingQueryId, 'api-key': API_KEY, 'base-url': emulator.url },
    })
    runs.push(waited)
    expect(waited.code, waited.stdout + waited.stderr).toBe(0)
    expect(waited.outputs).toMatchObject({
      'query-id': provingQueryId,
      status: 'DONE',
      'program-hash': FIXTURE_PROGRAM_HASH,
    })
  })
})
