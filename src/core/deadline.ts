import { AsyncLocalStorage } from 'node:async_hooks'

/**
 * The deadline of the wait a request is made for. A wait (pollUntil) runs each of its checks
 * inside `withDeadline`, and HttpClient bounds every request made meanwhile (its attempts,
 * their timeouts and the pauses between them) by it, whichever client makes the request and
 * however deep (a token refresh inside a poll included). So a server that trickles one byte
 * every few seconds, or accepts and never answers, cannot keep a wait past its timeout.
 */
const storage = new AsyncLocalStorage<number>()

/** Runs `fn` with requests bounded by `deadline` (ms since the epoch, by the wait's clock); an outer, earlier deadline wins. */
export function withDeadline<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  const outer = storage.getStore()
  return storage.run(outer === undefined ? deadline : Math.min(outer, deadline), fn)
}

/** The deadline requests made now are bounded by, if any. */
export function currentDeadline(): number | undefined {
  return storage.getStore()
}

/**
 * A command's deadline (its `--timeout`): every request made inside `fn` ends by it, attempts and
 * pauses included, while each keeps its own retry policy (inside a wait, `withDeadline`, a read is
 * also tried once: the wait tries again). An outer, earlier bound wins.
 */
const bounds = new AsyncLocalStorage<number>()

export function withBound<T>(deadline: number, fn: () => Promise<T>): Promise<T> {
  const outer = bounds.getStore()
  return bounds.run(outer === undefined ? deadline : Math.min(outer, deadline), fn)
}

/** The time requests made now must end by: the wait's deadline or the command's bound, whichever is first. */
export function currentBound(): number | undefined {
  const wait = storage.getStore()
  const bound = bounds.getStore()
  if (wait === undefined) return bound
  return bound === undefined ? wait : Math.min(wait, bound)
}
