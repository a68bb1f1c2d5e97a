/**
 * The schema a successful answer is checked with, given as a promise while its module loads: an
 * upload starts without waiting for zod, and the schema is awaited only once a successful answer
 * is in. A schema that fails to load is never taken for a network failure and retried.
 */
import type { z } from 'zod'
import { SubmissionOutcomeUnknownError } from '../errors.ts'

export type LoadedSchema<T> = { schema: z.ZodType<T> | undefined } | { error: unknown }

/**
 * The schema, settled: started at once (so that a rejection no answer needed is dropped, never
 * an unhandled one), awaited only when a successful answer needs it.
 */
export function settleSchema<T>(schema: z.ZodType<T> | Promise<z.ZodType<T>> | undefined): Promise<LoadedSchema<T>> {
  return schema instanceof Promise
    ? schema.then(
        (loaded) => ({ schema: loaded }),
        (error: unknown) => ({ error }),
      )
    : Promise.resolve({ schema })
}

/**
 * A POST the service accepted did its work (a query created, paid for): when its answer cannot
 * be read because its schema did not load, that must not look like a failure to submit again.
 */
export function acceptedUnread(
  serviceName: string,
  operation: string,
  status: number,
  loadError: unknown,
): SubmissionOutcomeUnknownError {
  const reason = loadError instanceof Error ? loadError.message : String(loadError)
  return new SubmissionOutcomeUnknownError(
    `The ${serviceName} accepted ${operation} (HTTP ${status}), but its answer could not be read: the schema to check it did not load (${reason}).`,
    { cause: loadError },
  )
}
