/**
 * What core/http.ts needs to know about core/dispatcher.ts without importing it (which would load
 * undici): the default connect timeout, and how to close the shared agent if one was made.
 */

/** How long connecting may take by default (HttpTimeouts.connectMs). */
export const DEFAULT_CONNECT_MS = 10_000

let closeShared: (() => Promise<void>) | undefined

/** Called by core/dispatcher.ts when it loads: how to close its shared agent. */
export function onDispatcherLoaded(close: () => Promise<void>): void {
  closeShared = close
}

/**
 * Closes the shared agent's idle sockets so a short-lived process can exit at once. Nothing to do
 * (and nothing loaded) when no request was made through it.
 */
export async function closeDefaultDispatcher(): Promise<void> {
  await closeShared?.()
}
