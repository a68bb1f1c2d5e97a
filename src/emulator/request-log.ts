import { REDACTED, redactUrl } from '../core/redact.ts'

/**
 * The requests the emulator answered, for tests that count calls ("exactly one submission",
 * "no poll faster than 1 s"). Paths are logged with credential-carrying query parameters masked
 * (the L2 endpoints take `apiKey` in the query string): the log never holds a key.
 */

export type LoggedRequest = {
  /** ISO 8601, by the emulator's clock. */
  at: string
  method: string
  /** Path and query string, secrets masked. */
  path: string
  /** 0 when the connection was dropped on purpose (a fault). */
  status: number
}

const MAX_ENTRIES = 10_000

export class RequestLog {
  #entries: LoggedRequest[] = []

  add(entry: { at: number; method: string; rawUrl: string; status: number }): void {
    this.#entries.push({ at: new Date(entry.at).toISOString(), method: entry.method, path: maskPath(entry.rawUrl), status: entry.status })
    // Keep the newest: a long bench must not grow the emulator without bound.
    if (this.#entries.length > MAX_ENTRIES) this.#entries.splice(0, this.#entries.length - MAX_ENTRIES)
  }

  list(): LoggedRequest[] {
    return [...this.#entries]
  }

  clear(): void {
    this.#entries = []
  }
}

export function maskPath(rawUrl: string): string {
  const masked = new URL(redactUrl(new URL(rawUrl, 'http://emulator.invalid')))
  return `${masked.pathname}${masked.search.replaceAll('%2A%2A%2A', REDACTED)}`
}
