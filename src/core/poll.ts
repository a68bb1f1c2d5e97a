import { type RequestBudget, requestBudgetFor } from './budget.ts'
import { classifyFailure, keepsWaiting } from './classify.ts'
import { withDeadline } from './deadline.ts'
import { AbortedError, ProvingKitError, ServiceError, type WaitedFor, WaitTimeoutError } from './errors.ts'
import type { Clock, Logger } from './runtime.ts'

/**
 * The polling discipline shared by every wait (queries, tasks, batch queries, fact
 * registration). The interval grows with the time already spent: a job that finishes in
 * seconds is seen within about a second, a job that takes hours costs a poll every 30 s.
 *
 *   interval = clamp(elapsed / 8, 1 s, 30 s), then ±10% jitter
 *
 * For a 10 min job that is ~50 requests (a `sleep 5` loop makes 120), with a detection
 * latency never above the current interval. Every check takes a turn of the process's request
 * budget first (./budget.ts): many waits at once share one rate, the soonest due read first.
 */
/** How long a wait lasts unless the caller says otherwise: 2 h, what a CI job would allow. */
export const DEFAULT_WAIT_TIMEOUT_MS = 120 * 60_000
/** When one status or step lasting this long earns a warning (the wait goes on). */
export const DEFAULT_STUCK_AFTER_MS = 30 * 60_000

/**
 * How often a wait reads the state: the interval is the time waited divided by `growthDivisor`, kept
 * between the bounds, with jitter.
 */
export type PollSchedule = {
  /** The shortest interval between two reads. */
  minIntervalMs: number
  /** The longest interval between two reads. */
  maxIntervalMs: number
  /** The interval is elapsed / growthDivisor before clamping. */
  growthDivisor: number
  /** How much each interval varies at random, as a fraction of it (0.1: ±10%). */
  jitter: number
}

/** The schedule of every wait unless given another: from 1 s to 30 s, the time waited / 8, ±10%. */
export const DEFAULT_POLL_SCHEDULE: PollSchedule = {
  minIntervalMs: 1_000,
  maxIntervalMs: 30_000,
  growthDivisor: 8,
  jitter: 0.1,
}

/**
 * The delay before a wait's next read: the time waited divided by the schedule's `growthDivisor`,
 * kept between its bounds, with jitter.
 *
 * @param elapsedMs How long the wait has waited so far.
 * @param schedule The schedule.
 * @param random The random source of the jitter, in [0, 1).
 * @returns The delay in ms.
 * @example
 * ```ts
 * import { DEFAULT_POLL_SCHEDULE, nextPollDelay } from 'proving-kit'
 *
 * console.log(nextPollDelay(60_000, DEFAULT_POLL_SCHEDULE, () => 0.5)) // 7500: a minute in, every 7.5 s
 * ```
 */
export function nextPollDelay(elapsedMs: number, schedule: PollSchedule, random: () => number = Math.random): number {
  const base = Math.min(schedule.maxIntervalMs, Math.max(schedule.minIntervalMs, elapsedMs / schedule.growthDivisor))
  const jittered = base * (1 + schedule.jitter * (2 * random() - 1))
  return Math.round(
    Math.min(schedule.maxIntervalMs, Math.max(schedule.minIntervalMs * (1 - schedule.jitter), jittered)),
  )
}

/** What every wait of a client takes (a wait may take more). */
export type WaitOptions<Progress> = {
  /**
   * How long to wait in all before a WaitTimeoutError.
   * @default 7_200_000 (2 hours)
   */
  timeoutMs?: number | undefined
  /** Ends the wait with an AbortedError. */
  signal?: AbortSignal | undefined
  /** Called on every change of state (and once for the first state seen). */
  onProgress?: ((progress: Progress) => void) | undefined
  /**
   * How often to read the state: the interval grows with the time waited.
   * @default DEFAULT_POLL_SCHEDULE
   */
  schedule?: Partial<PollSchedule> | undefined
}

/**
 * The state a wait is in (a status, or a status and its step) and since when: a wait reports each
 * change once, and says once that a state has lasted longer than `stuckAfterMs`.
 */
export class StateWatch {
  #key: string | undefined
  #since: number
  #stuckReported = false
  readonly #stuckAfterMs: number

  constructor(stuckAfterMs: number, started: number) {
    this.#stuckAfterMs = stuckAfterMs
    this.#since = started
  }

  /** When the current state was first seen. */
  get since(): number {
    return this.#since
  }

  /**
   * Takes the state just read: `changed`, a new state (or the first); `stuck`, the first check
   * past `stuckAfterMs` in the same state; `same`, anything else.
   */
  update(key: string, now: number): 'changed' | 'stuck' | 'same' {
    if (key !== this.#key) {
      this.#key = key
      this.#since = now
      this.#stuckReported = false
      return 'changed'
    }
    if (this.#stuckReported || now - this.#since <= this.#stuckAfterMs) return 'same'
    this.#stuckReported = true
    return 'stuck'
  }
}

/** What a check of {@link pollUntil} answers: done, with the value, or not yet, with the state seen. */
export type PollOutcome<T> = { done: true; value: T } | { done: false; state: unknown }

/** How {@link pollUntil} waits. */
export type PollOptions = {
  /** What is waited for, in messages: "query q-123". */
  what: string
  timeoutMs: number
  signal?: AbortSignal | undefined
  clock: Clock
  logger: Logger
  schedule?: Partial<PollSchedule> | undefined
  random?: (() => number) | undefined
  /** What is waited for, carried by the timeout and cancellation errors (each adapter says how to resume). */
  waitedFor?: WaitedFor | undefined
  /**
   * Whether a page from something in between with a 4xx (a gateway's text/plain 404) is a
   * hiccup to wait through from the start (the wait follows a submission the service accepted).
   * Either way it is, once a check has succeeded: the service was there.
   */
  pagesAreTransient?: boolean | undefined
  /** The request budget the checks take turns from; by default the one of `clock` (./budget.ts). */
  budget?: RequestBudget | undefined
}

/**
 * Calls `check` until it says done, the timeout passes or the signal aborts, at the schedule's
 * growing interval. A check that fails in a way that may pass (a network failure, a 5xx, a
 * gateway's page) does not end the wait: it is logged as a warning and tried again at the next
 * turn. An answer of the service that will not change (its JSON 404, a 401) ends it. Every read
 * takes a turn of the process's request budget, so many waits together poll at a bounded rate.
 *
 * @param check Reads the state once: `{ done: true, value }` ends the wait, `{ done: false, state }` goes on.
 * @param options What is waited for (for messages), the timeout, the clock and logger, the signal and schedule.
 * @returns The value of the check that said done.
 * @throws {WaitTimeoutError} When `options.timeoutMs` passes first (`lastSeen` is the last state).
 * @throws {AbortedError} When `options.signal` aborts.
 * @example
 * ```ts
 * import { pollUntil, ProvingClient, silentLogger, systemClock } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const bucket = await pollUntil(
 *   async () => {
 *     const { bucket } = await client.getBucket('bkt-1')
 *     return bucket.status === 'DONE' ? { done: true, value: bucket } : { done: false, state: bucket.status }
 *   },
 *   { what: 'bucket bkt-1', timeoutMs: 3_600_000, clock: systemClock, logger: silentLogger },
 * )
 * ```
 */
export async function pollUntil<T>(check: () => Promise<PollOutcome<T>>, options: PollOptions): Promise<T> {
  const schedule = { ...DEFAULT_POLL_SCHEDULE, ...options.schedule }
  const started = options.clock.now()
  const deadline = started + options.timeoutMs
  let lastState: unknown
  let consecutiveFailures = 0
  let retryAfterMs: number | undefined
  let answered = options.pagesAreTransient === true
  const waitedFor = options.waitedFor
  const budget = options.budget ?? requestBudgetFor(options.clock)
  let dueAt = started
  for (;;) {
    if (options.signal?.aborted) {
      throw new AbortedError(`Stopped waiting for ${options.what}: cancelled.`, {
        cause: options.signal.reason,
        waitedFor,
      })
    }
    // The check's turn: at its schedule when the budget has room, later when many waits share
    // it, never past the deadline (the wait then times out without a last read).
    let granted: boolean
    try {
      granted = await budget.take(dueAt, { signal: options.signal, deadline })
    } catch (error) {
      throw new AbortedError(`Stopped waiting for ${options.what}: cancelled.`, { cause: error, waitedFor })
    }
    if (!granted) {
      throw new WaitTimeoutError(`Timed out after ${formatDuration(options.timeoutMs)} waiting for ${options.what}.`, {
        lastSeen: lastState,
        waitedFor,
      })
    }
    try {
      // Every request the check makes is bounded by this wait's deadline (./deadline.ts).
      const outcome = await withDeadline(deadline, check)
      consecutiveFailures = 0
      answered = true
      if (outcome.done) return outcome.value
      lastState = outcome.state
    } catch (error) {
      retryAfterMs = undefined
      if (error instanceof AbortedError) {
        throw new AbortedError(`Stopped waiting for ${options.what}: cancelled.`, { cause: error, waitedFor })
      }
      if (!keepsWaiting(error, { pagesAreTransient: answered }) || !(error instanceof ProvingKitError)) throw error
      const failure = classifyFailure(error)
      retryAfterMs = failure.retryAfterMs
      // "Too many requests" is about every read of this process: they all slow down.
      if (failure.kind === 'retry-after' || (error instanceof ServiceError && error.status === 429))
        budget.slowDown(retryAfterMs)
      consecutiveFailures++
      // Past the deadline the loop ends below with the timeout; no warning for the last try.
      if (error.details) options.logger.debug(`${options.what}: ${error.details}`)
      if (options.clock.now() < deadline) {
        options.logger.warn(
          `Could not read ${options.what} (${error.shortMessage}); still waiting, trying again at the poll schedule${consecutiveFailures > 1 ? ` (${consecutiveFailures} failures in a row)` : ''}.`,
        )
      }
    }
    const now = options.clock.now()
    if (now >= deadline) {
      throw new WaitTimeoutError(`Timed out after ${formatDuration(options.timeoutMs)} waiting for ${options.what}.`, {
        lastSeen: lastState,
        waitedFor,
      })
    }
    // A service that said when to come back (429, 503 with Retry-After) is not asked sooner.
    const delay = Math.min(
      Math.max(nextPollDelay(now - started, schedule, options.random), retryAfterMs ?? 0),
      deadline - now,
    )
    dueAt = now + delay
  }
}

export function formatDuration(ms: number): string {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds}s`
  const minutes = Math.floor(seconds / 60)
  if (minutes < 60) return `${minutes}m${seconds % 60 ? ` ${seconds % 60}s` : ''}`
  const hours = Math.floor(minutes / 60)
  return `${hours}h${minutes % 60 ? ` ${minutes % 60}m` : ''}`
}
