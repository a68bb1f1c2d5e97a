/**
 * What the core takes from its host instead of importing it: a logger, a clock and sleep that
 * tests and the emulator's simulated time can replace. The GitHub adapter passes @actions/core's
 * logging; the CLI passes stderr; the library default is silent.
 */

/** Where the library's warnings and debug lines go; `console` fits. The default everywhere is {@link silentLogger}. */
export type Logger = {
  debug(message: string): void
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

/** A logger that drops everything: the library's default. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
}

/** The time a client reads, sleeps and times requests by; {@link systemClock} unless a test gives another. */
export type Clock = {
  /** Milliseconds since the epoch. */
  now(): number
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
  /**
   * Calls `fire` once `ms` of this clock's time have passed; returns what cancels it. Optional:
   * without it a request's deadline is kept by the host's timers, in real milliseconds. A clock
   * whose time moves only when asked (a test's) gives it, so that a request in flight is cut when
   * that time passes, never by wall time the clock did not count.
   */
  timer?(ms: number, fire: () => void): () => void
}

/** Starts `clock`'s timer (the host's setTimeout when it has none); returns what cancels it. */
export function startTimer(clock: Clock, ms: number, fire: () => void): () => void {
  if (clock.timer) return clock.timer(ms, fire)
  const handle = setTimeout(fire, Math.max(0, ms))
  return () => clearTimeout(handle)
}

/**
 * `ms` of the clock's time in real milliseconds, for timers only the host keeps (undici's): the
 * same for the host's own clock; none for a clock with its own timer, whose time is not the wall's.
 */
export function realMillisecondsOf(clock: Clock, ms: number | undefined): number | undefined {
  return clock.timer ? undefined : ms
}

/** The machine's clock and timers: the library's default. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const timer = setTimeout(
        () => {
          signal?.removeEventListener('abort', onAbort)
          resolve()
        },
        Math.max(0, ms),
      )
      const onAbort = () => {
        clearTimeout(timer)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
    }),
}
