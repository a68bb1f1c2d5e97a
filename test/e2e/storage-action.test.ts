import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { STORAGE_QUERY_INPUTS } from '../../src/action/steps/inputs.ts'
import { STORAGE_QUERY_OUTPUTS } from '../../src/action/steps/outputs.ts'
import { run } from '../../src/action/actions/storage-query.ts'
import { readAction } from '../helpers/run-action.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { RecordingIO } from '../helpers/recording-io.ts'
import type { InputSpec } from '../../src/action/types.ts'

/** The `storage-query/` sub-action: run() with a recording ActionIO against the emulator over real HTTP. */

const QUERY = {
  destinationChainId: '11155111',
  fee: '0',
  data: {
    '11155111': {
      'block:5382810': {
        accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
      },
    },
  },
}

let emulator: TestEmulator
let dir: string
let queryFile: string

beforeAll(async () => {
  emulator = await startTestEmulator()
  dir = await mkdtemp(join(tmpdir(), 'storage-action-'))
  queryFile = join(dir, 'query.json')
  await writeFile(queryFile, JSON.stringify(QUERY))
})
afterAll(async () => {
  await emulator.close()
  await rm(dir, { recursive: true, force: true })
})
beforeEach(async () => {
  await emulator.control('POST', '/reset')
  await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 50, inProgressMs: 100 })
})

const service = () => ({ 'storage-proof-url': emulator.url, 'api-key': KEY })

describe('storage-query/', () => {
  it('submits a file, sets internal-id first, waits for DONE and passes', async () => {
    const io = new RecordingIO({ query: queryFile, ...service() })
    await run(io)
    expect(io.failed).toBeUndefined()
    expect(io.outputOrder[0]).toBe('internal-id')
    expect(io.outputs).toEqual({ 'internal-id': expect.stringMatching(/\S/), 'query-status': 'DONE' })
    expect(io.summary).toMatch(/Storage query: passed/)
    expect(io.summary).toContain(io.outputs['internal-id'])
    expect(io.secrets).toContain(KEY)
    expect([...io.logs, io.summary].join('\n')).not.toContain(KEY)
  })

  it('takes the query inline; wait: false ends once submitted', async () => {
    const io = new RecordingIO({ query: JSON.stringify(QUERY), wait: 'false', ...service() })
    await run(io)
    expect(io.failed).toBeUndefined()
    expect(Object.keys(io.outputs)).toEqual(['internal-id'])
    expect(io.summary).toMatch(/submitted/)
    expect(io.summary).toMatch(/proving storage status \S+ --wait/)
  })

  it('FAILED fails the step with the status in its output', async () => {
    const io = new RecordingIO({ query: queryFile, ...service() })
    await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 60_000 })
    const running = run(io)
    // Fail the batch query as soon as it exists.
    for (let i = 0; i < 100 && !io.outputs['internal-id']; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    await emulator.control('POST', `/storage-proof/batch-queries/${io.outputs['internal-id']}/fail`, {})
    await running
    expect(io.outputs['query-status']).toBe('FAILED')
    expect(io.failed).toMatch(/ended FAILED/)
  })

  it('every input problem at once, each naming its input; nothing sent', async () => {
    const io = new RecordingIO({
      query: JSON.stringify({ ...QUERY, fee: 'x', destinationChainId: '0x1' }),
      'storage-proof-url': 'ftp://x',
    })
    await run(io)
    expect(io.failed).toMatch(/inputs need fixing/)
    expect(io.failed).toMatch(/`storage-proof-url` must be an absolute http\(s\) URL/)
    expect(io.failed).toMatch(/`api-key` is required/)
    const bodyOnly = new RecordingIO({ query: JSON.stringify({ ...QUERY, fee: 'x' }), ...service() })
    await run(bodyOnly)
    expect(bodyOnly.failed).toMatch(/`query`: fee: must be a numeric string/)
    expect(emulator.requests().filter((request) => request.path === '/batch-query')).toHaveLength(0)
  })

  it('a refused key fails with what to check, and the key stays out of the summary', async () => {
    const restricted = await startTestEmulator({ apiKeys: ['pk_only_this_one'] })
    try {
      const io = new RecordingIO({
        query: queryFile,
        'storage-proof-url': restricted.url,
        'api-key': 'pk_refused_secret_key',
      })
      await run(io)
      expect(io.failed).toMatch(/401/)
      expect(io.summary).toMatch(/Check `api-key`/)
      expect([io.summary, io.failed, ...io.logs].join('\n')).not.toContain('pk_refused_secret_key')
    } finally {
      await restricted.close()
    }
  })

  it('times out with the last status and how to resume', async () => {
    await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 600_000 })
    const io = new RecordingIO({ query: queryFile, ...service(), 'timeout-minutes': '0.02' })
    await run(io)
    expect(io.failed).toMatch(/Timed out/)
    expect(io.outputs['query-status']).toBe('IN_PROGRESS')
    expect(io.summary).toMatch(/timed out/)
  })
})

describe('storage-query/action.yml', () => {
  const action = readAction('storage-query')

  it('declares exactly the inputs run() reads, with the same defaults; the ones it needs are required', () => {
    expect(Object.keys(action.inputs)).toEqual(Object.keys(STORAGE_QUERY_INPUTS))
    for (const [input, spec] of Object.entries(STORAGE_QUERY_INPUTS) as [string, InputSpec][]) {
      const declared = action.inputs[input]!
      expect(declared.default, `default of ${input}`).toBe(spec.kind === 'default' ? spec.default : undefined)
      expect(declared.required, `required of ${input}`).toBe(['query', 'storage-proof-url', 'api-key'].includes(input))
      if (declared.required !== true) expect(declared.description, input).toMatch(/omitted/)
    }
  })

  it('declares exactly the outputs run() sets, and runs the bundle on node24', () => {
    expect(Object.keys(action.outputs)).toEqual([...STORAGE_QUERY_OUTPUTS])
    expect(action.runs).toMatchObject({ using: 'node24', main: '../dist/storage-query/index.js' })
    expect(action.yaml.branding).toMatchObject({ icon: expect.any(String), color: expect.any(String) })
  })
})
