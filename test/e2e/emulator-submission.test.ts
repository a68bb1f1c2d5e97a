import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FormData } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SubmissionOutcomeUnknownError, ServiceError } from '../../src/core/errors.ts'
import { inspectPie } from '../../src/pie/index.ts'
import {
  FIXTURE_PIE,
  KEY,
  OTHER_KEY,
  pieForm,
  queryForm,
  startTestEmulator,
  submitFixturePie,
  useEmulator,
} from '../helpers/emulator.ts'

const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
const L2_PROOF = '/v1/l2/proving-query/proof-verification'

let scratch: string
let proofPath: string
let notJsonPath: string
let notZipPath: string
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'emulator-submission-'))
  proofPath = join(scratch, 'proof.json')
  notJsonPath = join(scratch, 'proof.txt')
  notZipPath = join(scratch, 'pie.zip')
  await writeFile(proofPath, JSON.stringify({ proof_parameters: {}, public_input: {} }))
  await writeFile(notJsonPath, 'not json at all')
  await writeFile(notZipPath, 'definitely not a zip')
})
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true })
})

describe('POST /v1/l2/proving-query/proof-generation-verification', () => {
  const emulator = useEmulator()
  const submit = async (form: FormData, apiKey: string | undefined = KEY) =>
    emulator().call('POST', L2_PIE, { query: { apiKey }, form })

  it('201 { provingQueryId } for a pie.zip with mockFactHash, prover and layout', async () => {
    const answer = await submit(await pieForm())
    expect(answer.status).toBe(201)
    expect(Object.keys(answer.body)).toEqual(['provingQueryId'])
    expect(answer.body.provingQueryId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it('401 { message: INVALID_API_KEY } without apiKey (the header does not count here)', async () => {
    const answer = await emulator().call('POST', L2_PIE, { headers: { 'api-key': KEY }, form: await pieForm() })
    expect(answer).toMatchObject({ status: 401, body: { message: 'INVALID_API_KEY' } })
  })

  it.each([
    ['pieFile', { omit: ['pieFile'] }, /pieFile is required/],
    ['mockFactHash', { omit: ['mockFactHash'] }, /mockFactHash is required/],
    ['prover', { omit: ['prover'] }, /prover is required/],
    ['layout', { omit: ['layout'] }, /layout is required/],
  ])('400 naming the field when %s is missing', async (_field, options, message) => {
    const answer = await submit(await pieForm({}, options))
    expect(answer.status).toBe(400)
    // production's body: { message: CODE }, plus details naming the field.
    expect(answer.body.message).toMatch(/^[A-Z][A-Z0-9_]+$/)
    expect(answer.body.details).toMatch(message)
  })

  it.each([
    ['mockFactHash', { mockFactHash: 'yes' }, /mockFactHash must be "true" or "false"/],
    [
      'layout',
      { layout: 'huge' },
      /layout must be one of auto, recursive, recursive_with_poseidon, small, dex, starknet, starknet_with_keccak, dynamic/,
    ],
    ['programHash alongside pieFile', { programHash: '0x123' }, /pieFile or programHash, not both/],
  ])('400 naming the field when %s is invalid', async (_field, fields, message) => {
    const answer = await submit(await pieForm(fields))
    expect(answer.status).toBe(400)
    expect(answer.body).toMatchObject({ message: 'ZOD_INVALID_BODY_STRING' })
    expect(answer.body.details).toMatch(message)
  })

  it('400 for a pieFile that is not a PIE, and for a body that is not multipart', async () => {
    const notZip = await submit(await pieForm({}, { pie: notZipPath }))
    expect(notZip.status).toBe(400)
    expect(notZip.body.details).toMatch(/^pieFile is not a valid Cairo PIE: pieFile: does not start with "PK"/)
    expect(notZip.body.details).not.toMatch(/\.upload/)

    // A zip, but not a PIE: the first problems are quoted.
    const zipOfNothing = new Blob([await readFile(FIXTURE_PIE).then((bytes) => bytes.subarray(0, 200))])
    const truncated = await submit(await pieForm({}, { pie: zipOfNothing }))
    expect(truncated.status).toBe(400)
    expect(truncated.body.details).toMatch(/^pieFile is not a valid Cairo PIE: /)

    const json = await emulator().call('POST', L2_PIE, { query: { apiKey: KEY }, json: { pieFile: 'x' } })
    expect(json.status).toBe(400)
    expect(json.body.message).toMatch(/multipart\/form-data/)
  })

  it('400 for an unexpected file part, and leaves nothing behind', async () => {
    const form = await pieForm()
    form.append('programFile', new Blob(['{}']), 'program.json')
    const answer = await submit(form)
    expect(answer.status).toBe(400)
    expect(answer.body.message).toMatch(/Unexpected file part programFile/)
    expect(Object.keys(emulator().state.queries)).toHaveLength(0)
    expect(await readdir(join(emulator().uploadsDir, '.incoming'))).toEqual([])
  })

  it('500 on a server-side error', async () => {
    await emulator().control('POST', '/faults', { path: L2_PIE, kind: 'error' })
    const answer = await submit(await pieForm())
    expect(answer).toMatchObject({ status: 500, body: { error: 'INTERNAL_SERVER_ERROR' } })
  })

  it('works through ProvingClient.submitPie, and mockFactHash shows as isFactMocked', async () => {
    const client = emulator().client()
    for (const mockFactHash of [true, false]) {
      const { provingQueryId } = await client.submitPie({ pieZip: FIXTURE_PIE, mockFactHash, layout: 'small' })
      const { provingQuery } = await client.waitForQuery(provingQueryId, { schedule: { minIntervalMs: 20 } })
      expect(provingQuery).toMatchObject({
        status: 'DONE',
        isFactMocked: mockFactHash,
        layout: 'small',
        chain: 'L2',
        result: 'PROOF_VERIFICATION_ON_L2',
        steps: ['TRACE_GENERATION', 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L2'],
      })
      // The facts are the PIE's own, as the project's inspector computes them.
      const inspection = await inspectPie(FIXTURE_PIE, { sha256: false })
      expect(provingQuery).toMatchObject({
        programHash: inspection.programHash,
        sharpFactHash: inspection.sharpFactHash,
        integrityFactHash: inspection.integrityFactHash,
        jobSize: 'XS',
      })
      expect(provingQuery.transactionId).toMatch(/^0x[0-9a-f]{64}$/)
      const details = (await client.getQuery(provingQueryId)).provingQuery
      expect(details).toMatchObject({ isFactMocked: mockFactHash, isProofMocked: false })
    }
  })

  it('an answer lost after processing is reported as ambiguous and not sent again', async () => {
    await emulator().control('POST', '/faults', { method: 'POST', path: L2_PIE, kind: 'drop-after' })
    const error = await emulator()
      .client()
      .submitPie({ pieZip: FIXTURE_PIE })
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    expect(
      emulator()
        .requests()
        .filter((entry) => entry.method === 'POST'),
    ).toHaveLength(1)
  })
})

describe('POST /v1/l2/proving-query/proof-verification', () => {
  const emulator = useEmulator()
  const proofForm = async (fields: Record<string, string> = {}, options: { omit?: string[]; file?: string } = {}) => {
    const form = new FormData()
    const values: Record<string, string> = {
      mockFactHash: 'true',
      stoneVersion: 'stone6',
      memoryVerification: 'relaxed',
      ...fields,
    }
    for (const [name, value] of Object.entries(values)) if (!options.omit?.includes(name)) form.append(name, value)
    if (!options.omit?.includes('proofFile')) {
      const { openAsBlob } = await import('node:fs')
      form.append('proofFile', await openAsBlob(options.file ?? proofPath), 'proof.json')
    }
    return form
  }
  const submit = async (form: FormData, apiKey: string | undefined = KEY) =>
    emulator().call('POST', L2_PROOF, { query: { apiKey }, form })

  it('201 { provingQueryId }, then runs PROOF_VERIFICATION_ON_L2 to DONE', async () => {
    const answer = await submit(await proofForm())
    expect(answer.status).toBe(201)
    const { provingQuery } = (
      await emulator().call('GET', `/docs/proving-query/${answer.body.provingQueryId}`, { headers: { 'api-key': KEY } })
    ).body
    expect(provingQuery).toMatchObject({ status: 'DONE', steps: ['PROOF_VERIFICATION_ON_L2'], isFactMocked: true })
  })

  it('401 without apiKey', async () => {
    expect(await emulator().call('POST', L2_PROOF, { form: await proofForm() })).toMatchObject({
      status: 401,
      body: { message: 'INVALID_API_KEY' },
    })
  })

  type Row = [options: { omit?: string[]; notJson?: boolean }, fields: Record<string, string>, message: RegExp]
  it.each<Row>([
    [{ omit: ['proofFile'] }, {}, /proofFile is required/],
    [{ omit: ['stoneVersion'] }, {}, /stoneVersion is required/],
    [{}, { stoneVersion: 'stone7' }, /stoneVersion must be one of stone5, stone6/],
    [{}, { memoryVerification: 'loose' }, /memoryVerification must be one of strict, relaxed, cairo1/],
    [{}, { mockFactHash: 'TRUE' }, /mockFactHash must be "true" or "false"/],
    [{ notJson: true }, {}, /proofFile is not a JSON object/],
  ])('400 naming the field (%o %o)', async (options, fields, message) => {
    const form = await proofForm(fields, { omit: options.omit, file: options.notJson ? notJsonPath : undefined })
    const answer = await submit(form)
    expect(answer.status).toBe(400)
    // production's body: { message: CODE }, plus details naming the field.
    expect(answer.body.message).toMatch(/^[A-Z][A-Z0-9_]+$/)
    expect(answer.body.details).toMatch(message)
  })

  it('500 on a server-side error', async () => {
    await emulator().control('POST', '/faults', { path: L2_PROOF })
    expect(await submit(await proofForm())).toMatchObject({ status: 500, body: { error: 'INTERNAL_SERVER_ERROR' } })
  })

  it('works through ProvingClient.submitProofVerification', async () => {
    const { provingQueryId } = await emulator().client().submitProofVerification({
      proof: proofPath,
      stoneVersion: 'stone6',
      memoryVerification: 'strict',
    })
    expect(emulator().state.queries[provingQueryId]?.endpoint).toBe('l2-proof')
  })
})

describe('POST /proving-query (extension) and GET /proving-query-by-dedup-id', () => {
  const emulator = useEmulator()
  const submit = async (form: FormData, apiKey = KEY) =>
    emulator().call('POST', '/proving-query', { headers: { 'api-key': apiKey }, form })

  it('201 with contract.md defaults', async () => {
    const answer = await submit(await queryForm({ externalId: 'ext-1' }))
    expect(answer.status).toBe(201)
    const { provingQuery } = (
      await emulator().call('GET', `/docs/proving-query/${answer.body.provingQueryId}`, { headers: { 'api-key': KEY } })
    ).body
    expect(provingQuery).toMatchObject({
      externalId: 'ext-1',
      layout: 'auto',
      cairoVm: 'rust',
      cairoVersion: 'cairo0',
      result: 'PROOF_GENERATION',
      network: 'TESTNET',
      declaredJobSize: 'XS',
      jobSize: 'XS',
      chain: 'OFFCHAIN',
      isFactMocked: false,
      status: 'DONE',
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION'],
    })
  })

  it('a dedupId already used by the same key is refused as production does (400 PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS) and creates nothing', async () => {
    const first = await submit(await queryForm({ dedupId: 'job-42' }))
    const second = await submit(await queryForm({ dedupId: 'job-42' }))
    expect(second).toMatchObject({ status: 400, body: { message: 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS' } })
    expect(Object.keys(emulator().state.queries)).toHaveLength(1)

    // Another key's dedupId space is its own.
    const other = await submit(await queryForm({ dedupId: 'job-42' }), OTHER_KEY)
    expect(other.body.provingQueryId).not.toBe(first.body.provingQueryId)

    const found = await emulator().call('GET', '/proving-query-by-dedup-id', {
      headers: { 'api-key': KEY },
      query: { dedupId: 'job-42' },
    })
    expect(found.status).toBe(200)
    expect(found.body.provingQuery).toMatchObject({ id: first.body.provingQueryId, dedupId: 'job-42' })
    expect(found.body.provingQuery).not.toHaveProperty('status')

    const missing = await emulator().call('GET', '/proving-query-by-dedup-id', {
      headers: { 'api-key': KEY },
      query: { dedupId: 'nope' },
    })
    expect(missing).toMatchObject({ status: 404, body: { message: 'PROVING_QUERY_NOT_FOUND' } })
    const anonymous = await emulator().call('GET', '/proving-query-by-dedup-id', { query: { dedupId: 'job-42' } })
    expect(anonymous).toMatchObject({ status: 401, body: { message: 'INVALID_API_KEY' } })
    // production.md: the key may travel as the apiKey query parameter.
    const byQuery = await emulator().call('GET', '/proving-query-by-dedup-id', {
      query: { dedupId: 'job-42', apiKey: KEY },
    })
    expect(byQuery.body.provingQuery).toMatchObject({ id: first.body.provingQueryId })
  })

  it('concurrent submissions with one dedupId make exactly one query', async () => {
    const forms = await Promise.all([1, 2, 3, 4].map(() => queryForm({ dedupId: 'same' })))
    const answers = await Promise.all(forms.map((form) => submit(form)))
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(1)
    expect(answers.filter((answer) => answer.status === 400).map((answer) => answer.body.message)).toEqual(
      Array(3).fill('PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS'),
    )
    expect(Object.keys(emulator().state.queries)).toHaveLength(1)
  })

  it('the client resubmits safely after a lost answer: exactly one query', async () => {
    await emulator().control('POST', '/faults', { method: 'POST', path: '/proving-query', kind: 'drop-after' })
    const result = await emulator().client().submitQuery({ pieZip: FIXTURE_PIE, declaredJobSize: 'XS' })
    expect(result.deduplicated).toBe(true)
    expect(Object.keys(emulator().state.queries)).toEqual([result.provingQueryId])
  })

  it.each([
    [{ declaredJobSize: '' }, true, /declaredJobSize is required/],
    [{ declaredJobSize: 'XL' }, true, /declaredJobSize must be one of XS, S, M, L/],
    [{ result: 'NOTHING' }, true, /result must be one of/],
    [{ network: 'DEVNET' }, true, /network must be one of MAINNET, TESTNET/],
    [{ cairoVm: 'java' }, true, /cairoVm must be one of rust, python/],
    [{ sharpProver: 'other' }, true, /sharpProver must be one of stone, stwo/],
    [{ programHash: '0x1' }, true, /exactly one of pieFile, programFile or programHash; got pieFile and programHash/],
    [{}, false, /Give one of pieFile, programFile or programHash/],
    [{ programHash: 'xyz' }, false, /programHash must be a 0x-prefixed hex string/],
    [{ bucketJobIndex: '2' }, true, /bucketJobIndex needs a bucketId/],
    [{ bucketId: '00000000-0000-4000-8000-000000000000' }, true, /no bucket/],
  ])('400 naming the field: %o', async (fields, withPie, message) => {
    const answer = await submit(await queryForm(fields, { pie: withPie }))
    expect(answer.status).toBe(400)
    // production's body: { message: CODE }, plus details naming the field.
    expect(answer.body.message).toMatch(/^[A-Z][A-Z0-9_]+$/)
    expect(answer.body.details).toMatch(message)
  })

  it('a programHash submission carries that hash once DONE', async () => {
    const answer = await submit(await queryForm({ programHash: '0xABC' }, { pie: false }))
    expect(answer.status).toBe(201)
    const { provingQuery } = (await emulator().call('GET', `/proving-query/${answer.body.provingQueryId}`)).body
    expect(provingQuery.programHash).toBe('0xabc')
  })

  it('401 INVALID_API_KEY without a key; the apiKey query parameter counts as the key', async () => {
    const answer = await emulator().call('POST', '/proving-query', { form: await queryForm() })
    expect(answer).toMatchObject({ status: 401, body: { message: 'INVALID_API_KEY' } })
    const byQuery = await emulator().call('POST', '/proving-query', { query: { apiKey: KEY }, form: await queryForm() })
    expect(byQuery.status).toBe(201)
  })

  describe('what production refuses and takes (production.md)', () => {
    const programForm = (fields: Record<string, string>, input?: { text: string; name: string; type: string }) => {
      const form = new FormData()
      for (const [name, value] of Object.entries({ declaredJobSize: 'XS', ...fields })) form.append(name, value)
      form.append('programFile', new Blob(['{"prime": "0x1"}'], { type: 'application/json' }), 'program.json')
      if (input) form.append('inputFile', new Blob([input.text], { type: input.type }), input.name)
      return form
    }
    const TXT = { text: '[1 2 3]', name: 'input.txt', type: 'text/plain' }
    const JSON_INPUT = { text: '{"n": 3}', name: 'input.json', type: 'application/json' }

    it.each([
      [{ cairoVersion: 'cairo1', cairoVm: 'python' }, TXT, 'CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON'],
      [{ cairoVersion: 'cairo0', cairoVm: 'rust' }, JSON_INPUT, 'INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM'],
      [{ cairoVersion: 'cairo1', cairoVm: 'rust' }, JSON_INPUT, 'INPUT_FILE_FOR_CAIRO1_SHOULD_BE_TXT'],
      [{ cairoVersion: 'cairo0', cairoVm: 'python' }, TXT, 'INPUT_FILE_FOR_CAIRO0_SHOULD_BE_JSON'],
      [{}, undefined, 'PROGRAM_FILE_OR_PIE_FILE_OR_PROGRAM_HASH_IS_REQUIRED'],
    ])('%o with %o: 400 %s, nothing created', async (fields, input, code) => {
      const form = code.startsWith('PROGRAM_FILE_OR') ? await queryForm({}, { pie: false }) : programForm(fields, input)
      const answer = await submit(form)
      expect(answer).toMatchObject({ status: 400, body: { message: code } })
      expect(Object.keys(emulator().state.queries)).toHaveLength(0)
    })

    it("cairo1 on rust with a text input is kept as input.txt; hints and production's layouts are taken", async () => {
      const answer = await submit(
        programForm({ cairoVersion: 'cairo1', cairoVm: 'rust', hints: 'svc_sn_grower', layout: 'all_cairo' }, TXT),
      )
      expect(answer.status).toBe(201)
      const query = emulator().state.queries[answer.body.provingQueryId]!
      expect(query.files.input).toMatchObject({ name: 'input.txt' })
      const { provingQuery } = (
        await emulator().call('GET', `/docs/proving-query/${query.id}`, { headers: { 'api-key': KEY } })
      ).body
      expect(provingQuery).toMatchObject({ hints: 'svc_sn_grower', layout: 'all_cairo', cairoVersion: 'cairo1' })
    })
  })

  it('the result decides the chain and the steps', async () => {
    const answer = await submit(await queryForm({ result: 'PROOF_VERIFICATION_ON_L1', network: 'MAINNET' }))
    const { provingQuery } = (
      await emulator().call('GET', `/docs/proving-query/${answer.body.provingQueryId}`, { headers: { 'api-key': KEY } })
    ).body
    expect(provingQuery).toMatchObject({
      chain: 'L1',
      network: 'MAINNET',
      steps: ['TRACE_GENERATION', 'PROOF_GENERATION', 'PROOF_VERIFICATION_ON_L1', 'FACT_HASH_REGISTRATION'],
    })
  })
})

describe('API key allow-list', () => {
  let emulator: Awaited<ReturnType<typeof startTestEmulator>>
  beforeAll(async () => {
    emulator = await startTestEmulator({ apiKeys: [KEY] })
  })
  afterAll(async () => {
    await emulator.close()
  })

  it('accepts listed keys and refuses others like a missing key', async () => {
    expect(await submitFixturePie(emulator, KEY)).toBeTruthy()
    const refused = await emulator.call('POST', L2_PIE, { query: { apiKey: OTHER_KEY }, form: await pieForm() })
    expect(refused).toMatchObject({ status: 401, body: { message: 'INVALID_API_KEY' } })
    const listed = await emulator.call('GET', '/docs/proving-queries', { headers: { 'api-key': OTHER_KEY } })
    expect(listed.status).toBe(401)
    const error = await emulator
      .client(OTHER_KEY)
      .listQueries()
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 401, code: 'INVALID_API_KEY' })
  })

  it('without a list, any non-empty key is accepted, an empty one is not', async () => {
    const open = await startTestEmulator()
    try {
      expect(await submitFixturePie(open, 'whatever-key')).toBeTruthy()
      const empty = await open.call('POST', L2_PIE, { query: { apiKey: '' }, form: await pieForm() })
      expect(empty.status).toBe(401)
    } finally {
      await open.close()
    }
  })
})
