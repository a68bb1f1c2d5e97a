import { describe, expect, it } from 'vitest'
import {
  AbortedError,
  NetworkError,
  type ProvingKitError,
  ServiceError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'
import {
  DEFAULT_POLL_SCHEDULE,
  formatDuration,
  nextPollDelay,
  type PollOutcome,
  pollUntil,
  StateWatch,
} from '../../../src/core/poll.ts'
import { silentLogger, type Logger } from '../../../src/core/runtime.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

const S = DEFAULT_POLL_SCHEDULE

/** A seeded generator, so the jitter varies between runs of a simulation but not between test runs. */
function seeded(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0
    return state / 2 ** 32
  }
}

describe('nextPollDelay', () => {
  it('is about 1 s at the start', () => {
    expect(nextPollDelay(0, S, () => 0.5)).toBe(1_000)
    expect(nextPollDelay(0, S, () => 0)).toBeGreaterThanOrEqual(900)
    expect(nextPollDelay(0, S, () => 0.999_999)).toBeLessThanOrEqual(1_100)
    expect(nextPollDelay(5_000, S, () => 0.5)).toBe(1_000)
  })

  it('grows with the time already spent', () => {
    const delays = [0, 10_000, 30_000, 60_000, 120_000, 240_000].map((elapsed) => nextPollDelay(elapsed, S, () => 0.5))
    expect(delays).toEqual([1_000, 1_250, 3_750, 7_500, 15_000, 30_000])
  })

  it('never goes past 30 s, jitter included', () => {
    for (const elapsed of [240_000, 600_000, 3_600_000, 48 * 3_600_000]) {
      for (const draw of [0, 0.5, 0.999_999]) {
        const delay = nextPollDelay(elapsed, S, () => draw)
        expect(delay).toBeLessThanOrEqual(30_000)
        expect(delay).toBeGreaterThanOrEqual(27_000)
      }
    }
  })

  it('jitter stays within ±10%', () => {
    const random = seeded(7)
    for (let i = 0; i < 1_000; i++) {
      const elapsed = i * 97
      const base = Math.min(30_000, Math.max(1_000, elapsed / 8))
      const delay = nextPollDelay(elapsed, S, random)
      expect(delay).toBeGreaterThanOrEqual(Math.floor(base * 0.9))
      expect(delay).toBeLessThanOrEqual(Math.ceil(base * 1.1))
    }
  })
})

/** Polls a job that finishes at `finishAt` ms; returns the number of checks and when the end was seen. */
async function simulate(finishAt: number, random: () => number) {
  const clock = new FakeClock(0)
  let checks = 0
  const seenAt = await pollUntil<number>(
    async () => {
      checks++
      return clock.now() >= finishAt ? { done: true, value: clock.now() } : { done: false, state: 'IN_PROGRESS' }
    },
    { what: 'job', timeoutMs: 2 * 3_600_000, clock, logger: silentLogger, random },
  )
  return { checks, latency: seenAt - finishAt }
}

describe('the polling schedule in practice', () => {
  it('a 10-minute job costs at most half the requests of a `sleep 5` loop (120)', async () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { checks, latency } = await simulate(600_000, seeded(seed))
      expect(checks).toBeLessThanOrEqual(60)
      // And the end is still seen within one capped interval.
      expect(latency).toBeLessThanOrEqual(30_000)
    }
  })

  it('a job that ends at 10 s is seen within 2.5 s', async () => {
    for (let seed = 1; seed <= 50; seed++) {
      const { latency } = await simulate(10_000, seeded(seed))
      expect(latency).toBeGreaterThanOrEqual(0)
      expect(latency).toBeLessThan(2_500)
    }
  })

  it('a job that ends at once is seen on the first check', async () => {
    expect(await simulate(0, () => 0.5)).toEqual({ checks: 1, latency: 0 })
  })
})

describe('pollUntil', () => {
  function capture() {
    const warnings: string[] = []
    const logger: Logger = { ...silentLogger, warn: (m) => warnings.push(m) }
    return { logger, warnings }
  }

  it('times out with WaitTimeoutError carrying the last state and what it waited for (no CLI advice)', async () => {
    const clock = new FakeClock(0)
    const error = await pollUntil(async (): Promise<PollOutcome<never>> => ({ done: false, state: { step: 'X' } }), {
      what: 'query q-1',
      timeoutMs: 60_000,
      clock,
      logger: silentLogger,
      waitedFor: { kind: 'query', id: 'q-1' },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect((error as WaitTimeoutError).message).toBe('Timed out after 1m waiting for query q-1.')
    expect((error as WaitTimeoutError).waitedFor).toEqual({ kind: 'query', id: 'q-1' })
    expect((error as WaitTimeoutError).lastSeen).toEqual({ step: 'X' })
    // The last sleep is cut to the deadline, never past it.
    expect(clock.now()).toBe(60_000)
  })

  it('keeps waiting through retryable failures, and says so', async () => {
    const clock = new FakeClock(0)
    const { logger, warnings } = capture()
    let calls = 0
    const value = await pollUntil(
      async (): Promise<PollOutcome<string>> => {
        calls++
        if (calls <= 3) throw new ServiceError('The service answered 503.', { status: 503, retryable: true })
        return { done: true, value: 'ok' }
      },
      { what: 'query q-1', timeoutMs: 60_000, clock, logger },
    )
    expect(value).toBe('ok')
    expect(warnings).toHaveLength(3)
    expect(warnings[2]).toContain('3 failures in a row')
  })

  it('ends on a failure that is not retryable', async () => {
    const clock = new FakeClock(0)
    const notFound = new ServiceError('404', { status: 404 })
    await expect(
      pollUntil(async () => Promise.reject(notFound), { what: 'x', timeoutMs: 60_000, clock, logger: silentLogger }),
    ).rejects.toBe(notFound)
  })

  it('ends on an error that is not a ProvingKitError', async () => {
    const clock = new FakeClock(0)
    await expect(
      pollUntil(async () => Promise.reject(new TypeError('bug')), {
        what: 'x',
        timeoutMs: 60_000,
        clock,
        logger: silentLogger,
      }),
    ).rejects.toBeInstanceOf(TypeError)
  })

  it('an abort during the sleep ends with AbortedError carrying what it waited for', async () => {
    const clock = new FakeClock(0)
    const controller = new AbortController()
    clock.onSleep = () => controller.abort()
    const error = await pollUntil(async (): Promise<PollOutcome<never>> => ({ done: false, state: 1 }), {
      what: 'query q-1',
      timeoutMs: 60_000,
      clock,
      logger: silentLogger,
      signal: controller.signal,
      waitedFor: { kind: 'query', id: 'q-1' },
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AbortedError)
    expect((error as ProvingKitError).shortMessage).toBe('Stopped waiting for query q-1: cancelled.')
    expect((error as AbortedError).waitedFor).toEqual({ kind: 'query', id: 'q-1' })
  })

  it('an abort from inside a check (a cancelled request) ends with AbortedError too', async () => {
    const clock = new FakeClock(0)
    const error = await pollUntil(async () => Promise.reject(new AbortedError('Cancelled during get query q-1.')), {
      what: 'query q-1',
      timeoutMs: 60_000,
      clock,
      logger: silentLogger,
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AbortedError)
  })

  it('a retryable network error does not end the wait', async () => {
    const clock = new FakeClock(0)
    let calls = 0
    const value = await pollUntil(
      async (): Promise<PollOutcome<number>> => {
        if (++calls === 1) throw new NetworkError('reset')
        return { done: true, value: calls }
      },
      { what: 'x', timeoutMs: 60_000, clock, logger: silentLogger },
    )
    expect(value).toBe(2)
  })
})

describe('formatDuration', () => {
  it('writes seconds, minutes and hours compactly', () => {
    expect(formatDuration(0)).toBe('0s')
    expect(formatDuration(45_000)).toBe('45s')
    expect(formatDuration(60_000)).toBe('1m')
    expect(formatDuration(95_000)).toBe('1m 35s')
    expect(formatDuration(2 * 3_600_000)).toBe('2h')
    expect(formatDuration(2 * 3_600_000 + 5 * 60_000)).toBe('2h 5m')
  })
})

describe('StateWatch', () => {
  it('reports each change once, and a state that outlasts stuckAfterMs once, from when it was first seen', () => {
    const watch = new StateWatch(1_000, 0)
    expect(watch.update('RECEIVED', 0)).toBe('changed')
    expect(watch.update('RECEIVED', 1_000)).toBe('same')
    expect(watch.update('RECEIVED', 1_001)).toBe('stuck')
    expect(watch.update('RECEIVED', 5_000)).toBe('same')
    expect(watch.since).toBe(0)
    expect(watch.update('IN_PROGRESS|trace', 6_000)).toBe('changed')
    expect(watch.since).toBe(6_000)
    expect(watch.update('IN_PROGRESS|trace', 7_000)).toBe('same')
    expect(watch.update('IN_PROGRESS|trace', 7_001)).toBe('stuck')
    // Back to an earlier state is a change, and may be stuck again.
    expect(watch.update('RECEIVED', 8_000)).toBe('changed')
    expect(watch.update('RECEIVED', 9_001)).toBe('stuck')
  })
})
