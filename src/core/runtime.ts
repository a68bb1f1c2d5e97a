/**
 * What the core takes from its host instead of importing it: a logger, a clock and sleep that
 * tests and the emulator's simulated time can replace. The GitHub adapter passes @actions/core's
 * logging; the CLI passes stderr; the library default is silent.
 */

export type Logger = {
  debug(message: string): void
  info(message: string): void
  warn(message: string): void
  error(message: string): void
}

export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
}

export type Clock = {
  /** Milliseconds since the epoch. */
  now(): number
  /** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason)
      const timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }, Math.max(0, ms))
      const onAbort = () => {
        clearTimeout(timer)
        reject(signal?.reason)
      }
      signal?.addEventListener('abort', onAbort, { once: true })
    }),
}
