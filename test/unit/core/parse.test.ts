import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { InvalidResponseError } from '../../../src/core/errors.ts'
import {
  describeDeviations,
  isNotJson,
  knownValuesOf,
  NOT_JSON,
  parseJsonLoosely,
  parseResponse,
} from '../../../src/core/parse.ts'
import { openEnum } from '../../../src/schemas/open-enum.ts'
import { SecretRedactor } from '../../../src/core/redact.ts'
import type { Logger } from '../../../src/core/runtime.ts'

function capture() {
  const debug: string[] = []
  const logger: Logger = { debug: (m) => debug.push(m), info() {}, warn() {}, error() {} }
  return { logger, debug }
}

const color = openEnum(['RED', 'GREEN'] as const)
const schema = z.looseObject({
  name: z.string(),
  color,
  maybe: color.nullable(),
  later: color.optional(),
  list: z.array(z.looseObject({ color })),
  nested: z.looseObject({ count: z.number().int() }),
})

const valid = { name: 'n', color: 'RED', maybe: null, list: [{ color: 'GREEN' }], nested: { count: 1 } }

describe('parseJsonLoosely', () => {
  it('parses JSON, marks non-JSON, treats an empty body as undefined', () => {
    expect(parseJsonLoosely('{"a":1}')).toEqual({ a: 1 })
    expect(parseJsonLoosely('<html>')).toBe(NOT_JSON)
    expect(isNotJson(parseJsonLoosely('nope'))).toBe(true)
    expect(parseJsonLoosely('')).toBeUndefined()
  })
})

describe('openEnum', () => {
  it('accepts any string and remembers the known values', () => {
    expect(color.parse('BLUE')).toBe('BLUE')
    expect(knownValuesOf(color)).toEqual(['RED', 'GREEN'])
    expect(() => color.parse(3)).toThrow()
  })
})

describe('describeDeviations', () => {
  it('finds nothing in a conforming value', () => {
    expect(describeDeviations(schema, valid)).toEqual([])
  })

  it('names unknown enum values by path, through nullable, optional and arrays', () => {
    const notes = describeDeviations(schema, {
      ...valid,
      color: 'BLUE',
      maybe: 'PINK',
      later: 'TEAL',
      list: [{ color: 'RED' }, { color: 'CYAN' }],
    })
    expect(notes).toHaveLength(4)
    expect(notes.join('\n')).toContain('"BLUE" for "color"')
    expect(notes.join('\n')).toContain('"PINK" for "maybe"')
    expect(notes.join('\n')).toContain('"TEAL" for "later"')
    expect(notes.join('\n')).toContain('"CYAN" for "list[1].color"')
    expect(notes[0]).toContain('known: RED, GREEN')
  })

  it('names extra fields by path, nested ones too', () => {
    const notes = describeDeviations(schema, { ...valid, extra: 1, nested: { count: 1, more: true } })
    expect([...notes].sort()).toEqual(['unexpected field "extra"', 'unexpected field "nested.more"'])
  })
})

describe('parseResponse', () => {
  it('returns the data and logs one debug line listing the deviations', () => {
    const { logger, debug } = capture()
    const data = parseResponse(schema, { ...valid, color: 'BLUE', extra: 1 }, { logger, what: 'test response' })
    expect(data.color).toBe('BLUE')
    expect((data as Record<string, unknown>).extra).toBe(1)
    expect(debug).toHaveLength(1)
    expect(debug[0]).toMatch(/^test response: accepted with 2 deviation\(s\)/)
    expect(debug[0]).toContain('"color"')
    expect(debug[0]).toContain('"extra"')
  })

  it('the debug line stays one line when a field name or value the service sent holds a line break', () => {
    const { logger, debug } = capture()
    parseResponse(
      schema,
      { ...valid, color: 'BLUE\n::warning::forged', 'x\n::error::forged': 1 },
      { logger, what: 'test response' },
    )
    expect(debug).toHaveLength(1)
    expect(debug[0]).not.toContain('\n')
    expect(debug[0]).toContain('::warning::forged')
  })

  it('rejects a wrong type, naming the path', () => {
    const { logger } = capture()
    expect(() =>
      parseResponse(schema, { ...valid, nested: { count: '1' } }, { logger, what: 'test response' }),
    ).toThrow(/nested\.count: .*expected number/)
  })

  it('a path through a key the service chose stays on one line in the error', () => {
    const { logger } = capture()
    const error = (() => {
      try {
        return parseResponse(
          z.record(z.string(), z.number()),
          { 'a\n::error::forged': 'no' },
          { logger, what: 'test response' },
        )
      } catch (caught) {
        return caught
      }
    })() as InvalidResponseError
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect(error.shortMessage).toContain('::error::forged')
    expect(error.shortMessage).not.toContain('\n')
  })

  it('rejects non-JSON with InvalidResponseError, even without a schema', () => {
    const { logger } = capture()
    expect(() => parseResponse(undefined, NOT_JSON, { logger, what: 'test response' })).toThrow(InvalidResponseError)
    expect(parseResponse(undefined, { a: 1 }, { logger, what: 'x' })).toEqual({ a: 1 })
  })

  it('scrubs secrets from its messages', () => {
    const { logger, debug } = capture()
    const redactor = new SecretRedactor(['sk_live_SECRET_9f8e7d'])
    parseResponse(schema, { ...valid, sk_live_SECRET_9f8e7d: 1 }, { logger, what: 'x', redactor })
    expect(debug.join('\n')).not.toContain('sk_live_SECRET_9f8e7d')
    try {
      parseResponse(z.object({ sk_live_SECRET_9f8e7d: z.string() }), {}, { logger, what: 'x', redactor })
      expect.unreachable()
    } catch (error) {
      expect(String(error)).not.toContain('sk_live_SECRET_9f8e7d')
    }
  })
})
