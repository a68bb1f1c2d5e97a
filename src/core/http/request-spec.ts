/** What a request is (its path, query, body, schema, limits) and what it answers. */
import type { Readable } from 'node:stream'
import type { z } from 'zod'
import type { RetryPolicy } from './config.ts'

export type QueryValue = string | number | boolean | undefined | null

export type RequestBody = {
  stream: Readable | AsyncIterable<Uint8Array>
  headers: Record<string, string>
  /** Called once the request is over, whatever its outcome. */
  release?: (() => void) | undefined
}

/**
 * What a body factory is told: `ownDispatcher` when the request goes through the library's own
 * agent rather than a caller's dispatcher (a multipart body reuses its read buffers only then).
 */
export type BodyContext = { ownDispatcher: boolean }

export type RequestSpec<T> = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD'
  path: string
  query?: Record<string, QueryValue> | undefined
  headers?: Record<string, string | undefined> | undefined
  /** A JSON body. */
  json?: unknown
  /** A streamed body; a factory so that a retry can open it again. */
  body?: ((context: BodyContext) => RequestBody) | undefined
  /**
   * Validates and types a successful body. A promise of it is awaited only once a successful
   * answer is in: an upload can start while the schema's module is still loading.
   */
  schema?: z.ZodType<T> | Promise<z.ZodType<T>> | undefined
  /** Statuses that count as success; any 2xx by default. */
  successStatuses?: readonly number[] | undefined
  signal?: AbortSignal | undefined
  /** Overrides the headers timeout (uploads of large files want more). */
  headersTimeoutMs?: number | undefined
  /** Overrides the retry policy for this request. */
  retry?: Partial<RetryPolicy> | undefined
  /**
   * Whether sending the request twice is harmless. Defaults to true for GET and HEAD; a POST
   * that only reads (a JSON-RPC call) sets it to get the same retries.
   */
  idempotent?: boolean | undefined
  /** A short name of the operation for messages: "get query q-1". */
  operation?: string | undefined
  /** The largest successful body read (bytes); MAX_JSON_BODY_BYTES by default. */
  maxBodyBytes?: number | undefined
  /**
   * No attempt, timeout or pause runs past this time (ms since the epoch, by the client's
   * clock). A wait's deadline applies on its own (see ./deadline.ts); the earlier one wins.
   */
  deadline?: number | undefined
}

export type HttpResponse<T> = {
  status: number
  headers: Record<string, string | string[] | undefined>
  data: T
  attempts: number
}
