import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { run as runDecommit } from '../../src/action/actions/decommit.ts'
import { DECOMMIT_INPUTS, TASK_INPUTS } from '../../src/action/steps/inputs.ts'
import { TASK_STEP_OUTPUTS } from '../../src/action/steps/outputs.ts'
import { run as runTask } from '../../src/action/actions/task.ts'
import { errorAnnotations, leakedSecret, readAction, runAction } from '../helpers/run-action.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { dpOutput, taskBody } from '../helpers/tasks.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * The `task/` and `decommit/` sub-actions: run() with a recording ActionIO (what the runner
 * would see: outputs, failure, summary) against the emulator over real HTTP.
 */

let emulator: TestEmulator
let dir: string
let taskFile: string

beforeAll(async () => {
  emulator = await startTestEmulator()
  dir = await mkdtemp(join(tmpdir(), 'task-action-'))
  taskFile = join(dir, 'task.json')
  await writeFile(taskFile, JSON.stringify(taskBody()))
})

afterAll(async () => {
  await emulator.close()
  await rm(dir, { recursive: true, force: true })
})

beforeEach(async () => {
  await emulator.control('POST', '/reset')
})

const service = () => ({ 'tasks-url': emulator.url, 'api-key': KEY })

describe('task/', () => {
  it('schedules, waits, and sets every output; the summary shows the stages and the MMRs', async () => {
    const io = new RecordingIO({ task: taskFile, ...service() })
    await runTask(io)
    expect(io.failed).toBeUndefined()
    expect(io.outputOrder[0]).toBe('task-uuid')
    expect(io.outputs).toMatchObject({
      'task-uuid': expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'TaskDecommitmentCompleted',
      'updated-at': expect.any(String),
    })
    expect(io.outputs['error-message']).toBeUndefined()
    const mmrs = JSON.parse(io.outputs.mmrs!)
    expect(mmrs.map((mmr: { hashing_function: string }) => mmr.hashing_function)).toEqual(['poseidon', 'keccak'])
    expect(io.summary).toMatch(/### ✅ Task: passed/)
    expect(io.summary).toMatch(/dry run ✓ → chain proofs fetch ✓ → trace generation ✓ → proving ✓ → decommitment ✓/)
    expect(io.summary).toMatch(/\*\*MMRs used\*\*\n\n\| Chain \| Hashing \| Id \| Size \| Root \|/)
    expect(io.summary).toContain(`| \`0xaa36a7\` | poseidon | \`${mmrs[0].id}\``)
    expect(io.secrets).toContain(KEY)
    expect(io.summary + io.logs.join('\n') + JSON.stringify(io.outputs)).not.toContain(KEY)
  })

  it('takes the body inline', async () => {
    const io = new RecordingIO({ task: JSON.stringify(taskBody()), ...service(), wait: 'false' })
    await runTask(io)
    expect(io.failed).toBeUndefined()
    expect(Object.keys(io.outputs)).toEqual(['task-uuid'])
    expect(io.summary).toMatch(/Task: submitted/)
  })

  it('a failing stage fails the step with the error message; outputs still set', async () => {
    await emulator.control('POST', '/next-task', {
      outcome: 'fail',
      stage: 'trace-generation',
      error: 'trace too large',
    })
    const io = new RecordingIO({ task: taskFile, ...service() })
    await runTask(io)
    expect(io.failed).toMatch(/failed at trace generation \(TraceGenFailed\): trace too large/)
    expect(io.outputs).toMatchObject({
      status: 'TraceGenFailed',
      'error-message': 'trace too large',
      'task-uuid': expect.any(String),
    })
    expect(JSON.parse(io.outputs.mmrs!)).toHaveLength(2)
    expect(io.summary).toMatch(/dry run ✓ → chain proofs fetch ✓ → trace generation ✗ → proving → decommitment/)
  })

  it('bad inputs: every problem named, nothing sent', async () => {
    await emulator.control('DELETE', '/requests')
    const bad = join(dir, 'bad.json')
    await writeFile(bad, JSON.stringify(taskBody({ destination_chain_id: '11155111', program_hash: 'abc' })))
    const cases: [Record<string, string>, RegExp][] = [
      [{ task: bad, ...service() }, /`task`: destination_chain_id must be 0x-prefixed hex, got "11155111"/],
      [{ task: join(dir, 'none.json'), ...service() }, /`task`: no file at/],
      [{ task: '{ "x": ', ...service() }, /`task`: the inline JSON is not valid JSON/],
      [{ task: taskFile }, /`api-key` is required[\s\S]*`tasks-url` is required/],
      [{ task: taskFile, ...service(), wait: 'yes' }, /`wait` must be true or false/],
    ]
    for (const [inputs, message] of cases) {
      const io = new RecordingIO(inputs)
      await runTask(io)
      expect(io.failed).toMatch(message)
      expect(io.summary).toMatch(/nothing was sent/)
      expect(io.outputs['task-uuid']).toBeUndefined()
    }
    expect(emulator.requests()).toEqual([])
  })

  it('a timeout keeps task-uuid and says how to follow the task', async () => {
    await emulator.control('PUT', '/tasks/timing', { receivedMs: 3_600_000, stageMs: 1, handoffMs: 1 })
    const io = new RecordingIO({ task: taskFile, ...service(), 'timeout-minutes': '0.02' })
    await runTask(io)
    expect(io.failed).toMatch(/Timed out waiting for task/)
    expect(io.outputs).toMatchObject({ status: 'Received', 'task-uuid': expect.any(String) })
    expect(io.summary).toMatch(/timed out/)
    expect(io.summary).toContain(`proving task wait ${io.outputs['task-uuid']}`)
  })
})

describe('decommit/', () => {
  it('fetches dp_output from the proving query, waits, sets the outputs', async () => {
    const provingQueryId = await submitFixturePie(emulator)
    const io = new RecordingIO({ 'proving-query-id': provingQueryId, 'destination-chain-id': '0xaa36a7', ...service() })
    await runDecommit(io)
    expect(io.failed).toBeUndefined()
    expect(io.outputs).toMatchObject({ status: 'TaskDecommitmentCompleted', 'task-uuid': expect.any(String) })
    expect(JSON.parse(io.outputs.mmrs!)).toHaveLength(2)
    expect(io.summary).toMatch(/### ✅ Decommit: passed/)
    expect(io.summary).toMatch(/\| \*\*Stages\*\* \| decommitment ✓ \|/)
    expect(io.summary).toMatch(/fetched by the service from the proving query/)
  })

  it('with dp-output (inline JSON), program-hash and a webhook', async () => {
    const provingQueryId = await submitFixturePie(emulator)
    const io = new RecordingIO({
      'proving-query-id': provingQueryId,
      'destination-chain-id': '0xaa36a7',
      'dp-output': JSON.stringify(dpOutput()),
      'program-hash': '0xabc',
      'webhook-url': 'http://127.0.0.1:9/hook',
      ...service(),
    })
    await runDecommit(io)
    expect(io.failed).toBeUndefined()
    const stored = await emulator.control('GET', `/tasks/${io.outputs['task-uuid']}`)
    expect(stored).toMatchObject({
      programHash: '0xabc',
      dpOutput: dpOutput(),
      webhook: { url: 'http://127.0.0.1:9/hook' },
    })
    expect(JSON.parse(io.outputs.mmrs!)[0]).toMatchObject({ root: '0x4a1b2c', hashing_function: 'poseidon' })
  })

  it('bad inputs are named, nothing sent', async () => {
    await emulator.control('DELETE', '/requests')
    const cases: [Record<string, string>, RegExp][] = [
      [
        { 'proving-query-id': 'q', 'destination-chain-id': '11155111', ...service() },
        /`destination-chain-id` must be 0x-prefixed hex.*got "11155111"/,
      ],
      [{ 'destination-chain-id': '0x1', ...service() }, /`proving-query-id` is required/],
      [
        { 'proving-query-id': 'q', 'destination-chain-id': '0x1', 'webhook-url': 'hooks', ...service() },
        /`webhook-url` must be an absolute http\(s\) URL/,
      ],
      [
        {
          'proving-query-id': 'q',
          'destination-chain-id': '0x1',
          'dp-output': JSON.stringify({ ...dpOutput(), task_hash_low: '7' }),
          ...service(),
        },
        /`dp-output`: dp_output\.task_hash_low must be 0x-prefixed hex, got "7"/,
      ],
    ]
    for (const [inputs, message] of cases) {
      const io = new RecordingIO(inputs)
      await runDecommit(io)
      expect(io.failed).toMatch(message)
    }
    expect(emulator.requests()).toEqual([])
  })

  it('an unknown proving query: the 404 fails the step, saying what to check', async () => {
    const io = new RecordingIO({ 'proving-query-id': 'no-such-query', 'destination-chain-id': '0x1', ...service() })
    await runDecommit(io)
    expect(io.failed).toMatch(/answered 404/)
    expect(io.summary).toMatch(/Check the identifier/)
  })

  it('a failed decommitment fails the step', async () => {
    const provingQueryId = await submitFixturePie(emulator)
    await emulator.control('POST', '/next-task', { outcome: 'fail', error: 'transaction reverted' })
    const io = new RecordingIO({ 'proving-query-id': provingQueryId, 'destination-chain-id': '0x1', ...service() })
    await runDecommit(io)
    expect(io.failed).toMatch(/TaskDecommitmentFailed\): transaction reverted/)
    expect(io.outputs).toMatchObject({ status: 'TaskDecommitmentFailed', 'error-message': 'transaction reverted' })
    expect(io.summary).toMatch(/decommitment ✗/)
  })
})

describe('action.yml', () => {
  for (const [folder, inputs] of [
    ['task', TASK_INPUTS],
    ['decommit', DECOMMIT_INPUTS],
  ] as const) {
    it(`${folder}/action.yml declares exactly the inputs and outputs the code reads and sets`, () => {
      const action = readAction(folder)
      expect(Object.keys(action.inputs)).toEqual(Object.keys(inputs))
      expect(Object.keys(action.outputs)).toEqual([...TASK_STEP_OUTPUTS])
      for (const [name, spec] of Object.entries(inputs)) {
        const declared = action.inputs[name]!
        expect(declared.default, `default of ${name}`).toBe(spec.kind === 'default' ? spec.default : undefined)
        // As for the other sub-actions: the service inputs are declared required (the code names them when missing).
        expect(declared.required, `required of ${name}`).toBe(
          spec.kind === 'required' || ['api-key', 'tasks-url'].includes(name),
        )
        expect(declared.description!.length, name).toBeGreaterThan(20)
        if (declared.required !== true) expect(declared.description, name).toMatch(/omitted/)
      }
      expect(action.runs).toMatchObject({ using: 'node24', main: `../dist/${folder}/index.js` })
      expect(action.yaml.branding).toMatchObject({ icon: expect.any(String), color: expect.any(String) })
    })
  }
})

describe('the committed bundles, run as the runner runs them', () => {
  it('task/: queued, followed, outputs in GITHUB_OUTPUT, summary written, key masked', async () => {
    const run = await runAction('task', { inputs: { task: taskFile, ...service() } })
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({
      status: 'TaskDecommitmentCompleted',
      'task-uuid': expect.stringMatching(/^[0-9a-f-]{36}$/),
    })
    expect(JSON.parse(run.outputs.mmrs!)).toHaveLength(2)
    expect(run.summary).toMatch(/Task: passed[\s\S]*MMRs used/)
    expect(run.stdout).toContain(`::add-mask::${KEY}`)
    expect(leakedSecret(run, KEY)).toBeUndefined()
  })

  it('decommit/: a bad chain id fails before sending, naming the input', async () => {
    await emulator.control('DELETE', '/requests')
    const run = await runAction('decommit', {
      inputs: { 'proving-query-id': 'q', 'destination-chain-id': '11155111', ...service() },
    })
    expect(run.code).toBe(1)
    expect(errorAnnotations(run).join('\n')).toMatch(/`destination-chain-id` must be 0x-prefixed hex/)
    expect(emulator.requests()).toEqual([])
  })

  it('decommit/: a proving query decommitted end to end', async () => {
    const provingQueryId = await submitFixturePie(emulator)
    const run = await runAction('decommit', {
      inputs: { 'proving-query-id': provingQueryId, 'destination-chain-id': '0xaa36a7', ...service() },
    })
    expect(run.code).toBe(0)
    expect(run.outputs).toMatchObject({ status: 'TaskDecommitmentCompleted' })
  })
})

describe('decommitAfterProof (for the root action’s decommit-destination-chain-id)', () => {
  it('decommits a DONE query; outputs under names that leave the query’s `status` alone', async () => {
    const { decommitAfterProof } = await import('../../src/action/actions/decommit.ts')
    const provingQueryId = await submitFixturePie(emulator)
    const io = new RecordingIO({})
    const passed = await decommitAfterProof(io, {
      tasksUrl: emulator.url,
      apiKey: KEY,
      provingQueryId,
      destinationChainId: '0xaa36a7',
      wait: true,
      timeoutMinutes: 5,
      signal: new AbortController().signal,
    })
    expect(passed).toBe(true)
    expect(io.failed).toBeUndefined()
    expect(Object.keys(io.outputs).sort()).toEqual(['mmrs', 'task-status', 'task-updated-at', 'task-uuid'])
    expect(io.outputs['task-status']).toBe('TaskDecommitmentCompleted')
    expect(io.summary).toMatch(/### ✅ Decommit: passed/)
  })

  it('a failure fails the step and resolves false', async () => {
    const { decommitAfterProof } = await import('../../src/action/actions/decommit.ts')
    const provingQueryId = await submitFixturePie(emulator)
    await emulator.control('POST', '/next-task', { outcome: 'fail', error: 'reverted' })
    const io = new RecordingIO({})
    const options = {
      tasksUrl: emulator.url,
      apiKey: KEY,
      provingQueryId,
      wait: true,
      timeoutMinutes: 5,
      signal: new AbortController().signal,
    }
    expect(await decommitAfterProof(io, { ...options, destinationChainId: '0x1' })).toBe(false)
    expect(io.outputs).toMatchObject({ 'task-status': 'TaskDecommitmentFailed', 'task-error-message': 'reverted' })
    expect(io.failed).toMatch(/reverted/)
    const bad = new RecordingIO({})
    expect(await decommitAfterProof(bad, { ...options, destinationChainId: '11155111' })).toBe(false)
    expect(bad.failed).toMatch(/destination_chain_id must be 0x-prefixed hex/)
  })
})
