import { existsSync, readdirSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run as runMain } from '../../../../src/action/actions/main.ts'
import { run as runPost } from '../../../../src/action/actions/post.ts'
import { run as runWait } from '../../../../src/action/actions/wait.ts'
import { startEmulator, type RunningEmulator } from '../../../../src/emulator/index.ts'
import { fakeIO, FIXTURE_PIE } from '../../../helpers/run-action.ts'
import { EXAMPLE } from '../../../helpers/example-pie.ts'

/** run() in-process with the runner faked (actions/typescript-action's split); the bundles have their own e2e tests. */
const API_KEY = 'pk_unit_run_4b1d8e2a77'

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 100, stepMs: 100 } })
})
afterAll(async () => {
  await emulator.close()
})

describe('root run()', () => {
  it('proves on the built-in emulator: outputs, summary, the key masked before anything else', async () => {
    const io = fakeIO({ pie: FIXTURE_PIE, emulator: 'true', 'api-key': API_KEY })
    await runMain(io)
    expect(io.failed).toBeUndefined()
    expect(io.secrets[0]).toBe(API_KEY)
    expect(io.outputs).toMatchObject({
      status: 'DONE',
      'facts-verified': 'true',
      'is-fact-mocked': 'false',
      emulated: 'true',
      'pie-sha256': EXAMPLE.sha256,
    })
    expect(io.outputs['query-id']).toMatch(/\S/)
    // query-id is set the moment the service returns it: before any status.
    const order = io.outputLog.map(([name]) => name)
    expect(order.indexOf('query-id')).toBeLessThan(order.indexOf('status'))
    expect(io.summary).toMatch(/^### ✅ Prove: passed \(emulator\)/)
    expect(io.summary).toContain('| **Facts checked locally** | yes:')
    expect(io.state).toMatchObject({ 'query-id': io.outputs['query-id'], reported: 'true', emulated: 'true' })
    // One line per status or step change, inside a group.
    const group = io.logs.findIndex((log) => log.level === 'group' && /^Waiting for query/.test(log.message))
    expect(group).toBeGreaterThan(-1)
    expect(io.logs[group + 1]!.message).toMatch(/^\[\s*\d+s\] (RECEIVED|IN_PROGRESS|DONE)/)
  })

  it('reports every input problem and packs nothing', async () => {
    const io = fakeIO({ pie: 'examples/does-not-matter', layout: 'nope nope' })
    await runMain(io)
    expect(io.failed).toMatch(/^3 inputs need fixing/)
    expect(io.outputs).toMatchObject({ 'facts-verified': 'false', emulated: 'false' })
    expect(io.outputs['error-reason']).toContain('`api-key` is required unless `emulator` is true')
    expect(io.outputs['query-id']).toBeUndefined()
    expect(io.summary).toContain('- `layout` must be one of')
    expect(readdirSync(io.env.RUNNER_TEMP!)).toEqual([])
  })

  it('on cancellation stops waiting at once and says how to resume', async () => {
    await fetch(`${emulator.url}/_emulator/timing`, {
      method: 'PUT',
      body: JSON.stringify({ stepMs: 60_000 }),
      headers: { 'content-type': 'application/json' },
    })
    try {
      const controller = new AbortController()
      const io = fakeIO({ pie: FIXTURE_PIE, 'api-key': API_KEY, 'base-url': emulator.url })
      const running = runMain(io, { signal: controller.signal })
      while (!io.outputs['query-id']) await new Promise((resolve) => setTimeout(resolve, 20))
      await new Promise((resolve) => setTimeout(resolve, 300))
      const abortedAt = Date.now()
      controller.abort(new Error('received SIGINT'))
      await running
      expect(Date.now() - abortedAt).toBeLessThan(2_000)
      const queryId = io.outputs['query-id']!
      expect(io.failed).toBe(
        `Cancelled while waiting for query ${queryId}. Resume with the wait sub-action: query-id ${queryId}.`,
      )
      expect(io.outputs.status).toMatch(/RECEIVED|IN_PROGRESS/)
      expect(io.summary).toMatch(/^### ⏹️ Prove: cancelled/)
      expect(io.summary).toContain(`- uses: ./wait\n  with:\n    query-id: ${queryId}\n`)
      expect(io.summary).toContain(`    base-url: ${emulator.url}\n`)
      // ... and the wait sub-action picks it up.
      await fetch(`${emulator.url}/_emulator/queries/${queryId}/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      })
      const waited = fakeIO({ 'query-id': queryId, 'api-key': API_KEY, 'base-url': emulator.url })
      await runWait(waited)
      expect(waited.failed).toBeUndefined()
      expect(waited.outputs).toMatchObject({
        'query-id': queryId,
        status: 'DONE',
        'facts-verified': 'false',
        emulated: 'false',
      })
    } finally {
      await fetch(`${emulator.url}/_emulator/timing`, {
        method: 'PUT',
        body: JSON.stringify({ stepMs: 100 }),
        headers: { 'content-type': 'application/json' },
      })
    }
  })
})

describe('post run()', () => {
  it('adds nothing when the main step reported', async () => {
    const io = fakeIO({}, { state: { action: 'Prove', 'query-id': 'q-1', reported: 'true' } })
    await runPost(io)
    expect(io.summary).toBe('')
    expect(io.failed).toBeUndefined()
  })

  it('reports the query id when the main step was killed before reporting', async () => {
    const io = fakeIO(
      {},
      { state: { action: 'Prove', 'query-id': 'q-7', 'base-url': 'https://svc.example', 'timeout-minutes': '120' } },
    )
    await runPost(io)
    expect(io.failed).toBeUndefined()
    expect(io.logs.some((log) => log.level === 'warning' && log.message.includes('query-id q-7'))).toBe(true)
    expect(io.summary).toContain('Query q-7 had been submitted')
    expect(io.summary).toContain('    query-id: q-7\n')
    expect(io.summary).toContain('    base-url: https://svc.example\n')
  })

  it('an emulated query cannot be resumed: no snippet', async () => {
    const io = fakeIO({}, { state: { action: 'Prove', 'query-id': 'q-8', emulated: 'true' } })
    await runPost(io)
    expect(io.summary).not.toContain('```yaml')
    expect(io.summary).toContain('re-run the step')
  })

  it('stays silent when the main step never started', async () => {
    const io = fakeIO()
    await runPost(io)
    expect(io.summary).toBe('')
    expect(existsSync(io.env.RUNNER_TEMP!)).toBe(true)
  })
})
