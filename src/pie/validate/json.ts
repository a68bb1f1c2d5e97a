/**
 * A JSON reader that keeps integers exact. `JSON.parse` turns the program words of
 * metadata.json (decimal integers up to 2^252) into rounded doubles; here every integer literal
 * becomes a bigint, and a literal with a fraction or an exponent stays a `number` so the caller
 * can tell "written as an integer" from "went through a double once" (3.6185027886661313e+75).
 * Objects become Maps so key order is exactly the file's (builtin_segments' order matters and a
 * plain object would move integer-like keys first).
 */

export type JsonValue = null | boolean | string | bigint | number | JsonValue[] | JsonObject
export type JsonObject = Map<string, JsonValue>

export class JsonSyntaxError extends Error {
  override name = 'JsonSyntaxError'
  /** Character index in the text where reading failed. */
  readonly position: number
  constructor(message: string, position: number) {
    super(`${message} at character ${position}`)
    this.position = position
  }
}

/** A document with more values or objects than the budget given to `parseJson`, or nested deeper than it reads. */
export class JsonBudgetError extends Error {
  override name = 'JsonBudgetError'
  readonly what: 'values' | 'objects' | 'arrays and objects' | 'levels of nesting'
  readonly limit: number
  constructor(what: 'values' | 'objects' | 'arrays and objects' | 'levels of nesting', limit: number) {
    super(`more than ${limit} JSON ${what}`)
    this.what = what
    this.limit = limit
  }
}

/**
 * Nesting read, a budget: deep enough for any PIE file (they nest under 10), bounded so hostile
 * input cannot overflow the stack. Python's json reads about 990 levels (its recursion limit);
 * serde_json 128 where it parses a value, any depth where it skips one (an unknown key).
 */
export const MAX_JSON_NESTING = 512

/** Python's default limit on the digits of an integer read from text (`sys.set_int_max_str_digits`). */
export const PYTHON_INT_MAX_DIGITS = 4300

/**
 * Parses `text`; with a budget, stops with JsonBudgetError at the first value past it, so a
 * hostile document costs at most the budget's worth of memory and time.
 */
export function parseJson(
  text: string,
  budget: { maxNodes?: number; maxContainers?: number; maxObjects?: number } = {},
  options: {
    onDuplicateKey?: (key: string, position: number) => void
    /** `NaN`, `Infinity` or `-Infinity`: not JSON, but Python's json reads them (as floats); without this they are a syntax error. */
    onNonFinite?: (literal: string, position: number) => void
  } = {},
): JsonValue {
  let i = 0
  const n = text.length
  let nodesLeft = budget.maxNodes ?? Number.POSITIVE_INFINITY
  let objectsLeft = budget.maxObjects ?? Number.POSITIVE_INFINITY
  let containersLeft = budget.maxContainers ?? Number.POSITIVE_INFINITY

  const fail = (message: string, at = i): never => {
    throw new JsonSyntaxError(message, at)
  }
  const skipWhitespace = () => {
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++
      else break
    }
  }
  const describe = (at: number) => (at >= n ? 'end of text' : JSON.stringify(text[at]))

  const readString = (): string => {
    // Opening quote already checked by the caller.
    const start = ++i
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return text.slice(start, i - 1)
      }
      if (c === 0x5c) break
      if (c < 0x20) fail('control character in string')
      i++
    }
    // Slow path: the string has escapes; let JSON.parse decode exactly that literal.
    let j = i
    while (j < n) {
      const c = text.charCodeAt(j)
      if (c === 0x5c) j += 2
      else if (c === 0x22) break
      else j++
    }
    if (j >= n) fail('unterminated string', start - 1)
    try {
      const value = JSON.parse(text.slice(start - 1, j + 1)) as string
      i = j + 1
      return value
    } catch {
      return fail('invalid escape in string', start - 1)
    }
  }

  const nonFinite = (literal: string, value: number): number => {
    if (!options.onNonFinite) fail(`unexpected ${describe(i)}`)
    options.onNonFinite!(literal, i)
    i += literal.length
    return value
  }

  const readNumber = (): bigint | number => {
    const start = i
    if (text.startsWith('-Infinity', i)) return nonFinite('-Infinity', Number.NEGATIVE_INFINITY)
    if (text[i] === '-') i++
    if (text[i] === '0') i++
    else if (text[i]! >= '1' && text[i]! <= '9') while (text[i]! >= '0' && text[i]! <= '9') i++
    else fail('invalid number', start)
    let integer = true
    if (text[i] === '.') {
      integer = false
      i++
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail('invalid number', start)
      while (text[i]! >= '0' && text[i]! <= '9') i++
    }
    if (text[i] === 'e' || text[i] === 'E') {
      integer = false
      i++
      if (text[i] === '+' || text[i] === '-') i++
      if (!(text[i]! >= '0' && text[i]! <= '9')) fail('invalid number', start)
      while (text[i]! >= '0' && text[i]! <= '9') i++
    }
    const literal = text.slice(start, i)
    if (!integer) return Number(literal)
    const digits = literal.length - (literal[0] === '-' ? 1 : 0)
    // Python's json turns an integer literal into an int, which refuses more digits than this.
    if (digits > PYTHON_INT_MAX_DIGITS)
      fail(
        `an integer of ${digits} digits; Python's json reads integers of at most ${PYTHON_INT_MAX_DIGITS} digits`,
        start,
      )
    return BigInt(literal)
  }

  const readValue = (depth: number): JsonValue => {
    if (--nodesLeft < 0) throw new JsonBudgetError('values', budget.maxNodes!)
    skipWhitespace()
    const c = text[i]
    if (c === '{' || c === '[') {
      // `depth` arrays and objects hold this one.
      if (depth >= MAX_JSON_NESTING) throw new JsonBudgetError('levels of nesting', MAX_JSON_NESTING)
      if (--containersLeft < 0) throw new JsonBudgetError('arrays and objects', budget.maxContainers!)
    }
    if (c === '{') {
      if (--objectsLeft < 0) throw new JsonBudgetError('objects', budget.maxObjects!)
      i++
      const object: JsonObject = new Map()
      skipWhitespace()
      if (text[i] === '}') {
        i++
        return object
      }
      for (;;) {
        skipWhitespace()
        if (text[i] !== '"') fail(`expected a key, found ${describe(i)}`)
        const keyAt = i
        const key = readString()
        // The later value wins, as in JSON.parse and Python's json; the caller may object.
        if (object.has(key)) options.onDuplicateKey?.(key, keyAt)
        skipWhitespace()
        if (text[i] !== ':') fail(`expected ':', found ${describe(i)}`)
        i++
        object.set(key, readValue(depth + 1))
        skipWhitespace()
        if (text[i] === ',') {
          i++
          continue
        }
        if (text[i] === '}') {
          i++
          return object
        }
        fail(`expected ',' or '}', found ${describe(i)}`)
      }
    }
    if (c === '[') {
      i++
      const array: JsonValue[] = []
      skipWhitespace()
      if (text[i] === ']') {
        i++
        return array
      }
      for (;;) {
        array.push(readValue(depth + 1))
        skipWhitespace()
        if (text[i] === ',') {
          i++
          continue
        }
        if (text[i] === ']') {
          i++
          return array
        }
        fail(`expected ',' or ']', found ${describe(i)}`)
      }
    }
    if (c === '"') return readString()
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return readNumber()
    if (text.startsWith('true', i)) {
      i += 4
      return true
    }
    if (text.startsWith('false', i)) {
      i += 5
      return false
    }
    if (text.startsWith('null', i)) {
      i += 4
      return null
    }
    if (text.startsWith('NaN', i)) return nonFinite('NaN', Number.NaN)
    if (text.startsWith('Infinity', i)) return nonFinite('Infinity', Number.POSITIVE_INFINITY)
    return fail(`unexpected ${describe(i)}`)
  }

  const value = readValue(0)
  skipWhitespace()
  if (i < n) fail(`unexpected ${describe(i)} after the value`)
  return value
}

export function isJsonObject(value: JsonValue | undefined): value is JsonObject {
  return value instanceof Map
}

/** A short rendering of a value for problem messages (bigints as plain integers). */
export function showJson(value: JsonValue | undefined): string {
  if (value === undefined) return 'missing'
  if (typeof value === 'bigint') return value.toString()
  if (typeof value === 'number') return String(value)
  if (value instanceof Map) return 'an object'
  if (Array.isArray(value)) return 'an array'
  const text = JSON.stringify(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}
