import { describe, expect, it } from 'vitest'
import { parseResponse } from '../../../src/core/parse.ts'
import { InvalidResponseError } from '../../../src/core/errors.ts'
import {
  checkTaskRequest,
  decommitmentBody,
  dpOutput,
  hexString,
  mmrMeta,
  taskBody,
  taskGeneralErrorBody,
  taskListResponse,
  taskMmrsResponse,
  taskQueuedResponse,
  taskShortErrorBody,
  taskStatusRecord,
} from '../../../src/schemas/tasks.ts'
import {
  isTerminalTaskStatus,
  TASK_FAILED_STATUSES,
  TASK_STATUSES,
  taskStageOf,
} from '../../../src/schemas/tasks-constants.ts'
import {
  BAD_DECOMMITMENT_BODIES,
  BAD_TASK_BODIES,
  decommitmentBody as decommitmentFixture,
  dpOutput as dpOutputFixture,
  taskBody as taskFixture,
} from '../../helpers/tasks.ts'

const debugNotes: string[] = []
const logger = { debug: (m: string) => debugNotes.push(m), info() {}, warn() {}, error() {} }
const parse = <T>(schema: Parameters<typeof parseResponse<T>>[0], json: unknown) =>
  parseResponse(schema, json, { logger, what: 'task service response' })

describe('request structures', () => {
  it('hex strings are 0x and at least one hex digit, either case', () => {
    for (const good of ['0x0', '0xaa36a7', '0xAA36A7', `0x${'f'.repeat(64)}`])
      expect(hexString.safeParse(good).success).toBe(true)
    for (const bad of ['', '0x', 'aa36a7', '11155111', '0X1', '0xg', ' 0x1', '0x1 '])
      expect(hexString.safeParse(bad).success).toBe(false)
  })

  it('a valid task body parses, with task_inputs defaulting to []', () => {
    const { task_inputs: _omitted, ...rest } = taskFixture()
    const result = checkTaskRequest(taskBody, rest)
    expect(result.ok).toBe(true)
    if (result.ok) expect(result.data.task_inputs).toEqual([])
  })

  it('compiled classes may carry fields a newer compiler adds', () => {
    const body = taskFixture()
    ;(body.input.compiled_class as Record<string, unknown>).sierra_version = '1.7.0'
    expect(checkTaskRequest(taskBody, body).ok).toBe(true)
  })

  it('an MMR meta has exactly one key, Poseidon or Keccak, with that function’s fields', () => {
    const [poseidon, keccak] = dpOutputFixture().mmr_metas
    expect(mmrMeta.safeParse(poseidon).success).toBe(true)
    expect(mmrMeta.safeParse(keccak).success).toBe(true)
    expect(mmrMeta.safeParse({}).success).toBe(false)
    expect(mmrMeta.safeParse({ ...poseidon, ...keccak }).success).toBe(false)
    expect(
      mmrMeta.safeParse({ Poseidon: { chain_id: '0x1', id: '0x1', root_high: '0x1', root_low: '0x1', size: '0x1' } })
        .success,
    ).toBe(false)
  })

  it('dp_output needs every field', () => {
    expect(dpOutput.safeParse(dpOutputFixture()).success).toBe(true)
    const { task_hash_high: _dropped, ...partial } = dpOutputFixture()
    expect(dpOutput.safeParse(partial).success).toBe(false)
  })

  it('a decommitment body needs only the proving query id and the chain id', () => {
    expect(checkTaskRequest(decommitmentBody, decommitmentFixture()).ok).toBe(true)
    expect(
      checkTaskRequest(decommitmentBody, decommitmentFixture({ dp_output: dpOutputFixture(), program_hash: '0x1' })).ok,
    ).toBe(true)
  })

  for (const { name, body, problem } of BAD_TASK_BODIES) {
    it(`task body: ${name} is named with the reason`, () => {
      const result = checkTaskRequest(taskBody, body)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.problems.join('\n')).toMatch(problem)
    })
  }

  for (const { name, body, problem } of BAD_DECOMMITMENT_BODIES) {
    it(`decommitment body: ${name} is named with the reason`, () => {
      const result = checkTaskRequest(decommitmentBody, body)
      expect(result.ok).toBe(false)
      if (!result.ok) expect(result.problems.join('\n')).toMatch(problem)
    })
  }
})

describe('statuses', () => {
  it('are in pipeline order, three per stage after Received', () => {
    expect(TASK_STATUSES[0]).toBe('Received')
    expect(TASK_STATUSES.length).toBe(16)
    expect(TASK_STATUSES.map((status) => taskStageOf(status))).toEqual([
      'received',
      ...['dry-run', 'chain-proofs-fetch', 'trace-generation', 'proving', 'decommitment'].flatMap((stage) => [
        stage,
        stage,
        stage,
      ]),
    ])
  })

  it('terminal: TaskDecommitmentCompleted and every *Failed', () => {
    expect(TASK_STATUSES.filter(isTerminalTaskStatus)).toEqual([
      ...TASK_FAILED_STATUSES.slice(0, 4),
      'TaskDecommitmentCompleted',
      'TaskDecommitmentFailed',
    ])
    expect(taskStageOf('SomethingNew')).toBeUndefined()
  })
})

describe('responses', () => {
  it('status record: the four strings; errorMessage may be null or absent', () => {
    const record = { status: 'ProvingStarted', taskId: 't-1', updatedAt: '2025-06-01T12:00:00.000Z', errorMessage: '' }
    expect(parse(taskStatusRecord, record)).toEqual(record)
    expect(parse(taskStatusRecord, { ...record, errorMessage: null }).errorMessage).toBeNull()
    const { errorMessage: _omitted, ...withoutError } = record
    expect(parse(taskStatusRecord, withoutError).status).toBe('ProvingStarted')
  })

  it('status record: an unknown status and extra fields pass with a note; a wrong type does not', () => {
    debugNotes.length = 0
    const record = parse(taskStatusRecord, {
      status: 'Archived',
      taskId: 't',
      updatedAt: 'x',
      errorMessage: '',
      extra: 1,
    })
    expect(record.status).toBe('Archived')
    expect(debugNotes.join()).toMatch(/unknown value "Archived".*unexpected field "extra"/)
    expect(() => parse(taskStatusRecord, { status: 3, taskId: 't', updatedAt: 'x', errorMessage: '' })).toThrow(
      InvalidResponseError,
    )
  })

  it('MMRs, list, queued and error bodies', () => {
    const mmr = { chain_id: '0xaa36a7', hashing_function: 'poseidon', id: '0x1a', root: '0x4a', size: '0x3e8' }
    expect(parse(taskMmrsResponse, { mmrs: [mmr], taskId: 't' }).mmrs[0]).toEqual(mmr)
    const task = {
      uuid: 'u',
      status: 'Received',
      destinationChainId: '0x1',
      programHash: '0x2',
      clientId: 'c',
      createdAt: 'a',
      updatedAt: 'b',
      extra: true,
    }
    const list = parse(taskListResponse, {
      tasks: [task],
      pagination: { page: 1, perPage: 10, total: 1, totalPages: 1 },
    })
    expect(list.tasks[0]!.uuid).toBe('u')
    expect(() =>
      parse(taskListResponse, { tasks: [task], pagination: { page: '1', perPage: 10, total: 1, totalPages: 1 } }),
    ).toThrow(InvalidResponseError)
    expect(parse(taskQueuedResponse, { message: 'Task has been queued', uuid: 'u' }).uuid).toBe('u')
    expect(taskShortErrorBody.safeParse({ error: 'Missing X-API-KEY header' }).success).toBe(true)
    expect(
      taskGeneralErrorBody.safeParse({ error: 'Not Found', details: 'd', message: 'm', taskId: 't' }).success,
    ).toBe(true)
    expect(taskGeneralErrorBody.safeParse({ error: 'Not Found' }).success).toBe(false)
  })
})
