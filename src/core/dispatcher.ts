/**
 * The one module of the core that loads undici (~0.1-0.15 s of a cold start, more than the
 * rest of a CLI command's modules together). core/http.ts imports it on its first request, so
 * what never talks to a service (`proving --version`, `--help`, `pack`, `inspect`, an input
 * error) never loads it. The library's entry re-exports `defaultDispatcher` from here, so
 * importing 'proving-kit' still gives the shared agent synchronously.
 */
import { type Dispatcher, EnvHttpProxyAgent, request } from 'undici'
import { DEFAULT_CONNECT_MS, onDispatcherLoaded } from './dispatcher-state.ts'

export { request as undiciRequest }

let sharedAgent: EnvHttpProxyAgent | undefined

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
