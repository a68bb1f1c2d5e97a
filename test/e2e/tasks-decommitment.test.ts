import { describe, expect, it } from 'vitest'
import { TaskClient } from '../../src/clients/tasks.ts'
import { RemoteFailureError, ServiceError } from '../../src/core/errors.ts'
import { taskGeneralErrorBody } from '../../src/schemas/tasks.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import { KEY, startTestEmulator, submitFixturePie, useEmulator } from '../helpers/emulator.ts'
import { decommitmentBody, dpOutput } from '../helpers/tasks.ts'

/**
 * POST /tasks/decommitment over real HTTP: with and without dp_output (then fetched from the
 * emulated proving query), starting at TaskDecommitmentStarted, and 404 for a proving query
 * that does not exist.
 */
describe('decommitment-only tasks', () => {
  const emulator = useEmulator()
  const client = () =>
    new TaskClient({ baseUrl: emulator().url, apiKey: KEY, dispatcher: emulator().agent, retry: { maxAttempts: 1 } })

  it('without dp_output: program hash and dp_output come from the proving query; starts at TaskDecommitmentStarted', async () => {
    // Simulated time: the stage lasts until the client's wait sleeps through it, however slowly
    // the machine answers the reads before (a 200 ms stage in real time could end before them).
    const clock = simulatedClock(Date.parse('2030-01-01T00:00:00.000Z'))
    const own = await startTestEmulator({ clock })
    try {
      const tasks = new TaskClient({
        baseUrl: own.url,
        apiKey: KEY,
        dispatcher: own.agent,
        retry: { maxAttempts: 1 },
        clock: clientClockFor(clock),
      })
      await own.control('PUT', '/tasks/timing', { receivedMs: 0, stageMs: 200, handoffMs: 0 })
      const provingQueryId = await submitFixturePie(own)
      const queued = await tasks.submitDecommitment(decommitmentBody({ proving_query_id: provingQueryId }))
      expect(queued.message).toBe('Decommitment-only task has been queued')
      // Straight into the decommitment stage: never Received.
      expect((await tasks.getTaskStatus(queued.uuid)).status).toBe('TaskDecommitmentStarted')
      // Its MMRs are known from the start.
      expect((await tasks.getTaskMmrs(queued.uuid)).mmrs).toHaveLength(2)
      const seen: string[] = []
      const record = await tasks.waitForTask(queued.uuid, { onProgress: (progress) => seen.push(progress.status) })
      expect(record.status).toBe('TaskDecommitmentCompleted')
      expect(seen).toEqual(['TaskDecommitmentStarted', 'TaskDecommitmentCompleted'])

      const stored = await own.control('GET', `/tasks/${queued.uuid}`)
      const query = own.state.queries[provingQueryId]!
      expect(stored).toMatchObject({ kind: 'decommitment', provingQueryId, programHash: query.facts.programHash })
      expect(stored.programHash).toMatch(/^0x[0-9a-f]+$/)
      const list = await tasks.listTasks({ search: queued.uuid })
      expect(list.tasks[0]).toMatchObject({
        uuid: queued.uuid,
        programHash: query.facts.programHash,
        destinationChainId: '0xaa36a7',
      })
    } finally {
      await own.close()
    }
  })

  it('with dp_output and program_hash: those are used, and the MMRs are dp_output’s', async () => {
    const provingQueryId = await submitFixturePie(emulator())
    const given = dpOutput()
    const queued = await client().submitDecommitment(
      decommitmentBody({ proving_query_id: provingQueryId, dp_output: given, program_hash: '0x1234abcd' }),
    )
    expect((await client().waitForTask(queued.uuid)).status).toBe('TaskDecommitmentCompleted')
    const { mmrs } = await client().getTaskMmrs(queued.uuid)
    expect(mmrs).toEqual([
      { chain_id: '0xaa36a7', hashing_function: 'poseidon', id: '0x1a', root: '0x4a1b2c', size: '0x3e8' },
      {
        chain_id: '0x1',
        hashing_function: 'keccak',
        id: '0x2b',
        root: `0x${'11'.padStart(32, '0')}${'22'.padStart(32, '0')}`,
        size: '0x7d0',
      },
    ])
    expect((await emulator().control('GET', `/tasks/${queued.uuid}`)).programHash).toBe('0x1234abcd')
  })

  it('with dp_output only: the program hash still comes from the query', async () => {
    const provingQueryId = await submitFixturePie(emulator())
    const queued = await client().submitDecommitment(
      decommitmentBody({ proving_query_id: provingQueryId, dp_output: dpOutput() }),
    )
    const stored = await emulator().control('GET', `/tasks/${queued.uuid}`)
    expect(stored.programHash).toBe(emulator().state.queries[provingQueryId]!.facts.programHash)
    expect(stored.dpOutput).toEqual(dpOutput())
  })

  it('404 with the general error body when the proving query does not exist; nothing is queued', async () => {
    const answer = await emulator().call('POST', '/tasks/decommitment', {
      headers: { 'x-api-key': KEY },
      json: decommitmentBody({ proving_query_id: 'no-such-query' }),
    })
    expect(answer.status).toBe(404)
    expect(taskGeneralErrorBody.safeParse(answer.body).success).toBe(true)
    expect(answer.body.details).toMatch(/no-such-query/)
    const error = await client()
      .submitDecommitment(decommitmentBody({ proving_query_id: 'no-such-query' }))
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).status).toBe(404)
    expect((await emulator().control('GET', '/tasks')).tasks).toEqual([])
  })

  it('can fail at its one stage', async () => {
    const provingQueryId = await submitFixturePie(emulator())
    await emulator().control('POST', '/next-task', { outcome: 'fail', stage: 'proving', error: 'reverted: bad proof' })
    const queued = await client().submitDecommitment(decommitmentBody({ proving_query_id: provingQueryId }))
    const error = (await client()
      .waitForTask(queued.uuid)
      .catch((caught: unknown) => caught)) as RemoteFailureError
    expect(error).toBeInstanceOf(RemoteFailureError)
    // A plan naming a stage a decommitment-only task does not run fails the stage it has.
    expect(error.record).toMatchObject({ status: 'TaskDecommitmentFailed', errorMessage: 'reverted: bad proof' })
    const refused = await emulator().call('POST', `/_emulator/tasks/${queued.uuid}/fail`, {
      json: { stage: 'dry-run' },
    })
    expect(refused.status).toBe(409)
  })
})
