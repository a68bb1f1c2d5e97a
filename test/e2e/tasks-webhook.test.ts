import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { TaskClient } from '../../src/clients/tasks.ts'
import { simulatedClock } from '../../src/emulator/index.ts'
import { taskWebhookFailure, taskWebhookSuccess } from '../../src/schemas/tasks.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { decommitmentBody, taskBody } from '../helpers/tasks.ts'

/**
 * Webhooks (contract.md): on a terminal state the emulator POSTs the documented payload to
 * webhook_url, again on a non-2xx answer, at most 3 attempts. The receiver is a real HTTP
 * server on 127.0.0.1.
 */

type Received = { method: string; path: string; contentType: string | undefined; body: any }

class Receiver {
  server!: Server
  url = ''
  received: Received[] = []
  /** Statuses to answer, in order; 200 once they run out. */
  answers: number[] = []

  async start(): Promise<void> {
    this.server = createServer(async (req: IncomingMessage, res) => {
      let text = ''
      for await (const chunk of req) text += chunk
      this.received.push({
        method: req.method!,
        path: req.url!,
        contentType: req.headers['content-type'],
        body: JSON.parse(text),
      })
      res.writeHead(this.answers.shift() ?? 200, { 'content-type': 'text/plain' }).end('ok')
    })
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/dp?source=emulator`
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}

let emulator: TestEmulator
let receiver: Receiver
let client: TaskClient

beforeEach(async () => {
  emulator = await startTestEmulator()
  receiver = new Receiver()
  await receiver.start()
  client = new TaskClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent, retry: { maxAttempts: 1 } })
})

afterEach(async () => {
  await emulator.close()
  await receiver.stop()
})

/** Waits (real time) until the emulator has finished delivering the task's webhook. */
async function delivered(uuid: string, target: TestEmulator = emulator) {
  const deadline = Date.now() + 10_000
  for (;;) {
    const task = await target.control('GET', `/tasks/${uuid}`)
    if (task.webhook?.state === 'delivered' || task.webhook?.state === 'failed') return task.webhook
    if (Date.now() > deadline) throw new Error(`webhook of ${uuid} still ${task.webhook?.state}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('webhooks', () => {
  it('success: one POST of { status, task_id, timestamp, transaction_hash }', async () => {
    await emulator.control('PUT', '/tasks/timing', { receivedMs: 50, stageMs: 50, handoffMs: 10 })
    const { uuid } = await client.scheduleTask(taskBody({ webhook_url: receiver.url }))
    const record = await client.waitForTask(uuid)
    const webhook = await delivered(uuid)
    expect(webhook).toMatchObject({ state: 'delivered', attempts: [{ status: 200, error: null }] })
    expect(receiver.received).toHaveLength(1)
    const [call] = receiver.received
    expect(call).toMatchObject({ method: 'POST', path: '/hooks/dp?source=emulator', contentType: 'application/json' })
    expect(Object.keys(call!.body).sort()).toEqual(['status', 'task_id', 'timestamp', 'transaction_hash'])
    expect(taskWebhookSuccess.safeParse(call!.body).success).toBe(true)
    expect(call!.body).toMatchObject({
      status: 'TaskDecommitmentCompleted',
      task_id: uuid,
      timestamp: record.updatedAt,
    })
    expect(call!.body.transaction_hash).toMatch(/^0x[0-9a-f]{64}$/)
    expect(new Date(call!.body.timestamp).toISOString()).toBe(call!.body.timestamp)
  })

  it('failure: { status, task_id, timestamp, error }', async () => {
    await emulator.control('POST', '/next-task', {
      outcome: 'fail',
      stage: 'trace-generation',
      error: 'trace too long',
    })
    const { uuid } = await client.scheduleTask(taskBody({ webhook_url: receiver.url }))
    await delivered(uuid)
    expect(receiver.received).toHaveLength(1)
    const { body } = receiver.received[0]!
    expect(Object.keys(body).sort()).toEqual(['error', 'status', 'task_id', 'timestamp'])
    expect(taskWebhookFailure.safeParse(body).success).toBe(true)
    expect(body).toMatchObject({ status: 'TraceGenFailed', task_id: uuid, error: 'trace too long' })
  })

  it('a decommitment-only task notifies too', async () => {
    const provingQueryId = await submitFixturePie(emulator)
    const { uuid } = await client.submitDecommitment(
      decommitmentBody({ proving_query_id: provingQueryId, webhook_url: receiver.url }),
    )
    await delivered(uuid)
    expect(receiver.received.map((call) => call.body.status)).toEqual(['TaskDecommitmentCompleted'])
    expect(receiver.received[0]!.body.task_id).toBe(uuid)
  })

  it('is sent again on non-2xx answers, and stops at the first 2xx', async () => {
    receiver.answers = [500, 503]
    const { uuid } = await client.scheduleTask(taskBody({ webhook_url: receiver.url }))
    const webhook = await delivered(uuid)
    expect(webhook.state).toBe('delivered')
    expect(webhook.attempts.map((attempt: { status: number }) => attempt.status)).toEqual([500, 503, 200])
    expect(receiver.received).toHaveLength(3)
    // The same payload each time.
    expect(new Set(receiver.received.map((call) => JSON.stringify(call.body))).size).toBe(1)
  })

  it('at most 3 attempts', async () => {
    receiver.answers = [500, 500, 500, 500, 500]
    const { uuid } = await client.scheduleTask(taskBody({ webhook_url: receiver.url }))
    const webhook = await delivered(uuid)
    expect(webhook.state).toBe('failed')
    expect(webhook.attempts).toHaveLength(3)
    // Reads of the task afterwards send nothing more.
    await client.getTaskStatus(uuid)
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    expect(receiver.received).toHaveLength(3)
  })

  it('a receiver that does not answer costs 3 bounded attempts', async () => {
    const url = receiver.url
    await receiver.stop()
    const { uuid } = await client.scheduleTask(taskBody({ webhook_url: url }))
    const webhook = await delivered(uuid)
    expect(webhook.state).toBe('failed')
    expect(
      webhook.attempts.map((attempt: { status: number | null; error: string }) => [attempt.status, attempt.error]),
    ).toEqual([
      [null, 'ECONNREFUSED'],
      [null, 'ECONNREFUSED'],
      [null, 'ECONNREFUSED'],
    ])
    await receiver.start() // for afterEach
  })

  it('no webhook_url, no call', async () => {
    const { uuid } = await client.scheduleTask(taskBody())
    await client.waitForTask(uuid)
    expect((await emulator.control('GET', `/tasks/${uuid}`)).webhook).toBeNull()
    expect(receiver.received).toEqual([])
  })

  it('under a simulated clock, goes out on the first request after the task has ended', async () => {
    const simulated = await startTestEmulator({ clock: simulatedClock() })
    try {
      await simulated.control('PUT', '/tasks/timing', { receivedMs: 60_000, stageMs: 60_000, handoffMs: 0 })
      const tasks = new TaskClient({ baseUrl: simulated.url, apiKey: KEY, dispatcher: simulated.agent })
      const { uuid } = await tasks.scheduleTask(taskBody({ webhook_url: receiver.url }))
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(receiver.received).toEqual([])
      simulated.clock.advance(10 * 60_000)
      expect((await tasks.getTaskStatus(uuid)).status).toBe('TaskDecommitmentCompleted')
      await delivered(uuid, simulated)
      expect(receiver.received.map((call) => call.body.status)).toEqual(['TaskDecommitmentCompleted'])
      expect(receiver.received[0]!.body.timestamp).toBe(
        new Date(simulated.clock.now() - 10 * 60_000 + 6 * 60_000).toISOString(),
      )
    } finally {
      await simulated.close()
    }
  })
})
