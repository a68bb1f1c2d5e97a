import { beforeAll, afterAll, describe, expect, it } from 'vitest'
import { TaskClient } from '../../src/clients/tasks.ts'
import { taskListResponse } from '../../src/schemas/tasks.ts'
import { KEY, OTHER_KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { taskBody } from '../helpers/tasks.ts'

/** GET /tasks over real HTTP: pagination across 250 tasks, the dp_tasks_* filters, bounds. */
describe('listing 250 tasks', () => {
  let emulator: TestEmulator
  let client: TaskClient
  const created: string[] = []

  beforeAll(async () => {
    emulator = await startTestEmulator()
    client = new TaskClient({
      baseUrl: emulator.url,
      apiKey: KEY,
      dispatcher: emulator.agent,
      retry: { maxAttempts: 1 },
    })
    const other = new TaskClient({
      baseUrl: emulator.url,
      apiKey: OTHER_KEY,
      dispatcher: emulator.agent,
      retry: { maxAttempts: 1 },
    })
    // 200 tasks by one key, 50 by another; 20 of them planned to fail the dry run.
    await emulator.control('POST', '/next-task', { outcome: 'fail', stage: 'dry-run', times: 20 })
    for (let i = 0; i < 250; i++) {
      const { uuid } = await (i % 5 === 4 ? other : client).scheduleTask(taskBody())
      created.push(uuid)
    }
  })

  afterAll(async () => {
    await emulator.close()
  })

  it('iterateTasks yields all 250, newest first, in 3 requests of 100', async () => {
    await emulator.control('DELETE', '/requests')
    const seen: string[] = []
    for await (const task of client.iterateTasks()) seen.push(task.uuid)
    expect(seen).toHaveLength(250)
    expect(seen).toEqual([...created].reverse())
    const listCalls = emulator.requests().filter((request) => request.path.startsWith('/tasks?'))
    expect(listCalls.map((request) => request.path)).toEqual([
      '/tasks?dp_tasks_page=1&dp_tasks_per_page=100',
      '/tasks?dp_tasks_page=2&dp_tasks_per_page=100',
      '/tasks?dp_tasks_page=3&dp_tasks_per_page=100',
    ])
  })

  it('pages of 100: 100, 100, 50, then empty; pagination tells the totals', async () => {
    const sizes = []
    for (let page = 1; page <= 4; page++) {
      const response = await client.listTasks({ page, perPage: 100 })
      expect(response.pagination).toEqual({ page, perPage: 100, total: 250, totalPages: 3 })
      sizes.push(response.tasks.length)
    }
    expect(sizes).toEqual([100, 100, 50, 0])
  })

  it('defaults: page 1, 10 per page', async () => {
    const answer = await emulator.call('GET', '/tasks')
    expect(answer.status).toBe(200)
    expect(taskListResponse.safeParse(answer.body).success).toBe(true)
    expect(answer.body.pagination).toEqual({ page: 1, perPage: 10, total: 250, totalPages: 25 })
    expect(answer.body.tasks).toHaveLength(10)
    expect(Object.keys(answer.body.tasks[0])).toEqual(
      expect.arrayContaining([
        'uuid',
        'status',
        'destinationChainId',
        'programHash',
        'clientId',
        'createdAt',
        'updatedAt',
      ]),
    )
  })

  it('filters: client id, status, search by uuid', async () => {
    const otherClientId = (await client.listTasks({ search: created[4]! })).tasks[0]!.clientId!
    const ofOther = []
    for await (const task of client.iterateTasks({ clientId: otherClientId, perPage: 30 })) ofOther.push(task)
    expect(ofOther).toHaveLength(50)
    expect(ofOther.every((task) => task.clientId === otherClientId)).toBe(true)

    const failed = await client.listTasks({ status: 'DryRunFailed', perPage: 100 })
    expect(failed.pagination.total).toBe(20)
    expect(new Set(failed.tasks.map((task) => task.uuid))).toEqual(new Set(created.slice(0, 20)))
    expect((await client.listTasks({ status: 'TaskDecommitmentCompleted' })).pagination.total).toBe(230)

    const wanted = created[123]!
    const found = await client.listTasks({ search: wanted.slice(0, 13) })
    expect(found.tasks.map((task) => task.uuid)).toContain(wanted)
    expect((await client.listTasks({ search: wanted.toUpperCase() })).tasks.map((task) => task.uuid)).toEqual([wanted])
    expect((await client.listTasks({ search: 'no-such-uuid' })).pagination).toEqual({
      page: 1,
      perPage: 10,
      total: 0,
      totalPages: 0,
    })
  })

  it('out-of-bounds parameters get 400 { error } from the service', async () => {
    for (const query of [
      { dp_tasks_per_page: 101 },
      { dp_tasks_per_page: 0 },
      { dp_tasks_page: 0 },
      { dp_tasks_page: 'two' },
      { dp_tasks_per_page: '1.5' },
    ]) {
      const answer = await emulator.call('GET', '/tasks', { query })
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual({ error: expect.stringMatching(/^dp_tasks_(page|per_page) must be a whole number/) })
    }
  })

  it('needs no API key', async () => {
    const answer = await emulator.call('GET', '/tasks', { query: { dp_tasks_per_page: 1 } })
    expect(answer.status).toBe(200)
  })
})
