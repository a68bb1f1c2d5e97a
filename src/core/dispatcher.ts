/**
 * The one module of the core that loads undici. core/http.ts imports it on its first request, so
 * what never talks to a service (`proving --version`, `--help`, `pack`, `inspect`, an input
 * error) never loads it. The library's entry re-exports `defaultDispatcher` from here, so
 * importing 'proving-kit' still gives the shared agent synchronously.
 *
 * Only the parts of undici the clients use: its agent (with the proxy variables) and its
 * dispatchers' methods (`request`; `connect`, with which its ProxyAgent opens a tunnel), from
 * their own files. undici's entry loads all of undici (fetch, WebSocket, the cache, the mocks,
 * ...): ~80 ms of the first request, against ~35 ms for these parts, and that first request is
 * inside what a user waits for (an upload's, bench figure 2). They are the same modules as the
 * entry's (undici has no `exports` map; its entry requires these very files), so a caller's
 * undici and ours share them.
 */
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Dispatcher, request as UndiciRequest } from 'undici'
import api from 'undici/lib/api/index.js'
import UndiciDispatcher from 'undici/lib/dispatcher/dispatcher.js'
import EnvHttpProxyAgent from 'undici/lib/dispatcher/env-http-proxy-agent.js'
import { DEFAULT_CONNECT_MS, onDispatcherLoaded } from './dispatcher-state.ts'

// What undici's entry does as it loads (index.js: `Object.assign(Dispatcher.prototype, api)`):
// its dispatchers get their methods. Its ProxyAgent calls `connect` on its own client to open a
// tunnel: without them a request through a proxy fails (`this[kClient].connect is not a function`).
Object.assign(UndiciDispatcher.prototype, api)

/**
 * undici's `request(url, options)` with `options.dispatcher` (always given here): the request
 * goes to that dispatcher as its `request` method would send it. It goes out on the event
 * loop's next turn: undici gives a connection whose answer was just read back to its pool only
 * then (lib/dispatcher/client-h1.js, `setImmediate(client[kResume])` after a response), and a
 * request sent before would open a new connection (a TCP and TLS handshake) while that one idles.
 * A submission right after its `GET /is-alive` check is such a request.
 */
export const undiciRequest = (async (url: URL, options: Parameters<typeof UndiciRequest>[1] & { dispatcher: Dispatcher }) => {
  await nextTurn()
  const { dispatcher, ...rest } = options
  return api.request.call(dispatcher, { ...rest, origin: url.origin, path: `${url.pathname}${url.search}`, method: rest.method || (rest.body ? 'PUT' : 'GET') })
}) as unknown as typeof UndiciRequest

let sharedAgent: InstanceType<typeof EnvHttpProxyAgent> | undefined

/**
 * One keep-alive agent for the process unless the caller brings its own dispatcher. It honours
 * HTTPS_PROXY, HTTP_PROXY and NO_PROXY (either case) as read when it is first used, like curl:
 * runners behind a corporate proxy reach the services through it.
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
