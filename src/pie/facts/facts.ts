/**
 * The facts a proof of a PIE registers:
 * - SHARP fact (Ethereum): keccak(programHash, outputRoot), the root of the output Merkle tree
 *   whose shape comes from the output builtin's pages and `gps_fact_topology` attribute
 *   (cairo-lang's generate_output_root / get_fact_topology_from_additional_data);
 * - Integrity fact (Starknet): the PIE run inside the bootloader, hashed with Poseidon;
 * - the Integrity verification hash, which binds a fact to the verifier settings.
 */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { walkFactTree, type FactTopology } from '../shared/index.ts'
import { poseidonHashManyFast as poseidonHashMany, shortString } from '../hash/index.ts'

/** Program hash of the bootloader that runs a PIE for the Integrity verifier. */
export const BOOTLOADER_PROGRAM_HASH = 0x5ab580b04e3532b6b18f81cfa654a05e29dd8e2352d88df1e765a84072db07n

const TWO_POW_256 = 1n << 256n

function keccakWords(values: readonly bigint[]): bigint {
  const bytes = new Uint8Array(32 * values.length)
  const view = new DataView(bytes.buffer)
  values.forEach((value, i) => {
    for (let k = 0; k < 4; k++) view.setBigUint64(32 * i + 8 * k, (value >> BigInt(64 * (3 - k))) & 0xffffffffffffffffn)
  })
  const digest = keccak_256(bytes)
  let result = 0n
  for (const byte of digest) result = (result << 8n) | BigInt(byte)
  return result
}

/**
 * The root of a PIE output's Merkle tree, as SHARP's fact commits to it: a page is the keccak of
 * its words, an inner node 1 + the keccak of its children.
 *
 * @param output The program's output words.
 * @param topology How the output is split into pages and trees. Default: one page holding it all.
 * @returns The root, as an integer.
 * @example
 * ```ts
 * import { computeOutputRoot } from 'proving-kit'
 *
 * const root = computeOutputRoot([1n, 2n, 3n])
 * ```
 */
export function computeOutputRoot(output: readonly bigint[], topology?: FactTopology): bigint {
  return walkFactTree(
    output.length,
    topology ?? { treeStructure: [1, 0], pageSizes: [output.length] },
    (start, end) => keccakWords(output.slice(start, end)),
    (children) => (1n + keccakWords(children.flatMap((child) => [child.value, BigInt(child.end)]))) % TWO_POW_256,
  )
}

/**
 * The SHARP fact of a program run: `keccak256(abi.encode(programHash, outputRoot))`, what SHARP's
 * fact registry on Ethereum and the Satellite register.
 *
 * @param programHash The program hash (SHARP uses the Pedersen one).
 * @param output The program's output words.
 * @param topology The output's pages. Default: one page.
 * @returns The fact, as an integer (`toBytes32` of `proving-kit/chain` writes it as bytes32).
 * @example
 * ```ts
 * import { computeSharpFact, inspectPie } from 'proving-kit'
 *
 * const inspection = await inspectPie('build/pie.zip')
 * const fact = computeSharpFact(BigInt(inspection.programHash), inspection.output.map(BigInt), inspection.factTopology)
 * ```
 */
export function computeSharpFact(programHash: bigint, output: readonly bigint[], topology?: FactTopology): bigint {
  return keccakWords([programHash, computeOutputRoot(output, topology)])
}

/**
 * The fact the Integrity verifier registers for a program proved inside the bootloader (the
 * Poseidon hash of the bootloader's program hash and its output).
 *
 * @param programHash The program hash.
 * @param output The program's output words.
 * @returns The fact, as an integer.
 * @example
 * ```ts
 * import { computeIntegrityFact, inspectPie, toHex } from 'proving-kit/pie'
 *
 * const inspection = await inspectPie('build/pie.zip')
 * console.log(toHex(computeIntegrityFact(BigInt(inspection.programHash), inspection.output.map(BigInt))))
 * ```
 */
export function computeIntegrityFact(programHash: bigint, output: readonly bigint[]): bigint {
  const bootloaderOutput = poseidonHashMany([1n, BigInt(output.length + 2), programHash, ...output])
  return poseidonHashMany([BOOTLOADER_PROGRAM_HASH, bootloaderOutput])
}

/** The settings of an Integrity verifier a fact is verified under: they make the verification hash. */
export type VerifierSettings = {
  layout: string
  hasher: string
  stoneVersion: string
  memoryVerification: string
  securityBits: number | bigint
}

/**
 * Integrity's verification hash of a fact under given verifier settings: what its FactRegistry
 * records for one verification.
 *
 * @param fact The Integrity fact.
 * @param settings The verifier's layout, hasher, Stone version, memory verification and security bits.
 * @returns The verification hash, as an integer.
 * @example
 * ```ts
 * import { computeVerificationHash } from 'proving-kit'
 *
 * const hash = computeVerificationHash(0x1234n, {
 *   layout: 'recursive_with_poseidon',
 *   hasher: 'keccak_160_lsb',
 *   stoneVersion: 'stone6',
 *   memoryVerification: 'relaxed',
 *   securityBits: 96,
 * })
 * ```
 */
export function computeVerificationHash(fact: bigint, settings: VerifierSettings): bigint {
  const settingsHash = poseidonHashMany(
    [settings.layout, settings.hasher, settings.stoneVersion, settings.memoryVerification].map(shortString),
  )
  return poseidonHashMany([fact, settingsHash, BigInt(settings.securityBits)])
}
