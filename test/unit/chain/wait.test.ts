import { describe, expect, it } from 'vitest'
import type { EthereumFactCheck } from '../../../src/chain/types.ts'
import { describeWhere, waitForFactRegistration } from '../../../src/chain/wait.ts'
import { AbortedError, ChainError, WaitTimeoutError } from '../../../src/core/errors.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

const check = (registered: boolean, blockNumber = 100): EthereumFactCheck => ({
  chain: 'ethereum',
  registryKind: 'sharp',
  mocked: false,
  fact: `0x${'ab'.repeat(32)}`,
  registered,
  network: 'sepolia',
  chainId: 11155111,
  registry: '0x07ec0D28e50322Eb0C159B9090ecF3aeA8346DFe',
  blockNumber,
  rpc: 'rpc.example.com',
})

/** A check that answers from a script, one entry per call (an Error entry throws). */
function scripted(answers: (boolean | Error)[]) {
  let calls = 0
  const fn = async () => {
    const answer = answers[Math.min(calls, answers.length - 1)]!
    calls++
    if (answer instanceof Error) throw answer
    return check(answer, 100 + calls)
  }
  return Object.assign(fn, { calls: () => calls })
}

describe('waitForFactRegistration', () => {
  it('returns at once when the fact is already registered', async () => {
    const clock = new FakeClock()
    const fn = scripted([true])
    const progress: number[] = []
    const result = await waitForFactRegistration(fn, {
      timeoutMs: 60_000,
      clock,
      onProgress: (p) => progress.push(p.attempt),
    })
    expect(result.registered).toBe(true)
    expect(fn.calls()).toBe(1)
    expect(clock.sleeps).toEqual([])
    expect(progress).toEqual([])
  })

  it('polls on the shared schedule until the fact lands, reporting each miss', async () => {
    const clock = new FakeClock()
    const fn = scripted([false, false, false, true])
    const progress: { attempt: number; elapsedMs: number; block: number }[] = []
    const result = await waitForFactRegistration(fn, {
      timeoutMs: 600_000,
      clock,
      random: () => 0.5,
      onProgress: (p) => progress.push({ attempt: p.attempt, elapsedMs: p.elapsedMs, block: p.check.blockNumber }),
    })
    expect(result.registered).toBe(true)
    expect(result.blockNumber).toBe(104)
    expect(progress.map((p) => p.attempt)).toEqual([1, 2, 3])
    expect(progress.map((p) => p.block)).toEqual([101, 102, 103])
    // pollUntil's schedule: at least 1 s between checks, growing with the time spent.
    expect(clock.sleeps.every((ms) => ms >= 900)).toBe(true)
  })

  it('fails at once when the first check fails, even if the failure is retryable', async () => {
    const clock = new FakeClock()
    const fn = scripted([new ChainError('Could not reach the RPC', { retryable: true })])
    await expect(waitForFactRegistration(fn, { timeoutMs: 60_000, clock })).rejects.toThrow('Could not reach the RPC')
    expect(fn.calls()).toBe(1)
  })

  it('polls through retryable failures after the first check, and stops on others', async () => {
    const clock = new FakeClock()
    const warnings: string[] = []
    const logger = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} }
    const flaky = scripted([false, new ChainError('RPC answered 503', { retryable: true }), true])
    await expect(waitForFactRegistration(flaky, { timeoutMs: 60_000, clock, logger })).resolves.toMatchObject({
      registered: true,
    })
    expect(warnings.join('\n')).toContain('RPC answered 503')

    const broken = scripted([false, new ChainError('No contract at 0x…', { retryable: false }), true])
    await expect(waitForFactRegistration(broken, { timeoutMs: 60_000, clock: new FakeClock() })).rejects.toThrow(
      'No contract',
    )
    expect(broken.calls()).toBe(2)
  })

  it('times out with the last check, naming the chain, registry and block', async () => {
    const clock = new FakeClock()
    const fn = scripted([false])
    const error = (await waitForFactRegistration(fn, { timeoutMs: 10_000, clock }).catch((e) => e)) as WaitTimeoutError
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect(error.shortMessage).toBe(
      `Timed out after 10s waiting for fact 0x${'ab'.repeat(32)} to be registered on Ethereum sepolia.`,
    )
    expect(error.metaMessages?.[0]).toMatch(
      /^Last checked at block \d+ \(registry 0x07ec0D28e50322Eb0C159B9090ecF3aeA8346DFe, \d+ checks\)\.$/,
    )
    expect((error.lastSeen as EthereumFactCheck).registered).toBe(false)
    // The deadline is the caller's: no sleep reaches past it.
    expect(clock.slept).toBeLessThanOrEqual(10_000)
  })

  it('stops when the signal aborts', async () => {
    const clock = new FakeClock()
    const controller = new AbortController()
    clock.onSleep = () => controller.abort(new Error('SIGINT'))
    const error = await waitForFactRegistration(scripted([false]), {
      timeoutMs: 60_000,
      clock,
      signal: controller.signal,
    }).catch((e) => e)
    expect(error).toBeInstanceOf(AbortedError)
  })

  it('describes where it looked', () => {
    expect(describeWhere(check(false))).toBe('Ethereum sepolia')
    expect(describeWhere({ ...check(false), network: null, chainId: 31337 })).toBe('Ethereum chain 31337')
  })
})
