import type { Clock } from '../core/runtime.ts'

/**
 * The emulator's sense of time. Query progress is computed from timestamps on every read, never
 * by timers, so a simulated clock that jumps hours ahead moves every query along at once, and a
 * restarted emulator picks up where the stored timestamps say it is.
 */
export type EmulatorClock = {
  /** Whether time moves only by `advance` (a simulated clock) or by itself (the real one). */
  readonly simulated: boolean
  /** Milliseconds since the epoch. */
  now(): number
  /** Moves simulated time forward; a real clock refuses (nothing can move real time). */
  advance(ms: number): void
}

/**
 * The real time, for an emulator whose queries progress as the wall clock goes: the emulator's default.
 *
 * @returns The clock; its `advance` throws (nothing can move real time).
 * @example
 * ```ts
 * import { realClock, startEmulator } from 'proving-kit/emulator'
 *
 * const emulator = await startEmulator({ clock: realClock() })
 * ```
 */
export function realClock(): EmulatorClock {
  return {
    simulated: false,
    now: () => Date.now(),
    advance() {
      throw new Error('The emulator runs on real time; start it with simulatedClock() to advance time.')
    },
  }
}

/**
 * Time that stands still until `advance` is called, for an emulator a test moves by hand.
 *
 * @param startMs Where the clock starts, in ms since the epoch. Default: now.
 * @returns The clock; `advance(ms)` moves it forward.
 * @example
 * ```ts
 * import { simulatedClock, startEmulator } from 'proving-kit/emulator'
 *
 * const clock = simulatedClock()
 * const emulator = await startEmulator({ clock })
 * clock.advance(60 * 60_000) // every query an hour further
 * ```
 */
export function simulatedClock(startMs: number = Date.now()): EmulatorClock {
  let now = startMs
  return {
    simulated: true,
    now: () => now,
    advance(ms: number) {
      if (!Number.isFinite(ms) || ms < 0)
        throw new RangeError(`Cannot advance the clock by ${ms} ms; give a number >= 0.`)
      now += ms
    },
  }
}

/**
 * A client {@link Clock} over a simulated emulator clock: sleeping advances the simulated time
 * instead of waiting, so a client's hours-long wait against the emulator completes in
 * milliseconds. Give it to a client's `clock` option in tests.
 *
 * @param clock A simulated emulator clock.
 * @returns The client's clock (the real emulator clock is refused with an Error).
 * @example
 * ```ts
 * import { ProvingClient } from 'proving-kit'
 * import { clientClockFor, simulatedClock, startEmulator } from 'proving-kit/emulator'
 *
 * const clock = simulatedClock()
 * const emulator = await startEmulator({ clock, apiKeys: ['test-key'] })
 * const client = new ProvingClient({ baseUrl: emulator.url, apiKey: 'test-key', clock: clientClockFor(clock) })
 * const { provingQueryId } = await client.submitPie({ pieZip: 'build/pie.zip' })
 * await client.waitForQuery(provingQueryId) // simulated minutes, real milliseconds
 * await emulator.close()
 * ```
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
