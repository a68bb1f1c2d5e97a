import { describe, expect, it } from 'vitest'
import { JsonSyntaxError, parseJson } from '../../../../src/pie/validate/json.ts'

describe('exact JSON reader', () => {
  it('keeps integers above 2^53 exact as bigints', () => {
    const big = '3618502788666131213697322783095070105623107215331596699973092056135872020480'
    const value = parseJson(`{"data": [${big}, 1, -5, 9007199254740993]}`) as Map<string, unknown>
    expect(value.get('data')).toEqual([BigInt(big), 1n, -5n, 9007199254740993n])
  })

  it('keeps numbers with a fraction or exponent as numbers, so rounding is detectable', () => {
    expect(parseJson('[3.6185027886661313e+75, 1.5, 2E3]')).toEqual([3.6185027886661313e75, 1.5, 2000])
  })

  it('keeps key order exactly, including integer-like keys', () => {
    const value = parseJson('{"b": 1, "2": 2, "a": 3, "1": 4}') as Map<string, unknown>
    expect([...value.keys()]).toEqual(['b', '2', 'a', '1'])
  })

  it('reads strings with escapes, literals and nesting', () => {
    expect(parseJson(' {"s": "a\\"b\\u0041\\n", "t": true, "f": false, "n": null, "e": [], "o": {}} ')).toEqual(
      new Map<string, unknown>([
        ['s', 'a"bA\n'],
        ['t', true],
        ['f', false],
        ['n', null],
        ['e', []],
        ['o', new Map()],
      ]),
    )
  })

  it.each([
    ['{"a": 1,}', 8],
    ['[1 2]', 3],
    ['{"a" 1}', 5],
    ['01', 1],
    ['"abc', 0],
    ['[1] x', 4],
    ['', 0],
  ])('reports the position of a syntax error in %j', (text, position) => {
    let error: unknown
    try {
      parseJson(text)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(JsonSyntaxError)
    expect((error as JsonSyntaxError).position).toBe(position)
  })

  it('refuses nesting deep enough to overflow the stack', () => {
    expect(() => parseJson('['.repeat(100_000))).toThrow(/too deep/)
  })
})
