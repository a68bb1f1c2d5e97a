import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { TaskClient } from '../../src/clients/tasks.ts'
import { InvalidInputError } from '../../src/core/errors.ts'
import type { Logger } from '../../src/core/runtime.ts'
import { computePieFacts } from '../../src/emulator/index.ts'
import { repoPath } from '../helpers/run-action.ts'
import { compiledClass } from '../helpers/tasks.ts'
import { VARIANTS } from './bodies.ts'
import { type ProductionService, startProductionService } from './production-service.ts'

/**
 * Every client method against production-shaped answers (test/contract/bodies.ts, from
 * production.md), in each of the four variants: nothing production sends may be refused.
 */
const KEY = 'pk_contract_3e9b1d7c'
const PIE = repoPath('examples/fib/pie.zip')
const FAST = { minIntervalMs: 5, maxIntervalMs: 5 }

let service: ProductionService
let logs: { level: string; message: string }[]
const logger: Logger = {
  debug: (message) => logs.push({ level: 'debug', message }),
  info: (message) => logs.push({ level: 'info', message }),
  warn: (message) => logs.push({ level: 'warn', message }),
  error: (message) => logs.push({ level: 'error', message }),
}
const proving = (options: { apiKey?: string } = { apiKey: KEY }) =>
  new ProvingClient({ baseUrl: service.url, logger, ...options })
const paths = (from = 0) => service.seen.slice(from).map((request) => `${request.method} ${request.path}`)
const warnings = () => logs.filter((log) => log.level === 'warn').map((log) => log.message)

let dir: string
beforeAll(async () => {
  const facts = await computePieFacts(PIE)
  if ('invalid' in facts) throw new Error(facts.invalid)
  const { programHash, integrityFactHash, sharpFactHash } = facts
  service = await startProductionService({ facts: { programHash, integrityFactHash, sharpFactHash } })
  dir = mkdtempSync(join(tmpdir(), 'contract-'))
})
afterAll(async () => {
  await service.close()
})
beforeEach(() => {
  logs = []
})

describe.each(VARIANTS)('proving service, %s bodies', (variant) => {
  beforeEach(() => {
    service.variant = variant
  })

  it("getQuery and readQuery read production's record (status in it) without the /docs/ path", async () => {
    const from = service.seen.length
    const raw = await proving().getQuery(`q-read-${variant}`)
    expect(raw.provingQuery).toMatchObject({ id: `q-read-${variant}`, status: 'RECEIVED' })
    const read = await proving().readQuery(`q-read-${variant}`)
    expect(read.provingQuery).toMatchObject({ id: `q-read-${variant}`, status: 'IN_PROGRESS' })
    if (variant === 'full') expect(read.provingQuery.client).toMatchObject({ email: 'ops@example.org' })
    if (variant === 'nulls') expect(read.provingQuery.client).toMatchObject({ email: null, image: null })
    expect(paths(from).some((path) => path.includes('/docs/'))).toBe(false)
    // Without a key too: production's record carries its status.
    expect((await proving({}).readQuery(`q-read-${variant}`)).provingQuery.status).toBe('DONE')
  })

  it('waitForQuery ends DONE with the facts, with and without a key', async () => {
    for (const client of [proving(), proving({})]) {
      const id = `q-wait-${variant}-${client.hasApiKey ? 'key' : 'nokey'}`
      const seen: string[] = []
      const result = await client.waitForQuery(id, {
        schedule: FAST,
        onProgress: (progress) => seen.push(progress.status),
      })
      expect(result.provingQuery).toMatchObject({ id, status: 'DONE', programHash: service.facts!.programHash })
      expect(seen).toEqual(['RECEIVED', 'IN_PROGRESS', 'DONE'])
      if (variant !== 'minimal') expect(result.metadataUrls).toHaveLength(3)
    }
  })

  it('listQueries and iterateQueries find GET /proving-queries (the /docs/ list has no route) and stay there', async () => {
    const client = proving()
    const from = service.seen.length
    const page = await client.listQueries({ limit: 2, search: 'release', clientId: 'cl_7f3a', network: 'TESTNET' })
    expect(page.provingQueries).toHaveLength(2)
    expect(paths(from)).toEqual(['GET /docs/proving-queries', 'GET /proving-queries'])
    const listed = service.seen.at(-1)!
    expect(Object.fromEntries(listed.query)).toMatchObject({
      limit: '2',
      search: 'release',
      clientId: 'cl_7f3a',
      network: 'TESTNET',
    })
    const all = []
    for await (const query of client.iterateQueries({ limit: 2 })) all.push(query.id)
    expect(all).toHaveLength(3)
    expect(paths(from + 2).every((path) => path === 'GET /proving-queries')).toBe(true)
    // readPaths fixes the path: straight to production's.
    const fixed = new ProvingClient({ baseUrl: service.url, apiKey: KEY, logger, readPaths: 'production' })
    const before = service.seen.length
    await fixed.listQueries()
    expect(paths(before)).toEqual(['GET /proving-queries'])
  })

  it('submitQuery: a used dedupId is refused by production; the client finds the query (no client object) and reports it deduplicated', async () => {
    const client = proving()
    const first = await client.submitQuery({ declaredJobSize: 'XS', pieZip: PIE, dedupId: `release-${variant}` })
    expect(first.deduplicated).toBe(false)
    const again = await client.submitQuery({ declaredJobSize: 'XS', pieZip: PIE, dedupId: `release-${variant}` })
    expect(again).toEqual({ provingQueryId: first.provingQueryId, deduplicated: true })
    const found = await client.findQueryByDedupId(`release-${variant}`)
    expect(found).toMatchObject({ id: first.provingQueryId })
    expect(found).not.toHaveProperty('client')
    expect(await client.findQueryByDedupId('never-used')).toBeNull()
  })

  it('bucket calls: create sends aggregatorParams as an object and nodeWidth as a string; records with or without the optional fields parse', async () => {
    const client = proving()
    const created = await client.createBucket({
      aggregatorVersion: 'v2',
      nodeWidth: 4,
      aggregatorParams: { use_kzg_da: true, full_output: false },
    })
    expect(service.seen.at(-1)!.json).toEqual({
      aggregatorVersion: 'v2',
      nodeWidth: '4',
      aggregatorParams: { use_kzg_da: true, full_output: false },
    })
    expect(created.status).toBe('OPEN')
    const closed = await client.closeBucket(created.id)
    expect(closed.status).toBe('IN_PROGRESS')
    const details = await client.getBucket(created.id)
    expect(details.bucket).toMatchObject({ id: created.id, status: 'DONE' })
    if (variant !== 'extras') expect(details.bucket).toMatchObject({ bucketType: 'SNOS', chain: 'L1' })
    expect(details.queries).toHaveLength(1)
  })

  it('retryQuery, isAlive and the two L2 submissions', async () => {
    const client = proving()
    const retried = await client.retryQuery('q-retry-1')
    expect(retried.provingQuery.status).toBe('RECEIVED')
    expect(await client.isAlive()).toBe(true)
    expect((await client.submitPie({ pieZip: PIE })).provingQueryId).toMatch(/\S/)
    const proof = join(dir, 'proof.json')
    writeFileSync(proof, '{"proof": true}')
    expect(
      (await client.submitProofVerification({ proof, stoneVersion: 'stone6', memoryVerification: 'strict' }))
        .provingQueryId,
    ).toMatch(/\S/)
  })

  it('unknown enum values and extra fields pass, noted at debug level (and only then)', async () => {
    await proving().getQuery('q-notes-1')
    const notes = logs
      .filter((log) => log.level === 'debug' && log.message.includes('deviation'))
      .map((log) => log.message)
      .join('\n')
    if (variant === 'extras') {
      for (const note of [
        '"XL"',
        '"DEVNET"',
        '"stwo_v2"',
        '"svc_new_grower"',
        'provingQuery.priority',
        'provingQuery.client.tier',
      ])
        expect(notes).toContain(note)
    } else {
      expect(notes).toBe('')
    }
    expect(warnings()).toEqual([])
  })
})

describe('proving submissions as production takes them', () => {
  beforeEach(() => {
    service.variant = 'full'
  })

  it('the full layout list, hints, sharpProver stone/stwo; unknown provers and hints sent with a warning, an unknown layout refused unsent', async () => {
    const client = proving()
    for (const layout of ['plain', 'recursive_large_output', 'all_solidity', 'all_cairo'] as const) {
      await client.submitQuery({
        declaredJobSize: 'XS',
        pieZip: PIE,
        layout,
        sharpProver: 'stwo',
        hints: 'svc_evm_grower',
        dedupId: `layout-${layout}`,
      })
      expect(service.seen.at(-1)!.fields).toMatchObject({ layout, sharpProver: 'stwo', hints: 'svc_evm_grower' })
    }
    expect(warnings()).toEqual([])
    await client.submitQuery({
      declaredJobSize: 'XS',
      pieZip: PIE,
      sharpProver: 'stwo_next',
      hints: 'svc_new_grower',
      dedupId: 'future',
    })
    expect(service.seen.at(-1)!.fields).toMatchObject({ sharpProver: 'stwo_next', hints: 'svc_new_grower' })
    expect(warnings().join('\n')).toMatch(/sharpProver "stwo_next".*\n.*hints "svc_new_grower"/)
    // Production refuses a layout off its list after the upload: it is refused before, with that list.
    const sent = service.seen.length
    const refused = await client
      // @ts-expect-error a layout this version does not know: refused at run time too
      .submitQuery({ declaredJobSize: 'XS', pieZip: PIE, layout: 'cairo_future', dedupId: 'future-layout' })
      .catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(InvalidInputError)
    expect((refused as Error).message).toBe(
      'layout must be one of auto, plain, recursive, recursive_with_poseidon, recursive_large_output, all_solidity, all_cairo, dynamic, small, dex, starknet, starknet_with_keccak; got "cairo_future". Nothing was sent.',
    )
    expect(service.seen.length).toBe(sent)
  })

  it('cairo1 input goes as text/plain input.txt, cairo0 input as JSON', async () => {
    const program = join(dir, 'program.json')
    writeFileSync(program, '{"prime": "0x1"}')
    const text = join(dir, 'args.txt')
    writeFileSync(text, '[1 2 3]')
    await proving().submitQuery({
      declaredJobSize: 'XS',
      programFile: program,
      inputFile: text,
      cairoVersion: 'cairo1',
      cairoVm: 'rust',
      dedupId: 'c1',
    })
    expect(service.seen.at(-1)!.files.inputFile).toEqual({ fileName: 'input.txt', contentType: 'text/plain' })
    const json = join(dir, 'input.json')
    writeFileSync(json, '{"n": 10}')
    await proving().submitQuery({
      declaredJobSize: 'XS',
      programFile: program,
      inputFile: json,
      cairoVersion: 'cairo0',
      cairoVm: 'python',
      dedupId: 'c0',
    })
    expect(service.seen.at(-1)!.files.inputFile).toEqual({ fileName: 'input.json', contentType: 'application/json' })
  })

  it.each([
    [{ cairoVersion: 'cairo1', cairoVm: 'python' } as const, 'CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON'],
    [
      { cairoVersion: 'cairo0', cairoVm: 'rust', inputFile: 'x' } as const,
      'INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM',
    ],
  ])("%o is refused locally with production's code, nothing sent", async (combination, code) => {
    const from = service.seen.length
    const program = join(dir, 'program.json')
    writeFileSync(program, '{}')
    const error = await proving()
      .submitQuery({ declaredJobSize: 'XS', programFile: program, ...combination })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as Error).message).toContain(code)
    expect(service.seen.length).toBe(from)
  })
})

describe.each(VARIANTS)('task service, %s bodies', (variant) => {
  beforeEach(() => {
    service.variant = variant
  })
  const tasks = () => new TaskClient({ baseUrl: service.url, apiKey: KEY, logger })

  it('list items without clientId, status records and MMRs parse; a wait ends on success', async () => {
    const list = await tasks().listTasks()
    expect(list.tasks.map((task) => task.uuid)).toEqual(['t-1', 't-2'])
    expect(list.tasks[0]).not.toHaveProperty('clientId', expect.any(String))
    expect((await tasks().getTaskMmrs('t-1')).mmrs).toHaveLength(1)
    const done = await tasks().waitForTask(`t-wait-${variant}`, { schedule: FAST })
    expect(done.status).toBe('TaskDecommitmentCompleted')
  })
})

describe('task bodies as production takes them', () => {
  const tasks = () => new TaskClient({ baseUrl: service.url, apiKey: KEY, logger })
  const body = () => ({
    destination_chain_id: '0xaa36a7',
    input: { compiled_class: compiledClass(), injected_state: {}, params: [] },
    program_hash: '0x2a',
  })

  it('the documented optional fields are accepted and sent; an unknown one is sent with a warning', async () => {
    await tasks().scheduleTask({
      ...body(),
      is_mock: true,
      schedule_mode: 'ON_CHAIN',
      schedule_tx_hash: '0xabc',
      injected_state_server: 'https://state.example.org',
    } as never)
    expect(service.seen.at(-1)!.json).toMatchObject({
      is_mock: true,
      schedule_mode: 'ON_CHAIN',
      schedule_tx_hash: '0xabc',
      injected_state_server: 'https://state.example.org',
    })
    expect(warnings()).toEqual([])
    await tasks().scheduleTask({ ...body(), priority_lane: 'fast' } as never)
    expect(service.seen.at(-1)!.json).toMatchObject({ priority_lane: 'fast' })
    expect(warnings().join('\n')).toMatch(/priority_lane.*sent as written/)
  })
})

describe('storage-proof service', () => {
  const storage = () => new StorageProofClient({ baseUrl: service.url, apiKey: KEY, logger })

  it('a body production takes is sent; the status is read at GET /batch-query-status and a wait ends DONE', async () => {
    const starknetAccount = `0x${'4'.repeat(63)}`
    const { internalId } = await storage().submitBatchQuery({
      destinationChainId: 'SN_SEPOLIA',
      fee: '0',
      data: {
        SN_SEPOLIA: { 'timestamp:1717243200': { accounts: { [starknetAccount]: { slots: ['0x1'] } } } },
        '11155111': {
          'block:5382810': {
            accounts: { '0x00000000000000000000000000000000000000aa': { props: ['BALANCE', 'TIMESTAMP'] } },
          },
        },
      },
    } as never)
    const from = service.seen.length
    expect(await storage().waitForBatchQuery(internalId, { schedule: FAST })).toEqual({
      internalId,
      queryStatus: 'DONE',
    })
    expect(paths(from).every((path) => path === 'GET /batch-query-status')).toBe(true)
    expect(service.seen.at(-1)!.query.get('batchQueryId')).toBe(internalId)
  })
})
