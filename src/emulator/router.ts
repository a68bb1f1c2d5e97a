import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { pipeline } from 'node:stream/promises'
import { isLoopback } from '../core/checks.ts'
import { redact, redactUrl } from '../core/redact.ts'
import { jsonTextDepth, MAX_JSON_DEPTH } from '../core/json-limits.ts'
import type { Logger } from '../core/runtime.ts'
import { badRequest, INTERNAL_SERVER_ERROR } from './errors.ts'

/**
 * A tiny router: each service contributes a route table (`{ method, pattern, handler }`), and a
 * handler returns a `Reply` whose status and body are the spec's. Everything a handler cannot
 * get right by itself lives here, once: unknown paths (404) and methods (405), the JSON body's
 * size and depth caps, and turning any exception into the route's 500 body so the server never
 * crashes on a bad request.
 */

export type Reply = {
  status: number
  /** Serialised as JSON; omitted for 204 and file replies. */
  body?: unknown
  /** Sent as is instead of a JSON body (a fault's HTML or plain-text page); give its content-type in `headers`. */
  text?: string
  headers?: Record<string, string>
  /** Streams a file from disk instead of a JSON body. */
  file?: { path: string; contentType: string }
}

export type RouteContext = {
  req: IncomingMessage
  method: string
  /** The path without its query string, percent-decoded per segment into `params`. */
  path: string
  query: URLSearchParams
  params: Record<string, string>
  /** A request header (names are case-insensitive); the first value when repeated. */
  header(name: string): string | undefined
  /** The JSON body (undefined when empty); throws `HttpError` 400 past the caps. */
  json(): Promise<unknown>
  /** Runs `callback` once the answer has been handed to the connection (control calls that stop the server). */
  afterReply(callback: () => void): void
}

export type Handler = (ctx: RouteContext) => Reply | Promise<Reply>

export type Route = {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** `/proving-queries/:id/retry`: literal segments and `:name` parameters. */
  pattern: string
  handler: Handler
  /** The body of a 500 on this route when the spec fixes one (bucket close: `{}`). */
  internalErrorBody?: unknown
  /** Control routes: never intercepted by faults, not written to the request log. */
  control?: boolean
}

/** Thrown by helpers (body parsing, uploads) to answer with a given status and body. */
export class HttpError extends Error {
  override name = 'HttpError'
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: unknown) {
    super(`HTTP ${status}`)
    this.status = status
    this.body = body
  }
}

/**
 * What a fault hook may make of a request before its handler runs (see faults.ts). `delayMs`
 * delays everything (the headers too), except for `delay-body`, where it is the pause between
 * the headers and the body. `fault` names the fault in the request log.
 */
export type Interception = (
  | { kind: 'reply'; reply: Reply; delayMs?: number }
  | { kind: 'error'; delayMs?: number }
  | { kind: 'drop'; delayMs?: number }
  | { kind: 'drop-after-body'; delayMs?: number }
  | { kind: 'drop-after'; delayMs?: number }
  | { kind: 'delay'; delayMs: number }
  | { kind: 'delay-body'; delayMs: number }
  | { kind: 'truncate'; delayMs?: number }
) & { fault?: string }

export type Completed = {
  method: string
  rawUrl: string
  status: number
  route: Route | undefined
  /** The kind of the injected fault that shaped this answer, if any. */
  fault?: string | undefined
}

export type RouterOptions = {
  logger: Logger
  intercept?: (ctx: RouteContext, route: Route) => Interception | undefined
  /** Called once per request when its answer is sent (status 0: the connection was dropped). */
  onCompleted?: (completed: Completed) => void
  /** The emulator's clock: every answer's `Date` header reads it, as a service's reads its own. */
  now?: () => number
}

/**
 * The URL of a request line. A path is read against our own origin, never as a URL of its own:
 * `new URL('//x/is-alive', base)` would take `x` for a host and route `/is-alive`, and `//`
 * alone does not parse at all (it was a 500). An absolute URL (a proxy's form) is read as is.
 */
export function requestTarget(rawUrl: string): URL {
  return rawUrl.startsWith('/')
    ? new URL(`http://emulator.invalid${rawUrl}`)
    : new URL(rawUrl, 'http://emulator.invalid')
}

/** A route of the control API under /_emulator/: no authentication, never a fault's target. */
export function controlRoute(method: Route['method'], pattern: string, handler: Route['handler']): Route {
  return { method, pattern, handler, control: true }
}

export const MAX_JSON_BYTES = 1024 * 1024

type CompiledRoute = Route & { segments: string[] }

export class Router {
  readonly #routes: CompiledRoute[] = []
  readonly #options: RouterOptions

  constructor(options: RouterOptions) {
    this.#options = options
  }

  add(routes: readonly Route[]): this {
    for (const route of routes) this.#routes.push({ ...route, segments: splitPath(route.pattern) })
    return this
  }

  /** Every route served, in the order added (for tests that visit them all). */
  list(): { method: Route['method']; pattern: string; control: boolean }[] {
    return this.#routes.map((route) => ({
      method: route.method,
      pattern: route.pattern,
      control: route.control === true,
    }))
  }

  /** The request handler for `http.createServer`; never throws, never rejects. */
  readonly handle = (req: IncomingMessage, res: ServerResponse): void => {
    if (this.#options.now) res.setHeader('date', new Date(this.#options.now()).toUTCString())
    void this.#dispatch(req, res).catch((error: unknown) => {
      // Never the raw URL: the L2 endpoints carry the API key in it.
      this.#options.logger.error(
        `emulator: failed to answer ${req.method} ${redactUrl(req.url ?? '/')}: ${redact(String(error))}`,
      )
      if (!res.headersSent) sendJson(res, 500, INTERNAL_SERVER_ERROR)
      else res.destroy()
    })
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase()
    const rawUrl = req.url ?? '/'
    const url = requestTarget(rawUrl)
    const found = this.#match(method, url.pathname)
    let route: Route | undefined
    const complete = (status: number) => this.#options.onCompleted?.({ method, rawUrl, status, route })

    if (found.kind === 'none') {
      await send(res, { status: 404, body: { message: `No route for ${method} ${url.pathname}`, error: 'NOT_FOUND' } })
      return complete(404)
    }
    if (found.kind === 'method') {
      await send(res, {
        status: 405,
        headers: { allow: found.allowed.join(', ') },
        body: {
          message: `${method} is not allowed on ${url.pathname}; use ${found.allowed.join(' or ')}`,
          error: 'METHOD_NOT_ALLOWED',
        },
      })
      return complete(405)
    }
    route = found.route
    if (route.control) {
      const refusal = controlRefusal(req, method)
      if (refusal) {
        await send(res, { status: 403, body: { message: refusal, error: 'FORBIDDEN' } })
        return complete(403)
      }
    }
    const ctx = context(req, res, method, url, found.params)
    const interception = route.control ? undefined : this.#options.intercept?.(ctx, route)
    const fault = interception?.fault ?? interception?.kind
    const completeFault = (status: number) => this.#options.onCompleted?.({ method, rawUrl, status, route, fault })
    if (interception?.delayMs && interception.kind !== 'delay-body') await sleep(interception.delayMs)
    if (interception?.kind === 'drop') {
      resetConnection(req)
      return completeFault(0)
    }
    if (interception?.kind === 'drop-after-body') {
      // The whole request arrives, then the connection is reset: nothing was processed.
      try {
        for await (const _chunk of req) void _chunk
      } catch {
        // The client went away first: nothing more to drop.
      }
      resetConnection(req)
      return completeFault(0)
    }
    if (interception?.kind === 'reply') {
      await send(res, interception.reply)
      return completeFault(interception.reply.status)
    }

    let reply: Reply
    try {
      if (interception?.kind === 'error') throw new Error('fault injected through /_emulator/faults')
      reply = await route.handler(ctx)
    } catch (error) {
      if (error instanceof HttpError) {
        reply = { status: error.status, body: error.body }
      } else {
        this.#options.logger.error(
          `emulator: ${method} ${url.pathname} failed: ${redact(error instanceof Error ? (error.stack ?? error.message) : String(error))}`,
        )
        reply = { status: 500, body: route.internalErrorBody ?? INTERNAL_SERVER_ERROR }
      }
    }
    if (interception?.kind === 'drop-after') {
      // The work is done but the answer is lost: what a client sees when a gateway drops a reply.
      req.resume()
      resetConnection(req)
      return completeFault(0)
    }
    if (interception?.kind === 'delay-body' || interception?.kind === 'truncate') {
      req.resume()
      await sendDisturbed(
        res,
        reply,
        interception.kind === 'truncate' ? { truncate: true } : { pauseMs: interception.delayMs },
      )
      return completeFault(reply.status)
    }
    await send(res, reply)
    completeFault(reply.status)
  }

  #match(
    method: string,
    path: string,
  ):
    | { kind: 'none' }
    | { kind: 'method'; allowed: string[] }
    | { kind: 'found'; route: CompiledRoute; params: Record<string, string> } {
    const segments = splitPath(path)
    const allowed: string[] = []
    let best: { route: CompiledRoute; params: Record<string, string>; literals: number } | undefined
    for (const route of this.#routes) {
      const params = matchSegments(route.segments, segments)
      if (!params) continue
      if (route.method !== method) {
        if (!allowed.includes(route.method)) allowed.push(route.method)
        continue
      }
      // A literal segment beats a parameter: POST /buckets/close is not POST /buckets/:id.
      const literals = route.segments.filter((segment) => !segment.startsWith(':')).length
      if (!best || literals > best.literals) best = { route, params, literals }
    }
    if (best) return { kind: 'found', route: best.route, params: best.params }
    return allowed.length ? { kind: 'method', allowed } : { kind: 'none' }
  }
}

function splitPath(path: string): string[] {
  return path.split('/').filter((segment) => segment.length > 0)
}

/** Matches a request path against a compiled pattern; the decoded parameters, or null. */
export function matchSegments(pattern: readonly string[], segments: readonly string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null
  const params: Record<string, string> = {}
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!
    const actual = segments[i]!
    if (expected.startsWith(':')) {
      try {
        params[expected.slice(1)] = decodeURIComponent(actual)
      } catch {
        return null
      }
    } else if (expected !== actual) {
      return null
    }
  }
  return params
}

/** Does a path match a pattern (`/proving-queries/:id/retry`)? Used by faults too. */
export function pathMatches(pattern: string, path: string): boolean {
  return matchSegments(splitPath(pattern), splitPath(path)) !== null
}

function context(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  url: URL,
  params: Record<string, string>,
): RouteContext {
  let body: Promise<unknown> | undefined
  return {
    afterReply(callback) {
      res.once('finish', callback)
    },
    req,
    method,
    path: url.pathname,
    query: url.searchParams,
    params,
    header(name) {
      const value = req.headers[name.toLowerCase()]
      return Array.isArray(value) ? value[0] : value
    },
    json() {
      body ??= readJson(req)
      return body
    },
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_JSON_BYTES) {
      // Stop reading: the rest is discarded by Node once the answer is sent.
      throw new HttpError(400, badRequest(`The JSON body is larger than ${MAX_JSON_BYTES} bytes.`))
    }
    chunks.push(chunk as Buffer)
  }
  const text = Buffer.concat(chunks).toString('utf8')
  if (text.trim().length === 0) return undefined
  // Checked before parsing, so a hostile body cannot make the parser recurse deeply.
  if (jsonTextDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    throw new HttpError(400, badRequest(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`))
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new HttpError(400, badRequest(`The body is not valid JSON: ${(error as Error).message}`))
  }
}

async function send(res: ServerResponse, reply: Reply): Promise<void> {
  if (reply.file) {
    res.writeHead(reply.status, { 'content-type': reply.file.contentType, ...reply.headers })
    await pipeline(createReadStream(reply.file.path), res)
    return
  }
  if (reply.text !== undefined) {
    res.writeHead(reply.status, { 'content-length': String(Buffer.byteLength(reply.text)), ...reply.headers })
    res.end(reply.text)
    return
  }
  if (reply.body === undefined) {
    res.writeHead(reply.status, reply.headers)
    res.end()
    return
  }
  sendJson(res, reply.status, reply.body, reply.headers)
}

/** A TCP reset where the platform can send one (what a crashed peer or a proxy timeout looks like). */
function resetConnection(req: IncomingMessage): void {
  const socket = req.socket as IncomingMessage['socket'] & { resetAndDestroy?: () => void }
  if (typeof socket.resetAndDestroy === 'function' && !socket.destroyed) socket.resetAndDestroy()
  else socket.destroy()
}

/**
 * A fault's answer: the headers at once (with the full content-length), then either the body
 * after a pause, or only half of it and a closed connection.
 */
async function sendDisturbed(
  res: ServerResponse,
  reply: Reply,
  how: { pauseMs?: number; truncate?: boolean },
): Promise<void> {
  let bytes: Buffer
  let headers: Record<string, string>
  if (reply.file) {
    bytes = await readFile(reply.file.path)
    headers = { 'content-type': reply.file.contentType, ...reply.headers }
  } else if (reply.text !== undefined) {
    bytes = Buffer.from(reply.text)
    headers = { ...reply.headers }
  } else {
    bytes = Buffer.from(reply.body === undefined ? '' : JSON.stringify(reply.body))
    headers =
      reply.body === undefined
        ? { ...reply.headers }
        : { 'content-type': 'application/json; charset=utf-8', ...reply.headers }
  }
  res.writeHead(reply.status, { ...headers, 'content-length': String(bytes.length) })
  res.flushHeaders()
  if (how.truncate) {
    const half = Math.floor(bytes.length / 2)
    if (half > 0) await new Promise<void>((resolve) => res.write(bytes.subarray(0, half), () => resolve()))
    res.socket?.destroy()
    return
  }
  await sleep(how.pauseMs ?? 0)
  if (!res.destroyed) res.end(bytes)
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers?: Record<string, string>): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(text)),
    ...headers,
  })
  res.end(text)
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/**
 * What a request that changes the control API's state must carry unless its body is JSON: a header
 * no browser sends on its own, so a page can add it only to a same-origin request (another origin
 * would need a CORS preflight, which the emulator never grants). The console's script sends it.
 */
export const CONTROL_HEADER = 'x-emulator-control'

/**
 * The control API changes and reveals everything, so a web page must not reach it: a request
 * whose Host is not this machine (DNS rebinding: a page of attacker.example resolving to
 * 127.0.0.1 reads /_emulator/state), one sent by a page of any other origin than the emulator's
 * own (scheme, host and port: a page on another loopback port is another origin), and a request
 * that changes state (any method but GET and HEAD) which is neither JSON (`Content-Type:
 * application/json`) nor marked with {@link CONTROL_HEADER} are all refused with 403. So no
 * simple cross-origin request (a `<form method=POST>`, a `no-cors` or `text/plain` fetch, which
 * need no CORS preflight) reaches a control route, with a body or without.
 */
function controlRefusal(req: IncomingMessage, method: string): string | undefined {
  const host = hostnameOf(req.headers.host)
  if (host === undefined || !isLoopback(host)) {
    return `The control API answers only requests addressed to this machine (Host localhost, 127.0.0.1 or [::1]); got Host ${JSON.stringify(String(req.headers.host ?? '').slice(0, 80))}.`
  }
  const origin = req.headers.origin
  if (origin === 'null') return 'The control API refuses requests from sandboxed or file pages (Origin: null).'
  if (origin !== undefined) {
    const own = ownOrigin(req)
    if (own === undefined || originOf(origin) !== own) {
      return `The control API refuses requests from web pages of another origin than its own (${own}); got ${JSON.stringify(origin.slice(0, 80))}.`
    }
  }
  if (method !== 'GET' && method !== 'HEAD') {
    const type = String(req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase()
    if (type !== 'application/json' && req.headers[CONTROL_HEADER] === undefined) {
      return `The control API takes JSON bodies only (Content-Type: application/json; without a body, that or a ${CONTROL_HEADER} header); got ${JSON.stringify(type || '(none)')}.`
    }
  }
  return undefined
}

/** The emulator's own origin as this request reached it: its scheme and its Host (checked loopback). */
function ownOrigin(req: IncomingMessage): string | undefined {
  const scheme = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http'
  return originOf(`${scheme}://${req.headers.host}`)
}

/** An origin in its serialized form (default port dropped, host lowercased), or undefined. */
function originOf(text: string): string | undefined {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined
  } catch {
    return undefined
  }
}

function hostnameOf(hostHeader: string | undefined): string | undefined {
  if (!hostHeader) return undefined
  try {
    return new URL(`http://${hostHeader}`).hostname
  } catch {
    return undefined
  }
}
