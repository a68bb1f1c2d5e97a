import { describe, expect, it } from 'vitest'
import { InvalidInputError } from '../../../src/core/errors.ts'
import {
  jsonTextDepth,
  jsonValueDepth,
  MAX_JSON_BODY_BYTES,
  MAX_JSON_DEPTH,
  parseJsonBytes,
  parseJsonText,
  serializeJsonBody,
} from '../../../src/core/json-limits.ts'

const INPUT = { input: '<task.json>', what: 'task.json' }
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`

function refusal(run: () => unknown): InvalidInputError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return error as InvalidInputError
  }
  throw new Error('expected a refusal')
}

describe('the limits', () => {
  it('are 32 levels and 16 MiB', () => {
    expect(MAX_JSON_DEPTH).toBe(32)
    expect(MAX_JSON_BODY_BYTES).toBe(16 * 1024 * 1024)
  })
})

describe('jsonTextDepth', () => {
  it('counts arrays and objects, not brackets inside strings (escaped quotes included)', () => {
    expect(jsonTextDepth('1')).toBe(0)
    expect(jsonTextDepth('{"a":[{"b":1}]}')).toBe(3)
    expect(jsonTextDepth('{"a":"[[[[{{{{"}')).toBe(1)
    expect(jsonTextDepth('["\\"[[[", []]')).toBe(2)
  })

  it('stops once past the limit', () => {
    expect(jsonTextDepth(nested(10_000), 32)).toBe(33)
  })
})

describe('jsonValueDepth', () => {
  it('measures a value without recursion, and ends on a cycle', () => {
    expect(jsonValueDepth({ a: [{ b: 1 }] }, 32)).toBe(3)
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(jsonValueDepth(cycle, 32)).toBe(33)
  })
})

describe('parseJsonText', () => {
  it('parses JSON within the limits', () => {
    expect(parseJsonText('{"destination_chain_id":"0xaa36a7"}', INPUT)).toEqual({ destination_chain_id: '0xaa36a7' })
    expect(parseJsonText(nested(32), INPUT)).toEqual(expect.any(Array))
  })

  it('refuses nesting past the limit before parsing, naming the input', () => {
    const error = refusal(() => parseJsonText(nested(33), INPUT))
    expect(error.shortMessage).toBe(
      '<task.json>: task.json is nested deeper than 32 levels; flatten it (no request body needs that much).',
    )
    expect(error.input).toBe('<task.json>')
  })

  it("refuses a body over the size limit and bad syntax, in the host's words", () => {
    expect(refusal(() => parseJsonText('"abcdef"', { ...INPUT, maxBytes: 4 })).shortMessage).toBe(
      '<task.json>: task.json is larger than the 4 bytes a JSON body may be; send a smaller one.',
    )
    expect(refusal(() => parseJsonText('{', { ...INPUT, label: '`task`' })).shortMessage).toMatch(
      /^`task`: task\.json is not valid JSON \(.+\); fix its syntax\.$/,
    )
  })
})

describe('parseJsonBytes', () => {
  it('decodes strict UTF-8 and drops a byte-order mark', () => {
    expect(parseJsonBytes(Buffer.from('\uFEFF{"a":"é"}'), INPUT)).toEqual({ a: 'é' })
  })

  it('refuses bytes that are not UTF-8, with the offset of the first bad one', () => {
    const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')])
    expect(refusal(() => parseJsonBytes(bytes, INPUT)).shortMessage).toBe(
      '<task.json>: task.json is not valid UTF-8 (first bad byte at offset 6); save it as UTF-8.',
    )
  })

  it('refuses a file over the size limit before decoding it', () => {
    expect(refusal(() => parseJsonBytes(Buffer.from('[1,2,3]'), { ...INPUT, maxBytes: 3 })).shortMessage).toBe(
      '<task.json>: task.json is 7 bytes, more than the 3 bytes a JSON body may be; send a smaller one.',
    )
  })
})

describe('serializeJsonBody', () => {
  it('returns the text of plain data', () => {
    expect(serializeJsonBody({ a: [1, 'b'] }, INPUT)).toBe('{"a":[1,"b"]}')
  })

  it('refuses a cycle or deep nesting before JSON.stringify could overflow', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(refusal(() => serializeJsonBody(cycle, INPUT)).shortMessage).toBe(
      '<task.json>: task.json is nested deeper than 32 levels (or refers to itself); flatten it.',
    )
  })

  it('refuses what JSON cannot carry, and a body over the size limit', () => {
    expect(refusal(() => serializeJsonBody(10n, INPUT)).shortMessage).toMatch(/cannot be sent as JSON/)
    expect(refusal(() => serializeJsonBody(undefined, INPUT)).shortMessage).toBe(
      '<task.json>: task.json is not JSON data; give an object.',
    )
    expect(refusal(() => serializeJsonBody({ a: 'xxxx' }, { ...INPUT, maxBytes: 5 })).shortMessage).toMatch(
      /larger than the 5 bytes/,
    )
  })
})
