import { randomUUID } from 'node:crypto'
import { z } from 'zod'
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
        return {
          kind: 'reply',
          reply: { status, text: fault.body, headers: { 'content-type': contentType, ...headers } },
          delayMs,
          fault: fault.kind,
        }
      }
      return { kind: 'reply', reply: { status, body: fault.body ?? {}, headers }, delayMs, fault: fault.kind }
    }
    case 'html-502':
      return {
        kind: 'reply',
        reply: {
          status: fault.status ?? 502,
          text: HTML_502_PAGE,
          headers: { 'content-type': 'text/html', server: 'nginx', ...headers },
        },
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

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const TIMES = `times must be a whole number from 1 to ${MAX_TIMES}.`
const SKIP = `skip must be a whole number from 0 to ${MAX_TIMES}.`
const DELAY = 'delayMs must be from 0 to 600000.'
const STATUS = 'status must be an HTTP status (100-599).'
const HEADERS = 'headers must be an object of strings.'
const CONTENT_TYPE = 'contentType must be a string (the body is then sent as this raw text).'

/** The fields of POST /_emulator/faults, each checked on its own; how they go together is checked after. */
const FAULT_BODY = z.object({
  path: z
    .string({ error: 'path is required: a path or route pattern starting with "/", or "*" for every route.' })
    .refine((path) => path.startsWith('/') || path === '*', {
      error: 'path is required: a path or route pattern starting with "/", or "*" for every route.',
    })
    .refine((path) => !path.startsWith('/_emulator'), {
      error: 'path must not be a control route: faults never apply to /_emulator/.',
    }),
  kind: z
    .enum(FAULT_KINDS as readonly [FaultKind, ...FaultKind[]], {
      error: `kind must be one of ${FAULT_KINDS.join(', ')}.`,
    })
    .optional(),
  method: z.string({ error: 'method must be a string.' }).optional(),
  status: z
    .number({ error: STATUS })
    .int({ error: STATUS })
    .min(100, { error: STATUS })
    .max(599, { error: STATUS })
    .optional(),
  times: z
    .number({ error: TIMES })
    .int({ error: TIMES })
    .min(1, { error: TIMES })
    .max(MAX_TIMES, { error: TIMES })
    .default(1),
  skip: z
    .number({ error: SKIP })
    .int({ error: SKIP })
    .min(0, { error: SKIP })
    .max(MAX_TIMES, { error: SKIP })
    .default(0),
  delayMs: z.number({ error: DELAY }).min(0, { error: DELAY }).max(600_000, { error: DELAY }).optional(),
  headers: z
    .record(z.string(), z.union([z.string(), z.number()]), { error: HEADERS })
    .superRefine((headers, ctx) => {
      // A header the server cannot send would crash the answer, not the client.
      for (const [name, value] of Object.entries(headers)) {
        if (!HEADER_NAME.test(name) || /[\r\n\0]/.test(String(value)))
          ctx.addIssue({ code: 'custom', message: `header ${JSON.stringify(name)} is not a valid HTTP header.` })
      }
    })
    .optional(),
  contentType: z
    .string({ error: CONTENT_TYPE })
    .refine((type) => !/[\r\n\0]/.test(type), { error: CONTENT_TYPE })
    .optional(),
  body: z.unknown().optional(),
})

/** A fault from the control API's JSON body, or the problem with it. */
export function parseFault(body: unknown): Fault | string {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'The body must be a JSON object.'
  const parsed = FAULT_BODY.safeParse(body)
  if (!parsed.success) return parsed.error.issues[0]?.message ?? 'The fault is not valid.'
  const input = parsed.data
  const kind: FaultKind = input.kind ?? (input.status === undefined ? 'error' : 'status')
  if (input.status !== undefined && !['status', 'html-502', 'gateway-404'].includes(kind)) {
    return `status goes with kind status, html-502 or gateway-404, not ${kind}.`
  }
  if (input.contentType !== undefined && typeof input.body !== 'string') return 'contentType goes with a string body.'
  const headers =
    input.headers === undefined
      ? null
      : Object.fromEntries(Object.entries(input.headers).map(([name, value]) => [name.toLowerCase(), String(value)]))
  return {
    id: randomUUID(),
    method: input.method === undefined ? null : input.method.toUpperCase(),
    path: input.path,
    kind,
    status: input.status ?? null,
    body: input.body ?? null,
    headers,
    contentType: input.contentType ?? null,
    delayMs: input.delayMs ?? (kind === 'delay' || kind === 'delay-body' ? 1_000 : 0),
    skip: input.skip,
    remaining: input.times,
  }
}
