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

/** Root of the output Merkle tree: a page is keccak of its words, an inner node 1 + keccak(children). */
export function computeOutputRoot(output: readonly bigint[], topology?: FactTopology): bigint {
  return walkFactTree(
    output.length,
    topology ?? { treeStructure: [1, 0], pageSizes: [output.length] },
    (start, end) => keccakWords(output.slice(start, end)),
    (children) => (1n + keccakWords(children.flatMap((child) => [child.value, BigInt(child.end)]))) % TWO_POW_256,
  )
}

/** keccak256(abi.encode(programHash, outputRoot)). */
export function computeSharpFact(programHash: bigint, output: readonly bigint[], topology?: FactTopology): bigint {
  return keccakWords([programHash, computeOutputRoot(output, topology)])
}

/** The fact the Integrity verifier registers for the PIE proved inside the bootloader. */
export function computeIntegrityFact(programHash: bigint, output: readonly bigint[]): bigint {
  const bootloaderOutput = poseidonHashMany([1n, BigInt(output.length + 2), programHash, ...output])
  return poseidonHashMany([BOOTLOADER_PROGRAM_HASH, bootloaderOutput])
}

export type VerifierSettings = {
  layout: string
  hasher: string
  stoneVersion: string
  memoryVerification: string
  securityBits: number | bigint
}

/** Integrity's verification hash of a fact under given verifier settings. */
export function computeVerificationHash(fact: bigint, settings: VerifierSettings): bigint {
  const settingsHash = poseidonHashMany(
    [settings.layout, settings.hasher, settings.stoneVersion, settings.memoryVerification].map(shortString),
  )
  return poseidonHashMany([fact, settingsHash, BigInt(settings.securityBits)])
}
