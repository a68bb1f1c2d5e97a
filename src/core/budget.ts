import type { Clock } from './runtime.ts'

/** The rate a process's waits read at together unless configured otherwise, in requests per second. */
export const DEFAULT_MAX_REQUESTS_PER_SECOND = 10
/** The rate is never halved below this (a turn every 10 s). */
const FLOOR_PER_SECOND = 0.1
/** How much of the configured rate each turn after a slow-down wins back. */
const RECOVERY_STEP = 1 / 50

type Turn = {
  dueAt: number
  deadline: number
  seq: number
  settle: (granted: boolean) => void
  fail: (reason: unknown) => void
  done: boolean
}

/** How a read waits for its turn of a {@link RequestBudget}. */
export type TakeOptions = {
  /** Gives up the turn (the promise rejects with the signal's reason). */
  signal?: AbortSignal | undefined
  /** Past this (ms since the epoch), the turn is refused instead (`take` resolves false). */
  deadline?: number | undefined
}

/**
 * The request budget of a process's waits: every read a wait makes (a query's status, a task's,
 * a batch query's, a fact's registration) takes a turn here before it is sent, so thousands of
 * waits poll at a bounded rate rather than each at its own schedule.
 *
 * Turns are at least 1/rate apart; the read due soonest goes first. A 429 or a `Retry-After`
 * pauses every read until then and halves the rate, which each later turn wins back by a
 * fiftieth. A turn that cannot be given before its deadline is refused, never given late. One
 * budget per clock: {@link requestBudgetFor}.
 *
 * @example
 * ```ts
 * import { requestBudgetFor, systemClock } from 'proving-kit'
 *
 * requestBudgetFor(systemClock).configure(2) // every wait of this process: at most 2 reads a second
 * ```
 */
export class RequestBudget {
  readonly #clock: Clock
  #maxPerSecond: number
  #perSecond: number
  #lastTurn = Number.NEGATIVE_INFINITY
  #pausedUntil = Number.NEGATIVE_INFINITY
  /** A binary heap: soonest due first, then first asked. */
  readonly #heap: Turn[] = []
  #seq = 0
  #running = false
  #wake: AbortController | undefined
  /** When the sleeping loop wakes by itself (-Infinity while it does not sleep: it will look anyway). */
  #sleepUntil = Number.NEGATIVE_INFINITY
  /** Turns given so far (for tests and the bench). */
  given = 0

  constructor(clock: Clock, maxPerSecond: number = DEFAULT_MAX_REQUESTS_PER_SECOND) {
    this.#clock = clock
    this.#maxPerSecond = checkRate(maxPerSecond)
    this.#perSecond = this.#maxPerSecond
  }

  /** The configured rate, in requests per second. */
  get maxPerSecond(): number {
    return this.#maxPerSecond
  }

  /** The rate now: the configured one, or less after a 429. */
  get perSecond(): number {
    return this.#perSecond
  }

  /**
   * Sets the rate; the reads waiting are given turns at it from now.
   *
   * @param maxPerSecond Requests per second, a finite number more than 0 (another is a RangeError).
   * @example
   * ```ts
   * import { requestBudgetFor, systemClock } from 'proving-kit'
   *
   * requestBudgetFor(systemClock).configure(20)
   * ```
   */
  configure(maxPerSecond: number): void {
    this.#maxPerSecond = checkRate(maxPerSecond)
    this.#perSecond = this.#maxPerSecond
    this.#wakeUp()
  }

  /**
   * Waits for a turn to send a read that is due at `dueAt`.
   *
   * @param dueAt When the read is due (ms since the epoch, by the budget's clock).
   * @param options A deadline past which the turn is refused, and a signal.
   * @returns true when the turn is given; false when it could not be given before the deadline.
   * @example
   * ```ts
   * import { requestBudgetFor, systemClock } from 'proving-kit'
   *
   * const budget = requestBudgetFor(systemClock)
   * if (await budget.take(systemClock.now(), { deadline: systemClock.now() + 60_000 })) console.log('send the read')
   * ```
   */
  take(dueAt: number, options: TakeOptions = {}): Promise<boolean> {
    const { signal } = options
    if (signal?.aborted) return Promise.reject(signal.reason)
    return new Promise<boolean>((resolve, reject) => {
      const onAbort = () => {
        if (turn.done) return
        turn.done = true
        reject(signal?.reason)
        this.#wakeUp()
      }
      const turn: Turn = {
        dueAt,
        deadline: options.deadline ?? Number.POSITIVE_INFINITY,
        seq: this.#seq++,
        done: false,
        settle: (granted) => {
          signal?.removeEventListener('abort', onAbort)
          resolve(granted)
        },
        fail: (reason) => {
          signal?.removeEventListener('abort', onAbort)
          reject(reason)
        },
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      this.#push(turn)
      if (!this.#running) void this.#run()
      // A sleeping loop is woken only when this turn is due before it would wake anyway.
      else if (
        Math.min(Math.max(dueAt, this.#lastTurn + 1000 / this.#perSecond, this.#pausedUntil), turn.deadline) <
        this.#sleepUntil
      )
        this.#wakeUp()
    })
  }

  /**
   * Pauses every read after a 429 (until `Retry-After` when given) and halves the rate.
   *
   * @param retryAfterMs The service's `Retry-After`, in ms.
   * @example
   * ```ts
   * import { requestBudgetFor, systemClock } from 'proving-kit'
   *
   * requestBudgetFor(systemClock).slowDown(5_000)
   * ```
   */
  slowDown(retryAfterMs?: number | undefined): void {
    if (retryAfterMs !== undefined && retryAfterMs > 0)
      this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock.now() + retryAfterMs)
    this.#perSecond = Math.max(FLOOR_PER_SECOND, Math.min(this.#perSecond, this.#maxPerSecond) / 2)
    this.#wakeUp()
  }

  async #run(): Promise<void> {
    this.#running = true
    try {
      for (;;) {
        const now = this.#clock.now()
        this.#dropSettled()
        const head = this.#heap[0]
        if (!head) return
        const at = Math.max(head.dueAt, this.#lastTurn + 1000 / this.#perSecond, this.#pausedUntil)
        if (at <= now) {
          this.#pop()
          head.done = true
          this.#lastTurn = now
          this.given++
          if (this.#perSecond < this.#maxPerSecond)
            this.#perSecond = Math.min(this.#maxPerSecond, this.#perSecond + this.#maxPerSecond * RECOVERY_STEP)
          head.settle(true)
          continue
        }
        // No turn now: those whose deadline came are refused; the soonest other deadline wakes the loop.
        let wakeAt = at
        let refused = false
        for (const turn of this.#heap) {
          if (turn.done) continue
          if (turn.deadline <= now) {
            turn.done = true
            refused = true
            turn.settle(false)
          } else {
            wakeAt = Math.min(wakeAt, turn.deadline)
          }
        }
        if (refused) continue
        const wake = new AbortController()
        this.#wake = wake
        this.#sleepUntil = wakeAt
        try {
          await this.#clock.sleep(wakeAt - now, wake.signal)
        } catch {
          // Woken: a sooner turn, a cancelled one, a new rate.
        } finally {
          this.#wake = undefined
          this.#sleepUntil = Number.NEGATIVE_INFINITY
        }
        // A clock whose sleep returns without time passing (a simulated clock nobody advances)
        // would make this loop a chain of microtasks that starves the event loop: no timer, no
        // abort and no timeout could ever run. Yield to it before looking again.
        if (this.#clock.now() === now) await new Promise<void>((resolve) => setImmediate(resolve))
      }
    } catch (error) {
      // A clock that throws: every waiting read fails with it rather than hang.
      for (const turn of this.#heap.splice(0)) if (!turn.done) turn.fail(error)
    } finally {
      this.#running = false
    }
  }

  #wakeUp(): void {
    this.#wake?.abort()
  }

  #dropSettled(): void {
    while (this.#heap[0]?.done) this.#pop()
  }

  #before(a: Turn, b: Turn): boolean {
    return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq)
  }

  #push(turn: Turn): void {
    const heap = this.#heap
    heap.push(turn)
    let at = heap.length - 1
    while (at > 0) {
      const parent = (at - 1) >> 1
      if (!this.#before(heap[at]!, heap[parent]!)) break
      ;[heap[at], heap[parent]] = [heap[parent]!, heap[at]!]
      at = parent
    }
  }

  #pop(): void {
    const heap = this.#heap
    const last = heap.pop()!
    if (heap.length === 0) return
    heap[0] = last
    let at = 0
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let first = at
      if (left < heap.length && this.#before(heap[left]!, heap[first]!)) first = left
      if (right < heap.length && this.#before(heap[right]!, heap[first]!)) first = right
      if (first === at) return
      ;[heap[at], heap[first]] = [heap[first]!, heap[at]!]
      at = first
    }
  }
}

function checkRate(perSecond: number): number {
  if (!(perSecond > 0) || !Number.isFinite(perSecond))
    throw new RangeError(`A request rate must be a positive number; got ${perSecond}.`)
  return perSecond
}

const budgets = new WeakMap<Clock, RequestBudget>()

/**
 * The one budget of the waits that run on this clock: the process's with the system clock, one per
 * simulated clock in tests.
 *
 * @param clock The clock the waits run on.
 * @returns Its budget, made on first use at `DEFAULT_MAX_REQUESTS_PER_SECOND`.
 * @example
 * ```ts
 * import { requestBudgetFor, systemClock } from 'proving-kit'
 *
 * console.log(requestBudgetFor(systemClock).perSecond)
 * ```
 */
export function requestBudgetFor(clock: Clock): RequestBudget {
  let budget = budgets.get(clock)
  if (!budget) {
    budget = new RequestBudget(clock)
    budgets.set(clock, budget)
  }
  return budget
}
