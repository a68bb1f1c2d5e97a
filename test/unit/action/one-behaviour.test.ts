import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { run as runPost } from '../../../src/action/actions/post.ts'
import { VERSION } from '../../../src/core/version.ts'
import { startEmulator, type RunningEmulator } from '../../../src/emulator/index.ts'
import type { ActionIO, RunOptions } from '../../../src/action/types.ts'
import { actionFiles } from '../../helpers/github-yaml.ts'
import { fakeIO, readAction, REPO_ROOT } from '../../helpers/run-action.ts'

/**
 * One behaviour across the sub-actions (issue 12, item 7): `error-reason` everywhere, a post step
 * for every action that waits, path inputs read from the workspace, no advice that contradicts
 * the failure, documentation linked by URL. Every action.yml is found by globbing.
 */
const names = actionFiles().map((file) => file.replace(/\/?action\.yml$/, ''))
const load = async (name: string) =>
  (await import(`../../../src/action/actions/${name || 'main'}.ts`)) as {
    run: (io: ActionIO, options?: RunOptions) => Promise<void>
  }
/** Actions that wait for something on a service: killed mid-wait, their post step says how to follow it. */
const WAITING = ['', 'wait', 'retry', 'verify-proof', 'task', 'decommit', 'storage-query', 'bucket-close']

let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 20, stepMs: 20 } })
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(async () => {
  await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST', headers: { 'content-type': 'application/json' } })
})

describe.each(names)('action %j', (name) => {
  const action = readAction(name)

  it('declares error-reason', () => {
    expect(Object.keys(action.outputs)).toContain('error-reason')
  })

  it('fails without its inputs, setting error-reason to the input named', async () => {
    const io = fakeIO({})
    await (await load(name)).run(io)
    expect(io.failed).toEqual(expect.any(String))
    expect(io.outputs['error-reason']).toMatch(/`[a-z-]+`/)
    expect(io.outputs['error-reason']).toBe(io.failed)
  })

  if (WAITING.includes(name)) {
    it('has the post step that reports after a kill', () => {
      expect(action.runs.post).toMatch(/dist\/post\/index\.js$/)
      expect(action.runs['post-if']).toBe('always()')
    })
  }
})

describe('killed mid-wait: the post step writes how to follow what was started', () => {
  async function killedMidWait(name: 'task' | 'storage-query', inputs: Record<string, string>) {
    const io = fakeIO(inputs)
    const controller = new AbortController()
    const main = (await load(name)).run(io, { signal: controller.signal })
    // The "kill": the state the main step saved once the service answered, and no report.
    while (!io.state.subject) await new Promise((resolve) => setTimeout(resolve, 5))
    const state = { ...io.state }
    controller.abort(new Error('stop the test'))
    await main
    expect(state.reported).toBeUndefined()
    const post = fakeIO({}, { state })
    await runPost(post)
    return { post, state }
  }

  it('task/: the task uuid and the CLI command to follow it', async () => {
    await fetch(`${emulator.url}/_emulator/tasks/timing`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receivedMs: 60_000, stageMs: 60_000, handoffMs: 60_000 }),
    })
    const { post, state } = await killedMidWait('task', {
      task: 'examples/task.json',
      'tasks-url': emulator.url,
      'api-key': 'k-one',
    })
    const uuid = state.subject!.replace('task ', '')
    expect(post.summary).toMatch(/^### .* Task: /)
    expect(post.summary).toContain(`proving task wait ${uuid}`)
    expect(post.logs.find((log) => log.level === 'warning')?.message).toContain(`task ${uuid} may still be running`)
  })

  it('storage-query/: the internal id and the CLI command to follow it', async () => {
    await fetch(`${emulator.url}/_emulator/storage-proof/timing`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ receivedMs: 60_000, inProgressMs: 60_000 }),
    })
    const { post, state } = await killedMidWait('storage-query', {
      query: 'examples/storage-query.json',
      'storage-proof-url': emulator.url,
      'api-key': 'k-one',
    })
    const id = state.subject!.replace('batch query ', '')
    expect(post.summary).toContain(`proving storage status ${id} --wait`)
  })

  it('a step that reported leaves the post step nothing to say', async () => {
    const io = fakeIO({ task: 'examples/task.json', 'tasks-url': emulator.url, 'api-key': 'k-one', wait: 'false' })
    await (await load('task')).run(io)
    expect(io.failed).toBeUndefined()
    expect(io.state.reported).toBe('true')
    const post = fakeIO({}, { state: io.state })
    await runPost(post)
    expect(post.summary).toBe('')
  })
})

describe('path inputs are read from GITHUB_WORKSPACE, not the working directory', () => {
  it('task/ and storage-query/ read their JSON file from the workspace', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'workspace-'))
    cpSync(join(REPO_ROOT, 'examples', 'task.json'), join(workspace, 'my-task.json'))
    cpSync(join(REPO_ROOT, 'examples', 'storage-query.json'), join(workspace, 'my-query.json'))
    const task = fakeIO(
      { task: 'my-task.json', 'tasks-url': emulator.url, 'api-key': 'k-one', wait: 'false' },
      { env: { GITHUB_WORKSPACE: workspace } },
    )
    await (await load('task')).run(task)
    expect(task.failed).toBeUndefined()
    const query = fakeIO(
      { query: 'my-query.json', 'storage-proof-url': emulator.url, 'api-key': 'k-one', wait: 'false' },
      { env: { GITHUB_WORKSPACE: workspace } },
    )
    await (await load('storage-query')).run(query)
    expect(query.failed).toBeUndefined()
    // The same relative path from the repository (the working directory here) is not found.
    expect(process.cwd()).not.toBe(workspace)
  })

  it('verify-proof/ reads the proof from the workspace', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'workspace-'))
    const io = fakeIO(
      { proof: 'proof.json', 'api-key': 'k-one', 'base-url': emulator.url },
      { env: { GITHUB_WORKSPACE: workspace } },
    )
    await (await load('verify-proof')).run(io)
    expect(io.outputs['error-reason']).toContain(join(workspace, 'proof.json'))
  })
})

describe('advice that fits the failure, documentation by URL', () => {
  it('wait/ on a query the service does not know: check the identifier, never "was submitted; follow it"', async () => {
    const io = fakeIO({ 'query-id': 'no-such-query', 'api-key': 'k-one', 'base-url': emulator.url })
    await (await load('wait')).run(io)
    expect(io.failed).toMatch(/404|not found|unknown/i)
    expect(io.summary).toMatch(/Check the identifier/)
    expect(io.summary).not.toMatch(/was submitted/)
    expect(io.summary).not.toMatch(/To pick the query up again/)
  })

  it('a refused input links the docs by URL, at the ref the workflow named', async () => {
    const published = fakeIO({ task: '{"destination_chain_id": 5}', 'tasks-url': emulator.url, 'api-key': 'k-one' })
    await (await load('task')).run(published)
    // A local `uses: ./`: the published repository at this version's release tag, vX.Y.Z.
    expect(published.summary).toContain(
      `[docs/tasks.md](https://github.com/proving-kit/proving-kit/blob/v${VERSION}/docs/tasks.md)`,
    )
    const named = fakeIO(
      { task: '{"destination_chain_id": 5}', 'tasks-url': emulator.url, 'api-key': 'k-one' },
      { env: { GITHUB_ACTION_REPOSITORY: 'acme/proving-kit', GITHUB_ACTION_REF: 'v1.2.3' } },
    )
    await (await load('task')).run(named)
    expect(named.summary).toContain('(https://github.com/acme/proving-kit/blob/v1.2.3/docs/tasks.md)')
  })

  it('bucket-id is checked before anything is sent', async () => {
    const before = (await (await fetch(`${emulator.url}/_emulator/requests`)).json()) as { requests: unknown[] }
    const io = fakeIO({ 'bucket-id': 'not an id', 'api-key': 'k-one', 'base-url': emulator.url })
    await (await load('bucket-close')).run(io)
    expect(io.outputs['error-reason']).toMatch(/`bucket-id`/)
    const after = (await (await fetch(`${emulator.url}/_emulator/requests`)).json()) as { requests: unknown[] }
    expect(after.requests.length).toBe(before.requests.length)
  })
})
