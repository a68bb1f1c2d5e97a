import { pedersen } from '@scure/starknet'
import { keccak_256 } from '@noble/hashes/sha3.js'
import { describe, expect, it } from 'vitest'
import {
  blakeHashFelts,
  computeIntegrityFact,
  computeOutputRoot,
  computeProgramHash,
  computeSharpFact,
  computeVerificationHash,
  factTopologyFromAdditionalData,
  jobSizeForSteps,
  programHashChain,
  shortString,
  toHex,
} from '../../../../src/pie/index.ts'
import { parseJson } from '../../../../src/pie/validate/json.ts'
import { FIBONACCI_PROGRAM } from '../../../../src/pie/generate/generate.ts'

// Published vectors (pie-and-facts.md), computed outside this project.
const FIB_PROGRAM_HASH = 0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45n
const VECTOR_PROGRAM_HASH = 0x407908712e70dd914b006062d8d70bd8aeae06bcfc973cbd4309e7f3a2e825bn
const VECTOR_SHARP_FACT = 0xfabc599614bbd9752bd58d365c7434f7f61792a6fc2ffbd3a0256636915c2c58n
const VECTOR_INTEGRITY_FACT = 0x1c446d13efc5a3a16387eeec2c9347e9fd44e195b178916e1bd27c0a18220f1n

const word = (value: bigint) => {
  const bytes = new Uint8Array(32)
  for (let i = 31, v = value; i >= 0; i--, v >>= 8n) bytes[i] = Number(v & 0xffn)
  return bytes
}
const keccakInt = (...values: bigint[]) =>
  BigInt(`0x${Buffer.from(keccak_256(Buffer.concat(values.map(word)))).toString('hex')}`)

describe('published vectors', () => {
  it('pedersen(0, 0)', () => {
    expect(pedersen(0n, 0n)).toBe('0x49ee3eba8c1600700ee1b87eb599f16716b0b1022947733551fde4050ca6804')
  })

  it('Pedersen program hash of fibonacci_compiled.json (its words, as the project carries them)', () => {
    const program = {
      ...FIBONACCI_PROGRAM,
      data: [...FIBONACCI_PROGRAM.data],
      builtins: [...FIBONACCI_PROGRAM.builtins],
    }
    expect(program.main).toBe(6)
    expect(program.builtins).toEqual(['output'])
    expect(computeProgramHash(program, 'pedersen')).toBe(FIB_PROGRAM_HASH)
    expect(toHex(computeProgramHash(program))).toBe('0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45')
  })

  it('SHARP fact for program hash 0x4079... and output [10, 55]', () => {
    expect(computeSharpFact(VECTOR_PROGRAM_HASH, [10n, 55n])).toBe(VECTOR_SHARP_FACT)
  })

  it('Integrity (bootloaded) fact for the same program hash and output', () => {
    expect(computeIntegrityFact(VECTOR_PROGRAM_HASH, [10n, 55n])).toBe(VECTOR_INTEGRITY_FACT)
  })
})

describe('program hash chain', () => {
  it('is [0, main, n_builtins, builtins as short strings, ...data]', () => {
    expect(programHashChain({ data: [7n, 8n], builtins: ['output', 'pedersen'], main: 1 })).toEqual([
      0n,
      1n,
      2n,
      0x6f7574707574n,
      0x706564657273656en,
      7n,
      8n,
    ])
  })

  it('short strings are ASCII big-endian, at most 31 characters', () => {
    expect(shortString('output')).toBe(0x6f7574707574n)
    expect(shortString('')).toBe(0n)
    expect(() => shortString('x'.repeat(32))).toThrow(/short string/)
  })

  it('Poseidon and Blake variants differ from Pedersen and are deterministic', async () => {
    const program = {
      ...FIBONACCI_PROGRAM,
      data: [...FIBONACCI_PROGRAM.data],
      builtins: [...FIBONACCI_PROGRAM.builtins],
    }
    const poseidon = computeProgramHash(program, 'poseidon')
    const blake = computeProgramHash(program, 'blake')
    expect(new Set([poseidon, blake, FIB_PROGRAM_HASH]).size).toBe(3)
    expect(computeProgramHash(program, 'blake')).toBe(blake)
    expect(blakeHashFelts(programHashChain(program))).toBe(blake)
  })
})

describe('Blake felt encoding (vectors of starknet-types-core, matching Cairo 0.14)', () => {
  it.each([
    [[], 874258848688468311465623299960361657518391155660316941922502367727700287818n],
    [[(1n << 63n) - 1n], 94160078030592802631039216199460125121854007413180444742120780261703604445n],
    [[1n << 63n], 318549634615606806810268830802792194529205864650702991817600345489579978482n],
    [
      [0x800000000000011000000000000000000000000000000000000000000000000n],
      3505594194634492896230805823524239179921427575619914728883524629460058657521n,
    ],
    [[42n, 1n << 63n, 1337n], 1127477916086913892828040583976438888091205536601278656613505514972451246501n],
    [[(1n << 64n) - 1n], 3515074221976790747383295076946184515593027667350620348239642126105984996390n],
    [[0n], 0x5768af071a2f8df7c9df9dc4ca0e7a1c5908d5eff88af963c3264f412dbdf43n],
    [[1n, 2n], 0x5534c03a14b214436366f30e9c77b6e56c8835de7dc5aee36957d4384cce66dn],
  ])('blake(%s)', (input, expected) => {
    expect(blakeHashFelts(input)).toBe(expected)
  })
})

describe('output root and fact topology', () => {
  const output = [1n, 2n, 3n, 4n, 5n]

  it('without pages the root is keccak of the output words', () => {
    expect(computeOutputRoot(output)).toBe(keccakInt(...output))
    const topology = factTopologyFromAdditionalData(5, parseJson('{"pages": {}, "attributes": {}}'))
    expect(topology).toEqual({ treeStructure: [1, 0], pageSizes: [5] })
  })

  it('with pages follows gps_fact_topology: leaves are page hashes, inner nodes 1 + keccak(hash, end, ...)', () => {
    const additional = parseJson(
      '{"pages": {"1": [2, 2], "2": [4, 1]}, "attributes": {"gps_fact_topology": [2, 2, 1, 2]}}',
    )
    const topology = factTopologyFromAdditionalData(5, additional)
    expect(topology).toEqual({ treeStructure: [2, 2, 1, 2], pageSizes: [2, 2, 1] })
    const page0 = keccakInt(1n, 2n)
    const page1 = keccakInt(3n, 4n)
    const page2 = keccakInt(5n)
    const inner = 1n + keccakInt(page0, 2n, page1, 4n)
    const root = 1n + keccakInt(inner, 4n, page2, 5n)
    expect(computeOutputRoot(output, topology)).toBe(root)
    expect(computeSharpFact(VECTOR_PROGRAM_HASH, output, topology)).toBe(keccakInt(VECTOR_PROGRAM_HASH, root))
  })

  it('sorts page ids numerically', () => {
    const additional = parseJson('{"pages": {"2": [4, 1], "1": [2, 2]}, "attributes": {"gps_fact_topology": [3, 2]}}')
    expect(factTopologyFromAdditionalData(5, additional).pageSizes).toEqual([2, 2, 1])
  })

  it.each([
    ['{"pages": {"1": [2, 3]}, "attributes": {}}', /gps_fact_topology attribute is missing/],
    ['{"pages": {"2": [2, 3]}, "attributes": {"gps_fact_topology": [2, 1]}}', /expected output page id 1/],
    ['{"pages": {"1": [2, 2]}, "attributes": {"gps_fact_topology": [2, 1]}}', /cover the whole output/],
    ['{"pages": {}, "attributes": {"gps_fact_topology": [1]}}', /in pairs/],
    // cairo-lang unpacks each page as (start, size), cairo-vm reads a list of two: an object is neither's.
    [
      '{"pages": {"1": {"start": 2, "size": 3}}, "attributes": {"gps_fact_topology": [2, 1, 0, 2]}}',
      /output page 1 is an object; expected \[start, size\]/,
    ],
  ])('rejects %s', (json, message) => {
    expect(() => factTopologyFromAdditionalData(5, parseJson(json))).toThrow(message)
  })

  it('rejects a tree that leaves more than one root', () => {
    expect(() => computeOutputRoot(output, { treeStructure: [2, 0], pageSizes: [2, 3] })).toThrow(/single root/)
  })
})

describe('verification hash and job size', () => {
  it('binds the fact to the verifier settings', () => {
    const settings = {
      layout: 'recursive',
      hasher: 'keccak_160_lsb',
      stoneVersion: 'stone6',
      memoryVerification: 'strict',
      securityBits: 96,
    }
    const a = computeVerificationHash(VECTOR_INTEGRITY_FACT, settings)
    expect(a).toBe(computeVerificationHash(VECTOR_INTEGRITY_FACT, { ...settings }))
    expect(a).not.toBe(computeVerificationHash(VECTOR_INTEGRITY_FACT, { ...settings, memoryVerification: 'relaxed' }))
  })

  it.each([
    [1, 'XS'],
    [6_500_000, 'XS'],
    [6_500_001, 'S'],
    [13_000_000, 'S'],
    [13_000_001, 'M'],
    [30_000_000, 'M'],
    [30_000_001, 'L'],
  ])('%i steps -> %s', (steps, size) => {
    expect(jobSizeForSteps(steps)).toBe(size)
  })
})
