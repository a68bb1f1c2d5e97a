import { REDACTED, redactUrl } from '../core/redact.ts'
import { requestTarget } from './router.ts'

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
  /** The kind of the injected fault that shaped the answer (absent for a normal answer). */
  fault?: string
}

const MAX_ENTRIES = 10_000

export class RequestLog {
  #entries: LoggedRequest[] = []
  /** Every request since the last clear, by method and path (no query string): not trimmed, so a long run's counts are whole. */
  #counts = new Map<string, number>()

  add(entry: { at: number; method: string; rawUrl: string; status: number; fault?: string | undefined }): void {
    this.#entries.push({
      at: new Date(entry.at).toISOString(),
      method: entry.method,
      path: maskPath(entry.rawUrl),
      status: entry.status,
      ...(entry.fault ? { fault: entry.fault } : {}),
    })
    const route = `${entry.method} ${requestTarget(entry.rawUrl).pathname}`
    this.#counts.set(route, (this.#counts.get(route) ?? 0) + 1)
    // Keep the newest: a long bench must not grow the emulator without bound. Trimmed in
    // batches: dropping the oldest entry on every request moved 10,000 entries each time.
    if (this.#entries.length >= 2 * MAX_ENTRIES) this.#entries = this.#entries.slice(-MAX_ENTRIES)
  }

  list(): LoggedRequest[] {
    return this.#entries.slice(-MAX_ENTRIES)
  }

  /** How many requests each route got since the last clear (`GET /x/{id}` counted by its path). */
  counts(): Record<string, number> {
    return Object.fromEntries(this.#counts)
  }

  clear(): void {
    this.#entries = []
    this.#counts.clear()
  }
}

export function maskPath(rawUrl: string): string {
  // No query string, nothing to mask: one parse instead of three (every status read comes here).
  if (!rawUrl.includes('?')) return requestTarget(rawUrl).pathname
  const masked = new URL(redactUrl(requestTarget(rawUrl)))
  return `${masked.pathname}${masked.search.replaceAll('%2A%2A%2A', REDACTED)}`
}
