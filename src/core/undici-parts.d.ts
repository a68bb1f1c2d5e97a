/**
 * The files of undici that core/dispatcher.ts loads instead of its entry (which loads all of
 * undici), typed as the entry types what they export.
 */
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import type * as undici from 'undici'
  const EnvHttpProxyAgent: typeof undici.EnvHttpProxyAgent
  export default EnvHttpProxyAgent
}

declare module 'undici/lib/dispatcher/dispatcher.js' {
  import type * as undici from 'undici'
  const Dispatcher: typeof undici.Dispatcher
  export default Dispatcher
}

declare module 'undici/lib/api/index.js' {
  import type { Dispatcher } from 'undici'
  /** The methods undici's entry gives every dispatcher (`Dispatcher#request`, ...), each called with the dispatcher as `this`. */
  const api: {
    request(this: Dispatcher, options: Dispatcher.RequestOptions<unknown>): Promise<Dispatcher.ResponseData<unknown>>
    stream: Dispatcher['stream']
    pipeline: Dispatcher['pipeline']
    upgrade: Dispatcher['upgrade']
    connect: Dispatcher['connect']
  }
  export default api
}
