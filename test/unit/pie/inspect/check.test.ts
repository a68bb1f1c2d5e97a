/**
 * The fact comparison (src/pie/inspect/check.ts): what the service says it proved against the PIE. The
 * facts expected here are computed by code this project did not write (viem's keccak and ABI
 * encoding for the SHARP fact, @scure/starknet's Poseidon for the Integrity fact), checked first
 * against the published vectors of spec/pie-and-facts.md.
 */
import { readFile } from 'node:fs/promises'
import { poseidonHashMany } from '@scure/starknet'
import { encodeAbiParameters, encodePacked, keccak256 } from 'viem'
import { describe, expect, it } from 'vitest'
import { FactMismatchError } from '../../../../src/core/errors.ts'
import {
  assertQueryFacts,
  checkQueryFacts,
  compareQueryFacts,
  factMismatchError,
  type QueryFacts,
} from '../../../../src/pie/inspect/check.ts'
import type { ProgramHashVariant } from '../../../../src/pie/hash/hash.ts'
import type { PieInspection } from '../../../../src/pie/inspect/inspect.ts'
import { EXAMPLE_PIE } from '../../../helpers/example-pie.ts'

const BOOTLOADER = 0x5ab580b04e3532b6b18f81cfa654a05e29dd8e2352d88df1e765a84072db07n

/** keccak256(abi.encode(programHash, keccak256(abi.encodePacked(uint256[] output)))): one output page. */
function sharpFact(programHash: bigint, output: bigint[]): string {
  const root = keccak256(encodePacked(['uint256[]'], [output]))
  return keccak256(encodeAbiParameters([{ type: 'uint256' }, { type: 'uint256' }], [programHash, BigInt(root)]))
}

/** poseidon([bootloader, poseidon([1, len(output) + 2, programHash, ...output])]). */
function integrityFact(programHash: bigint, output: bigint[]): string {
  return `0x${poseidonHashMany([BOOTLOADER, poseidonHashMany([1n, BigInt(output.length + 2), programHash, ...output])]).toString(16)}`
}

// The published vectors: a program hash (taken as the Pedersen one) and output [10, 55].
const OUTPUT = [10n, 55n]
const PUBLISHED = {
  programHash: '0x407908712e70dd914b006062d8d70bd8aeae06bcfc973cbd4309e7f3a2e825b',
  sharpFact: '0xfabc599614bbd9752bd58d365c7434f7f61792a6fc2ffbd3a0256636915c2c58',
  integrityFact: '0x1c446d13efc5a3a16387eeec2c9347e9fd44e195b178916e1bd27c0a18220f1',
}
// The other two variants: any two felts distinct from it (the comparison only needs three hashes).
const HASHES: Record<ProgramHashVariant, string> = {
  pedersen: PUBLISHED.programHash,
  poseidon: '0x2c2a5f4d6e1b0e0f0c7b3a6d5e4f30211a0b9c8d7e6f5a4b3c2d1e0f1a2b3c4',
  blake: '0x6f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff',
}
const SHARP = Object.fromEntries(
  Object.entries(HASHES).map(([v, hash]) => [v, sharpFact(BigInt(hash), OUTPUT)]),
) as Record<ProgramHashVariant, string>
const INTEGRITY = Object.fromEntries(
  Object.entries(HASHES).map(([v, hash]) => [v, integrityFact(BigInt(hash), OUTPUT)]),
) as Record<ProgramHashVariant, string>

/** The parts of an inspection the comparison reads; `reads` lists each program hash read, in order. */
function inspection(): { inspection: PieInspection; reads: ProgramHashVariant[] } {
  const reads: ProgramHashVariant[] = []
  const programHashes = {} as Record<ProgramHashVariant, string>
  for (const variant of ['pedersen', 'poseidon', 'blake'] as const) {
    Object.defineProperty(programHashes, variant, {
      enumerable: true,
      get: () => {
        reads.push(variant)
        return HASHES[variant]
      },
    })
  }
  const partial = {
    programHashes,
    output: OUTPUT.map((word) => `0x${word.toString(16)}`),
    factTopology: { treeStructure: [1, 0], pageSizes: [2] },
  }
  return { inspection: partial as unknown as PieInspection, reads }
}

const compare = (record: QueryFacts) => compareQueryFacts(record, inspection().inspection)

describe('the independent fact helpers', () => {
  it('give the published vectors', () => {
    expect(SHARP.pedersen).toBe(PUBLISHED.sharpFact)
    expect(INTEGRITY.pedersen).toBe(PUBLISHED.integrityFact)
  })
})

describe("compareQueryFacts with the service's program hash", () => {
  it('accepts the published vectors, whatever their case, leading zeros or base', () => {
    const upper = (hex: string) => `0X${hex.slice(2).toUpperCase()}`
    const padded = (hex: string) => `0x${hex.slice(2).padStart(64, '0')}`
    const record = {
      programHash: upper(PUBLISHED.programHash),
      sharpFactHash: padded(PUBLISHED.sharpFact),
      integrityFactHash: BigInt(PUBLISHED.integrityFact).toString(),
    }
    expect(compare(record)).toEqual({
      ok: true,
      programHashVariant: 'pedersen',
      mismatches: [],
      checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
    })
  })

  it.each(['poseidon', 'blake'] as const)('names the %s variant and judges the facts with its hash', (variant) => {
    const record = {
      programHash: HASHES[variant],
      sharpFactHash: SHARP[variant],
      integrityFactHash: INTEGRITY[variant],
    }
    expect(compare(record)).toEqual({
      ok: true,
      programHashVariant: variant,
      mismatches: [],
      checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
    })
  })

  it('reports a fact that differs against the variant the program hash named, not Pedersen', () => {
    const result = compare({
      programHash: HASHES.poseidon,
      sharpFactHash: SHARP.pedersen,
      integrityFactHash: INTEGRITY.poseidon,
    })
    expect(result).toEqual({
      ok: false,
      programHashVariant: 'poseidon',
      mismatches: [{ field: 'sharpFactHash', expected: SHARP.poseidon, actual: SHARP.pedersen }],
      checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
    })
  })

  it('reports a program hash that is none of the three as differing from the Pedersen one, and judges the facts with Pedersen', () => {
    const result = compare({
      programHash: '0x5',
      sharpFactHash: PUBLISHED.sharpFact,
      integrityFactHash: INTEGRITY.blake,
    })
    expect(result).toEqual({
      ok: false,
      programHashVariant: null,
      mismatches: [
        { field: 'programHash', expected: PUBLISHED.programHash, actual: '0x5' },
        { field: 'integrityFactHash', expected: PUBLISHED.integrityFact, actual: INTEGRITY.blake },
      ],
      checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
    })
  })

  it('reads only the Blake hash when it matches (the other two can take seconds to compute)', () => {
    const { inspection: blakeOnly, reads } = inspection()
    expect(compareQueryFacts({ programHash: HASHES.blake, sharpFactHash: SHARP.blake }, blakeOnly).ok).toBe(true)
    expect(new Set(reads)).toEqual(new Set(['blake']))
  })

  it('does not call a program hash alone a match: it binds no output', () => {
    expect(compare({ programHash: PUBLISHED.programHash, sharpFactHash: null, integrityFactHash: undefined })).toEqual({
      ok: false,
      programHashVariant: 'pedersen',
      mismatches: [],
      checked: ['programHash'],
    })
  })

  it('never matches a value that is not a number', () => {
    expect(compare({ programHash: PUBLISHED.programHash, sharpFactHash: 'not hex' })).toEqual({
      ok: false,
      programHashVariant: 'pedersen',
      mismatches: [{ field: 'sharpFactHash', expected: PUBLISHED.sharpFact, actual: 'not hex' }],
      checked: ['programHash', 'sharpFactHash'],
    })
  })
})

describe("compareQueryFacts without the service's program hash", () => {
  it.each([
    ['pedersen', 'sharpFactHash'],
    ['poseidon', 'sharpFactHash'],
    ['blake', 'sharpFactHash'],
    ['pedersen', 'integrityFactHash'],
    ['poseidon', 'integrityFactHash'],
    ['blake', 'integrityFactHash'],
  ] as const)('accepts one %s fact (%s) and names the variant it fits', (variant, field) => {
    const value = field === 'sharpFactHash' ? SHARP[variant] : INTEGRITY[variant]
    expect(compare({ programHash: null, [field]: value })).toEqual({
      ok: true,
      programHashVariant: variant,
      mismatches: [],
      checked: [field],
    })
  })

  it('accepts both facts of one variant', () => {
    expect(compare({ sharpFactHash: SHARP.poseidon, integrityFactHash: INTEGRITY.poseidon })).toEqual({
      ok: true,
      programHashVariant: 'poseidon',
      mismatches: [],
      checked: ['sharpFactHash', 'integrityFactHash'],
    })
  })

  it("refuses facts of two different variants, each reported against Pedersen (SHARP's default)", () => {
    expect(compare({ sharpFactHash: SHARP.poseidon, integrityFactHash: INTEGRITY.blake })).toEqual({
      ok: false,
      programHashVariant: null,
      mismatches: [
        { field: 'sharpFactHash', expected: PUBLISHED.sharpFact, actual: SHARP.poseidon },
        { field: 'integrityFactHash', expected: PUBLISHED.integrityFact, actual: INTEGRITY.blake },
      ],
      checked: ['sharpFactHash', 'integrityFactHash'],
    })
  })

  it('refuses a fact that fits no variant, reported against Pedersen', () => {
    expect(compare({ programHash: undefined, integrityFactHash: '0x1234' })).toEqual({
      ok: false,
      programHashVariant: null,
      mismatches: [{ field: 'integrityFactHash', expected: PUBLISHED.integrityFact, actual: '0x1234' }],
      checked: ['integrityFactHash'],
    })
  })

  it('names no variant and matches nothing when the record has no fact at all', () => {
    expect(compare({ programHash: null, sharpFactHash: null, integrityFactHash: null })).toEqual({
      ok: false,
      programHashVariant: null,
      mismatches: [],
      checked: [],
    })
    expect(compare({})).toEqual({ ok: false, programHashVariant: null, mismatches: [], checked: [] })
  })
})

describe('checkQueryFacts and assertQueryFacts', () => {
  // The published Pedersen hash of the fibonacci program; its output is fib's [11, 89].
  const PROGRAM_HASH = '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45'
  const FIB_OUTPUT = [11n, 89n]
  const record = {
    programHash: PROGRAM_HASH,
    sharpFactHash: sharpFact(BigInt(PROGRAM_HASH), FIB_OUTPUT),
    integrityFactHash: integrityFact(BigInt(PROGRAM_HASH), FIB_OUTPUT),
  }
  const matched = {
    ok: true,
    programHashVariant: 'pedersen',
    mismatches: [],
    checked: ['programHash', 'sharpFactHash', 'integrityFactHash'],
  }

  it('inspects a pie.zip given by path or as bytes', async () => {
    expect(await checkQueryFacts(record, EXAMPLE_PIE)).toEqual(matched)
    expect(await checkQueryFacts(record, new Uint8Array(await readFile(EXAMPLE_PIE)))).toEqual(matched)
  })

  it('takes an inspection already made as it is, without inspecting again', async () => {
    const made = inspection().inspection
    const record = { programHash: null, sharpFactHash: SHARP.blake }
    const result = { ok: true, programHashVariant: 'blake', mismatches: [], checked: ['sharpFactHash'] }
    expect(await checkQueryFacts(record, made)).toEqual(result)
    expect(await assertQueryFacts(record, made)).toEqual(result)
  })

  it('passes its options to the inspection', async () => {
    const controller = new AbortController()
    controller.abort(new Error('stopped by the test'))
    await expect(checkQueryFacts(record, EXAMPLE_PIE, { signal: controller.signal })).rejects.toThrow(
      'stopped by the test',
    )
  })

  it('assertQueryFacts returns the result of a match and throws FactMismatchError otherwise', async () => {
    await expect(assertQueryFacts(record, EXAMPLE_PIE)).resolves.toEqual(matched)
    const error = await assertQueryFacts({ ...record, sharpFactHash: '0x1' }, EXAMPLE_PIE).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(FactMismatchError)
    expect((error as FactMismatchError).shortMessage).toBe("The service's sharpFactHash differs from the PIE's")
  })
})

describe('factMismatchError', () => {
  it('says the service reported nothing to compare when nothing differs', () => {
    const error = factMismatchError({ ok: false, programHashVariant: null, mismatches: [], checked: [] })
    expect(error).toBeInstanceOf(FactMismatchError)
    expect(error.message).toBe(
      'The service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent)',
    )
  })

  it('names the one field that differs, with both values', () => {
    const error = factMismatchError({
      ok: false,
      programHashVariant: 'pedersen',
      mismatches: [{ field: 'integrityFactHash', expected: '0xbb', actual: '0xaa' }],
      checked: ['integrityFactHash'],
    })
    expect(error.shortMessage).toBe("The service's integrityFactHash differs from the PIE's")
    expect(error.metaMessages).toEqual(['integrityFactHash: the service says 0xaa, the PIE gives 0xbb'])
  })

  it('names every field that differs', () => {
    const error = factMismatchError({
      ok: false,
      programHashVariant: null,
      mismatches: [
        { field: 'programHash', expected: '0x1', actual: '0x2' },
        { field: 'sharpFactHash', expected: '0x3', actual: '0x4' },
      ],
      checked: ['programHash', 'sharpFactHash'],
    })
    expect(error.message).toBe(
      "The service's programHash and sharpFactHash differ from the PIE's\n\nprogramHash: the service says 0x2, the PIE gives 0x1\nsharpFactHash: the service says 0x4, the PIE gives 0x3",
    )
  })
})
