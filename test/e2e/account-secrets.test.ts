import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountClient } from '../../src/clients/account.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import type { Logger } from '../../src/core/runtime.ts'
import { runCli } from '../helpers/cli.ts'
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/**
 * "No secret in captured logs": the whole account flow (library and CLI, debug logging on,
 * failures included) runs through a recording proxy in front of the emulator, so the test
 * knows every token and key that went over the wire. None of them, nor the private key, may
 * appear in any log line, error message, stderr, stdout (bar the intended JSON of `auth login`
 * and `auth create-key`), the emulator's log or its request log.
 */

/** Distinctive: a leak is found by a plain substring search, in either case, with or without 0x. */
const PRIVATE_KEY = `0x${'5ec7e7'.repeat(10)}abcd`
const QUERY = {
  destinationChainId: '1',
  fee: '0',
  data: {
    '1': {
      'block:1': { accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } } },
    },
  },
}

let emulator: TestEmulator
let proxy: Server
let proxyUrl: string
const wire: string[] = []
const captured: string[] = []

function capture(prefix: string): Logger {
  const write = (level: string) => (message: string) => void captured.push(`${prefix} ${level} ${message}`)
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') }
}

/** Every secret-looking value the wire carried (tokens, keys, challenge tokens, signatures). */
function secretsOnTheWire(): string[] {
  const found = new Set<string>()
  for (const text of wire) {
    for (const match of text.matchAll(/"(accessToken|refreshToken|challengeToken|apiKey|signature)"\s*:\s*"([^"]+)"/g))
      found.add(match[2]!)
    for (const match of text.matchAll(/Bearer (\S+)/g)) found.add(match[1]!)
  }
  return [...found]
}

beforeAll(async () => {
  // Simulated time: the library's wait below advances it as it sleeps, so the batch query (3 s)
  // outlasts the access token (1.5 s, refreshed before it ends) whatever the machine's speed: the
  // wait must refresh it. In real time a quick machine finished before the refresh, and a loaded
  // one could send a request on a token that expired on the way.
  emulator = await startTestEmulator({
    logger: capture('emulator'),
    apiKeys: ['pk_preconfigured_secret_key'],
    clock: simulatedClock(),
  })
  await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 1_500 })
  await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 3_000 })
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks).toString('utf8')
    const headers: Record<string, string> = {}
    for (const name of ['authorization', 'content-type', 'api-key', 'cookie']) {
      const value = req.headers[name]
      if (typeof value === 'string') headers[name] = value
    }
    wire.push(`${req.method} ${req.url} ${JSON.stringify(headers)} ${body}`)
    const answer = await request(emulator.url + req.url, {
      method: req.method as 'GET',
      headers,
      body: body || undefined,
    })
    const text = await answer.body.text()
    wire.push(text)
    res.writeHead(answer.statusCode, { 'content-type': 'application/json' })
    res.end(text)
  })
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => {
    proxy.close(() => resolve())
    proxy.closeAllConnections()
  })
  await emulator.close()
})

describe('no secret in captured output', () => {
  const outputs: string[] = []
  const intendedKeys: string[] = []

  it('library: sign-in, keys, refresh during a wait, a reused refresh token, a refused key', async () => {
    const clock = clientClockFor(emulator.clock)
    const account = new AccountClient({ baseUrl: proxyUrl, privateKey: PRIVATE_KEY, logger: capture('account'), clock })
    await account.signIn()
    await account.getApiKey()
    await account.createApiKey({ name: 'library' })
    const storage = new StorageProofClient({
      baseUrl: proxyUrl,
      apiKey: account.apiKeyProvider(),
      logger: capture('storage'),
      clock,
    })
    const { internalId } = await storage.submitBatchQuery(QUERY)
    await storage.waitForBatchQuery(internalId, { schedule: { minIntervalMs: 200, maxIntervalMs: 300 } })
    expect(account.stats.refreshes).toBeGreaterThanOrEqual(1)

    const refreshTokens = secretsOnTheWire().filter((value) => value.startsWith('rt_'))
    const reused = await account.refreshSession(refreshTokens[0]!).catch((error: Error) => error)
    expect(reused).toBeInstanceOf(Error)
    outputs.push(String(reused), JSON.stringify(reused), (reused as Error).stack ?? '')
    const wrongKey = new StorageProofClient({
      baseUrl: proxyUrl,
      apiKey: 'pk_wrong_key_never_valid',
      logger: capture('storage'),
    })
    const refused = await wrongKey.getBatchQueryStatus(internalId).catch((error: Error) => error)
    outputs.push(String(refused), (refused as Error).stack ?? '')
  }, 20_000)

  it('CLI: auth login (env and stdin, human and JSON), create-key, the refused flag, a failure; all with --debug', async () => {
    const env = { PROVING_AUTH_URL: proxyUrl, PROVING_PRIVATE_KEY: PRIVATE_KEY }
    const login = await runCli(['auth', 'login', '--json', '--debug'], { env })
    expect(login.code).toBe(0)
    const printed = JSON.parse(login.stdout)
    expect(Object.keys(printed).sort()).toEqual(['apiKey', 'projectId', 'wallet'])
    intendedKeys.push(printed.apiKey)
    outputs.push(login.stderr)

    const human = await runCli(['auth', 'login', '--debug'], {
      env: { PROVING_AUTH_URL: proxyUrl },
      stdin: Readable.from([`${PRIVATE_KEY.slice(2)}\n`]),
    })
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/Signed in as 0x/)
    outputs.push(human.stdout, human.stderr)

    const created = await runCli(['auth', 'create-key', '--name', 'cli', '--json', '--debug'], { env })
    expect(created.code).toBe(0)
    intendedKeys.push(JSON.parse(created.stdout).apiKey)
    outputs.push(created.stderr)

    const createdHuman = await runCli(['auth', 'create-key', '--name', 'cli-2'], { env })
    expect(createdHuman.code).toBe(0)
    outputs.push(createdHuman.stdout, createdHuman.stderr)

    const flag = await runCli(['auth', 'login', '--private-key', PRIVATE_KEY, '--debug'], {
      env: { PROVING_AUTH_URL: proxyUrl },
    })
    expect(flag.code).toBe(2)
    expect(flag.stderr).toMatch(/--private-key is not accepted/)
    outputs.push(flag.stdout, flag.stderr)

    // A refused sign-in whose error body echoes what it was sent: the message must mask it.
    await emulator.control('POST', '/faults', {
      method: 'POST',
      path: '/auth/web3/session',
      status: 401,
      body: { error: 'INVALID_SIGNATURE', message: `refused for key ${PRIVATE_KEY}` },
    })
    const refused = await runCli(['auth', 'login', '--debug'], { env })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/401 INVALID_SIGNATURE/)
    expect(refused.stderr).toContain('***')
    outputs.push(refused.stdout, refused.stderr)

    // The CLI waits in real time, on an emulator whose time only the library's wait advanced: a
    // batch query that is DONE at once.
    await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 0 })
    const storage = await runCli(['storage', 'query', '-', '--wait', '--debug'], {
      env: { PROVING_STORAGE_PROOF_URL: proxyUrl, PROVING_API_KEY: printed.apiKey },
      stdin: Readable.from([JSON.stringify(QUERY)]),
    })
    expect(storage.code).toBe(0)
    outputs.push(storage.stdout, storage.stderr)
    if (process.env.SHOW_OUTPUT) console.log(outputs.join('\n----\n'))
  }, 30_000)

  it('none of the secrets that crossed the wire, nor the private key, is in any of it', async () => {
    const secrets = secretsOnTheWire()
    // Sanity: the capture saw the flow (challenges, pairs, keys).
    expect(secrets.filter((value) => value.startsWith('ch_')).length).toBeGreaterThanOrEqual(5)
    expect(secrets.filter((value) => value.startsWith('at_')).length).toBeGreaterThanOrEqual(5)
    expect(secrets.filter((value) => value.startsWith('rt_')).length).toBeGreaterThanOrEqual(5)
    expect(secrets.filter((value) => value.startsWith('pk_emu_')).length).toBeGreaterThanOrEqual(3)
    const requestLog = JSON.stringify(await emulator.control('GET', '/requests'))
    const haystack = [...captured, ...outputs, requestLog].join('\n')
    expect(haystack.length).toBeGreaterThan(1_000)
    const forbidden = [
      PRIVATE_KEY,
      PRIVATE_KEY.slice(2),
      PRIVATE_KEY.slice(2).toUpperCase(),
      'pk_wrong_key_never_valid',
      ...secrets,
      ...intendedKeys,
    ]
    for (const secret of forbidden) expect(haystack, `leaked ${secret.slice(0, 6)}...`).not.toContain(secret)
    // Debug logging did run: the haystack is not empty by accident.
    expect(captured.some((line) => line.includes('debug'))).toBe(true)
  })
})
