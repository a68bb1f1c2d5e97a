import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RequestBudget, requestBudgetFor } from '../../../src/core/budget.ts'
import { ServiceError, WaitTimeoutError } from '../../../src/core/errors.ts'
import { DEFAULT_POLL_SCHEDULE, nextPollDelay, type PollOutcome, pollUntil } from '../../../src/core/poll.ts'
import { silentLogger } from '../../../src/core/runtime.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

/**
 * The process's request budget (issue 35). The budget's loop is the only sleeper, so a FakeClock
 * (time moves when something sleeps) drives it exactly: every figure below is in its time.
 */

type Asked = { id: number; dueAt: number; askedAt: number; grantedAt?: number }

/** Asks for every turn at once and records when each is given, and what was waiting then. */
async function runTurns(budget: RequestBudget, clock: FakeClock, dues: number[]) {
  const start = clock.now()
  const asked: Asked[] = dues.map((due, id) => ({ id, dueAt: start + due, askedAt: start }))
  const order: { id: number; at: number; waiting: Asked[] }[] = []
  await Promise.all(
    asked.map(async (turn) => {
      await budget.take(turn.dueAt)
      order.push({ id: turn.id, at: clock.now(), waiting: asked.filter((other) => other.grantedAt === undefined) })
      turn.grantedAt = clock.now()
    }),
  )
  return { asked, order }
}

describe('RequestBudget: one rate for the whole process (issue 35)', () => {
  it('property: turns are 1/rate apart or more, none before its due time, the soonest due of those waiting first, and none later than it must', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Rates whose spacing is a whole number of ms, so the clock's sums are exact.
        fc.constantFrom(0.5, 1, 2, 4, 5, 8, 10, 20, 25, 40, 50),
        fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 60 }),
        async (rate, dues) => {
          const clock = new FakeClock()
          const budget = new RequestBudget(clock, rate)
          const { asked, order } = await runTurns(budget, clock, dues)
          const spacing = 1000 / rate
          expect(order).toHaveLength(dues.length)
          let previous = Number.NEGATIVE_INFINITY
          for (const grant of order) {
            const dueAt = asked[grant.id]!.dueAt
            // Never before its due time; never closer than the spacing to the previous turn.
            expect(grant.at).toBeGreaterThanOrEqual(dueAt)
            expect(grant.at - previous).toBeGreaterThanOrEqual(spacing)
            // Of every turn still waiting (the granted one included), it was due soonest.
            const soonest = Math.min(...grant.waiting.map((other) => other.dueAt))
            expect(dueAt).toBe(soonest)
            // Work-conserving: given as soon as both its due time and the spacing allow.
            expect(grant.at).toBe(Math.max(soonest, previous + spacing))
            previous = grant.at
          }
        },
      ),
      { numRuns: 60 },
    )
  })

  it('a 429 with Retry-After: no turn before it, and the rate halved, then won back turn by turn', async () => {
    const clock = new FakeClock()
    const budget = new RequestBudget(clock, 10)
    await budget.take(clock.now())
    const start = clock.now()
    budget.slowDown(5_000)
    expect(budget.perSecond).toBe(5)
    await budget.take(start)
    expect(clock.now()).toBe(start + 5_000)
    const after = clock.now()
    await budget.take(after)
    // About 5 a second now (the turn at the pause's end won back a fiftieth of 10), more with each turn.
    expect(clock.now() - after).toBeCloseTo(1000 / 5.2, 2)
    for (let turn = 0; turn < 30; turn++) await budget.take(clock.now())
    expect(budget.perSecond).toBe(10)
  })

  it('a turn that cannot come before its deadline is refused at the deadline; an abort rejects it and frees its place', async () => {
    const clock = new FakeClock()
    const budget = new RequestBudget(clock, 1)
    await budget.take(clock.now())
    const start = clock.now()
    // The next turn is 1 s away: a deadline at 400 ms refuses it then.
    expect(await budget.take(start, { deadline: start + 400 })).toBe(false)
    expect(clock.now()).toBe(start + 400)
    const controller = new AbortController()
    const aborted = budget.take(start, { signal: controller.signal })
    const next = budget.take(start + 1)
    controller.abort(new Error('stop'))
    await expect(aborted).rejects.toThrow('stop')
    expect(await next).toBe(true)
    expect(clock.now()).toBe(start + 1_000)
  })

  it('with a clock whose sleep passes no time (a simulated clock nobody advances), a waiting turn still yields to the event loop: a timer can abort it', async () => {
    // Before: the loop chained microtasks forever and the abort below never ran (a test worker hung ten minutes).
    const frozen = { now: () => 1_000, sleep: async () => {} }
    const budget = new RequestBudget(frozen, 10)
    expect(await budget.take(0)).toBe(true)
    const controller = new AbortController()
    const taken = budget.take(5_000, { signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stopped by a timer')), 20)
    await expect(taken).rejects.toThrow('stopped by a timer')
  })

  it('the process has one budget per clock; a rate of 0 or below is refused', () => {
    const clock = new FakeClock()
    expect(requestBudgetFor(clock)).toBe(requestBudgetFor(clock))
    expect(requestBudgetFor(clock)).not.toBe(requestBudgetFor(new FakeClock()))
    expect(() => new RequestBudget(clock, 0)).toThrow(RangeError)
    expect(() => requestBudgetFor(clock).configure(Number.NaN)).toThrow(RangeError)
  })
})

describe('pollUntil under the budget (issue 35)', () => {
  /** `count` waits at once, each DONE at its `checks`-th check; the times of every check. */
  async function manyWaits(count: number, checks: number, rate: number, clock = new FakeClock()) {
    const budget = new RequestBudget(clock, rate)
    const times: number[] = []
    await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        let seen = 0
        await pollUntil(
          async (): Promise<PollOutcome<number>> => {
            times.push(clock.now())
            return ++seen >= checks ? { done: true, value: index } : { done: false, state: seen }
          },
          { what: `query ${index}`, timeoutMs: 3_600_000, clock, logger: silentLogger, budget, random: () => 0.5 },
        )
      }),
    )
    return { times, budget, clock }
  }

  it('500 waits at once never read more than the rate in any second (before: each on its own schedule, 500 at once)', async () => {
    const { times } = await manyWaits(500, 4, 10)
    expect(times).toHaveLength(2_000)
    const sorted = [...times].sort((a, b) => a - b)
    // Any window of one second holds at most 10 reads (turns are 100 ms apart).
    for (let index = 10; index < sorted.length; index++)
      expect(sorted[index]! - sorted[index - 10]!).toBeGreaterThanOrEqual(1_000)
  })

  it('one wait polls exactly at its schedule: its latency to DONE is what it was without a budget', async () => {
    const clock = new FakeClock()
    const started = clock.now()
    const { times } = await manyWaits(1, 8, 10, clock)
    const expected = [started]
    for (let check = 1; check < 8; check++) {
      const last = expected.at(-1)!
      expected.push(last + nextPollDelay(last - started, DEFAULT_POLL_SCHEDULE, () => 0.5))
    }
    expect(times).toEqual(expected)
  })

  it('a few waits with room in the budget: each still reads at its own schedule', async () => {
    const clock = new FakeClock()
    const started = clock.now()
    const { times } = await manyWaits(5, 3, 10, clock)
    // Five reads due at once go 100 ms apart: within one poll interval (1 s) of the schedule.
    const sorted = [...times].sort((a, b) => a - b)
    expect(sorted.slice(0, 5)).toEqual([0, 100, 200, 300, 400].map((ms) => started + ms))
    expect(Math.max(...times) - started).toBeLessThanOrEqual(2_000 + 1_000)
  })

  it('a 429 on one wait slows every wait of the process: the budget pauses until its Retry-After', async () => {
    const clock = new FakeClock()
    const budget = new RequestBudget(clock, 10)
    const times: number[] = []
    let refused = false
    const wait = (name: string, limited: boolean) =>
      pollUntil(
        async (): Promise<PollOutcome<string>> => {
          times.push(clock.now())
          if (limited && !refused) {
            refused = true
            throw new ServiceError('Too many requests.', { status: 429, retryAfterMs: 10_000 })
          }
          return { done: true, value: name }
        },
        { what: name, timeoutMs: 60_000, clock, logger: silentLogger, budget, random: () => 0.5 },
      )
    const started = clock.now()
    const first = wait('a', true)
    // The second wait asks after the 429 was seen: it is held until the Retry-After passes.
    await new Promise((resolve) => setImmediate(resolve))
    await Promise.all([first, wait('b', false)])
    expect(times[0]).toBe(started)
    expect(Math.min(...times.slice(1))).toBeGreaterThanOrEqual(started + 10_000)
  })

  it('a wait whose reads cannot get a turn before its deadline times out at the deadline', async () => {
    const clock = new FakeClock()
    const budget = new RequestBudget(clock, 0.1)
    await budget.take(clock.now())
    const started = clock.now()
    await expect(
      pollUntil(async () => ({ done: true, value: 1 }), {
        what: 'query q',
        timeoutMs: 3_000,
        clock,
        logger: silentLogger,
        budget,
      }),
    ).rejects.toThrow(WaitTimeoutError)
    expect(clock.now()).toBe(started + 3_000)
  })
})
