import { poseidonHashMany } from '@scure/starknet'
import { describe, expect, it } from 'vitest'
import {
  decodeVerifications,
  encodeVerifications,
  GET_ALL_VERIFICATIONS_SELECTOR,
  judgeVerifications,
  makeVerification,
  selectorFromName,
  VerificationDecodeError,
} from '../../../src/chain/integrity.ts'
import { whyNotRegistered } from '../../../src/chain/integrity.ts'
import { computeVerificationHash } from '../../../src/pie/facts/facts.ts'

/** The spec's published Integrity (bootloaded) fact vector (pie-and-facts.md). */
const FACT = 0x1c446d13efc5a3a16387eeec2c9347e9fd44e195b178916e1bd27c0a18220f1n

/**
 * An answer to `get_all_verifications_for_fact_hash(FACT)` as a Starknet node returns it, built
 * by hand from the registry's ABI: `[len, (verification_hash, security_bits, layout, hasher,
 * stone_version, memory_verification) × len]`, the settings as Cairo short strings (their ASCII
 * bytes: 0x726563757273697665 is "recursive"). The verification hashes are the registry's
 * formula, poseidon(fact, poseidon(layout, hasher, stone_version, memory_verification), bits).
 */
const RECORDED_RESPONSE = {
  jsonrpc: '2.0',
  id: 3,
  result: [
    '0x2',
    '0x58d38a1fda5d0163cbff2cc6066599f12af90da8d7053f913db714e444561d',
    '0x60',
    '0x726563757273697665',
    '0x6b656363616b5f3136305f6c7362',
    '0x73746f6e6535',
    '0x737472696374',
    '0x2934eb44f39a60b79ed33d005f1dc4420c35994fb9a63976f3ebf5ecffc6e8e',
    '0x80',
    '0x7265637572736976655f776974685f706f736569646f6e',
    '0x626c616b6532735f3234385f6c7362',
    '0x73746f6e6536',
    '0x72656c61786564',
  ],
}

describe('selectors', () => {
  it('is the Starknet Keccak of the name (known vectors)', () => {
    expect(selectorFromName('transfer')).toBe(0x83afd3f4caedc6eebf44246fe54e38c95e3179a5ec9ea81740eca5b482d12en)
    // Published independently for Integrity's FactRegistry.
    expect(GET_ALL_VERIFICATIONS_SELECTOR).toBe(0x3731d7667bf026b9960bf90daef8b575526345deb176f45e77fce4127cb8028n)
    expect(GET_ALL_VERIFICATIONS_SELECTOR < 1n << 250n).toBe(true)
  })
})

describe('decodeVerifications', () => {
  it('decodes the recorded answer in ABI order', () => {
    expect(decodeVerifications(RECORDED_RESPONSE.result)).toEqual([
      {
        verificationHash: '0x58d38a1fda5d0163cbff2cc6066599f12af90da8d7053f913db714e444561d',
        securityBits: 96,
        layout: 'recursive',
        hasher: 'keccak_160_lsb',
        stoneVersion: 'stone5',
        memoryVerification: 'strict',
      },
      {
        verificationHash: '0x2934eb44f39a60b79ed33d005f1dc4420c35994fb9a63976f3ebf5ecffc6e8e',
        securityBits: 128,
        layout: 'recursive_with_poseidon',
        hasher: 'blake2s_248_lsb',
        stoneVersion: 'stone6',
        memoryVerification: 'relaxed',
      },
    ])
  })

  it('recomputes both recorded verification hashes from the fact', () => {
    const judged = judgeVerifications(FACT, decodeVerifications(RECORDED_RESPONSE.result), null)
    expect(judged.map((verification) => verification.hashMatches)).toEqual([true, true])
    // The same answer for another fact does not recompute: it was not for that fact.
    const other = judgeVerifications(FACT + 1n, decodeVerifications(RECORDED_RESPONSE.result), null)
    expect(other.map((verification) => verification.hashMatches)).toEqual([false, false])
  })

  it('decodes an empty list', () => {
    expect(decodeVerifications(['0x0'])).toEqual([])
  })

  it('round-trips with encodeVerifications', () => {
    const list = decodeVerifications(RECORDED_RESPONSE.result)
    expect(encodeVerifications(list)).toEqual(RECORDED_RESPONSE.result)
  })

  it('keeps settings that are not printable short strings as hex', () => {
    const [verification] = decodeVerifications(['0x1', '0x5', '0x60', '0x1', '0x0', '0xff41', '0x737472696374'])
    expect(verification).toMatchObject({
      layout: '0x1',
      hasher: '',
      stoneVersion: '0xff41',
      memoryVerification: 'strict',
    })
    expect(encodeVerifications([verification!])).toEqual([
      '0x1',
      '0x5',
      '0x60',
      '0x1',
      '0x0',
      '0xff41',
      '0x737472696374',
    ])
    expect(judgeVerifications(5n, [verification!], null)[0]!.hashMatches).toBe(false)
  })

  it('rejects answers that are not a list of verifications', () => {
    expect(() => decodeVerifications([])).toThrow(VerificationDecodeError)
    expect(() => decodeVerifications(['0x1', '0x2'])).toThrow(/has 2 felts; an array of 1 verifications takes 7/)
    expect(() => decodeVerifications(['0x2', ...RECORDED_RESPONSE.result.slice(1, 7)])).toThrow(VerificationDecodeError)
    expect(() => decodeVerifications(['0x1', '0x5', '0x100000000', '0x1', '0x1', '0x1', '0x1'])).toThrow(
      /does not fit a u32/,
    )
    expect(() => decodeVerifications(['0x1', '12', '0x1', '0x1', '0x1', '0x1', '0x1'])).toThrow(/felt 1 is "12"/)
  })
})

describe('verification hash', () => {
  const settings = {
    layout: 'recursive',
    hasher: 'keccak_160_lsb',
    stoneVersion: 'stone5',
    memoryVerification: 'strict',
    securityBits: 96,
  }

  it('is the registry formula over the short strings', () => {
    const ascii = (text: string) => BigInt(`0x${Buffer.from(text).toString('hex')}`)
    const configHash = poseidonHashMany(['recursive', 'keccak_160_lsb', 'stone5', 'strict'].map(ascii))
    const expected = poseidonHashMany([FACT, configHash, 96n])
    expect(computeVerificationHash(FACT, settings)).toBe(expected)
    expect(BigInt(makeVerification(FACT, settings).verificationHash)).toBe(expected)
  })

  it('changes with every setting and the security bits', () => {
    const base = computeVerificationHash(FACT, settings)
    for (const change of [
      { layout: 'small' },
      { hasher: 'keccak_248_lsb' },
      { stoneVersion: 'stone6' },
      { memoryVerification: 'relaxed' },
      { securityBits: 97 },
    ]) {
      expect(computeVerificationHash(FACT, { ...settings, ...change })).not.toBe(base)
    }
  })
})

describe('judging verifications', () => {
  const verifications = decodeVerifications(RECORDED_RESPONSE.result)

  it('applies each expected setting, and security bits as a minimum', () => {
    const judge = (expected: Parameters<typeof judgeVerifications>[2]) =>
      judgeVerifications(FACT, verifications, expected).map((verification) => verification.meetsExpected)
    expect(judge(null)).toEqual([true, true])
    expect(judge({})).toEqual([true, true])
    expect(judge({ layout: 'recursive' })).toEqual([true, false])
    expect(judge({ stoneVersion: 'stone6', memoryVerification: 'relaxed' })).toEqual([false, true])
    expect(judge({ securityBits: 100 })).toEqual([false, true])
    expect(judge({ securityBits: 96 })).toEqual([true, true])
    expect(judge({ hasher: 'keccak_160_lsb', securityBits: 100 })).toEqual([false, false])
  })

  it('explains why a fact does not count', () => {
    expect(whyNotRegistered(judgeVerifications(FACT, verifications, null), null)).toBeNull()
    expect(whyNotRegistered([], null)).toBe('the registry holds no verification of this fact')
    const expected = { layout: 'small', securityBits: 80 }
    expect(whyNotRegistered(judgeVerifications(FACT, verifications, expected), expected)).toBe(
      'the registry holds 2 verifications of this fact (recursive/keccak_160_lsb/stone5/strict, 96 security bits; recursive_with_poseidon/blake2s_248_lsb/stone6/relaxed, 128 security bits), none with what is required (layout small, at least 80 security bits)',
    )
    expect(whyNotRegistered(judgeVerifications(FACT + 1n, verifications, null), null)).toBe(
      'the registry holds 2 verifications of this fact, but no verification hash recomputes from the fact and its settings',
    )
  })

  it('does not count a verification whose hash does not recompute, even with the expected settings', () => {
    const tampered = [{ ...verifications[0]!, verificationHash: '0x1234' }]
    const [judged] = judgeVerifications(FACT, tampered, { layout: 'recursive' })
    expect(judged).toMatchObject({ hashMatches: false, meetsExpected: true })
    expect(whyNotRegistered([judged!], { layout: 'recursive' })).toMatch(/no verification hash recomputes/)
  })
})
