import { z } from 'zod'
import { badRequest } from './errors.ts'
import { HttpError, type RouteContext } from './router.ts'

/**
 * The control API's bodies (under /_emulator/), read with zod: each schema's messages name the
 * field and say what it must be, and the first problem, in field order, is the 400's message.
 */

/** A duration in milliseconds, >= 0 (or > 0 with `positive`); the message names the field. */
export function millis(field: string, options: { positive?: boolean } = {}) {
  const message = `${field} must be a number of milliseconds ${options.positive ? '> 0' : '>= 0'}.`
  const number = z.number({ error: message })
  return options.positive ? number.gt(0, { error: message }) : number.min(0, { error: message })
}

export function text(field: string) {
  return z.string({ error: `${field} must be a string.` })
}

export function flag(field: string) {
  return z.boolean({ error: `${field} must be a boolean.` })
}

/** The body as a JSON object (an empty body is `{}`); anything else is a 400 in the route's words. */
export async function objectBody(
  ctx: RouteContext,
  refuse: (message: string) => object = badRequest,
): Promise<Record<string, unknown>> {
  const body = await ctx.json()
  if (body === undefined) return {}
  const parsed = z.record(z.string(), z.unknown()).safeParse(body)
  if (!parsed.success) throw new HttpError(400, refuse('The body must be a JSON object.'))
  return parsed.data
}

/** Parses a control body: the value, or the first problem's message. */
export function parseControl<T>(
  schema: z.ZodType<T>,
  body: unknown,
): { ok: true; data: T } | { ok: false; message: string } {
  const result = schema.safeParse(body)
  if (result.success) return { ok: true, data: result.data }
  return { ok: false, message: result.error.issues[0]?.message ?? 'The body is not valid.' }
}
