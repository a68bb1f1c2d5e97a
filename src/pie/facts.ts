/**
 * The facts a proof of a PIE registers (pie-and-facts.md):
 * - SHARP fact (Ethereum): keccak(programHash, outputRoot), the root of the output Merkle tree
 *   whose shape comes from the output builtin's pages and `gps_fact_topology` attribute
 *   (cairo-lang's generate_output_root / get_fact_topology_from_additional_data);
 * - Integrity fact (Starknet): the PIE run inside the bootloader, hashed with Poseidon;
 * - the Integrity verification hash, which binds a fact to the verifier settings.
 */
import { keccak_256 } from '@noble/hashes/sha3.js'
import { poseidonHashManyFast as poseidonHashMany } from './poseidon.ts'
import { isJsonObject, showJson, type JsonValue } from './json.ts'
import { shortString } from './hash.ts'

/** Program hash of the bootloader that runs a PIE for the Integrity verifier. */
export const BOOTLOADER_PROGRAM_HASH = 0x5ab580b04e3532b6b18f81cfa654a05e29dd8e2352d88df1e765a84072db07n

export const GPS_FACT_TOPOLOGY = 'gps_fact_topology'

export type FactTopology = {
  /** Pairs (n_pages, n_nodes): push that many pages, then merge the top n_nodes nodes. */
  treeStructure: number[]
  /** Sizes of the output pages in words; page 0 first. */
  pageSizes: number[]
}

export class FactTopologyError extends Error {
  override name = 'FactTopologyError'
}

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

function smallNonNegative(value: JsonValue | undefined): number | undefined {
  return typeof value === 'bigint' && value >= 0n && value < 1n << 53n ? Number(value) : undefined
}

/**
 * The fact topology of a PIE's output from `additional_data.json`'s `output_builtin` entry
 * (`{ pages: { "<id>": [start, size] }, attributes: { gps_fact_topology?: [...] } }`).
 * Absent data means one page holding the whole output.
 */
export function factTopologyFromAdditionalData(outputSize: number, outputBuiltin: JsonValue | undefined): FactTopology {
  if (outputBuiltin === undefined || outputBuiltin === null) return { treeStructure: [1, 0], pageSizes: [outputSize] }
  if (!isJsonObject(outputBuiltin)) throw new FactTopologyError(`output_builtin is ${showJson(outputBuiltin)}; expected an object`)
  const pagesValue = outputBuiltin.get('pages') ?? new Map()
  const attributes = outputBuiltin.get('attributes') ?? new Map()
  if (!isJsonObject(pagesValue)) throw new FactTopologyError(`output_builtin.pages is ${showJson(pagesValue)}; expected an object`)
  if (!isJsonObject(attributes)) {
    throw new FactTopologyError(`output_builtin.attributes is ${showJson(attributes)}; expected an object`)
  }

  const pages: { id: number; start: number | undefined; size: number | undefined }[] = []
  for (const [key, value] of pagesValue) {
    if (!/^[0-9]+$/.test(key)) throw new FactTopologyError(`output page id "${key}" is not an integer`)
    let start: JsonValue | undefined
    let size: JsonValue | undefined
    if (Array.isArray(value) && value.length === 2) [start, size] = value
    else if (isJsonObject(value)) [start, size] = [value.get('start'), value.get('size')]
    else throw new FactTopologyError(`output page ${key} is ${showJson(value)}; expected [start, size]`)
    pages.push({ id: Number(key), start: smallNonNegative(start), size: smallNonNegative(size) })
  }
  pages.sort((a, b) => a.id - b.id)

  let treeStructure: number[]
  if (attributes.has(GPS_FACT_TOPOLOGY)) {
    const raw = attributes.get(GPS_FACT_TOPOLOGY)
    const values = Array.isArray(raw) ? raw.map((x) => (typeof x === 'bigint' && x >= 0n && x < 1n << 30n ? Number(x) : -1)) : []
    if (!Array.isArray(raw) || values.length === 0 || values.length > 10 || values.length % 2 !== 0 || values.includes(-1)) {
      throw new FactTopologyError(`${GPS_FACT_TOPOLOGY} must be 2 to 10 integers in [0, 2^30), in pairs`)
    }
    treeStructure = values
  } else {
    if (pages.length) throw new FactTopologyError(`output pages are declared but the ${GPS_FACT_TOPOLOGY} attribute is missing`)
    treeStructure = [1, 0]
  }

  // Pages must tile the output from page 1's start to the end; page 0 is what comes before.
  let page0Size = outputSize
  let expectedStart: number | undefined
  pages.forEach((page, i) => {
    if (page.id !== i + 1) throw new FactTopologyError(`expected output page id ${i + 1}, found ${page.id}`)
    if (page.start === undefined || page.size === undefined) throw new FactTopologyError(`output page ${page.id} has an invalid start or size`)
    if (page.id === 1) {
      if (!(page.start > 0 && page.start <= outputSize)) throw new FactTopologyError(`output page 1 starts at ${page.start}, outside (0, ${outputSize}]`)
      page0Size = page.start
    } else if (page.start !== expectedStart) {
      throw new FactTopologyError(`output page ${page.id} starts at ${page.start}; expected ${expectedStart}`)
    }
    if (!(page.size > 0 && page.size <= outputSize)) throw new FactTopologyError(`output page ${page.id} has size ${page.size}`)
    expectedStart = page.start + page.size
  })
  if (pages.length && expectedStart !== outputSize) {
    throw new FactTopologyError(`output pages end at ${expectedStart}; they must cover the whole output (${outputSize} words)`)
  }
  return { treeStructure, pageSizes: [page0Size, ...pages.map((page) => page.size!)] }
}

/** Root of the output Merkle tree: a page is keccak of its words, an inner node 1 + keccak(children). */
export function computeOutputRoot(output: readonly bigint[], topology?: FactTopology): bigint {
  const { treeStructure, pageSizes } = topology ?? { treeStructure: [1, 0], pageSizes: [output.length] }
  type Node = { hash: bigint; end: number }
  const stack: Node[] = []
  let nextPage = 0
  let offset = 0
  for (let k = 0; k + 1 < treeStructure.length; k += 2) {
    const nPages = treeStructure[k]!
    const nNodes = treeStructure[k + 1]!
    if (nextPage + nPages > pageSizes.length) throw new FactTopologyError('fact topology: n_pages is out of range')
    for (let p = 0; p < nPages; p++) {
      const size = pageSizes[nextPage++]!
      const words = output.slice(offset, offset + size)
      offset += size
      stack.push({ hash: keccakWords(words), end: offset })
    }
    if (nNodes > stack.length) throw new FactTopologyError('fact topology: n_nodes is out of range')
    if (nNodes > 0) {
      const children = stack.splice(stack.length - nNodes, nNodes)
      const hash = (1n + keccakWords(children.flatMap((child) => [child.hash, BigInt(child.end)]))) % TWO_POW_256
      stack.push({ hash, end: children[children.length - 1]!.end })
    }
  }
  if (stack.length !== 1) throw new FactTopologyError('fact topology: the tree does not end with a single root')
  if (nextPage !== pageSizes.length) throw new FactTopologyError('fact topology: not all pages were used')
  if (offset !== output.length || stack[0]!.end !== output.length) {
    throw new FactTopologyError(`fact topology: pages cover ${offset} words, the output has ${output.length}`)
  }
  return stack[0]!.hash
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
