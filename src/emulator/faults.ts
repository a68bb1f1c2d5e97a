import { randomUUID } from 'node:crypto'
import type { EmulatorContext } from './context.ts'
import { type Interception, pathMatches, type RouteContext } from './router.ts'
import type { Fault, FaultKind } from './state.ts'

/**
 * Faults injected through the control API: the next request(s) matching a method and a path
 * answer with a 500 from a thrown handler (`error`, so the route's own 500 body is used), a
 * chosen status and body (`status`), no answer at all (`drop`: the connection closes before
 * the request is processed; `drop-after`: it is processed, then the answer is lost), or a
 * delay. Later services add their routes to the same server and get the same faults.
 */

const KINDS: readonly FaultKind[] = ['error', 'status', 'drop', 'drop-after', 'delay']

/** The router's hook: consumes the first matching fault, if any. */
export function faultInterceptor(emulator: EmulatorContext) {
  return (ctx: RouteContext): Interception | undefined => {
    const faults = emulator.store.state.faults
    const index = faults.findIndex((fault) => (!fault.method || fault.method === ctx.method) && pathMatches(fault.path, ctx.path))
    if (index < 0) return undefined
    const fault = faults[index]!
    fault.remaining--
    if (fault.remaining <= 0) faults.splice(index, 1)
    emulator.store.save()
    const delayMs = fault.delayMs
    switch (fault.kind) {
      case 'status':
        return { kind: 'reply', reply: { status: fault.status ?? 500, body: fault.body ?? {} }, delayMs }
      case 'delay':
        return { kind: 'delay', delayMs }
      default:
        return { kind: fault.kind, delayMs }
    }
  }
}

/** A fault from the control API's JSON body, or the problem with it. */
export function parseFault(body: unknown): Fault | string {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return 'The body must be a JSON object.'
  const input = body as Record<string, unknown>
  if (typeof input.path !== 'string' || !input.path.startsWith('/')) return 'path is required: a path or route pattern starting with "/".'
  const kind = input.kind ?? (input.status === undefined ? 'error' : 'status')
  if (typeof kind !== 'string' || !(KINDS as readonly string[]).includes(kind)) return `kind must be one of ${KINDS.join(', ')}.`
  if (input.method !== undefined && typeof input.method !== 'string') return 'method must be a string.'
  if (input.status !== undefined && !(Number.isInteger(input.status) && (input.status as number) >= 100 && (input.status as number) <= 599)) {
    return 'status must be an HTTP status (100-599).'
  }
  const times = input.times ?? 1
  if (!Number.isInteger(times) || (times as number) < 1) return 'times must be a whole number >= 1.'
  const delayMs = input.delayMs ?? (kind === 'delay' ? 1_000 : 0)
  if (typeof delayMs !== 'number' || !Number.isFinite(delayMs) || delayMs < 0 || delayMs > 600_000) return 'delayMs must be from 0 to 600000.'
  return {
    id: randomUUID(),
    method: typeof input.method === 'string' ? input.method.toUpperCase() : null,
    path: input.path,
    kind: kind as FaultKind,
    status: (input.status as number | undefined) ?? null,
    body: input.body ?? null,
    delayMs,
    remaining: times as number,
  }
}
