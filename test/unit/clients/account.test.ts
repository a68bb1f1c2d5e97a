import nock from 'nock'
import { verifyTypedData } from 'viem/utils'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AccountClient, localSigner } from '../../../src/clients/account.ts'
import {
  AbortedError,
  InvalidInputError,
  InvalidResponseError,
  type ProvingKitError,
  ServiceError,
} from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { expiresAtMs } from '../../../src/schemas/account-constants.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { COW, COW_KEY, MAIL, MAIL_SIGNATURE } from '../../helpers/mail-example.ts'

const BASE = 'https://account.test'
/** Distinctive, so a leak anywhere is found by a plain substring search. */
const PRIVATE_KEY = `0x${'d15c0'.repeat(12)}beef`
const FIFTEEN_MIN_S = 15 * 60

let clock: FakeClock
let logs: string[]
let wallet: string

const logger: Logger = {
  debug: (message) => logs.push(`debug ${message}`),
  info: (message) => logs.push(`info ${message}`),
  warn: (message) => logs.push(`warn ${message}`),
  error: (message) => logs.push(`error ${message}`),
}

function account(options: { privateKey?: string } = {}) {
  return new AccountClient({
    baseUrl: BASE,
    privateKey: options.privateKey ?? PRIVATE_KEY,
    logger,
    clock,
    signIn: { domainName: 'Fake Accounts' },
  })
}

/** Typed data whose EIP712Domain field order is not the canonical one: a rebuilt copy signs differently. */
function loginTypedData(forWallet: string, nonce: string) {
  return {
    domain: { chainId: 1, name: 'Fake Accounts', version: '2' },
    types: {
      EIP712Domain: [
        { name: 'chainId', type: 'uint256' },
        { name: 'name', type: 'string' },
        { name: 'version', type: 'string' },
      ],
      Login: [
        { name: 'nonce', type: 'string' },
        { name: 'wallet', type: 'address' },
      ],
    },
    primaryType: 'Login',
    message: { nonce, wallet: forWallet },
  }
}

type FakeOptions = { expiresInS?: number; typedData?: (wallet: string, nonce: string) => unknown }

/**
 * A fake account service that behaves like contract.md: one-time challenges, signatures
 * verified with viem against the wallet of the challenge, rotating refresh tokens. Counts
 * everything it sees; every token it hands out is in `secrets`.
 */
function fakeService(options: FakeOptions = {}) {
  const expiresIn = options.expiresInS ?? FIFTEEN_MIN_S
  const challenges = new Map<string, { wallet: string; typedData: unknown; used: boolean }>()
  const refreshTokens = new Map<string, boolean>()
  const accessTokens = new Set<string>()
  const seen = {
    challenges: 0,
    sessions: 0,
    refreshes: [] as string[],
    lists: [] as string[],
    creates: [] as unknown[],
  }
  const secrets: string[] = []
  let counter = 0
  const next = (prefix: string) => {
    const value = `${prefix}_${++counter}_${Math.random().toString(36).slice(2)}`
    secrets.push(value)
    return value
  }
  const pair = () => {
    const accessToken = next('at')
    const refreshToken = next('rt')
    accessTokens.add(accessToken)
    refreshTokens.set(refreshToken, false)
    return { accessToken, refreshToken, expiresAt: Math.floor(clock.now() / 1000) + expiresIn }
  }
  const bearer = (request: Request) => (request.headers.get('authorization') ?? '').replace(/^Bearer /, '')

  const scope = nock(BASE).persist()
  // nock 15 hands a reply function the fetch Request.
  scope
    .get('/auth/web3/challenge')
    .query(true)
    .reply((request: Request) => {
      seen.challenges++
      const forWallet = new URL(request.url).searchParams.get('wallet')!
      const token = next('ch')
      const typedData = (options.typedData ?? loginTypedData)(forWallet, `n${counter}`)
      challenges.set(token, { wallet: forWallet, typedData, used: false })
      return [200, { challengeToken: token, nonce: `n${counter}`, statement: 'Sign in', eip712: typedData }]
    })
  scope.post('/auth/web3/session').reply(async (incoming: Request) => {
    seen.sessions++
    const request = (await incoming.json()) as Record<string, string>
    const challenge = challenges.get(request.challengeToken!)
    if (!challenge || challenge.used || request.channel !== 'bearer') return [401, { error: 'INVALID_CHALLENGE' }]
    challenge.used = true
    const valid = await verifyTypedData({
      ...(challenge.typedData as Parameters<typeof verifyTypedData>[0]),
      address: challenge.wallet as `0x${string}`,
      signature: request.signature as `0x${string}`,
    })
    if (!valid || request.wallet !== challenge.wallet) return [401, { error: 'INVALID_SIGNATURE' }]
    return [200, { ...pair(), selectedProject: { id: 'proj-1', name: 'Personal' } }]
  })
  scope.post('/auth/refresh-token').reply((request: Request) => {
    const token = bearer(request)
    seen.refreshes.push(token)
    if (refreshTokens.get(token) !== false) return [401, { error: `REFRESH_TOKEN_REUSED ${token}` }]
    refreshTokens.set(token, true)
    return [200, pair()]
  })
  scope
    .get('/api-keys')
    .query(true)
    .reply((request: Request) => {
      const token = bearer(request)
      seen.lists.push(token)
      if (!accessTokens.has(token)) return [401, { error: 'UNAUTHORIZED' }]
      const projectId = new URL(request.url).searchParams.get('projectId')
      return [
        200,
        {
          data: [{ apiKey: 'pk_fake_key_of_proj_1', name: 'Default', projectId, createdAt: '2025-06-01T12:00:00Z' }],
          total: 1,
        },
      ]
    })
  scope.post('/api-keys').reply(async (request: Request) => {
    const token = bearer(request)
    if (!accessTokens.has(token)) return [401, { error: 'UNAUTHORIZED' }]
    const body = await request.json()
    seen.creates.push(body)
    const key = next('pk_minted')
    return [
      201,
      {
        apiKey: key,
        name: (body as { type: { name: string } }).type.name,
        projectId: 'proj-1',
        createdAt: '2025-06-01T12:00:00Z',
      },
    ]
  })
  return {
    seen,
    secrets,
    /** Ends every access token early (as a revocation would). */
    revokeAccessTokens: () => accessTokens.clear(),
  }
}

beforeEach(async () => {
  nock.disableNetConnect()
  clock = new FakeClock()
  logs = []
  wallet = (await localSigner(PRIVATE_KEY)).address
})

afterEach(() => {
  nock.cleanAll()
  nock.enableNetConnect()
})

describe('the wallet flow', () => {
  it('signs in: challenge for the wallet, exact typed data signed, bearer session', async () => {
    const fake = fakeService()
    const client = account()
    const session = await client.signIn()
    expect(session).toEqual({ wallet, projectId: 'proj-1', expiresAt: clock.now() + FIFTEEN_MIN_S * 1000 })
    expect(fake.seen).toMatchObject({ challenges: 1, sessions: 1 })
    expect(client.stats).toEqual({ signIns: 1, refreshes: 0 })
  })

  it('the typed data is signed exactly as received, not rebuilt', async () => {
    // The fake verifies against its own copy; a client that rebuilt the domain type in the
    // canonical order (name, version, chainId) would be refused with 401.
    fakeService()
    await account().signIn()
    const signer = await localSigner(PRIVATE_KEY)
    const typed = loginTypedData(wallet, 'n1')
    const rebuilt = { ...typed, types: { Login: typed.types.Login } }
    const exact = await signer.signTypedData(typed)
    expect(await signer.signTypedData(rebuilt)).not.toBe(exact)
  })

  it('the EIP-712 Mail example is signed to its published signature by the signer, and refused as a challenge (a contract, two people)', async () => {
    const signer = await localSigner(COW_KEY)
    expect(await signer.signTypedData(MAIL as never)).toBe(MAIL_SIGNATURE)
    let posted = false
    nock(BASE)
      .get('/auth/web3/challenge')
      .query({ wallet: COW })
      .reply(200, { challengeToken: 'ch_mail_example', eip712: MAIL })
      .post('/auth/web3/session', () => ((posted = true), true))
      .reply(200, { accessToken: 'at_mail', refreshToken: 'rt_mail', expiresAt: Math.floor(clock.now() / 1000) + 60 })
    await expect(account({ privateKey: COW_KEY }).signIn()).rejects.toThrow(/verifyingContract/)
    expect(posted).toBe(false)
    nock.cleanAll()
  })

  it("getApiKey: data[0].apiKey of the session's project, listed once and remembered", async () => {
    const fake = fakeService()
    const client = account()
    expect(await client.getApiKey()).toBe('pk_fake_key_of_proj_1')
    expect(await client.getApiKey()).toBe('pk_fake_key_of_proj_1')
    expect(fake.seen.lists).toHaveLength(1)
  })

  it('createApiKey: POST /api-keys { projectId, type: { name, color } } with the bearer token', async () => {
    const fake = fakeService()
    const record = await account().createApiKey({ name: 'ci', color: '#ff0000' })
    expect(record.apiKey).toMatch(/^pk_minted_/)
    expect(fake.seen.creates).toEqual([{ projectId: 'proj-1', type: { name: 'ci', color: '#ff0000' } }])
  })

  it('refuses typed data that is not a sign-in (a permit) and a challenge made out to another wallet', async () => {
    const permit = fakeService({
      typedData: (_wallet, nonce) => ({
        ...loginTypedData(_wallet, nonce),
        primaryType: 'PermitSingle',
        types: { PermitSingle: [{ name: 'nonce', type: 'string' }] },
        message: { nonce },
      }),
    })
    await expect(account().signIn()).rejects.toBeInstanceOf(InvalidResponseError)
    expect(permit.seen.sessions).toBe(0)
    nock.cleanAll()
    const other = fakeService({ typedData: (_wallet, nonce) => loginTypedData(COW, nonce) })
    await expect(account().signIn()).rejects.toThrow(/is the address "0xCD2a[^"]*", not this wallet/)
    expect(other.seen.sessions).toBe(0)
  })

  it('a viem account can be the signer instead of a private key', async () => {
    const fake = fakeService()
    const { privateKeyToAccount } = await import('viem/accounts')
    const client = new AccountClient({
      baseUrl: BASE,
      signer: privateKeyToAccount(PRIVATE_KEY as `0x${string}`),
      clock,
      signIn: { domainName: 'Fake Accounts' },
    })
    expect((await client.signIn()).wallet).toBe(wallet)
    expect(fake.seen.sessions).toBe(1)
  })

  it('without a key or a signer, signing in is refused before anything is sent', async () => {
    const fake = fakeService()
    await expect(new AccountClient({ baseUrl: BASE, clock }).signIn()).rejects.toBeInstanceOf(InvalidInputError)
    expect(fake.seen.challenges).toBe(0)
  })

  it('a session refused with 401 is a ServiceError 401', async () => {
    nock(BASE)
      .get('/auth/web3/challenge')
      .query(true)
      .reply(200, { challengeToken: 'ch_x', nonce: 'n', eip712: loginTypedData(wallet, 'n') })
      .post('/auth/web3/session')
      .reply(401, { error: 'INVALID_SIGNATURE' })
    const error = await account()
      .signIn()
      .catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 401, code: 'INVALID_SIGNATURE' })
  })

  it('a malformed private key is refused when the client is made, without quoting it', () => {
    expect(() => account({ privateKey: 'not-a-key-c0ffee' })).toThrow(InvalidInputError)
    try {
      account({ privateKey: 'not-a-key-c0ffee' })
    } catch (error) {
      expect((error as Error).message).not.toContain('c0ffee')
    }
  })
})

describe('refresh', () => {
  it('refreshes before expiresAt (margin: 60 s at most, a quarter of the lifetime) and uses the new token', async () => {
    const fake = fakeService()
    const client = account()
    const first = await client.getAccessToken()
    clock.advance((FIFTEEN_MIN_S - 61) * 1000)
    expect(await client.getAccessToken()).toBe(first)
    expect(fake.seen.refreshes).toHaveLength(0)
    clock.advance(2_000)
    const second = await client.getAccessToken()
    expect(second).not.toBe(first)
    expect(fake.seen.refreshes).toHaveLength(1)
    await client.listApiKeys()
    expect(fake.seen.lists).toEqual([second])
  })

  it('a short lifetime refreshes at three quarters of it', async () => {
    const fake = fakeService({ expiresInS: 8 })
    const client = account()
    await client.getAccessToken()
    clock.advance(5_900)
    await client.getAccessToken()
    expect(fake.seen.refreshes).toHaveLength(0)
    clock.advance(200)
    await client.getAccessToken()
    expect(fake.seen.refreshes).toHaveLength(1)
  })

  it('is single-flight: concurrent callers share one refresh', async () => {
    const fake = fakeService()
    const client = account()
    await client.signIn()
    clock.advance(FIFTEEN_MIN_S * 1000)
    const tokens = await Promise.all(Array.from({ length: 12 }, () => client.getAccessToken()))
    expect(new Set(tokens).size).toBe(1)
    expect(fake.seen.refreshes).toHaveLength(1)
    expect(client.stats).toEqual({ signIns: 1, refreshes: 1 })
  })

  it('concurrent first use signs in once', async () => {
    const fake = fakeService()
    const client = account()
    await Promise.all([client.getApiKey(), client.getAccessToken(), client.listApiKeys()])
    expect(fake.seen).toMatchObject({ challenges: 1, sessions: 1 })
  })

  it('never sends a refresh token twice: each refresh spends the newest one', async () => {
    const fake = fakeService()
    const client = account()
    await client.signIn()
    for (let i = 0; i < 4; i++) {
      clock.advance(FIFTEEN_MIN_S * 1000)
      await client.getAccessToken()
    }
    expect(fake.seen.refreshes).toHaveLength(4)
    expect(new Set(fake.seen.refreshes).size).toBe(4)
  })

  it('a refused refresh is not retried with the same token: the client signs in again', async () => {
    const fake = fakeService()
    const client = account()
    await client.signIn()
    clock.advance(FIFTEEN_MIN_S * 1000)
    nock.cleanAll()
    let refreshAttempts = 0
    nock(BASE)
      .post('/auth/refresh-token')
      .reply(() => (refreshAttempts++, [401, { error: 'REFRESH_TOKEN_EXPIRED' }]))
    fakeService()
    const token = await client.getAccessToken()
    expect(token).toMatch(/^at_/)
    expect(refreshAttempts).toBe(1)
    expect(client.stats).toEqual({ signIns: 2, refreshes: 0 })
    expect(fake.seen.refreshes).toHaveLength(0)
    expect(logs.some((line) => line.startsWith('warn Could not refresh'))).toBe(true)
  })

  it('a 401 on a bearer call renews the token once and repeats the call', async () => {
    const fake = fakeService()
    const client = account()
    await client.listApiKeys()
    fake.revokeAccessTokens()
    const page = await client.listApiKeys()
    expect(page.data[0]!.apiKey).toBe('pk_fake_key_of_proj_1')
    expect(fake.seen.refreshes).toHaveLength(1)
    expect(fake.seen.lists).toHaveLength(3)
  })

  it('a caller that aborts stops waiting; the shared refresh goes on for the others', async () => {
    const fake = fakeService()
    const client = account()
    await client.signIn()
    clock.advance(FIFTEEN_MIN_S * 1000)
    const controller = new AbortController()
    const aborted = client.getAccessToken({ signal: controller.signal })
    const other = client.getAccessToken()
    controller.abort(new Error('user gave up'))
    await expect(aborted).rejects.toBeInstanceOf(AbortedError)
    expect(await other).toMatch(/^at_/)
    expect(fake.seen.refreshes).toHaveLength(1)
  })

  it('apiKeyProvider keeps the session alive: each call refreshes when due', async () => {
    const fake = fakeService({ expiresInS: 60 })
    const client = account()
    const provider = client.apiKeyProvider()
    for (let i = 0; i < 5; i++) {
      expect(await provider()).toBe('pk_fake_key_of_proj_1')
      clock.advance(50_000)
    }
    expect(fake.seen.refreshes.length).toBeGreaterThanOrEqual(4)
    expect(client.stats.signIns).toBe(1)
  })
})

describe('secrets', () => {
  it('the private key, tokens and keys appear in no log line and no error message', async () => {
    const fake = fakeService()
    const client = account()
    await client.signIn()
    await client.getApiKey()
    const minted = await client.createApiKey({ name: 'ci' })
    clock.advance(FIFTEEN_MIN_S * 1000)
    await client.getAccessToken()
    // An error body that echoes a token: the message masks it.
    const reused = fake.seen.refreshes[0]!
    const error = (await client.refreshSession(reused).catch((caught: unknown) => caught)) as ProvingKitError
    expect(error.status).toBe(401)
    const everything = [...logs, error.message, String(error.details), JSON.stringify(client.session)].join('\n')
    const secrets = [PRIVATE_KEY, PRIVATE_KEY.slice(2), minted.apiKey, 'pk_fake_key_of_proj_1', ...fake.secrets]
    expect(fake.secrets.length).toBeGreaterThan(4)
    for (const secret of secrets) expect(everything).not.toContain(secret)
    expect(error.message).toContain('***')
  })
})

describe('expiresAt', () => {
  it('reads unix seconds (contract.md), and milliseconds, numeric strings and ISO dates too', () => {
    expect(expiresAtMs(1_750_000_000)).toBe(1_750_000_000_000)
    expect(expiresAtMs(1_750_000_000_123)).toBe(1_750_000_000_123)
    expect(expiresAtMs('1750000000')).toBe(1_750_000_000_000)
    expect(expiresAtMs('2025-06-15T15:06:40.000Z')).toBe(Date.parse('2025-06-15T15:06:40.000Z'))
    expect(expiresAtMs('soon')).toBeUndefined()
  })
})
