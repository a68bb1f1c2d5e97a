import type { z } from 'zod'
import { InvalidResponseError } from './errors.ts'
import { redact, type SecretRedactor } from './redact.ts'
import { serviceLine } from './service-text.ts'
import type { Logger } from './runtime.ts'

/**
 * Services evolve faster than clients. A response parses when every field has the right type;
 * a value outside a known enum, or a field the spec does not list, is accepted and noted at
 * debug level. A wrong type is an error: acting on it could pass a gate wrongly.
 */

export const NOT_JSON: unique symbol = Symbol('not json')

/** JSON.parse that marks a non-JSON body instead of throwing; an empty body is undefined. */
export function parseJsonLoosely(text: string): unknown {
  if (text.length === 0) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return NOT_JSON
  }
}

export function isNotJson(value: unknown): boolean {
  return value === NOT_JSON
}

const knownValues = new WeakMap<z.ZodType, readonly string[]>()

/**
 * Records the known values of an open enum's string schema (schemas/open-enum.ts builds them),
 * which describeDeviations names when a response carries another. Kept here, without zod, so
 * that the HTTP client loads no zod until a schema is in hand.
 */
export function markKnownValues(schema: z.ZodType, values: readonly string[]): void {
  knownValues.set(schema, values)
}

export function knownValuesOf(schema: z.ZodType): readonly string[] | undefined {
  return knownValues.get(schema)
}

type Def = {
  type: string
  shape?: Record<string, z.ZodType>
  innerType?: z.ZodType
  element?: z.ZodType
  options?: z.ZodType[]
  in?: z.ZodType
  valueType?: z.ZodType
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def
}

/** Lists the tolerated deviations of a value that already parsed: unknown enum values and extra fields. */
export function describeDeviations(schema: z.ZodType, value: unknown, path = ''): string[] {
  const def = defOf(schema)
  switch (def.type) {
    case 'optional':
    case 'nullable':
    case 'default':
    case 'prefault':
    case 'readonly':
    case 'catch':
      return value === undefined || value === null ? [] : describeDeviations(def.innerType!, value, path)
    case 'pipe':
      return def.in ? describeDeviations(def.in, value, path) : []
    case 'array':
      return Array.isArray(value)
        ? value.flatMap((item, index) => describeDeviations(def.element!, item, `${path}[${index}]`))
        : []
    case 'record':
      return value && typeof value === 'object' && def.valueType
        ? Object.entries(value).flatMap(([key, item]) => describeDeviations(def.valueType!, item, `${path}.${key}`))
        : []
    case 'object': {
      if (!value || typeof value !== 'object') return []
      const shape = def.shape ?? {}
      const notes: string[] = []
      for (const [key, item] of Object.entries(value)) {
        const field = shape[key]
        const where = path ? `${path}.${key}` : key
        if (!field) notes.push(`unexpected field "${where}"`)
        else notes.push(...describeDeviations(field, item, where))
      }
      return notes
    }
    case 'union':
      return []
    case 'string': {
      const known = knownValues.get(schema)
      return known && typeof value === 'string' && !known.includes(value)
        ? [`unknown value ${JSON.stringify(value)} for "${path}" (known: ${known.join(', ')})`]
        : []
    }
    default:
      return []
  }
}

export type ParseContext = { logger: Logger; what: string; redactor?: SecretRedactor }

/** Validates a decoded JSON body; `what` names it in messages ("proving service response to ..."). */
export function parseResponse<T>(schema: z.ZodType<T> | undefined, json: unknown, context: ParseContext): T {
  if (isNotJson(json)) {
    throw new InvalidResponseError(`The ${context.what} is not JSON.`, { retryable: true })
  }
  if (!schema) return json as T
  const result = schema.safeParse(json)
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map((issue) => {
      const where = issue.path.length ? issue.path.join('.') : '(body)'
      // A record's keys in the path are the service's text: one line, as the deviations.
      return serviceLine(`${where}: ${issue.message}`, 300)
    })
    throw new InvalidResponseError(
      redact(`The ${context.what} does not match the specification: ${problems.join('; ')}.`, context.redactor),
    )
  }
  const notes = describeDeviations(schema, json)
  if (notes.length) {
    // One line: the notes quote the service's field names and values, which may hold a line break.
    context.logger.debug(
      redact(
        `${context.what}: accepted with ${notes.length} deviation(s): ${notes
          .slice(0, 10)
          .map((note) => serviceLine(note, 300))
          .join('; ')}`,
        context.redactor,
      ),
    )
  }
  return result.data
}
