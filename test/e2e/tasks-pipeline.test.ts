import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TaskClient } from '../../src/clients/tasks.ts'
import { RemoteFailureError } from '../../src/core/errors.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import { type TaskStatusRecord, taskStatusRecord } from '../../src/schemas/tasks.ts'
import { TASK_STAGES } from '../../src/schemas/tasks-constants.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { taskBody } from '../helpers/tasks.ts'

/**
 * Issue 5, "done when": schedule -> every stage -> completed with MMRs read back, and failure at
 * each stage, over real HTTP. The emulator runs on a simulated clock and the client sleeps on
 * it, so a ten-minute pipeline takes milliseconds and every status is seen by the polling.
 */

const SUCCESS_PATH = [
  'Received',
  'DryRunStarted',
  'DryRunCompleted',
  'ChainProofsFetchStarted',
  'ChainProofsFetchCompleted',
  'TraceGenStarted',
  'TraceGenCompleted',
  'ProvingStarted',
  'ProvingCompleted',
  'TaskDecommitmentStarted',
  'TaskDecommitmentCompleted',
]
const MINUTE = 60_000

let emulator: TestEmulator
let client: TaskClient

beforeEach(async () => {
  emulator = await startTestEmulator({ clock: simulatedClock(Date.parse('2025-06-01T12:00:00.000Z')) })
  // A minute per status: longer than the longest poll interval (30 s), so no status is skipped.
  await emulator.control('PUT', '/tasks/timing', { receivedMs: MINUTE, stageMs: MINUTE, handoffMs: MINUTE })
  client = new TaskClient({
    baseUrl: emulator.url,
    apiKey: KEY,
    dispatcher: emulator.agent,
    clock: clientClockFor(emulator.clock),
    retry: { maxAttempts: 1 },
  })
})

afterEach(async () => {
  await emulator.close()
})

async function follow(uuid: string): Promise<{ seen: string[]; outcome: TaskStatusRecord | RemoteFailureError }> {
  const seen: string[] = []
  try {
    const record = await client.waitForTask(uuid, { onProgress: (progress) => seen.push(progress.status) })
    return { seen, outcome: record }
  } catch (error) {
    if (error instanceof RemoteFailureError) return { seen, outcome: error }
    throw error
  }
}

describe('a scheduled task', () => {
  it('goes through every stage to TaskDecommitmentCompleted, and its MMRs are read back', async () => {
    const queued = await client.scheduleTask(taskBody())
    expect(queued.message).toBe('Task has been queued')
    // Before the chain proofs are fetched the task has used no MMR.
    expect((await client.getTaskMmrs(queued.uuid)).mmrs).toEqual([])

    const { seen, outcome } = await follow(queued.uuid)
    expect(seen).toEqual(SUCCESS_PATH)
    expect(outcome).toMatchObject({ status: 'TaskDecommitmentCompleted', taskId: queued.uuid, errorMessage: '' })
    expect(taskStatusRecord.safeParse(outcome).success).toBe(true)
    expect(Date.parse((outcome as TaskStatusRecord).updatedAt!)).toBe(
      Date.parse('2025-06-01T12:00:00.000Z') + 10 * MINUTE,
    )

    const { mmrs, taskId } = await client.getTaskMmrs(queued.uuid)
    expect(taskId).toBe(queued.uuid)
    // The MMRs are those of the run's mmr_metas: one Poseidon root, one Keccak root joined from its halves.
    const { dpOutput } = await emulator.control('GET', `/tasks/${queued.uuid}`)
    const [poseidon, keccak] = dpOutput.mmr_metas
    expect(mmrs).toEqual([
      { ...poseidon.Poseidon, hashing_function: 'poseidon' },
      {
        chain_id: keccak.Keccak.chain_id,
        hashing_function: 'keccak',
        id: keccak.Keccak.id,
        size: keccak.Keccak.size,
        root: `0x${(BigInt(keccak.Keccak.root_high) * 2n ** 128n + BigInt(keccak.Keccak.root_low)).toString(16).padStart(64, '0')}`,
      },
    ])
    expect(mmrs[0]!.chain_id).toBe('0xaa36a7')
    // Reads are the same after the fact.
    expect(await client.getTaskMmrs(queued.uuid)).toEqual({ mmrs, taskId })
  })

  it('a running task keeps the timing it started with', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    await emulator.control('PUT', '/tasks/timing', { receivedMs: 0, stageMs: 0, handoffMs: 0 })
    expect((await client.getTaskStatus(uuid)).status).toBe('Received')
    emulator.clock.advance(MINUTE)
    expect((await client.getTaskStatus(uuid)).status).toBe('DryRunStarted')
  })

  it('follows the emulator timing (receivedMs, stepMs) until told otherwise', async () => {
    await emulator.control('DELETE', '/tasks/timing')
    await emulator.control('PUT', '/timing', { receivedMs: 1_000, stepMs: 2_000 })
    expect(await emulator.control('GET', '/tasks/timing')).toEqual({
      timing: { receivedMs: 1_000, stageMs: 2_000, handoffMs: 2_000 },
      followsEmulatorTiming: true,
    })
  })

  it('POST /_emulator/tasks/{uuid}/complete ends it at once', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    const answer = await emulator.control('POST', `/tasks/${uuid}/complete`)
    expect(answer.status).toBe('TaskDecommitmentCompleted')
    expect((await client.getTaskStatus(uuid)).status).toBe('TaskDecommitmentCompleted')
  })
})

describe('failure at each stage', () => {
  for (const [index, { stage, label, prefix }] of TASK_STAGES.entries()) {
    it(`${stage}: the wait ends with ${prefix}Failed and the error message`, async () => {
      const { uuid } = await client.scheduleTask(taskBody())
      await emulator.control('POST', `/tasks/${uuid}/fail`, { stage, error: `${label} broke on purpose` })
      const { seen, outcome } = await follow(uuid)
      // Every status up to the failing stage's start, then its Failed.
      expect(seen).toEqual([...SUCCESS_PATH.slice(0, 2 + 2 * index), `${prefix}Failed`])
      expect(outcome).toBeInstanceOf(RemoteFailureError)
      const failure = outcome as RemoteFailureError
      expect(failure.shortMessage).toBe(`Task ${uuid} failed at ${label} (${prefix}Failed): ${label} broke on purpose`)
      expect(failure.record).toMatchObject({
        status: `${prefix}Failed`,
        errorMessage: `${label} broke on purpose`,
        taskId: uuid,
      })
    })
  }

  it('a stage named by its *Failed status, and a default error message', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    await emulator.control('POST', `/tasks/${uuid}/fail`, { stage: 'ProvingFailed' })
    const { outcome } = await follow(uuid)
    expect((outcome as RemoteFailureError).record).toMatchObject({
      status: 'ProvingFailed',
      errorMessage: expect.stringMatching(/Proving failed/),
    })
  })

  it('failing "now" fails the stage under way', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    emulator.clock.advance(5.5 * MINUTE) // Received 1 + dry run 2 + chain proofs 2 = 5 min: in TraceGenStarted
    expect((await client.getTaskStatus(uuid)).status).toBe('TraceGenStarted')
    await emulator.control('POST', `/tasks/${uuid}/fail`, { error: 'out of memory' })
    expect(await client.getTaskStatus(uuid)).toMatchObject({ status: 'TraceGenFailed', errorMessage: 'out of memory' })
  })

  it('the next submitted task can be planned to fail at a stage', async () => {
    await emulator.control('POST', '/next-task', { outcome: 'fail', stage: 'chain-proofs-fetch', error: 'RPC down' })
    const { uuid } = await client.scheduleTask(taskBody())
    const { outcome } = await follow(uuid)
    expect((outcome as RemoteFailureError).record).toMatchObject({
      status: 'ChainProofsFetchFailed',
      errorMessage: 'RPC down',
    })
    // It failed before the MMRs were fetched.
    expect((await client.getTaskMmrs(uuid)).mmrs).toEqual([])
    // The plan was used up: the next task succeeds.
    const next = await client.scheduleTask(taskBody())
    expect((await follow(next.uuid)).seen.at(-1)).toBe('TaskDecommitmentCompleted')
  })

  it('a task that failed after the chain proofs fetch still reports its MMRs', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    await emulator.control('POST', `/tasks/${uuid}/fail`, { stage: 'proving' })
    await follow(uuid)
    expect((await client.getTaskMmrs(uuid)).mmrs).toHaveLength(2)
  })

  it('the control API refuses to fail a task that ended or passed the stage (409), or an unknown one (404)', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    emulator.clock.advance(5.5 * MINUTE)
    const passed = await emulator.call('POST', `/_emulator/tasks/${uuid}/fail`, { json: { stage: 'dry-run' } })
    expect(passed.status).toBe(409)
    const badStage = await emulator.call('POST', `/_emulator/tasks/${uuid}/fail`, { json: { stage: 'aggregation' } })
    expect(badStage.status).toBe(400)
    emulator.clock.advance(60 * MINUTE)
    const ended = await emulator.call('POST', `/_emulator/tasks/${uuid}/fail`, { json: {} })
    expect(ended).toMatchObject({ status: 409, body: { error: 'CONFLICT' } })
    const unknown = await emulator.call('POST', '/_emulator/tasks/nope/fail', { json: {} })
    expect(unknown.status).toBe(404)
  })
})

describe('with a stateDir', () => {
  it('tasks survive a restart and carry on where their timestamps say', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const stateDir = await mkdtemp(join(tmpdir(), 'tasks-state-'))
    const clock = simulatedClock(Date.parse('2025-06-01T12:00:00.000Z'))
    try {
      const first = await startTestEmulator({ clock, stateDir })
      await first.control('PUT', '/tasks/timing', { receivedMs: MINUTE, stageMs: MINUTE, handoffMs: MINUTE })
      const tasks = new TaskClient({ baseUrl: first.url, apiKey: KEY, dispatcher: first.agent })
      const { uuid } = await tasks.scheduleTask(taskBody())
      await first.close()

      clock.advance(3.5 * MINUTE) // Received 1 min, dry run 2 min: half-way through the chain proofs fetch
      const second = await startTestEmulator({ clock, stateDir })
      try {
        const again = new TaskClient({ baseUrl: second.url, apiKey: KEY, dispatcher: second.agent })
        expect((await again.getTaskStatus(uuid)).status).toBe('ChainProofsFetchStarted')
        clock.advance(60 * MINUTE)
        expect((await again.getTaskStatus(uuid)).status).toBe('TaskDecommitmentCompleted')
        expect((await again.listTasks()).pagination.total).toBe(1)
      } finally {
        await second.close()
      }
    } finally {
      await rm(stateDir, { recursive: true, force: true })
    }
  })
})
