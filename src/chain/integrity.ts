import { keccak as starknetKeccak } from '@scure/starknet'
import { computeVerificationHash } from '../pie/facts/index.ts'
import { shortString } from '../pie/hash/index.ts'
import { feltHex } from './fact.ts'
import type {
  ExpectedVerification,
  IntegrityVerification,
  JudgedVerification,
  StarknetRegistryKind,
  VerifierConfiguration,
} from './types.ts'

/**
 * Integrity's FactRegistry (HerodotusDev/integrity, src/contracts/fact_registry_interface.cairo):
 *
 *   fn get_all_verifications_for_fact_hash(fact_hash: felt252) -> Array<VerificationListElement>
 *   struct VerificationListElement {
 *     verification_hash: felt252, security_bits: u32,
 *     verifier_config: VerifierConfiguration { layout, hasher, stone_version, memory_verification },
 *   }
 *
 * The Satellite's getter of the same name (HerodotusDev/satellite, cairo/src/cairo_fact_registry.cairo)
 * takes an extra `is_mocked: bool` and answers a `Span<VerificationListElement>`, read from
 * Integrity's FactRegistry (or, mocked, from the mocked one) and serialised the same way.
 *
 * Cairo's Serde writes an Array as its length then its elements, a struct as its fields in
 * declaration order (a nested struct inline), a felt252 or a u32 as one felt: so the answer is
 * `[n, (hash, bits, layout, hasher, stone_version, memory_verification) × n]`.
 */

export const GET_ALL_VERIFICATIONS = 'get_all_verifications_for_fact_hash'

/** Felts per VerificationListElement. */
const ELEMENT_SIZE = 6
const U32_LIMIT = 1n << 32n

/**
 * A Starknet entry point's selector: the Starknet Keccak (keccak256, low 250 bits) of its name.
 *
 * @param name The entry point's name.
 * @returns The selector.
 * @example
 * ```ts
 * import { selectorFromName } from 'proving-kit/chain'
 *
 * const selector = selectorFromName('get_all_verifications_for_fact_hash')
 * ```
 */
export function selectorFromName(name: string): bigint {
  return starknetKeccak(new TextEncoder().encode(name))
}

/** The selector of `get_all_verifications_for_fact_hash`. */
export const GET_ALL_VERIFICATIONS_SELECTOR = selectorFromName(GET_ALL_VERIFICATIONS)

/**
 * The calldata of `get_all_verifications_for_fact_hash`: Integrity's FactRegistry takes the fact
 * alone; the Satellite takes `(fact_hash, is_mocked)`.
 *
 * @param fact The fact.
 * @param kind The registry it is sent to.
 * @param mocked Whether to read mocked facts (the Satellite only).
 * @returns The felts.
 * @example
 * ```ts
 * import { verificationsCalldata } from 'proving-kit/chain'
 *
 * verificationsCalldata(0x2f3an, 'satellite', false) // [0x2f3an, 0n]
 * ```
 */
export function verificationsCalldata(fact: bigint, kind: StarknetRegistryKind, mocked: boolean): bigint[] {
  return kind === 'satellite' ? [fact, mocked ? 1n : 0n] : [fact]
}

/** A registry's answer to `get_all_verifications_for_fact_hash` that is not a list of verifications. */
export class VerificationDecodeError extends Error {
  override name = 'VerificationDecodeError'
}

/**
 * Reads the answer of `get_all_verifications_for_fact_hash`: an array length, then per verification
 * its hash, security bits, and four settings as short strings.
 *
 * @param felts The answer's felts (hex strings or integers).
 * @returns The verifications.
 * @throws {VerificationDecodeError} When the answer is not such a list.
 * @example
 * ```ts
 * import { decodeVerifications } from 'proving-kit/chain'
 *
 * const verifications = decodeVerifications(['0x0']) // []
 * ```
 */
export function decodeVerifications(felts: readonly (string | bigint)[]): IntegrityVerification[] {
  const values = felts.map((felt, index) => toBigInt(felt, index))
  if (values.length === 0) throw new VerificationDecodeError('the answer is empty; expected at least the array length')
  const count = values[0]!
  const expectedLength = 1n + count * BigInt(ELEMENT_SIZE)
  if (BigInt(values.length) !== expectedLength) {
    throw new VerificationDecodeError(
      `the answer has ${values.length} felts; an array of ${count} verifications takes ${expectedLength}`,
    )
  }
  const verifications: IntegrityVerification[] = []
  for (let i = 0; i < Number(count); i++) {
    const [hash, bits, layout, hasher, stoneVersion, memoryVerification] = values.slice(
      1 + i * ELEMENT_SIZE,
      1 + (i + 1) * ELEMENT_SIZE,
    ) as [bigint, bigint, bigint, bigint, bigint, bigint]
    if (bits >= U32_LIMIT)
      throw new VerificationDecodeError(`verification ${i}: security_bits ${bits} does not fit a u32`)
    verifications.push({
      verificationHash: feltHex(hash),
      securityBits: Number(bits),
      layout: readShortString(layout),
      hasher: readShortString(hasher),
      stoneVersion: readShortString(stoneVersion),
      memoryVerification: readShortString(memoryVerification),
    })
  }
  return verifications
}

/**
 * The inverse of {@link decodeVerifications}: verifications as a registry answers them (to build an answer in a test).
 *
 * @param verifications The verifications.
 * @returns The felts, as hex.
 * @example
 * ```ts
 * import { encodeVerifications, makeVerification } from 'proving-kit/chain'
 *
 * const settings = {
 *   layout: 'recursive',
 *   hasher: 'keccak_160_lsb',
 *   stoneVersion: 'stone6',
 *   memoryVerification: 'strict',
 *   securityBits: 96,
 * }
 * const felts = encodeVerifications([makeVerification(0x2f3an, settings)])
 * ```
 */
export function encodeVerifications(verifications: readonly IntegrityVerification[]): string[] {
  const felts: bigint[] = [BigInt(verifications.length)]
  for (const verification of verifications) {
    felts.push(
      BigInt(verification.verificationHash),
      BigInt(verification.securityBits),
      ...configurationFelts(verification),
    )
  }
  return felts.map(feltHex)
}

/**
 * A verification of a fact under given settings, with its hash computed as the registry does.
 *
 * @param fact The fact.
 * @param settings The verifier's settings and security bits.
 * @returns The verification.
 * @example
 * ```ts
 * import { makeVerification } from 'proving-kit/chain'
 *
 * const verification = makeVerification(0x2f3an, {
 *   layout: 'recursive',
 *   hasher: 'keccak_160_lsb',
 *   stoneVersion: 'stone6',
 *   memoryVerification: 'strict',
 *   securityBits: 96,
 * })
 * ```
 */
export function makeVerification(
  fact: bigint,
  settings: VerifierConfiguration & { securityBits: number },
): IntegrityVerification {
  return {
    verificationHash: feltHex(computeVerificationHash(fact, settings)),
    securityBits: settings.securityBits,
    layout: settings.layout,
    hasher: settings.hasher,
    stoneVersion: settings.stoneVersion,
    memoryVerification: settings.memoryVerification,
  }
}

/**
 * Judges each verification of a fact: its hash must recompute from the fact and its own settings
 * (otherwise the registry is not Integrity's, or the answer was not for this fact), and its
 * settings must be the expected ones with at least the expected security bits.
 *
 * @param fact The fact.
 * @param verifications What the registry holds for it.
 * @param expected The settings a verification must have; null: any settings count.
 * @returns Each verification with `hashMatches` and `meetsExpected`.
 * @example
 * ```ts
 * import { decodeVerifications, judgeVerifications } from 'proving-kit/chain'
 *
 * const judged = judgeVerifications(0x2f3an, decodeVerifications(['0x0']), { securityBits: 96 })
 * const counts = judged.some((each) => each.hashMatches && each.meetsExpected)
 * ```
 */
export function judgeVerifications(
  fact: bigint,
  verifications: readonly IntegrityVerification[],
  expected: ExpectedVerification | null,
): JudgedVerification[] {
  return verifications.map((verification) => ({
    ...verification,
    hashMatches: hashMatches(fact, verification),
    meetsExpected: meetsExpected(verification, expected),
  }))
}

/**
 * Why none of the verifications counts, in a sentence that says what the registry holds (the
 * settings and security bits of each verification whose hash recomputes) and what was required;
 * null when one counts.
 */
export function whyNotRegistered(
  judged: readonly JudgedVerification[],
  expected: ExpectedVerification | null,
): string | null {
  if (judged.some((verification) => verification.hashMatches && verification.meetsExpected)) return null
  if (judged.length === 0) return 'the registry holds no verification of this fact'
  const noun = judged.length === 1 ? 'verification' : 'verifications'
  const genuine = judged.filter((verification) => verification.hashMatches)
  if (genuine.length === 0) {
    return `the registry holds ${judged.length} ${noun} of this fact, but no verification hash recomputes from the fact and its settings`
  }
  const shown = genuine.slice(0, HELD_SHOWN).map(describeVerification)
  if (genuine.length > HELD_SHOWN) shown.push(`${genuine.length - HELD_SHOWN} more`)
  return `the registry holds ${judged.length} ${noun} of this fact (${shown.join('; ')}), none with what is required (${describeExpected(expected)})`
}

/** How many verifications a refusal lists before "and N more": a fact rarely has more. */
const HELD_SHOWN = 3

export function describeExpected(expected: ExpectedVerification | null): string {
  if (!expected) return 'any'
  const parts = [
    expected.layout && `layout ${expected.layout}`,
    expected.hasher && `hasher ${expected.hasher}`,
    expected.stoneVersion && `stone version ${expected.stoneVersion}`,
    expected.memoryVerification && `memory verification ${expected.memoryVerification}`,
    expected.securityBits !== undefined && `at least ${expected.securityBits} security bits`,
  ].filter(Boolean)
  return parts.length ? parts.join(', ') : 'any'
}

export function describeVerification(verification: IntegrityVerification): string {
  return `${verification.layout}/${verification.hasher}/${verification.stoneVersion}/${verification.memoryVerification}, ${verification.securityBits} security bits`
}

function hashMatches(fact: bigint, verification: IntegrityVerification): boolean {
  // Settings that are not short strings cannot come from Integrity, whose verifier accepts only
  // known names ('recursive', 'keccak_160_lsb', 'stone6', 'strict', ...).
  if (!isShortStringText(verification)) return false
  return computeVerificationHash(fact, verification) === BigInt(verification.verificationHash)
}

function meetsExpected(verification: IntegrityVerification, expected: ExpectedVerification | null): boolean {
  if (!expected) return true
  const same = (key: keyof VerifierConfiguration) => expected[key] === undefined || expected[key] === verification[key]
  return (
    same('layout') &&
    same('hasher') &&
    same('stoneVersion') &&
    same('memoryVerification') &&
    (expected.securityBits === undefined || verification.securityBits >= expected.securityBits)
  )
}

function configurationFelts(configuration: VerifierConfiguration): bigint[] {
  return [configuration.layout, configuration.hasher, configuration.stoneVersion, configuration.memoryVerification].map(
    writeShortString,
  )
}

/** Printable ASCII reads as text; anything else stays as its 0x hex so it is shown, not mangled. */
function readShortString(felt: bigint): string {
  if (felt === 0n) return ''
  const hex = felt.toString(16)
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')
  if (bytes.length <= 31 && bytes.every((byte) => byte >= 0x20 && byte < 0x7f)) return bytes.toString('latin1')
  return feltHex(felt)
}

function writeShortString(text: string): bigint {
  return isHexFallback(text) ? BigInt(text) : shortString(text)
}

/** readShortString's fallback form: 0x hex whose bytes are not printable ASCII. */
function isHexFallback(text: string): boolean {
  if (!/^0x[0-9a-f]+$/.test(text)) return false
  return readShortString(BigInt(text)) === text
}

function isShortStringText(configuration: VerifierConfiguration): boolean {
  return [
    configuration.layout,
    configuration.hasher,
    configuration.stoneVersion,
    configuration.memoryVerification,
  ].every((text) => !isHexFallback(text) && text.length <= 31 && /^[\x20-\x7e]*$/.test(text))
}

function toBigInt(felt: string | bigint, index: number): bigint {
  if (typeof felt === 'bigint') return felt
  if (typeof felt === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(felt)) return BigInt(felt)
  throw new VerificationDecodeError(`felt ${index} is ${JSON.stringify(felt)}; expected 0x hex`)
}
