import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import {
  type ActionRun,
  control,
  errorAnnotations,
  FIXTURE_PIE,
  leakedSecret,
  runAction,
  runPost,
  startAction,
} from '../helpers/run-action.ts'

/**
 * Cancellation as the runner does it (SIGINT, then SIGTERM 7.5 s later, then a kill): the
 * step stops polling, writes its outputs and a summary saying how to resume, and exits within
 * 5 s; the `wait` sub-action then follows the same query to DONE. Queries here never finish on
 * their own (a step lasts 10 minutes) until the test completes them through the control API.
 */
const API_KEY = 'pk_e2e_CANCEL_51be07c3d9'

let emulator: RunningEmulator
const runs: ActionRun[] = []

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 200, stepMs: 600_000 } })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(() => {
  for (const run of runs.splice(0)) expect(leakedSecret(run, API_KEY), 'the API key leaked').toBeUndefined()
})

/**
 * A new query every time (`reuse: never`): each test completes its query at the end, and the
 * default (`reuse: auto`) would follow that DONE query instead of submitting one to cancel.
 */
function startProving() {
  return startAction('', { inputs: { pie: FIXTURE_PIE, 'api-key': API_KEY, 'base-url': emulator.url, reuse: 'never' } })
}

describe('cancelling the root action', () => {
  it('SIGINT mid-wait: outputs and a resume summary within 5 s; then `wait` resumes to DONE', async () => {
    const main = startProving()
    const queryId = (await main.waitFor(/Submitted: query (\S+)/))[1]!
    await main.waitFor(/\] IN_PROGRESS/)
    const signalled = Date.now()
    main.child.kill('SIGINT')
    const run = await main.done
    runs.push(run)
    expect(Date.now() - signalled).toBeLessThan(5_000)
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('Received SIGINT: stopping, writing the outputs and the summary.')
    expect(errorAnnotations(run)).toEqual([
      `Cancelled while waiting for query ${queryId}. Resume with the wait sub-action: query-id ${queryId}.`,
    ])
    expect(run.outputs).toMatchObject({
      'query-id': queryId,
      status: 'IN_PROGRESS',
      emulated: 'false',
      'facts-verified': 'false',
    })
    expect(run.outputs['error-reason']).toContain(queryId)
    expect(run.summary).toMatch(/^### ⏹️ Prove: cancelled/)
    expect(run.summary).toContain(
      `Cancelled while waiting for query ${queryId}; the query goes on running on the service.`,
    )
    // (URLs in logs and summaries pass through the redactor, which leaves one with nothing to mask as it was given.)
    expect(run.summary).toContain(
      `- uses: ./wait\n  with:\n    query-id: ${queryId}\n    api-key: \${{ secrets.PROVING_API_KEY }}\n    base-url: ${emulator.url}\n`,
    )
    expect(run.state).toMatchObject({ 'query-id': queryId, reported: 'true' })

    const post = await runPost('', run)
    runs.push(post)
    expect(post.code).toBe(0)
    expect(post.summary).toBe('')

    // The wait sub-action picks the query up; the query ends while it waits.
    const waiting = startAction('wait', {
      inputs: { 'query-id': queryId, 'api-key': API_KEY, 'base-url': emulator.url },
    })
    await waiting.waitFor(/\] IN_PROGRESS/)
    await control(emulator.url, 'POST', `queries/${queryId}/complete`)
    const waited = await waiting.done
    runs.push(waited)
    expect(waited.code, waited.stdout).toBe(0)
    expect(waited.outputs).toMatchObject({
      'query-id': queryId,
      status: 'DONE',
      'is-fact-mocked': 'false',
      'facts-verified': 'false',
      emulated: 'false',
    })
    expect(waited.outputs['program-hash']).toMatch(/^0x[0-9a-f]+$/)
    expect(waited.summary).toMatch(/^### ✅ Wait: passed/)
    expect(waited.summary).toContain('not checked: no `pie` was given to compare with')
  })

  it('SIGTERM is handled the same way, and a second signal exits at once', async () => {
    const main = startProving()
    const queryId = (await main.waitFor(/Submitted: query (\S+)/))[1]!
    await main.waitFor(/\] IN_PROGRESS/)
    const signalled = Date.now()
    main.child.kill('SIGTERM')
    main.child.kill('SIGTERM')
    const run = await main.done
    runs.push(run)
    expect(Date.now() - signalled).toBeLessThan(5_000)
    expect(run.code).toBe(1)
    expect(run.outputs['query-id']).toBe(queryId)
    await control(emulator.url, 'POST', `queries/${queryId}/complete`)
  })

  it('killed before it could report: the post step writes the query id and how to resume', async () => {
    const main = startProving()
    const queryId = (await main.waitFor(/Submitted: query (\S+)/))[1]!
    main.child.kill('SIGKILL')
    const run = await main.done
    runs.push(run)
    expect(run.signal).toBe('SIGKILL')
    expect(run.outputs['query-id']).toBe(queryId)
    expect(run.state['query-id']).toBe(queryId)
    expect(run.state.reported).toBeUndefined()

    const post = await runPost('', run)
    runs.push(post)
    expect(post.code).toBe(0)
    expect(post.stdout).toContain(
      `::warning::The Prove step stopped before reporting; query ${queryId} may still be running.`,
    )
    expect(post.summary).toContain(`Query ${queryId} had been submitted.`)
    expect(post.summary).toContain(`    query-id: ${queryId}\n`)
    await control(emulator.url, 'POST', `queries/${queryId}/complete`)
  })

  it('the wait sub-action can be cancelled too, and times out with the same advice', async () => {
    const submitted = await runAction('', {
      inputs: { pie: FIXTURE_PIE, 'api-key': API_KEY, 'base-url': emulator.url, wait: 'false', reuse: 'never' },
    })
    runs.push(submitted)
    expect(submitted.code, submitted.stdout).toBe(0)
    const queryId = submitted.outputs['query-id']!
    expect(submitted.summary).toMatch(/^### 📨 Prove: submitted/)
    expect(submitted.outputs.status).toBeUndefined()

    const timedOut = await runAction('wait', {
      inputs: { 'query-id': queryId, 'api-key': API_KEY, 'base-url': emulator.url, 'timeout-minutes': '0.02' },
    })
    runs.push(timedOut)
    expect(timedOut.code).toBe(1)
    expect(timedOut.outputs['error-reason']).toBe(
      `Timed out waiting for query ${queryId}. Resume with the wait sub-action: query-id ${queryId}.`,
    )

    const waiting = startAction('wait', {
      inputs: { 'query-id': queryId, 'api-key': API_KEY, 'base-url': emulator.url },
    })
    await waiting.waitFor(/\] IN_PROGRESS/)
    waiting.child.kill('SIGINT')
    const cancelled = await waiting.done
    runs.push(cancelled)
    expect(cancelled.code).toBe(1)
    expect(cancelled.summary).toMatch(/^### ⏹️ Wait: cancelled/)
    await control(emulator.url, 'POST', `queries/${queryId}/complete`)
  })
})
