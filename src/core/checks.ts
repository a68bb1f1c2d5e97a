import { InvalidInputError } from './errors.ts'
import type { Logger } from './runtime.ts'

/**
 * Checks of the values a caller passes to a client, shared by every client: one wording, one
 * place. Each throws InvalidInputError naming the input and what it accepts.
 */

/** A whole number in [min, max]. */
export function checkInteger(value: number, name: string, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new InvalidInputError(`${name} must be a whole number from ${min} to ${max}; got ${value}.`, { input: name })
  }
  return value
}

/** One of a closed list: anything else is refused. */
export function checkEnum<T extends string>(value: string, name: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new InvalidInputError(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}.`, { input: name })
  }
  return value as T
}

/**
 * A value of a list the service grows over time (layouts, provers): a known value passes, an
 * unknown one passes too with a warning (the service decides), an empty or malformed one is
 * refused.
 */
export function checkOpenEnum(value: string, name: string, known: readonly string[], logger: Logger): string {
  const trimmed = typeof value === 'string' ? value.trim() : ''
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(trimmed)) {
    throw new InvalidInputError(
      `${name} must be one of ${known.join(', ')} (or a newer name of letters, digits, '_', '.' or '-'); got ${JSON.stringify(String(value).slice(0, 80))}.`,
      { input: name },
    )
  }
  if (!known.includes(trimmed)) {
    logger.warn(`${name} "${trimmed}" is not one this version of proving-kit knows (${known.join(', ')}); sending it as given, the service decides.`)
  }
  return trimmed
}
