import { Readable } from 'node:stream'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runCli, spawnCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/** `proving auth login` / `auth create-key` against the emulator, and what the key is then good for. */

let emulator: TestEmulator

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: ['pk_preconfigured_only'] })
})
afterAll(async () => {
  await emulator.close()
})

describe('proving auth login', () => {
  it('--json prints { apiKey, projectId, wallet }, and the key proves the fixture PIE with `proving prove`', async () => {
    const privateKey = generatePrivateKey()
    const login = await runCli(['auth', 'login', '--json'], {
      env: { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: privateKey },
    })
    expect(login.code).toBe(0)
    expect(login.stderr).toBe('')
    const { apiKey, projectId, wallet } = JSON.parse(login.stdout)
    expect(apiKey).toMatch(/^pk_emu_/)
    expect(projectId).toMatch(/\S/)
    expect(wallet).toMatch(/^0x[0-9a-fA-F]{40}$/)

    const proved = await runCli(['prove', FIXTURE_PIE, '--wait', '--json', '--mock-fact-hash'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: apiKey },
    })
    expect(proved.code).toBe(0)
    expect(JSON.parse(proved.stdout).provingQuery.status).toBe('DONE')
  })

  it('reads the key from stdin when PROVING_PRIVATE_KEY is not set (the real executable, a pipe)', async () => {
    const privateKey = generatePrivateKey()
    const run = spawnCli(['auth', 'login', '--json'], {
      env: { PROVING_AUTH_URL: emulator.url },
      input: `${privateKey}\n`,
    })
    const result = await run.done
    expect(result.stderr).toBe('')
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout).apiKey).toMatch(/^pk_emu_/)
  })

  it('the same wallet gets the same project and key on every login', async () => {
    const env = { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: generatePrivateKey() }
    const first = JSON.parse((await runCli(['auth', 'login', '--json'], { env })).stdout)
    const second = JSON.parse((await runCli(['auth', 'login', '--json'], { env })).stdout)
    expect(second).toEqual(first)
  })

  it.each([
    ['no private key anywhere', [], {}, /No private key: set PROVING_PRIVATE_KEY/],
    ['an empty stdin', [], { stdin: '' }, /stdin was empty/],
    ['a malformed key (not echoed)', [], { PROVING_PRIVATE_KEY: '0xnot-a-key-5ecre7' }, /32 bytes of hex/],
    [
      'no account service address',
      ['--auth-url', ''],
      { PROVING_PRIVATE_KEY: generatePrivateKey(), noUrl: true },
      /--auth-url <url> or set PROVING_AUTH_URL/,
    ],
  ])('exit 2 for %s', async (_name, extra, setup: Record<string, unknown>, message) => {
    const env: Record<string, string> = setup.noUrl ? {} : { PROVING_AUTH_URL: emulator.url }
    if (typeof setup.PROVING_PRIVATE_KEY === 'string') env.PROVING_PRIVATE_KEY = setup.PROVING_PRIVATE_KEY
    const stdin = typeof setup.stdin === 'string' ? Readable.from([setup.stdin]) : undefined
    const result = await runCli(['auth', 'login', ...(extra as string[])], { env, stdin })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(message)
    expect(result.stderr).not.toContain('5ecre7')
    expect(result.stdout).toBe('')
  })

  it('--private-key is refused and its value masked', async () => {
    const privateKey = generatePrivateKey()
    const result = await runCli(['auth', 'login', `--private-key=${privateKey}`], {
      env: { PROVING_AUTH_URL: emulator.url },
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/shell history/)
    expect(result.stderr).not.toContain(privateKey.slice(2))
  })

  it('--help lists the address flag and where the key comes from', async () => {
    const result = await runCli(['auth', 'login', '--help'])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/--auth-url <url>.*PROVING_AUTH_URL/)
    expect(result.stdout).toMatch(/PROVING_PRIVATE_KEY/)
  })
})

describe('proving auth create-key', () => {
  it('--name mints a key (JSON: { apiKey, name, projectId, createdAt }) that the services accept', async () => {
    const env = { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: generatePrivateKey() }
    const created = await runCli(['auth', 'create-key', '--name', 'nightly', '--color', '#123456', '--json'], { env })
    expect(created.code).toBe(0)
    const record = JSON.parse(created.stdout)
    expect(Object.keys(record).sort()).toEqual(['apiKey', 'createdAt', 'name', 'projectId'])
    expect(record.name).toBe('nightly')
    const listed = await runCli(['query', 'list', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: record.apiKey },
    })
    expect(listed.code).toBe(0)
  })

  it('without --name: exit 2, nothing minted', async () => {
    const env = { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: generatePrivateKey() }
    const before = (await emulator.control('GET', '/account/state')).projects.length
    const result = await runCli(['auth', 'create-key'], { env })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/--name is required/)
    expect((await emulator.control('GET', '/account/state')).projects.length).toBe(before)
  })

  it("into another wallet's project: 403, exit 2", async () => {
    const other = JSON.parse(
      (
        await runCli(['auth', 'login', '--json'], {
          env: { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: generatePrivateKey() },
        })
      ).stdout,
    )
    const result = await runCli(['auth', 'create-key', '--name', 'x', '--project-id', other.projectId], {
      env: { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: generatePrivateKey() },
    })
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/403 FORBIDDEN/)
  })
})
