/**
 * The one network rule every client follows (the services' HttpClient, the chain RPCs, the
 * downloads): plain http only to this machine unless the user allows it, and no redirect followed
 * to another origin or to plain http. A redirect's target is a second, unchecked answerer: an RPC
 * or an artifact host that sends the client elsewhere would let that other host give the verdict
 * or the file. Each caller words its own refusal; the rule itself is here once.
 */
import { isLoopback } from '../checks.ts'
import { showUrl } from '../redact.ts'

/** An `http:` URL to a host that is not this machine (text that does not parse is not one). */
export function isPlainHttpToAnotherMachine(url: string | URL): boolean {
  try {
    const parsed = new URL(String(url).trim())
    return parsed.protocol === 'http:' && !isLoopback(parsed.hostname)
  } catch {
    return false
  }
}

/** Whether the rule refuses `url`: plain http to another machine, unless `allowInsecureHttp`. */
export function refusesPlainHttp(url: string | URL, allowInsecureHttp: boolean | undefined): boolean {
  return allowInsecureHttp !== true && isPlainHttpToAnotherMachine(url)
}

/** Whether an HTTP status is a redirect (3xx). */
export function isRedirect(status: number): boolean {
  return status >= 300 && status < 400
}

/**
 * Where a redirect from `from` may lead: the next URL (same origin: same scheme, host and port,
 * so never down to plain http), or why it is refused, in words that end a sentence
 * ("to another origin, https://elsewhere.example"; a URL is followed by a space in messages, or
 * `redact` reads the punctuation as part of it).
 */
export function redirectTarget(from: URL, location: string | undefined): { next: URL } | { refused: string } {
  const next = location === undefined ? null : URL.parse(location, from.href)
  if (!next) return { refused: 'to a location that is not a URL' }
  if (next.origin !== from.origin) {
    const how =
      next.protocol === 'http:' && from.protocol === 'https:' ? 'to plain http on another origin' : 'to another origin'
    return { refused: `${how}, ${showUrl(next)}` }
  }
  return { next }
}

/**
 * What a refused redirect answer is called in a message, the target shown by scheme and host
 * only: "a 307 redirect to http://127.0.0.1:8546".
 */
export function describeRedirect(status: number, location: string | null | undefined, from?: string | URL): string {
  const target = location ? URL.parse(location, from === undefined ? undefined : String(from)) : null
  return `a ${status} redirect to ${target ? showUrl(target) : 'no valid location'}`
}

type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/**
 * A fetch that never follows a redirect (`redirect: 'manual'`): the 3xx answer comes back to the
 * caller, which refuses it (for libraries that call fetch themselves, viem's transport).
 */
export function fetchWithoutRedirects(fetch: FetchLike): FetchLike {
  return (input, init) => fetch(input, { ...init, redirect: 'manual' })
}
