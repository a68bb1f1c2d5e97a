import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { taskStatusRecord } from '../../src/schemas/tasks.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { dpOutput, taskBody } from '../helpers/tasks.ts'

/** `proving task ...` run in-process through main() with captured output, against the emulator over HTTP. */
describe('proving task', () => {
  let emulator: TestEmulator
  let dir: string
  let env: Record<string, string>
  let taskFile: string

  beforeAll(async () => {
    emulator = await startTestEmulator()
    dir = await mkdtemp(join(tmpdir(), 'task-cli-'))
    env = { PROVING_TASKS_URL: emulator.url, PROVING_API_KEY: KEY }
    taskFile = join(dir, 'task.json')
    await writeFile(taskFile, JSON.stringify(taskBody()))
  })

  afterAll(async () => {
    await emulator.close()
    await rm(dir, { recursive: true, force: true })
  })

  beforeEach(async () => {
    await emulator.control('POST', '/reset')
  })

  const json = (stdout: string) => JSON.parse(stdout)

  describe('submit', () => {
    it('--json prints { message, uuid }', async () => {
      const result = await runCli(['task', 'submit', taskFile, '--json'], { env })
      expect(result).toMatchObject({ code: 0, stderr: '' })
      expect(json(result.stdout)).toEqual({
        message: 'Task has been queued',
        uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      })
    })

    it('--wait --json prints the final status record; exit 0', async () => {
      const result = await runCli(['task', 'submit', taskFile, '--wait', '--json'], { env })
      expect(result.code).toBe(0)
      const record = json(result.stdout)
      expect(taskStatusRecord.safeParse(record).success).toBe(true)
      expect(record).toMatchObject({
        status: 'TaskDecommitmentCompleted',
        taskId: expect.any(String),
        updatedAt: expect.any(String),
      })
    })

    it('--wait on a failing task prints the record, says why on stderr, exits 1', async () => {
      await emulator.control('POST', '/next-task', { outcome: 'fail', stage: 'proving', error: 'prover out of memory' })
      const result = await runCli(['task', 'submit', taskFile, '--wait', '--json'], { env })
      expect(result.code).toBe(1)
      expect(json(result.stdout)).toMatchObject({ status: 'ProvingFailed', errorMessage: 'prover out of memory' })
      expect(result.stderr).toMatch(/failed at proving \(ProvingFailed\): prover out of memory/)
    })

    it('for a person: the uuid and how to follow it; with --wait, progress lines then the status', async () => {
      const plain = await runCli(['task', 'submit', taskFile], { env })
      expect(plain.stdout).toMatch(
        /^Task has been queued: task [0-9a-f-]{36}\nFollow it with: proving task wait [0-9a-f-]{36}\n$/,
      )
      const waited = await runCli(['task', 'submit', taskFile, '--wait'], { env })
      expect(waited.code).toBe(0)
      expect(waited.stderr).toMatch(/TaskDecommitmentCompleted {2}\(decommitment\)/)
      expect(waited.stdout).toMatch(/status\s+TaskDecommitmentCompleted/)
    })

    it('reads the body from stdin with -', async () => {
      const result = await runCli(['task', 'submit', '-', '--json'], {
        env,
        stdin: Readable.from([JSON.stringify(taskBody())]),
      })
      expect(result.code).toBe(0)
      expect(json(result.stdout).uuid).toBeDefined()
    })

    it('bad input exits 2 naming the field, and sends nothing', async () => {
      const bad = join(dir, 'bad.json')
      await writeFile(bad, JSON.stringify(taskBody({ destination_chain_id: '11155111' })))
      await emulator.control('DELETE', '/requests')
      const cases = [
        { args: ['task', 'submit', bad], message: /destination_chain_id must be 0x-prefixed hex, got "11155111"/ },
        { args: ['task', 'submit', join(dir, 'missing.json')], message: /<task\.json>: no file at/ },
        { args: ['task', 'submit', taskFile, '--wait', '--timeout', 'soon'], message: /--timeout must be a duration/ },
        { args: ['task', 'decommit', '--destination-chain-id', '0x1'], message: /--proving-query-id is required/ },
        {
          args: ['task', 'decommit', '--proving-query-id', 'q', '--destination-chain-id', '11155111'],
          message: /destination_chain_id must be 0x-prefixed hex/,
        },
        {
          args: [
            'task',
            'decommit',
            '--proving-query-id',
            'q',
            '--destination-chain-id',
            '0x1',
            '--webhook-url',
            'nope',
          ],
          message: /webhook_url must be an absolute http\(s\) URL/,
        },
        { args: ['task', 'list', '--limit', '101'], message: /--limit must be a whole number from 1 to 100/ },
        { args: ['task', 'list', '--status', 'Done'], message: /--status must be one of Received/ },
      ]
      const notJson = join(dir, 'not-json.json')
      await writeFile(notJson, '{ "destination_chain_id": ')
      cases.push({ args: ['task', 'submit', notJson], message: /is not valid JSON/ })
      for (const { args, message } of cases) {
        const result = await runCli(args, { env })
        expect(result.code, args.join(' ')).toBe(2)
        expect(result.stderr).toMatch(message)
      }
      expect(emulator.requests()).toEqual([])
    })

    it('without an address or a key: exit 2 and what to set', async () => {
      const noUrl = await runCli(['task', 'submit', taskFile], { env: { PROVING_API_KEY: KEY } })
      expect(noUrl).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/--tasks-url <url> or set PROVING_TASKS_URL/),
      })
      const noKey = await runCli(['task', 'submit', taskFile], { env: { PROVING_TASKS_URL: emulator.url } })
      expect(noKey).toMatchObject({ code: 2, stderr: expect.stringMatching(/PROVING_API_KEY/) })
      const flags = await runCli(
        ['task', 'submit', taskFile, '--tasks-url', emulator.url, '--api-key', KEY, '--json'],
        { env: {} },
      )
      expect(flags.code).toBe(0)
    })

    it('the API key never reaches the output', async () => {
      const result = await runCli(['task', 'submit', taskFile, '--wait', '--debug'], { env })
      expect(result.stdout + result.stderr).not.toContain(KEY)
    })
  })

  describe('decommit', () => {
    it('fetches dp_output from the proving query; --wait --json prints the final record', async () => {
      const provingQueryId = await submitFixturePie(emulator)
      const result = await runCli(
        [
          'task',
          'decommit',
          '--proving-query-id',
          provingQueryId,
          '--destination-chain-id',
          '0xaa36a7',
          '--wait',
          '--json',
        ],
        { env },
      )
      expect(result.code).toBe(0)
      expect(json(result.stdout)).toMatchObject({ status: 'TaskDecommitmentCompleted' })
    })

    it('with --dp-output and --program-hash', async () => {
      const provingQueryId = await submitFixturePie(emulator)
      const file = join(dir, 'dp_output.json')
      await writeFile(file, JSON.stringify(dpOutput()))
      const result = await runCli(
        [
          'task',
          'decommit',
          '--proving-query-id',
          provingQueryId,
          '--destination-chain-id',
          '0xaa36a7',
          '--dp-output',
          file,
          '--program-hash',
          '0xabc',
          '--json',
        ],
        { env },
      )
      expect(result.code).toBe(0)
      const { message, uuid } = json(result.stdout)
      expect(message).toBe('Decommitment-only task has been queued')
      const stored = await emulator.control('GET', `/tasks/${uuid}`)
      expect(stored).toMatchObject({ programHash: '0xabc', dpOutput: dpOutput() })
    })

    it('an unknown proving query: the service’s 404, exit 2', async () => {
      const result = await runCli(['task', 'decommit', '--proving-query-id', 'nope', '--destination-chain-id', '0x1'], {
        env,
      })
      expect(result.code).toBe(2)
      expect(result.stderr).toMatch(/answered 404/)
    })
  })

  describe('status, mmrs, wait, list', () => {
    it('status and mmrs need no key', async () => {
      const submitted = json((await runCli(['task', 'submit', taskFile, '--json'], { env })).stdout)
      const readEnv = { PROVING_TASKS_URL: emulator.url }
      const status = await runCli(['task', 'status', submitted.uuid, '--json'], { env: readEnv })
      expect(status.code).toBe(0)
      expect(json(status.stdout)).toMatchObject({ taskId: submitted.uuid, status: 'TaskDecommitmentCompleted' })
      const mmrs = await runCli(['task', 'mmrs', submitted.uuid, '--json'], { env: readEnv })
      expect(json(mmrs.stdout)).toMatchObject({
        taskId: submitted.uuid,
        mmrs: [{ hashing_function: 'poseidon' }, { hashing_function: 'keccak' }],
      })
      const table = await runCli(['task', 'mmrs', submitted.uuid], { env: readEnv })
      expect(table.stdout.split('\n')[0]).toMatch(/^chain\s+hashing\s+id\s+size\s+root$/)
      expect(table.stdout).toMatch(/0xaa36a7\s+poseidon/)
    })

    it('wait: exit 0 on success, 1 on failure, 2 for an unknown task', async () => {
      const ok = json((await runCli(['task', 'submit', taskFile, '--json'], { env })).stdout)
      expect((await runCli(['task', 'wait', ok.uuid, '--json'], { env })).code).toBe(0)
      await emulator.control('POST', '/next-task', { outcome: 'fail', stage: 'dry-run' })
      const failing = json((await runCli(['task', 'submit', taskFile, '--json'], { env })).stdout)
      const failed = await runCli(['task', 'wait', failing.uuid], { env })
      expect(failed.code).toBe(1)
      expect(failed.stdout).toMatch(/status\s+DryRunFailed/)
      expect(failed.stdout).toMatch(/error\s+Dry run failed/)
      expect((await runCli(['task', 'wait', 'no-such-task'], { env })).code).toBe(2)
    })

    it('wait --timeout: exit 4 and how to resume', async () => {
      await emulator.control('PUT', '/tasks/timing', { receivedMs: 3_600_000, stageMs: 1, handoffMs: 1 })
      const { uuid } = json((await runCli(['task', 'submit', taskFile, '--json'], { env })).stdout)
      const result = await runCli(['task', 'wait', uuid, '--timeout', '1500ms'], { env })
      expect(result.code).toBe(4)
      expect(result.stderr).toMatch(new RegExp(`Resume with: proving task wait ${uuid}`))
      await emulator.control('DELETE', '/tasks/timing')
    })

    it('list: one page, --all, and filters', async () => {
      for (let i = 0; i < 23; i++) await runCli(['task', 'submit', taskFile], { env })
      const page = json(
        (
          await runCli(['task', 'list', '--limit', '5', '--offset', '5', '--json'], {
            env: { PROVING_TASKS_URL: emulator.url },
          })
        ).stdout,
      )
      expect(page.pagination).toEqual({ page: 2, perPage: 5, total: 23, totalPages: 5, limit: 5, offset: 5 })
      expect(page.tasks).toHaveLength(5)
      // An offset inside a page: the two pages it spans, sliced.
      const spanning = json((await runCli(['task', 'list', '--limit', '5', '--offset', '7', '--json'], { env })).stdout)
      const all10 = json((await runCli(['task', 'list', '--limit', '20', '--json'], { env })).stdout)
      expect(spanning.tasks.map((task: { uuid: string }) => task.uuid)).toEqual(
        all10.tasks.slice(7, 12).map((task: { uuid: string }) => task.uuid),
      )
      const all = json((await runCli(['task', 'list', '--all', '--limit', '7', '--json'], { env })).stdout)
      expect(all.tasks).toHaveLength(23)
      expect(new Set(all.tasks.map((task: { uuid: string }) => task.uuid)).size).toBe(23)
      const human = await runCli(['task', 'list'], { env })
      expect(human.stdout).toMatch(/\nShowing 1-20 of 23; --offset 20 for the next 3\.\n$/)
      const none = json((await runCli(['task', 'list', '--status', 'ProvingFailed', '--json'], { env })).stdout)
      expect(none.tasks).toEqual([])
    })

    it('--help lists the flags and their environment variables', async () => {
      const help = await runCli(['task', 'decommit', '--help'], { env: {} })
      expect(help.code).toBe(0)
      expect(help.stdout).toMatch(/--tasks-url <url>.*env PROVING_TASKS_URL/)
      expect(help.stdout).toMatch(/--dp-output <file>/)
    })
  })
})
