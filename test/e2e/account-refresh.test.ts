import { generatePrivateKey } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { AccountClient, localSigner } from '../../src/clients/account.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { clientClockFor, simulatedClock } from '../../src/emulator/index.ts'
import type { BatchQueryBody } from '../../src/schemas/storage-proof.ts'
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/**
 * Token refresh over real HTTP against the emulator: automatic during a long wait (simulated
 * and real time, short token lifetimes), and single-flight when many callers need a token at
 * once (the emulator refuses a reused refresh token, so a second concurrent refresh would fail).
 */

const QUERY: BatchQueryBody = {
  destinationChainId: '11155111',
  fee: '0',
  data: {
    '11155111': {
      'block:5382810': {
        accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
      },
    },
  },
}

async function withEmulator(
  options: Parameters<typeof startTestEmulator>[0],
  test: (emulator: TestEmulator) => Promise<void>,
) {
  const emulator = await startTestEmulator(options)
  try {
    await test(emulator)
  } finally {
    await emulator.close()
  }
}

const refreshCalls = (emulator: TestEmulator) =>
  emulator.requests().filter((request) => request.path === '/auth/refresh-token')

describe('refresh in a long wait', () => {
  it('simulated time: a 90-minute batch query outlives a 5-minute token many times; the session stays alive', async () => {
    await withEmulator({ clock: simulatedClock(Date.parse('2025-06-01T12:00:00Z')) }, async (emulator) => {
      await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 5 * 60_000 })
      await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 60_000, inProgressMs: 90 * 60_000 })
      const clock = clientClockFor(emulator.clock)
      const account = new AccountClient({
        baseUrl: emulator.url,
        privateKey: generatePrivateKey(),
        clock,
        dispatcher: emulator.agent,
      })
      const storage = new StorageProofClient({
        baseUrl: emulator.url,
        apiKey: account.apiKeyProvider(),
        clock,
        dispatcher: emulator.agent,
      })
      const { internalId } = await storage.submitBatchQuery(QUERY)
      const firstToken = await account.getAccessToken()
      const result = await storage.waitForBatchQuery(internalId)
      expect(result.queryStatus).toBe('DONE')

      // 91 min of polls, up to 30 s apart, against a 5 min token refreshed a minute before expiry:
      // a refresh every 4 min or so.
      expect(account.stats.signIns).toBe(1)
      expect(account.stats.refreshes).toBeGreaterThanOrEqual(20)
      const calls = refreshCalls(emulator)
      expect(calls).toHaveLength(account.stats.refreshes)
      expect(calls.every((call) => call.status === 200)).toBe(true)
      expect(emulator.requests().filter((request) => request.status === 401)).toEqual([])
      expect(await account.getAccessToken()).not.toBe(firstToken)
      // At the end of the wait the session still works without signing in again.
      await account.createApiKey({ name: 'after-the-wait' })
      expect(account.stats.signIns).toBe(1)
      expect((await emulator.control('GET', '/account/state')).counters.refreshes).toBe(account.stats.refreshes)
    })
  })

  it('real time: a 2 s token refreshes by itself during a 5 s wait', async () => {
    await withEmulator({}, async (emulator) => {
      await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 2_000 })
      await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 5_000 })
      const account = new AccountClient({
        baseUrl: emulator.url,
        privateKey: generatePrivateKey(),
        dispatcher: emulator.agent,
      })
      const storage = new StorageProofClient({
        baseUrl: emulator.url,
        apiKey: account.apiKeyProvider(),
        dispatcher: emulator.agent,
      })
      const { internalId } = await storage.submitBatchQuery(QUERY)
      const result = await storage.waitForBatchQuery(internalId, {
        schedule: { minIntervalMs: 200, maxIntervalMs: 400 },
      })
      expect(result.queryStatus).toBe('DONE')
      expect(account.stats.signIns).toBe(1)
      expect(account.stats.refreshes).toBeGreaterThanOrEqual(2)
      expect(emulator.requests().filter((request) => request.status === 401)).toEqual([])
      await account.listApiKeys()
    })
  }, 20_000)
})

describe('single-flight refresh', () => {
  it('twenty concurrent callers after expiry share one refresh; every call succeeds', async () => {
    await withEmulator({ clock: simulatedClock(Date.parse('2025-06-01T12:00:00Z')) }, async (emulator) => {
      await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 60_000 })
      const clock = clientClockFor(emulator.clock)
      const account = new AccountClient({
        baseUrl: emulator.url,
        privateKey: generatePrivateKey(),
        clock,
        dispatcher: emulator.agent,
      })
      await account.signIn()
      emulator.clock.advance(61_000)
      const pages = await Promise.all(Array.from({ length: 20 }, () => account.listApiKeys()))
      expect(pages.every((page) => page.total === 1)).toBe(true)
      expect(account.stats).toEqual({ signIns: 1, refreshes: 1 })
      expect(refreshCalls(emulator)).toHaveLength(1)
      expect(emulator.requests().filter((request) => request.status === 401)).toEqual([])
    })
  })

  it('without single flight, the emulator would end the session: two clients sharing one refresh token', async () => {
    // The hazard the single flight avoids, shown with two clients racing the same token by hand.
    await withEmulator({}, async (emulator) => {
      const account = new AccountClient({
        baseUrl: emulator.url,
        privateKey: generatePrivateKey(),
        dispatcher: emulator.agent,
      })
      const signer = await localSigner(generatePrivateKey())
      const challenge = await account.getChallenge(signer.address)
      const session = await account.createSession({
        wallet: signer.address,
        challengeToken: challenge.challengeToken,
        signature: await signer.signTypedData(challenge.eip712),
      })
      const outcomes = await Promise.allSettled([
        account.refreshSession(session.refreshToken),
        account.refreshSession(session.refreshToken),
      ])
      expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(['fulfilled', 'rejected'])
    })
  })
})
