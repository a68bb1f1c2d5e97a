import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect } from 'vitest'
import { AbortedError } from '../../src/core/errors.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { useCatalogue } from '../helpers/catalogue.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { fakeIO, REPO_ROOT } from '../helpers/run-action.ts'
import { EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { taskBody } from '../helpers/tasks.ts'
import { tcpTap, type TcpTap } from '../helpers/tcp-tap.ts'

/**
 * Fault catalogue, cancellation: stopped during the pack, during the upload, during the wait,
 * from the library, the CLI and the action (run in-process with an AbortSignal, as SIGINT does
 * through the entry points). Never a half-written output file (the packer writes a temporary
 * file and renames it: checked here, with an older zip at the destination that must survive
 * byte for byte); the query id, once known, is kept (printed by the CLI, in the action's
 * outputs and state) with how to resume; before it is known, the message says where to look.
 *
 * The SIGINT/SIGTERM paths of the real processes are covered by test/e2e/cli-prove.test.ts
 * ("interruption") and test/e2e/action-cancel.test.ts.
 */

const { row } = useCatalogue('fault catalogue: cancellation')

const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'

let emulator: TestEmulator
let work: string
/** A 48 MiB PIE directory: packing it takes a few hundred ms, long enough to be stopped halfway. */
let bigPie: string
let bigZip: string

beforeAll(async () => {
  emulator = await startTestEmulator({ timing: { receivedMs: 0, stepMs: 60_000 } })
  work = await mkdtemp(join(tmpdir(), 'reliability-cancel-'))
  bigPie = join(work, 'big-pie')
  await generatePie({ outDir: bigPie, memoryBytes: 48 * 1024 * 1024, seed: 7 })
  bigZip = (await packPie(bigPie, join(work, 'big.zip'))).path
}, 60_000)
afterAll(async () => {
  await emulator?.close()
  await rm(work, { recursive: true, force: true })
})
beforeEach(async () => {
  await emulator.control('POST', '/reset')
})

/** Aborts the controller as soon as `condition` holds (polled every 5 ms). */
function abortWhen(
  controller: AbortController,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs
  return (async () => {
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error('the moment to cancel never came')
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    controller.abort(new Error('cancelled by the test'))
  })()
}

const tempFilesIn = async (dir: string) =>
  (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith('.tmp'))
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY })

describe('during the pack', () => {
  row('library packPie: an older zip at the destination survives byte for byte, no temporary file left', async () => {
    const out = join(work, 'lib-out')
    await mkdir(out, { recursive: true })
    const destination = join(out, 'pie.zip')
    await writeFile(destination, 'the zip of yesterday')
    const controller = new AbortController()
    const trigger = abortWhen(controller, async () => (await tempFilesIn(out)).length > 0)
    const error = await packPie(bigPie, destination, { signal: controller.signal }).then(
      () => undefined,
      (caught: unknown) => caught,
    )
    await trigger
    expect(error).toBeInstanceOf(AbortedError)
    expect(await readFile(destination, 'utf8')).toBe('the zip of yesterday')
    expect(await tempFilesIn(out)).toEqual([])
  })

  row('action pack: cancelled mid-pack: the step is cancelled, no pie.zip, no temporary file', async () => {
    const out = join(work, 'action-pack')
    await mkdir(out, { recursive: true })
    const controller = new AbortController()
    const { run } = await import('../../src/action/actions/pack.ts')
    const io = fakeIO({ 'pie-dir': bigPie, output: join(out, 'pie.zip') }, { env: { GITHUB_WORKSPACE: REPO_ROOT } })
    const trigger = abortWhen(controller, async () => (await tempFilesIn(out)).length > 0)
    await run(io, { signal: controller.signal })
    await trigger
    expect(io.failed).toMatch(/abort|cancel/i)
    expect(existsSync(join(out, 'pie.zip'))).toBe(false)
    expect(await readdir(out)).toEqual([])
    expect(io.outputs['pie-zip']).toBeUndefined()
  })

  row('CLI prove <dir>: cancelled mid-pack: exit 130, the pack folder removed, nothing submitted', async () => {
    const temp = join(work, 'cli-tmp')
    await mkdir(temp, { recursive: true })
    const previous = process.env.TMPDIR
    process.env.TMPDIR = temp
    try {
      const controller = new AbortController()
      const packing = async () => {
        for (const folder of await readdir(temp)) if ((await tempFilesIn(join(temp, folder))).length) return true
        return false
      }
      const trigger = abortWhen(controller, packing)
      const result = await runCli(['prove', bigPie], { env: env(), signal: controller.signal })
      await trigger
      expect(result.code).toBe(130)
      expect(result.stderr).toMatch(/^proving: .*aborted/m)
      expect(result.stderr).not.toMatch(/\n\s+at /)
      expect(await readdir(temp)).toEqual([])
      // The upload runs alongside the packing, its end held back until the PIE is known valid:
      // cut there, it creates nothing.
      expect(
        emulator
          .requests()
          .filter((request) => request.status >= 200 && request.status < 300 && request.method === 'POST'),
      ).toEqual([])
      expect(Object.keys(emulator.state.queries)).toEqual([])
    } finally {
      if (previous === undefined) delete process.env.TMPDIR
      else process.env.TMPDIR = previous
    }
  })

  row(
    'action prove <dir>: cancelled mid-pack: no pie-zip output, no partial zip in RUNNER_TEMP, nothing sent',
    async () => {
      const controller = new AbortController()
      const { run } = await import('../../src/action/actions/main.ts')
      const io = fakeIO(
        { pie: bigPie, 'api-key': KEY, 'base-url': emulator.url },
        { env: { GITHUB_WORKSPACE: REPO_ROOT } },
      )
      const packDir = join(io.env.RUNNER_TEMP!, 'proving-kit')
      const trigger = abortWhen(controller, async () => {
        for (const folder of await readdir(packDir).catch(() => [] as string[]))
          if ((await tempFilesIn(join(packDir, folder))).length) return true
        return false
      })
      await run(io, { signal: controller.signal })
      await trigger
      expect(io.failed).toMatch(/cancel|abort/i)
      expect(io.outputs['pie-zip']).toBeUndefined()
      expect(io.outputs['query-id']).toBeUndefined()
      for (const folder of await readdir(packDir).catch(() => [] as string[]))
        expect(await readdir(join(packDir, folder))).toEqual([])
      expect(emulator.requests()).toEqual([])
    },
  )
})

describe('during the upload', () => {
  // The emulator holds the request for 10 s before reading it: the 11 MB upload stalls halfway.
  // The requests go through a TCP tap, and the test cancels once the emulator has received the
  // first 64 KiB of the upload: an event, whatever the machine's speed.
  const stall = () =>
    emulator.control('POST', '/faults', { method: 'POST', path: L2_PIE, kind: 'delay', delayMs: 10_000 })
  // The service URL is probed (GET /is-alive) before the upload: only a POST would mean the upload finished.
  const uploading = () => emulator.requests().every((request) => request.method !== 'POST')
  let tap: TcpTap
  beforeEach(async () => {
    tap = await tcpTap(emulator.url)
  })
  afterEach(async () => {
    await tap.close()
  })
  const abortOnceReceived = (controller: AbortController, bytes: number) =>
    void tap.received(bytes).then(() => controller.abort(new Error('cancelled by the test')))

  row('CLI prove: cancelled mid-upload: exit 130, says a query may exist and where to look', async () => {
    await stall()
    const controller = new AbortController()
    abortOnceReceived(controller, 64 * 1024)
    const result = await runCli(['prove', bigZip, '--wait'], {
      env: { ...env(), PROVING_BASE_URL: tap.url },
      signal: controller.signal,
    })
    expect(uploading()).toBe(true)
    expect(result.code).toBe(130)
    const lines = result.stderr
      .trim()
      .split('\n')
      .filter((line) => line.startsWith('proving:') || line.startsWith('  '))
    expect(lines[0]).toBe('proving: Cancelled during submit the PIE for proof generation and verification.')
    expect(lines[1]).toMatch(/the service may have created a query anyway: look among your queries/)
    expect(lines[2]).toBe('  Look with `proving query list` before submitting again.')
  })

  row('action prove: cancelled mid-upload: no query-id output, the summary says to check the list', async () => {
    await stall()
    const controller = new AbortController()
    abortOnceReceived(controller, 64 * 1024)
    const { run } = await import('../../src/action/actions/main.ts')
    const io = fakeIO({ pie: bigZip, 'api-key': KEY, 'base-url': tap.url }, { env: { GITHUB_WORKSPACE: REPO_ROOT } })
    await run(io, { signal: controller.signal })
    expect(io.failed).toBe('Cancelled before the service returned a query id.')
    expect(io.summary).toContain('a query may still have been created')
    expect(io.outputs['query-id']).toBeUndefined()
    expect(io.state['query-id']).toBeUndefined()
  })

  row('CLI task submit: cancelled while the request is out: exit 130, says where to look', async () => {
    await emulator.control('POST', '/faults', { method: 'POST', path: '/tasks', kind: 'delay', delayMs: 10_000 })
    const file = join(work, 'task.json')
    await writeFile(file, JSON.stringify(taskBody()))
    const controller = new AbortController()
    abortOnceReceived(controller, 1)
    const result = await runCli(['task', 'submit', file], {
      env: { PROVING_TASKS_URL: tap.url, PROVING_API_KEY: KEY },
      signal: controller.signal,
    })
    expect(result.code).toBe(130)
    expect(result.stderr).toMatch(
      /^proving: Cancelled during schedule the task\.\n {2}If the request had gone out, the task may have been queued anyway: look among your tasks \(TaskClient.listTasks\) before submitting again\.\n {2}Look with `proving task list` before submitting again\./,
    )
  })
})

describe('during the wait: the query id is kept', () => {
  row('CLI prove --wait --json: exit 130, the id on stdout as JSON, the resume command on stderr', async () => {
    const controller = new AbortController()
    const trigger = abortWhen(controller, () =>
      emulator.requests().some((request) => request.path.startsWith('/docs/proving-query/')),
    )
    const result = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env(), signal: controller.signal })
    await trigger
    const id = Object.keys(emulator.state.queries)[0]!
    expect(result.code).toBe(130)
    expect(JSON.parse(result.stdout)).toEqual({ provingQueryId: id, interrupted: true })
    expect(result.stderr).toContain(`Resume with: proving query wait ${id}`)
  })

  row('CLI query wait: exit 130 with the resume command', async () => {
    const id = await submitFixturePie(emulator)
    const controller = new AbortController()
    const trigger = abortWhen(controller, () =>
      emulator.requests().some((request) => request.path.startsWith('/docs/proving-query/')),
    )
    const result = await runCli(['query', 'wait', id], { env: env(), signal: controller.signal })
    await trigger
    expect(result.code).toBe(130)
    expect(result.stderr).toMatch(
      new RegExp(`^proving: Stopped waiting for query ${id}: cancelled\\. Resume with: proving query wait ${id}$`, 'm'),
    )
  })

  row(
    'action prove: cancelled mid-wait: query-id in outputs and state, the resume snippet in the summary',
    async () => {
      const controller = new AbortController()
      const trigger = abortWhen(controller, () =>
        emulator.requests().some((request) => request.path.startsWith('/docs/proving-query/')),
      )
      const { run } = await import('../../src/action/actions/main.ts')
      const io = fakeIO(
        { pie: EXAMPLE_PIE, 'api-key': KEY, 'base-url': emulator.url },
        { env: { GITHUB_WORKSPACE: REPO_ROOT } },
      )
      await run(io, { signal: controller.signal })
      await trigger
      const id = Object.keys(emulator.state.queries)[0]!
      expect(io.outputs['query-id']).toBe(id)
      expect(io.state['query-id']).toBe(id)
      expect(io.failed).toBe(
        `Cancelled while waiting for query ${id}. Resume with the wait sub-action: query-id ${id}.`,
      )
      expect(io.summary).toContain(`query-id: ${id}`)
    },
  )

  row('CLI task wait: exit 130 with the resume command', async () => {
    await emulator.control('PUT', '/tasks/timing', { receivedMs: 60_000, stageMs: 60_000, handoffMs: 60_000 })
    const { TaskClient } = await import('../../src/clients/tasks.ts')
    const { uuid } = await new TaskClient({
      baseUrl: emulator.url,
      apiKey: KEY,
      dispatcher: emulator.agent,
    }).scheduleTask(taskBody())
    const controller = new AbortController()
    const trigger = abortWhen(controller, () =>
      emulator.requests().some((request) => request.path === `/tasks/${uuid}/status`),
    )
    const result = await runCli(['task', 'wait', uuid], {
      env: { PROVING_TASKS_URL: emulator.url },
      signal: controller.signal,
    })
    await trigger
    expect(result.code).toBe(130)
    expect(result.stderr).toContain(`Resume with: proving task wait ${uuid}`)
  })
})
