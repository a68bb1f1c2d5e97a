/**
 * undici's request and the dispatcher it goes through. undici loads with the first request
 * (../dispatcher.ts), not with the HTTP modules; later requests reuse that import's promise
 * rather than asking the module loader again.
 */
import type { Dispatcher } from 'undici'

export type Transport = { undiciRequest: typeof import('undici').request; dispatcher: Dispatcher }

let dispatcherModule: Promise<typeof import('../dispatcher.ts')> | undefined
const loadDispatcher = () => (dispatcherModule ??= import('../dispatcher.ts'))

/** The caller's dispatcher, or (none given) the shared agent, made on first use. */
export async function transportFor(dispatcher: Dispatcher | undefined, connectMs: number): Promise<Transport> {
  const { undiciRequest, defaultDispatcher } = await loadDispatcher()
  return { undiciRequest, dispatcher: dispatcher ?? defaultDispatcher(connectMs) }
}

/** undici's two silences (waiting for the headers, then within the body), each cut to the time a wait has left. */
export function timeoutsWithin(
  headersMs: number,
  bodyMs: number,
  remainingMs: number | undefined,
): { headersTimeout: number; bodyTimeout: number } {
  return remainingMs === undefined
    ? { headersTimeout: headersMs, bodyTimeout: bodyMs }
    : { headersTimeout: Math.min(headersMs, remainingMs), bodyTimeout: Math.min(bodyMs, remainingMs) }
}

/** The smaller of two limits, either of which may be absent. */
export function minDefined(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b)
}
