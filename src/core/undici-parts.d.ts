/**
 * The files of undici that core/dispatcher.ts loads instead of its entry (which loads all of
 * undici), typed as the entry types what they export.
 */
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import type * as undici from 'undici'
  const EnvHttpProxyAgent: typeof undici.EnvHttpProxyAgent
  export default EnvHttpProxyAgent
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici'
  /** undici's `Dispatcher#request`, called with the dispatcher as `this`. */
  export default function request(this: Dispatcher, options: Dispatcher.RequestOptions<unknown>): Promise<Dispatcher.ResponseData<unknown>>
}
