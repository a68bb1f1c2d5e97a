import { generatePrivateKey } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { AccountClient, localSigner } from '../../src/clients/account.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { ServiceError } from '../../src/core/errors.ts'
import { simulatedClock } from '../../src/emulator/index.ts'
import { FIXTURE_PIE, type TestEmulator, useEmulator } from '../helpers/emulator.ts'

/**
 * The account service of the emulator over real HTTP: the wallet flow of contract.md, and
 * every refusal the issue names (another wallet's signature, a reused or expired challenge, a
 * reused refresh token), each a 401.
 */

const START = Date.parse('2025-06-01T12:00:00Z')
/** The emulator only accepts this key at start: whatever else works was minted by the account service. */
const ALLOWED = 'pk_preconfigured_only_key'

type Pair = {
  accessToken: string
  refreshToken: string
  expiresAt: number
  selectedProject: { id: string; name: string }
}

async function challengeFor(emulator: TestEmulator, wallet: string) {
  const answer = await emulator.call('GET', '/auth/web3/challenge', { query: { wallet } })
  expect(answer.status).toBe(200)
  return answer.body
}

/** The flow by hand: challenge for `wallet`, signed by `signerKey` (the same wallet unless testing a forgery). */
async function signInByHand(emulator: TestEmulator, signerKey: string, options: { wallet?: string } = {}) {
  const signer = await localSigner(signerKey)
  const wallet = options.wallet ?? signer.address
  const challenge = await challengeFor(emulator, wallet)
  const signature = await signer.signTypedData(challenge.eip712)
  const request = { wallet, challengeToken: challenge.challengeToken, signature, channel: 'bearer' }
  const answer = await emulator.call('POST', '/auth/web3/session', { json: request })
  return { answer, request, challenge, wallet }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe('a fresh wallet, end to end', () => {
  const emulator = useEmulator({ apiKeys: [ALLOWED], timing: { receivedMs: 0, stepMs: 0 } })

  it("signs in, gets its Personal project's key, and that key proves the fixture PIE", async () => {
    const account = new AccountClient({
      baseUrl: emulator().url,
      privateKey: generatePrivateKey(),
      dispatcher: emulator().agent,
    })
    const session = await account.signIn()
    expect(session.wallet).toMatch(/^0x[0-9a-fA-F]{40}$/)
    expect(session.projectId).toMatch(/\S/)
    const keys = await account.listApiKeys()
    expect(keys.total).toBe(1)
    expect(keys.data).toHaveLength(1)
    expect(keys.data[0]).toMatchObject({
      projectId: session.projectId,
      name: expect.any(String),
      createdAt: expect.any(String),
    })
    const apiKey = await account.getApiKey()
    expect(apiKey).toBe(keys.data[0]!.apiKey)

    const proving = emulator().client(apiKey)
    const { provingQueryId } = await proving.submitPie({ pieZip: FIXTURE_PIE, mockFactHash: true })
    const result = await proving.waitForQuery(provingQueryId, { schedule: { minIntervalMs: 20 } })
    expect(result.provingQuery.status).toBe('DONE')
    expect(result.provingQuery.programHash).toMatch(/^0x/)
  })

  it('before any sign-in, a made-up key is refused by the proving and storage services', async () => {
    await expect(emulator().client('pk_made_up_key').submitPie({ pieZip: FIXTURE_PIE })).rejects.toMatchObject({
      status: 401,
    })
    const answer = await emulator().call('POST', '/batch-query', { headers: { 'api-key': 'pk_made_up_key' }, json: {} })
    expect(answer.status).toBe(401)
  })

  it('a minted key is accepted by the proving and storage-proof services', async () => {
    const account = new AccountClient({
      baseUrl: emulator().url,
      privateKey: generatePrivateKey(),
      dispatcher: emulator().agent,
    })
    const minted = await account.createApiKey({ name: 'ci', color: '#00ff00' })
    expect(minted).toMatchObject({ name: 'ci', projectId: account.session!.projectId })
    expect((await account.listApiKeys()).total).toBe(2)
    const { provingQueryId } = await emulator()
      .client(minted.apiKey)
      .submitPie({ pieZip: FIXTURE_PIE, mockFactHash: true })
    expect(provingQueryId).toMatch(/\S/)
    const storage = new StorageProofClient({
      baseUrl: emulator().url,
      apiKey: minted.apiKey,
      dispatcher: emulator().agent,
    })
    const { internalId } = await storage.submitBatchQuery({
      destinationChainId: '1',
      fee: '0',
      data: {
        '1': {
          'block:1': { accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } } },
        },
      },
    })
    expect(internalId).toMatch(/\S/)
  })

  it('signing in again keeps the same project and its one key', async () => {
    const privateKey = generatePrivateKey()
    const first = new AccountClient({ baseUrl: emulator().url, privateKey, dispatcher: emulator().agent })
    const second = new AccountClient({ baseUrl: emulator().url, privateKey, dispatcher: emulator().agent })
    const a = await first.signIn()
    const b = await second.signIn()
    expect(b.projectId).toBe(a.projectId)
    expect(await second.getApiKey()).toBe(await first.getApiKey())
    expect((await second.listApiKeys()).total).toBe(1)
  })
})

describe('the wallet flow, by hand', () => {
  // One simulated clock for the block (useEmulator's options are fixed): tests read `now` from it.
  const emulator = useEmulator({ clock: simulatedClock(START) })

  it('the challenge: a one-time token and EIP-712 typed data naming the wallet, nonce, issuedAt, expiresAt and statement', async () => {
    const wallet = (await localSigner(generatePrivateKey())).address
    const now = emulator().clock.now()
    const challenge = await challengeFor(emulator(), wallet)
    expect(challenge).toMatchObject({
      challengeToken: expect.any(String),
      nonce: expect.any(String),
      issuedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 5 * 60_000).toISOString(),
      statement: expect.stringMatching(/authorizes no transaction/),
    })
    const { domain, types, primaryType, message } = challenge.eip712
    expect(domain).toEqual({ name: 'Proving Account Service', version: '1', chainId: 1 })
    expect(Object.keys(types)).toEqual(['EIP712Domain', 'SignIn'])
    expect(primaryType).toBe('SignIn')
    expect(message).toEqual({
      wallet: wallet.toLowerCase(),
      nonce: challenge.nonce,
      issuedAt: challenge.issuedAt,
      expiresAt: challenge.expiresAt,
      statement: challenge.statement,
    })
  })

  it('400 for a missing or malformed wallet', async () => {
    expect((await emulator().call('GET', '/auth/web3/challenge')).status).toBe(400)
    expect(await emulator().call('GET', '/auth/web3/challenge', { query: { wallet: '0x1234' } })).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/wallet/) },
    })
  })

  it('a good signature gives a bearer pair: expiresAt in unix seconds, no Set-Cookie', async () => {
    const now = emulator().clock.now()
    const { answer } = await signInByHand(emulator(), generatePrivateKey())
    expect(answer.status).toBe(200)
    const pair = answer.body as Pair
    expect(pair.accessToken).not.toBe(pair.refreshToken)
    expect(pair.expiresAt).toBe(Math.floor((now + 15 * 60_000) / 1000))
    expect(pair.selectedProject).toMatchObject({ name: 'Personal', id: expect.any(String) })
    expect(answer.headers['set-cookie']).toBeUndefined()
  })

  it('refused (401): a signature from another wallet', async () => {
    const victim = (await localSigner(generatePrivateKey())).address
    const { answer } = await signInByHand(emulator(), generatePrivateKey(), { wallet: victim })
    expect(answer).toMatchObject({ status: 401, body: { error: 'INVALID_SIGNATURE' } })
  })

  it('refused (401): a reused challenge, even with its good signature', async () => {
    const { answer, request } = await signInByHand(emulator(), generatePrivateKey())
    expect(answer.status).toBe(200)
    const again = await emulator().call('POST', '/auth/web3/session', { json: request })
    expect(again).toMatchObject({ status: 401, body: { error: 'CHALLENGE_ALREADY_USED' } })
  })

  it('refused (401): a failed attempt spends the challenge too (no guessing against one challenge)', async () => {
    const signer = await localSigner(generatePrivateKey())
    const challenge = await challengeFor(emulator(), signer.address)
    const forged = await (await localSigner(generatePrivateKey())).signTypedData(challenge.eip712)
    const request = { wallet: signer.address, challengeToken: challenge.challengeToken, channel: 'bearer' }
    expect(
      (await emulator().call('POST', '/auth/web3/session', { json: { ...request, signature: forged } })).status,
    ).toBe(401)
    const good = await signer.signTypedData(challenge.eip712)
    expect(
      await emulator().call('POST', '/auth/web3/session', { json: { ...request, signature: good } }),
    ).toMatchObject({
      status: 401,
      body: { error: 'CHALLENGE_ALREADY_USED' },
    })
  })

  it('refused (401): an expired challenge', async () => {
    await emulator().control('PUT', '/account/config', { challengeTtlMs: 60_000 })
    const signer = await localSigner(generatePrivateKey())
    const challenge = await challengeFor(emulator(), signer.address)
    const signature = await signer.signTypedData(challenge.eip712)
    emulator().clock.advance(60_000)
    const answer = await emulator().call('POST', '/auth/web3/session', {
      json: { wallet: signer.address, challengeToken: challenge.challengeToken, signature, channel: 'bearer' },
    })
    expect(answer).toMatchObject({ status: 401, body: { error: 'CHALLENGE_EXPIRED' } })
  })

  it('refused (401): a challenge presented for another wallet than its own; and an unknown challenge', async () => {
    const signer = await localSigner(generatePrivateKey())
    const challenge = await challengeFor(emulator(), signer.address)
    const signature = await signer.signTypedData(challenge.eip712)
    const other = (await localSigner(generatePrivateKey())).address
    expect(
      await emulator().call('POST', '/auth/web3/session', {
        json: { wallet: other, challengeToken: challenge.challengeToken, signature, channel: 'bearer' },
      }),
    ).toMatchObject({ status: 401, body: { error: 'WALLET_MISMATCH' } })
    expect(
      await emulator().call('POST', '/auth/web3/session', {
        json: { wallet: signer.address, challengeToken: 'ch_unknown', signature, channel: 'bearer' },
      }),
    ).toMatchObject({ status: 401, body: { error: 'INVALID_CHALLENGE' } })
  })

  it('400 for a malformed session request', async () => {
    const answer = await emulator().call('POST', '/auth/web3/session', {
      json: { wallet: '0x12', challengeToken: 'x', signature: '0x00' },
    })
    expect(answer.status).toBe(400)
    expect(typeof answer.body.error).toBe('string')
  })

  it('refresh rotates the pair; refused (401): a reused refresh token, which also ends its successors', async () => {
    const { answer } = await signInByHand(emulator(), generatePrivateKey())
    const first = answer.body as Pair
    const refreshed = await emulator().call('POST', '/auth/refresh-token', {
      headers: bearer(first.refreshToken),
      json: {},
    })
    expect(refreshed.status).toBe(200)
    const second = refreshed.body as Pair
    expect(second.refreshToken).not.toBe(first.refreshToken)
    expect(second.accessToken).not.toBe(first.accessToken)
    expect((await emulator().call('GET', '/api-keys', { headers: bearer(second.accessToken) })).status).toBe(200)

    const reused = await emulator().call('POST', '/auth/refresh-token', {
      headers: bearer(first.refreshToken),
      json: {},
    })
    expect(reused).toMatchObject({ status: 401, body: { error: 'REFRESH_TOKEN_REUSED' } })
    // Someone else held the old token: the session descended from it is over.
    expect(
      (await emulator().call('POST', '/auth/refresh-token', { headers: bearer(second.refreshToken), json: {} })).status,
    ).toBe(401)
    expect((await emulator().call('GET', '/api-keys', { headers: bearer(second.accessToken) })).status).toBe(401)
  })

  it('an access token expires after its lifetime (401), and a refresh brings a working one', async () => {
    await emulator().control('PUT', '/account/config', { accessTokenTtlMs: 30_000 })
    const now = emulator().clock.now()
    const { answer } = await signInByHand(emulator(), generatePrivateKey())
    const pair = answer.body as Pair
    expect(pair.expiresAt).toBe(Math.floor((now + 30_000) / 1000))
    emulator().clock.advance(29_999)
    expect((await emulator().call('GET', '/api-keys', { headers: bearer(pair.accessToken) })).status).toBe(200)
    emulator().clock.advance(1)
    expect((await emulator().call('GET', '/api-keys', { headers: bearer(pair.accessToken) })).status).toBe(401)
    const refreshed = await emulator().call('POST', '/auth/refresh-token', {
      headers: bearer(pair.refreshToken),
      json: {},
    })
    expect((await emulator().call('GET', '/api-keys', { headers: bearer(refreshed.body.accessToken) })).status).toBe(
      200,
    )
  })

  it("keys: list pages with limit and offset; another wallet's project is forbidden; malformed bodies are 400", async () => {
    const mine = (await signInByHand(emulator(), generatePrivateKey())).answer.body as Pair
    const theirs = (await signInByHand(emulator(), generatePrivateKey())).answer.body as Pair
    for (const name of ['a', 'b']) {
      const created = await emulator().call('POST', '/api-keys', {
        headers: bearer(mine.accessToken),
        json: { projectId: mine.selectedProject.id, type: { name, color: 'red' } },
      })
      expect(created.status).toBe(201)
      expect(Object.keys(created.body).sort()).toEqual(['apiKey', 'createdAt', 'name', 'projectId'])
    }
    const page = await emulator().call('GET', '/api-keys', {
      headers: bearer(mine.accessToken),
      query: { projectId: mine.selectedProject.id, limit: 2, offset: 1 },
    })
    expect(page.body.total).toBe(3)
    expect(page.body.data.map((key: { name: string }) => key.name)).toEqual(['a', 'b'])
    expect(
      (await emulator().call('GET', '/api-keys', { headers: bearer(mine.accessToken), query: { limit: 0 } })).status,
    ).toBe(400)
    expect(
      await emulator().call('GET', '/api-keys', {
        headers: bearer(mine.accessToken),
        query: { projectId: theirs.selectedProject.id },
      }),
    ).toMatchObject({ status: 403, body: { error: 'FORBIDDEN' } })
    expect(
      (
        await emulator().call('POST', '/api-keys', {
          headers: bearer(mine.accessToken),
          json: { projectId: mine.selectedProject.id, type: { name: '' } },
        })
      ).status,
    ).toBe(400)
    expect((await emulator().call('GET', '/api-keys')).status).toBe(401)
    expect((await emulator().call('POST', '/api-keys', { headers: bearer(mine.refreshToken), json: {} })).status).toBe(
      401,
    )
  })

  it('the cookie channel sets two HttpOnly cookies and keeps the tokens out of the body', async () => {
    const signer = await localSigner(generatePrivateKey())
    const challenge = await challengeFor(emulator(), signer.address)
    const signature = await signer.signTypedData(challenge.eip712)
    const answer = await emulator().call('POST', '/auth/web3/session', {
      json: { wallet: signer.address, challengeToken: challenge.challengeToken, signature },
    })
    expect(answer.status).toBe(200)
    expect(answer.body.accessToken).toBeUndefined()
    const cookies = answer.headers['set-cookie'] as string[]
    expect(cookies).toHaveLength(2)
    expect(cookies.every((cookie) => cookie.includes('HttpOnly'))).toBe(true)
    const refresh = cookies.find((cookie) => cookie.startsWith('refresh_token='))!.split(';')[0]!
    const refreshed = await emulator().call('POST', '/auth/refresh-token', { headers: { cookie: refresh }, json: {} })
    expect(refreshed.status).toBe(200)
  })

  it('the control API shows counts and ids, never a token or a key', async () => {
    const { answer, wallet } = await signInByHand(emulator(), generatePrivateKey())
    const state = await emulator().control('GET', '/account/state')
    expect(state).toMatchObject({
      counters: { projects: 1, sessions: 1, refreshes: 0 },
      wallets: [wallet.toLowerCase()],
    })
    const text = JSON.stringify(state)
    expect(text).not.toContain(answer.body.accessToken)
    expect(text).not.toContain(answer.body.refreshToken)
  })

  it('a reset forgets wallets, sessions and keys', async () => {
    const { answer } = await signInByHand(emulator(), generatePrivateKey())
    await emulator().control('POST', '/reset')
    expect((await emulator().call('GET', '/api-keys', { headers: bearer(answer.body.accessToken) })).status).toBe(401)
    expect((await emulator().control('GET', '/account/state')).projects).toEqual([])
  })
})

describe('AccountClient errors against the emulator', () => {
  const emulator = useEmulator()

  it('a reused refresh token is refused with a ServiceError 401', async () => {
    const account = new AccountClient({
      baseUrl: emulator().url,
      privateKey: generatePrivateKey(),
      dispatcher: emulator().agent,
    })
    const { answer } = await signInByHand(emulator(), generatePrivateKey())
    await account.refreshSession(answer.body.refreshToken)
    const error = await account.refreshSession(answer.body.refreshToken).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(ServiceError)
    expect(error).toMatchObject({ status: 401, code: 'REFRESH_TOKEN_REUSED' })
  })
})
