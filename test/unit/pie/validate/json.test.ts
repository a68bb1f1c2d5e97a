import { describe, expect, it } from 'vitest'
import { JsonBudgetError, JsonSyntaxError, parseJson } from '../../../../src/pie/validate/json.ts'

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

  it('reads 512 levels of nesting (Python reads about 990), and refuses more as past its budget, before the stack overflows', () => {
    expect(parseJson(`${'['.repeat(512)}${']'.repeat(512)}`)).toBeInstanceOf(Array)
    expect(() => parseJson('['.repeat(100_000))).toThrow(JsonBudgetError)
    expect(() => parseJson(`${'['.repeat(513)}${']'.repeat(513)}`)).toThrow(/more than 512 JSON levels of nesting/)
  })

  it("refuses an integer of more than 4,300 digits as Python's json does, and reads a longer float", () => {
    expect(parseJson(`[${'9'.repeat(4300)}, -${'9'.repeat(4300)}]`)).toEqual([10n ** 4300n - 1n, 1n - 10n ** 4300n])
    expect(() => parseJson(`{"n": ${'9'.repeat(4301)}}`)).toThrow(
      /an integer of 4301 digits; Python's json reads integers of at most 4300 digits at character 6/,
    )
    expect(parseJson(`0.${'1'.repeat(5000)}`)).toBeCloseTo(0.111)
  })

  it('reads NaN and Infinity (as Python does) only for a caller that hears of them', () => {
    expect(() => parseJson('[NaN]')).toThrow(JsonSyntaxError)
    const heard: [string, number][] = []
    expect(
      parseJson('[NaN, Infinity, -Infinity]', {}, { onNonFinite: (literal, at) => heard.push([literal, at]) }),
    ).toEqual([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])
    expect(heard).toEqual([
      ['NaN', 1],
      ['Infinity', 6],
      ['-Infinity', 16],
    ])
  })
})
