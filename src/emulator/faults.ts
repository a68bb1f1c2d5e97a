import { randomUUID } from 'node:crypto'
import type { EmulatorContext } from './context.ts'
import { type Interception, pathMatches, type RouteContext } from './router.ts'
import type { Fault, FaultKind } from './state.ts'

/**
 * Faults injected through the control API (docs/emulator.md, "Fault injection"): the next
 * request(s) matching a method and a path pattern get something else than the route's answer:
 *
 * - `error`: the handler throws, so the answer is the route's own 500 body;
 * - `status`: a chosen status, headers (`Retry-After`, ...) and body, JSON or raw text, without
 *   running the handler; `html-502` and `gateway-404` are two ready-made non-JSON answers;
 * - `delay`: the answer (headers included) comes `delayMs` late; `delay-body`: the headers come
 *   at once, the body `delayMs` later;
 * - `drop`: the connection is reset before the request body is read; `drop-after-body`: after it
 *   is read, without processing it; `drop-after`: after the request was processed (the answer
 *   is lost: what makes a submission ambiguous);
 * - `truncate`: the route's answer is cut halfway (the full `content-length` is announced).
 *
 * `times` requests are hit after `skip` matching ones went through untouched. Later services add
 * their routes to the same server and get the same faults. Restarting the whole emulator is a
 * control call of its own (`POST /_emulator/restart`, see control.ts).
 */

export const FAULT_KINDS: readonly FaultKind[] = [
  'error',
  'status',
  'html-502',
  'gateway-404',
  'delay',
  'delay-body',
  'drop',
  'drop-after-body',
  'drop-after',
  'truncate',
]

/** What an nginx in front of a crashed service answers. */
export const HTML_502_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n'
/** What Go's http.ServeMux (many gateways and ingress controllers) answers for an unknown path. */
export const GATEWAY_404_TEXT = '404 page not found\n'

const MAX_TIMES = 1_000_000

/** The router's hook: consumes the first matching fault, if any. */
export function faultInterceptor(emulator: EmulatorContext) {
  return (ctx: RouteContext): Interception | undefined => {
    const faults = emulator.store.state.faults
    const index = faults.findIndex((fault) => matches(fault, ctx))
    if (index < 0) return undefined
    const fault = faults[index]!
    if ((fault.skip ?? 0) > 0) {
      fault.skip--
      emulator.store.save()
      return undefined
    }
    fault.remaining--
    if (fault.remaining <= 0) faults.splice(index, 1)
    emulator.store.save()
    return interceptionOf(fault)
  }
}

function matches(fault: Fault, ctx: RouteContext): boolean {
  if (fault.method && fault.method !== ctx.method) return false
  return fault.path === '*' || pathMatches(fault.path, ctx.path)
}

function interceptionOf(fault: Fault): Interception {
  const delayMs = fault.delayMs
  const headers = fault.headers ?? undefined
  switch (fault.kind) {
    case 'status': {
      const status = fault.status ?? 500
      if (typeof fault.body === 'string') {
        const contentType = fault.contentType ?? 'text/plain; charset=utf-8'
        return { kind: 'reply', reply: { status, text: fault.body, headers: { 'content-type': contentType, ...headers } }, delayMs, fault: fault.kind }
      }
      return { kind: 'reply', reply: { status, body: fault.body ?? {}, headers }, delayMs, fault: fault.kind }
    }
    case 'html-502':
      return {
        kind: 'reply',
        reply: { status: fault.status ?? 502, text: HTML_502_PAGE, headers: { 'content-type': 'text/html', server: 'nginx', ...headers } },
        delayMs,
        fault: fault.kind,
      }
    case 'gateway-404':
      return {
        kind: 'reply',
        reply: {
          status: fault.status ?? 404,
          text: GATEWAY_404_TEXT,
          headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', ...headers },
        },
        delayMs,
        fault: fault.kind,
      }
    case 'delay':
      return { kind: 'delay', delayMs, fault: fault.kind }
    case 'delay-body':
      return { kind: 'delay-body', delayMs, fault: fault.kind }
    default:
      return { kind: fault.kind, delayMs, fault: fault.kind }
  }
}

/** A fault from the control API's JSON body, or the problem with it. */
export function parseFault(body: unknown): Fault | string {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'The body must be a JSON object.'
  const input = body as Record<string, unknown>
  if (typeof input.path !== 'string' || !(input.path.startsWith('/') || input.path === '*')) {
    return 'path is required: a path or route pattern starting with "/", or "*" for every route.'
  }
  if (input.path.startsWith('/_emulator')) return 'path must not be a control route: faults never apply to /_emulator/.'
  const kind = input.kind ?? (input.status === undefined ? 'error' : 'status')
  if (typeof kind !== 'string' || !(FAULT_KINDS as readonly string[]).includes(kind)) return `kind must be one of ${FAULT_KINDS.join(', ')}.`
  if (input.method !== undefined && typeof input.method !== 'string') return 'method must be a string.'
  if (input.status !== undefined && !(Number.isInteger(input.status) && (input.status as number) >= 100 && (input.status as number) <= 599)) {
    return 'status must be an HTTP status (100-599).'
  }
  if (input.status !== undefined && !['status', 'html-502', 'gateway-404'].includes(kind)) {
    return `status goes with kind status, html-502 or gateway-404, not ${kind}.`
  }
  const times = input.times ?? 1
  if (!Number.isInteger(times) || (times as number) < 1 || (times as number) > MAX_TIMES) return `times must be a whole number from 1 to ${MAX_TIMES}.`
  const skip = input.skip ?? 0
  if (!Number.isInteger(skip) || (skip as number) < 0 || (skip as number) > MAX_TIMES) return `skip must be a whole number from 0 to ${MAX_TIMES}.`
  const delayMs = input.delayMs ?? (kind === 'delay' || kind === 'delay-body' ? 1_000 : 0)
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > 600_000) return 'delayMs must be from 0 to 600000.'
  let headers: Record<string, string> | null = null
  if (input.headers !== undefined) {
    if (!input.headers || typeof input.headers !== 'object' || Array.isArray(input.headers)) return 'headers must be an object of strings.'
    headers = {}
    for (const [name, value] of Object.entries(input.headers)) {
      if (typeof value !== 'string' && typeof value !== 'number') return 'headers must be an object of strings.'
      // A header the server cannot send would crash the answer, not the client.
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n\0]/.test(String(value))) return `header ${JSON.stringify(name)} is not a valid HTTP header.`
      headers[name.toLowerCase()] = String(value)
    }
  }
  if (input.contentType !== undefined && (typeof input.contentType !== 'string' || /[\r\n\0]/.test(input.contentType))) {
    return 'contentType must be a string (the body is then sent as this raw text).'
  }
  if (input.contentType !== undefined && typeof input.body !== 'string') return 'contentType goes with a string body.'
  return {
    id: randomUUID(),
    method: typeof input.method === 'string' ? input.method.toUpperCase() : null,
    path: input.path,
    kind: kind as FaultKind,
    status: (input.status as number | undefined) ?? null,
    body: input.body ?? null,
    headers,
    contentType: (input.contentType as string | undefined) ?? null,
    delayMs,
    skip: skip as number,
    remaining: times as number,
  }
}
