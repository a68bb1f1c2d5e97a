/**
 * The one module of the core that loads undici (~0.1 s of a cold start, more than the rest of a
 * CLI command's modules together). core/http/transport.ts imports it on the first request, so
 * what never talks to a service (`proving --version`, `--help`, `pack`, `inspect`, an input
 * error) never loads it. The library's entry re-exports `defaultDispatcher` from here, so
 * importing 'proving-kit' still gives the shared agent synchronously.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import { type Dispatcher, EnvHttpProxyAgent, request } from 'undici'
import { DEFAULT_CONNECT_MS, onDispatcherLoaded } from './dispatcher-state.ts'

/**
 * undici's `request`, sent on the event loop's next turn: undici gives a connection whose answer was just read back to its pool only
 * then (lib/dispatcher/client-h1.js, `setImmediate(client[kResume])` after a response), and a
 * request sent before would open a new connection (a TCP and TLS handshake) while that one idles.
 * A submission right after its `GET /is-alive` check is such a request.
 *
 * Measured (bench figure 2): undici's entry takes ~80 ms of the first request, its agent
 * and request files alone ~35 ms. They are not loaded by path: undici has no `exports` map, so
 * its file layout is not its API, and a minor version that moves a file would break every
 * installed copy of proving-kit; the 45 ms is a one-time cost, not a share of the upload.
 */
export const undiciRequest = (async (...args: Parameters<typeof request>) => {
  await nextTurn()
  return request(...args)
}) as typeof request

let sharedAgent: EnvHttpProxyAgent | undefined

/**
 * The library's own keep-alive agent, shared by the process, unless a client is given a
 * dispatcher of its own. It honours `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` (either case), as
 * read when it is first used, like curl.
 *
 * @param connectMs The connect timeout of the agent, when this call makes it.
 * @returns The shared agent.
 * @example
 * ```ts
 * import { defaultDispatcher, TaskClient } from 'proving-kit'
 *
 * const tasks = new TaskClient({ baseUrl: 'https://tasks.example', dispatcher: defaultDispatcher() })
 * ```
 */
export function defaultDispatcher(connectMs = DEFAULT_CONNECT_MS): Dispatcher {
  sharedAgent ??= new EnvHttpProxyAgent({
    keepAliveTimeout: 4_000,
    keepAliveMaxTimeout: 60_000,
    connections: 64,
    connect: { timeout: connectMs },
  })
  return sharedAgent
}

/** Closes the shared agent's idle sockets so a short-lived process can exit at once. */
async function closeSharedAgent(): Promise<void> {
  const agent = sharedAgent
  sharedAgent = undefined
  await agent?.close()
}

onDispatcherLoaded(closeSharedAgent)
