import type { Clock } from '../core/runtime.ts'

/**
 * The emulator's sense of time. Query progress is computed from timestamps on every read, never
 * by timers, so a simulated clock that jumps hours ahead moves every query along at once, and a
 * restarted emulator picks up where the stored timestamps say it is.
 */
export type EmulatorClock = {
  readonly simulated: boolean
  /** Milliseconds since the epoch. */
  now(): number
  /** Moves simulated time forward; a real clock refuses (nothing can move real time). */
  advance(ms: number): void
}

export function realClock(): EmulatorClock {
  return {
    simulated: false,
    now: () => Date.now(),
    advance() {
      throw new Error('The emulator runs on real time; start it with simulatedClock() to advance time.')
    },
  }
}

/** Time that stands still until `advance` is called; starts at `startMs` (default: now). */
export function simulatedClock(startMs: number = Date.now()): EmulatorClock {
  let now = startMs
  return {
    simulated: true,
    now: () => now,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`Cannot advance the clock by ${ms} ms; give a number >= 0.`)
      now += ms
    },
  }
}

/**
 * A client-side `Clock` over a simulated emulator clock: sleeping advances simulated time instead
 * of waiting, so a client's hours-long wait against the emulator completes in milliseconds. Give
 * it to the ProvingClient (`clock:`) in tests and benches.
 */
export function clientClockFor(clock: EmulatorClock): Clock {
  if (!clock.simulated) throw new Error('clientClockFor needs a simulated emulator clock.')
  return {
    now: () => clock.now(),
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason)
        clock.advance(Math.max(0, ms))
        // Yield to the event loop so the request in flight and other callbacks still run.
        setImmediate(resolve)
      }),
  }
}
