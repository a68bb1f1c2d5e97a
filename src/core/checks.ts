import { InvalidInputError, InvalidResponseError, type NextStep } from './errors.ts'
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
    throw new InvalidInputError(`${name} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}.`, {
      input: name,
    })
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
    logger.warn(
      `${name} "${trimmed}" is not one this version of proving-kit knows (${known.join(', ')}); sending it as given, the service decides.`,
    )
  }
  return trimmed
}

// --- What goes into a URL path or a header -------------------------------------------------

const MAX_ID_LENGTH = 256
// C0 controls, DEL, C1 controls, and the bidirectional overrides and isolates.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/

/**
 * An identifier the service returned, to be put in a path segment (percent-encoded by the
 * caller with encodeURIComponent). Refused when empty, `.` or `..`, longer than 256, or holding
 * whitespace, `/`, `?`, `#`, `\` or a control character. `input` names it in the message.
 */
export function requireId(value: unknown, input: string, what = input): string {
  const id = typeof value === 'string' ? value.trim() : ''
  if (!id)
    throw new InvalidInputError(
      `${what} is empty; give the ${input === 'uuid' ? 'uuid' : 'identifier'} the service returned.`,
      { input },
    )
  const problem = idProblem(id)
  if (problem) {
    throw new InvalidInputError(
      `${what} ${JSON.stringify(printable(id.slice(0, 40)))} ${problem}; copy it as the service returned it.`,
      {
        input,
      },
    )
  }
  return id
}

/** What makes a (trimmed, non-empty) text unfit as an identifier, or undefined when it is fit. */
function idProblem(id: string): string | undefined {
  return id === '.' || id === '..'
    ? 'is a path step, not an identifier'
    : id.length > MAX_ID_LENGTH
      ? `is longer than ${MAX_ID_LENGTH} characters`
      : CONTROL.test(id)
        ? 'holds a control character'
        : /[\s/?#\\]/.test(id)
          ? 'holds a space, "/", "?", "#" or "\\"'
          : undefined
}

/**
 * An identifier a service just returned (a query id, a task uuid, a batch query id), checked
 * before it is logged, shown or put in a path: the same rule as requireId. One that breaks it is
 * the service's fault, not the user's: InvalidResponseError (never InvalidInputError, which would
 * send the user to fix an input), with the value left out of the message and `after` saying what
 * the service may already hold.
 */
export function checkServiceId(value: string, what: string, after: string, nextStep?: NextStep): string {
  const id = value.trim()
  const problem = id ? idProblem(id) : 'is empty'
  if (problem) throw new InvalidResponseError(`${what} ${problem}, so it was not used. ${after}`, { nextStep })
  return id
}

/**
 * A value for an HTTP header (an API key, a token): no control characters (a newline would
 * end the header or inject another), nothing outside Latin-1. The message names the input and
 * the position, never the value.
 */
export function checkHeaderValue(value: string, input: string, what = input): string {
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    if ((code < 0x20 && code !== 0x09) || code === 0x7f || code > 0xff) {
      const kind =
        code === 0x0a || code === 0x0d
          ? 'a line break'
          : code > 0xff
            ? 'a character outside Latin-1'
            : 'a control character'
      throw new InvalidInputError(
        `${what} holds ${kind} at position ${i + 1} of ${value.length}, which an HTTP header cannot carry: check how ${input} is set.`,
        { input, metaMessages: ['A trailing newline from a file or a secret? Nothing was sent.'] },
      )
    }
  }
  return value
}

/** An API key given to a client: trimmed, empty as undefined, and safe in a header or a query. */
export function apiKeyOf(value: string | undefined, input = 'apiKey'): string | undefined {
  if (value === undefined) return undefined
  const key = typeof value === 'string' ? value.trim() : ''
  if (!key) return undefined
  return checkHeaderValue(key, input, 'The API key')
}

function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?')
}

/** This machine: localhost names, 127.0.0.0/8, ::1. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    host === '::1' ||
    host === '0:0:0:0:0:0:0:1'
  )
}

/**
 * An input in every host's spelling, for a library message that must name it: the CLI's flag,
 * the action's input (the same name) and, when it differs, the library's option. The library
 * speaks to all three, so it never names one host's alone.
 */
export function inputNames(name: string, libraryOption?: string): string {
  return `--${name}; the ${name} input${libraryOption ? `; ${libraryOption} in the library` : ''}`
}
