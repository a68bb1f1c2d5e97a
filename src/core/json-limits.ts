import { InvalidInputError } from './errors.ts'

/**
 * What a JSON body the toolkit sends may be: at most 32 levels of nesting (the emulator's limit
 * too, src/emulator/router.ts; real bodies nest under 20) and 16 MiB. Checked before anything is
 * sent, with an error naming the input, so a hostile or broken file never reaches the service,
 * never blows the stack in JSON.stringify, and never goes out half-decoded (non-UTF-8 bytes).
 */
export const MAX_JSON_DEPTH = 32
export const MAX_JSON_BODY_BYTES = 16 * 1024 * 1024

export type JsonInput = {
  /** The input's name as the user wrote it: `<task.json>`, `--dp-output`, `task`, `body`. */
  input: string
  /** How messages start: the input as the host shows it (default `input`), e.g. "`task`" in the action. */
  label?: string
  /** What it is, in messages: "the task body", "stdin", "task.json". */
  what: string
  maxBytes?: number
  maxDepth?: number
}

/** The deepest nesting of arrays and objects in a JSON text (strings skipped), or limit + 1 once past it. */
export function jsonTextDepth(text: string, limit = Number.POSITIVE_INFINITY): number {
  let depth = 0
  let deepest = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      depth++
      if (depth > deepest) {
        deepest = depth
        if (deepest > limit) return deepest
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return deepest
}

/** The nesting of a value (iterative: any depth, cycles included, ends once past `limit`). */
export function jsonValueDepth(value: unknown, limit: number): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length) {
    const [current, depth] = stack.pop()!
    if (current === null || typeof current !== 'object') continue
    const level = depth + 1
    if (level > deepest) deepest = level
    if (deepest > limit) return deepest
    for (const child of Array.isArray(current) ? current : Object.values(current as object)) {
      if (child !== null && typeof child === 'object') stack.push([child, level])
    }
  }
  return deepest
}

/**
 * Bytes of a JSON file or stream as text: at most `maxBytes`, strictly UTF-8 (a byte that is not
 * is refused, never silently replaced), then parsed with the nesting checked before the parser
 * sees it.
 */
export function parseJsonBytes(bytes: Uint8Array, options: JsonInput): unknown {
  const maxBytes = options.maxBytes ?? MAX_JSON_BODY_BYTES
  if (bytes.length > maxBytes) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is ${bytes.length} bytes, more than the ${formatLimit(maxBytes)} a JSON body may be; send a smaller one.`,
      { input: options.input },
    )
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is not valid UTF-8 (first bad byte at offset ${firstInvalidUtf8(bytes)}); save it as UTF-8.`,
      { input: options.input },
    )
  }
  return parseJsonText(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, {
    ...options,
    maxBytes: Number.POSITIVE_INFINITY,
  })
}

/** A JSON text: size, nesting, then syntax; every problem names the input. */
export function parseJsonText(text: string, options: JsonInput): unknown {
  const maxBytes = options.maxBytes ?? MAX_JSON_BODY_BYTES
  if (Number.isFinite(maxBytes) && Buffer.byteLength(text) > maxBytes) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is larger than the ${formatLimit(maxBytes)} a JSON body may be; send a smaller one.`,
      { input: options.input },
    )
  }
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH
  if (jsonTextDepth(text, maxDepth) > maxDepth) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is nested deeper than ${maxDepth} levels; flatten it (no request body needs that much).`,
      { input: options.input },
    )
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is not valid JSON (${(error as Error).message}); fix its syntax.`,
      {
        input: options.input,
      },
    )
  }
}

/** A value about to be sent as a JSON body: nesting first (so JSON.stringify cannot overflow), then size. Returns the text. */
export function serializeJsonBody(value: unknown, options: JsonInput): string {
  const maxDepth = options.maxDepth ?? MAX_JSON_DEPTH
  if (jsonValueDepth(value, maxDepth) > maxDepth) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is nested deeper than ${maxDepth} levels (or refers to itself); flatten it.`,
      { input: options.input },
    )
  }
  let text: string | undefined
  try {
    text = JSON.stringify(value)
  } catch (error) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} cannot be sent as JSON (${(error as Error).message}); give plain JSON data.`,
      {
        input: options.input,
      },
    )
  }
  if (text === undefined) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is not JSON data; give an object.`,
      { input: options.input },
    )
  }
  const maxBytes = options.maxBytes ?? MAX_JSON_BODY_BYTES
  if (Buffer.byteLength(text) > maxBytes) {
    throw new InvalidInputError(
      `${options.label ?? options.input}: ${options.what} is larger than the ${formatLimit(maxBytes)} a JSON body may be; send a smaller one.`,
      { input: options.input },
    )
  }
  return text
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  // Decode growing prefixes would be quadratic; walk the encoding by hand instead.
  let i = 0
  while (i < bytes.length) {
    const b = bytes[i]!
    const length =
      b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0
    if (length === 0 || i + length > bytes.length) return i
    for (let k = 1; k < length; k++) if ((bytes[i + k]! & 0xc0) !== 0x80) return i
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(i, i + length))
    } catch {
      return i
    }
    i += length
  }
  return i
}

function formatLimit(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`
}
