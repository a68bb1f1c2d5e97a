import type { Clock } from '../../src/core/runtime.ts'

/**
 * A clock whose time moves only when the code under test sleeps. Every sleep is recorded, so a
 * test can read the exact backoff or polling schedule, and `onSleep` lets a test act at the
 * moment a sleep starts (abort a signal, change what the fake service answers).
 *
 * A sleep yields to the event loop once (setImmediate) so that an abort fired from `onSleep`
 * or from outside is seen, as with a real timer.
 *
 * Its timers (a request's deadline) fire when its time passes them, by a sleep or `advance`,
 * never by wall time: a request in flight while the clock stands still is not cut, however
 * slowly a loaded machine answers it.
 */
export class FakeClock implements Clock {
  #now: number
  #timers = new Set<{ at: number; fire: () => void }>()
  /** Every sleep requested, in order, in milliseconds. */
  readonly sleeps: number[] = []
  onSleep: ((ms: number) => void) | undefined

  constructor(start: number = Date.parse('2025-06-01T12:00:00.000Z')) {
    this.#now = start
  }

  now(): number {
    return this.#now
  }

  advance(ms: number): void {
    this.#now += ms
    this.#fireDue()
  }

  timer(ms: number, fire: () => void): () => void {
    const entry = { at: this.#now + Math.max(0, ms), fire }
    this.#timers.add(entry)
    return () => this.#timers.delete(entry)
  }

  #fireDue(): void {
    for (const entry of [...this.#timers]) {
      if (entry.at > this.#now) continue
      this.#timers.delete(entry)
      entry.fire()
    }
  }

  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason
    this.sleeps.push(ms)
    this.onSleep?.(ms)
    await new Promise<void>((resolve) => setImmediate(resolve))
    if (signal?.aborted) throw signal.reason
    this.#now += Math.max(0, ms)
    this.#fireDue()
  }

  /** Sum of all sleeps so far. */
  get slept(): number {
    return this.sleeps.reduce((sum, ms) => sum + ms, 0)
  }
}
