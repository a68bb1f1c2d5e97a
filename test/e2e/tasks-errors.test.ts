import { describe, expect, it } from 'vitest'
import { TaskClient } from '../../src/clients/tasks.ts'
import { InvalidInputError, ServiceError } from '../../src/core/errors.ts'
import { taskGeneralErrorBody, taskShortErrorBody } from '../../src/schemas/tasks.ts'
import { FakeClock } from '../helpers/fake-clock.ts'
import { KEY, startTestEmulator, submitFixturePie, useEmulator } from '../helpers/emulator.ts'
import { BAD_DECOMMITMENT_BODIES, BAD_TASK_BODIES, decommitmentBody, taskBody } from '../helpers/tasks.ts'

/** contract.md's task-service errors, code by code, over real HTTP; and bad input stopped at the client. */
describe('task service errors', () => {
  const emulator = useEmulator()
  const client = (apiKey: string | undefined = KEY) =>
    new TaskClient({ baseUrl: emulator().url, apiKey, dispatcher: emulator().agent, retry: { maxAttempts: 1 } })
  const post = (path: string, json: unknown, headers: Record<string, string> = { 'x-api-key': KEY }) =>
    emulator().call('POST', path, { headers, json })
  const queued = async () => (await emulator().control('GET', '/tasks')).tasks as unknown[]

  it('401 { error: "Missing X-API-KEY header" } on both submissions; the proving service’s header does not count', async () => {
    for (const path of ['/tasks', '/tasks/decommitment']) {
      expect(await post(path, taskBody(), {})).toMatchObject({
        status: 401,
        body: { error: 'Missing X-API-KEY header' },
      })
      expect(await post(path, taskBody(), { 'api-key': KEY })).toMatchObject({
        status: 401,
        body: { error: 'Missing X-API-KEY header' },
      })
    }
    expect(await queued()).toEqual([])
  })

  it('401 for a key the emulator does not accept', async () => {
    const strict = await startTestEmulator({ apiKeys: [KEY] })
    try {
      const answer = await strict.call('POST', '/tasks', {
        headers: { 'x-api-key': 'not-a-known-key' },
        json: taskBody(),
      })
      expect(answer.status).toBe(401)
      expect(taskShortErrorBody.safeParse(answer.body).success).toBe(true)
      expect((await strict.call('POST', '/tasks', { headers: { 'x-api-key': KEY }, json: taskBody() })).status).toBe(
        200,
      )
    } finally {
      await strict.close()
    }
  })

  for (const { name, body, problem } of BAD_TASK_BODIES) {
    it(`POST /tasks, ${name}: 400 { error } naming the field; nothing queued`, async () => {
      const answer = await post('/tasks', body)
      expect(answer.status).toBe(400)
      expect(Object.keys(answer.body)).toEqual(['error'])
      expect(answer.body.error).toMatch(problem)
      expect(await queued()).toEqual([])
    })
  }

  for (const { name, body, problem } of BAD_DECOMMITMENT_BODIES) {
    it(`POST /tasks/decommitment, ${name}: 400 { error } naming the field`, async () => {
      const answer = await post('/tasks/decommitment', body)
      expect(answer.status).toBe(400)
      expect(answer.body.error).toMatch(problem)
    })
  }

  it('400 for a body that is not JSON, or not sent as JSON', async () => {
    const notJson = await emulator().call('POST', '/tasks', {
      headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
      body: '{"destination_chain_id":',
    })
    expect(notJson.status).toBe(400)
    expect(notJson.body).toEqual({ error: expect.stringMatching(/not valid JSON/) })
    const asText = await emulator().call('POST', '/tasks', {
      headers: { 'x-api-key': KEY, 'content-type': 'text/plain' },
      body: JSON.stringify(taskBody()),
    })
    expect(asText).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/Content-Type must be application\/json/) },
    })
  })

  it('every bad-input class is rejected by the client before anything is sent', async () => {
    await emulator().control('DELETE', '/requests')
    for (const { body, problem } of BAD_TASK_BODIES) {
      await expect(client().scheduleTask(body as never)).rejects.toThrow(problem)
    }
    for (const { body, problem } of BAD_DECOMMITMENT_BODIES) {
      await expect(client().submitDecommitment(body as never)).rejects.toThrow(problem)
    }
    await expect(client('').scheduleTask(taskBody())).rejects.toBeInstanceOf(InvalidInputError)
    await expect(client().listTasks({ perPage: 101 })).rejects.toBeInstanceOf(InvalidInputError)
    await expect(client().listTasks({ page: 0 })).rejects.toBeInstanceOf(InvalidInputError)
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    await expect(client().listTasks({ status: 'Finished' })).rejects.toBeInstanceOf(InvalidInputError)
    await expect(client().getTaskStatus('')).rejects.toBeInstanceOf(InvalidInputError)
    await expect(client().getTaskMmrs('../tasks')).rejects.toBeInstanceOf(InvalidInputError)
    expect(emulator().requests()).toEqual([])
  })

  it('404 { error, details, message, taskId } for an unknown task, on status and on mmrs', async () => {
    for (const path of [
      '/tasks/6f1c1d6e-0000-4000-8000-000000000000/status',
      '/tasks/6f1c1d6e-0000-4000-8000-000000000000/mmrs',
    ]) {
      const answer = await emulator().call('GET', path)
      expect(answer.status).toBe(404)
      expect(taskGeneralErrorBody.safeParse(answer.body).success).toBe(true)
      expect(answer.body.taskId).toBe('6f1c1d6e-0000-4000-8000-000000000000')
    }
    const error = await client()
      .getTaskStatus('6f1c1d6e-0000-4000-8000-000000000000')
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).status).toBe(404)
  })

  it('429 { error: "Rate limit exceeded" } with Retry-After; the client waits and gets through', async () => {
    await emulator().control('POST', '/tasks/throttle', { times: 1 })
    const answer = await post('/tasks', taskBody())
    expect(answer).toMatchObject({
      status: 429,
      body: { error: 'Rate limit exceeded' },
      headers: { 'retry-after': '1' },
    })
    await emulator().control('POST', '/tasks/throttle', { times: 2 })
    const clock = new FakeClock()
    const patient = new TaskClient({ baseUrl: emulator().url, apiKey: KEY, dispatcher: emulator().agent, clock })
    const { uuid } = await patient.scheduleTask(taskBody())
    expect(uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(clock.sleeps).toEqual([1_000, 1_000])
    // A refused submission was not processed: exactly one task exists.
    expect(await queued()).toHaveLength(1)
  })

  it('500 with the general error body when the service fails', async () => {
    const { uuid } = await client().scheduleTask(taskBody())
    await emulator().control('POST', '/faults', { method: 'GET', path: '/tasks/:uuid/status', kind: 'error' })
    const answer = await emulator().call('GET', `/tasks/${uuid}/status`)
    expect(answer.status).toBe(500)
    expect(taskGeneralErrorBody.safeParse(answer.body).success).toBe(true)
    expect((await emulator().call('GET', `/tasks/${uuid}/status`)).status).toBe(200)
  })

  it('status and MMRs need no API key', async () => {
    const provingQueryId = await submitFixturePie(emulator())
    const { uuid } = await client().submitDecommitment(decommitmentBody({ proving_query_id: provingQueryId }))
    expect((await emulator().call('GET', `/tasks/${uuid}/status`)).status).toBe(200)
    expect((await emulator().call('GET', `/tasks/${uuid}/mmrs`)).status).toBe(200)
  })
})
