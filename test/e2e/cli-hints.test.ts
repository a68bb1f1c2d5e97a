import { createServer } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { runCli, spawnCli } from '../helpers/cli.ts'

/**
 * What the CLI tells a person to do next is true: pagination hints only offer a next page that
 * exists (and one default page size everywhere), the emulator's set-up line names a key it
 * accepts, a busy port names --port, a query in a bucket is followed by closing the bucket, a
 * count of one is singular, and `auth keys create|list|revoke` (the old `auth create-key` kept).
 */
const API_KEY = 'pk_cli_hints_51c0'
/** Hardhat's first test account: a public key pair, never used for anything real. */
const TEST_WALLET = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
let emulator: RunningEmulator
let env: Record<string, string>

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 10 } })
  env = {
    PROVING_BASE_URL: emulator.url,
    PROVING_TASKS_URL: emulator.url,
    PROVING_AUTH_URL: emulator.url,
    PROVING_API_KEY: API_KEY,
    PROVING_REUSE: 'never',
    PROVING_PRIVATE_KEY: TEST_WALLET,
  }
})
afterAll(async () => {
  await emulator.close()
})

describe('pagination hints', () => {
  it('task list: a next page only when there is one, with how many it holds', async () => {
    for (let i = 0; i < 8; i++) expect((await runCli(['task', 'submit', 'examples/task.json'], { env })).code).toBe(0)
    const last = await runCli(['task', 'list', '--limit', '4', '--offset', '4'], { env })
    expect(last.code, last.stderr).toBe(0)
    expect(last.stdout).toMatch(/\nShowing 5-8 of 8; the last page\.\n$/)
    expect(last.stdout).not.toContain('--offset 8')
    const first = await runCli(['task', 'list', '--limit', '5'], { env })
    expect(first.stdout).toMatch(/\nShowing 1-5 of 8; --offset 5 for the next 3\.\n$/)
    const past = await runCli(['task', 'list', '--offset', '8'], { env })
    expect(past.stdout).toBe('None shown of 8: --offset 8 is past the last one.\n')
  })

  it('query list: the same hint', async () => {
    for (let i = 0; i < 3; i++)
      expect((await runCli(['prove', 'examples/fib/pie.zip', '-q', '--new'], { env })).code).toBe(0)
    const first = await runCli(['query', 'list', '--limit', '2'], { env })
    expect(first.code, first.stderr).toBe(0)
    expect(first.stdout).toMatch(/\nShowing 1-2 of 3; --offset 2 for the next 1\.\n$/)
    const last = await runCli(['query', 'list', '--limit', '2', '--offset', '2'], { env })
    expect(last.stdout).toMatch(/\nShowing 3 of 3; the last page\.\n$/)
  })

  it('one default page size for every list', async () => {
    for (const list of [
      ['query', 'list'],
      ['task', 'list'],
      ['auth', 'keys', 'list'],
    ]) {
      expect((await runCli([...list, '--help'])).stdout, list.join(' ')).toMatch(/--limit <n> +\S.*\(default 20\)/)
    }
    const json = JSON.parse((await runCli(['task', 'list', '--json'], { env })).stdout)
    expect(json.pagination).toMatchObject({ limit: 20, offset: 0 })
  })
})

describe('the emulator command', () => {
  it('with --api-keys, the set-up line names no key it would refuse', async () => {
    const run = spawnCli(['emulator', '--port', '0', '--api-keys', 'good-key'])
    try {
      await run.waitForOutput(/refused\)\.\n/)
      const { stdout } = run.output()
      expect(stdout).toContain('set PROVING_API_KEY to one of the keys given with --api-keys')
      expect(stdout).not.toContain('dev-key')
      expect(stdout).not.toContain('good-key')
    } finally {
      run.child.kill('SIGINT')
      await run.done
    }
  })

  it('a busy port: one line naming --port, exit 2', async () => {
    const holder = createServer()
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve))
    try {
      const port = (holder.address() as { port: number }).port
      const run = await runCli(['emulator', '--port', String(port)])
      expect(run.code).toBe(2)
      expect(run.stderr).toBe(
        `proving: Port ${port} is in use on 127.0.0.1: pass --port <n> for another (0 picks a free one), or stop what listens on 127.0.0.1:${port}.\n`,
      )
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  })
})

describe('a query in a bucket', () => {
  it('prove and submit --bucket-id say to close the bucket, not to wait for the query; a count of one is singular', async () => {
    const bucketId = JSON.parse((await runCli(['bucket', 'create', '--json'], { env })).stdout).provingBucket
      .id as string
    const proved = await runCli(['prove', 'examples/fib/pie.zip', '--bucket-id', bucketId], { env })
    expect(proved.code, proved.stderr).toBe(0)
    expect(proved.stdout).toContain(
      `It ends when bucket ${bucketId} does: once every query is in, run proving bucket close ${bucketId} --wait`,
    )
    expect(proved.stdout).not.toContain('query wait')
    const closed = await runCli(['bucket', 'close', bucketId, '--wait', '--pie', 'examples/fib/pie.zip'], { env })
    expect(closed.code, closed.stderr).toBe(0)
    expect(closed.stderr).toContain('(1 query)')
    expect(closed.stderr).not.toContain('1 queries')
    expect(closed.stdout).toContain("Gate passed: the bucket's one query is DONE and its facts match the PIEs.")

    const other = JSON.parse((await runCli(['bucket', 'create', '--json'], { env })).stdout).provingBucket.id as string
    const submitted = await runCli(['submit', 'examples/fib/pie.zip', '--bucket-id', other], { env })
    expect(submitted.code, submitted.stderr).toBe(0)
    expect(submitted.stdout).toContain(`run proving bucket close ${other} --wait`)
  })
})

describe('auth keys create | list | revoke', () => {
  it('keys create mints a key; the old name auth create-key still does; revoke sends nothing and says where to revoke', async () => {
    const created = JSON.parse(
      (await runCli(['auth', 'keys', 'create', '--name', 'hints-a', '--json'], { env })).stdout,
    )
    const aliased = await runCli(['auth', 'create-key', '--name', 'hints-b', '--json'], { env })
    expect(aliased.code, aliased.stderr).toBe(0)
    const names = JSON.parse((await runCli(['auth', 'keys', 'list', '--json'], { env })).stdout).data.map(
      (key: { name: string }) => key.name,
    )
    expect(names).toEqual(expect.arrayContaining(['hints-a', 'hints-b']))

    const revoke = await runCli(['auth', 'keys', 'revoke', created.apiKey], { env })
    expect(revoke.code).toBe(2)
    expect(revoke.stderr).toMatch(
      /^proving: Cannot revoke \S+ from the command line: revoke it in the service's web console\.\n {2}The account service's API has no call that revokes a key\.\n/,
    )
    expect(revoke.stderr).not.toContain(created.apiKey)
    // Nothing was sent: the key is still listed.
    const keys = JSON.parse((await runCli(['auth', 'keys', 'list', '--json', '--reveal'], { env })).stdout).data.map(
      (key: { apiKey: string }) => key.apiKey,
    )
    expect(keys).toContain(created.apiKey)

    const group = await runCli(['auth', '--help'])
    expect(group.stdout).toMatch(/auth keys create +\S/)
    expect(group.stdout).toMatch(/auth keys revoke <key> +\S/)
    expect(group.stdout).not.toContain('create-key')
  })
})
