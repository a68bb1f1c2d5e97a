import { z } from 'zod'
import { markKnownValues } from '../core/parse.ts'

/** A string field whose known values are listed; others are accepted and noted (core/parse.ts). */
export function openEnum<const T extends readonly [string, ...string[]]>(values: T): z.ZodString {
  const schema = z.string()
  markKnownValues(schema, values)
  return schema
}
