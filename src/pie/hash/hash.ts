/**
 * The program hash, computed from `metadata.program` alone, over the chain
 * `[0, main, len(builtins), ...builtins as short strings, ...data]`:
 * - Pedersen, SHARP's default: hash_chain([len(chain), ...chain]);
 * - Poseidon: poseidonHashMany(chain) (poseidon.ts, on WebAssembly);
 * - Blake, the Stwo path: Blake2s over the felts encoded as 32-bit words (2 for values below
 *   2^63, else 8 with the top bit set), read back as a little-endian integer modulo the prime.
 * Pedersen runs on pedersen.ts's WebAssembly and window tables (about 30 µs a word against
 * @scure/starknet's ~2-3 ms; the async form on a worker thread for long programs); results are
 * cached by the program's digest, so the inspection before an upload and the fact check after
 * it hash a program once.
 */
import { blake2s } from '@noble/hashes/blake2.js'
import { createHash } from 'node:crypto'
import { InvalidInputError } from '../../core/errors.ts'
import { STARK_PRIME, TWO_POW_63 } from '../shared/index.ts'
import { fastPedersenHashChain, fastPedersenHashChainAsync } from './pedersen.ts'
import { poseidonHashManyFast } from './poseidon.ts'

export type ProgramHashVariant = 'pedersen' | 'poseidon' | 'blake'
export const PROGRAM_HASH_VARIANTS: readonly ProgramHashVariant[] = ['pedersen', 'poseidon', 'blake']

export type ProgramForHash = {
  data: readonly bigint[]
  builtins: readonly string[]
  main: number | bigint
}

/** A Cairo short string: up to 31 ASCII characters read as a big-endian integer. */
export function shortString(text: string): bigint {
  if (text.length > 31 || !/^[\x00-\x7f]*$/.test(text)) {
    throw new InvalidInputError(`"${text}" is not a Cairo short string (at most 31 ASCII characters)`)
  }
  let value = 0n
  for (let i = 0; i < text.length; i++) value = (value << 8n) | BigInt(text.charCodeAt(i))
  return value
}

export function programHashChain(program: ProgramForHash): bigint[] {
  return [0n, BigInt(program.main), BigInt(program.builtins.length), ...program.builtins.map(shortString), ...program.data]
}

/** h(d0, h(d1, ... h(d[n-2], d[n-1]))) with Starknet Pedersen. */
export function pedersenHashChain(values: readonly bigint[], signal?: AbortSignal): bigint {
  return fastPedersenHashChain(values, signal)
}

/** Blake2s-256 of felts encoded as Cairo's encode_felt252_data_and_calc_blake_hash does. */
export function blakeHashFelts(values: readonly bigint[]): bigint {
  let words = 0
  for (const value of values) words += value < TWO_POW_63 ? 2 : 8
  const bytes = new Uint8Array(words * 4)
  const view = new DataView(bytes.buffer)
  let at = 0
  for (const value of values) {
    if (value < TWO_POW_63) {
      view.setUint32(at, Number(value >> 32n), true)
      view.setUint32(at + 4, Number(value & 0xffffffffn), true)
      at += 8
    } else {
      const tagged = value + (1n << 255n)
      for (let k = 7; k >= 0; k--) {
        view.setUint32(at, Number((tagged >> BigInt(32 * k)) & 0xffffffffn), true)
        at += 4
      }
    }
  }
  const digest = blake2s(bytes)
  let result = 0n
  for (let i = digest.length - 1; i >= 0; i--) result = (result << 8n) | BigInt(digest[i]!)
  return result % STARK_PRIME
}

function hashChain(chain: readonly bigint[], variant: ProgramHashVariant): bigint {
  switch (variant) {
    case 'pedersen':
      return pedersenHashChain([BigInt(chain.length), ...chain])
    case 'poseidon':
      return poseidonHashManyFast(chain)
    case 'blake':
      return blakeHashFelts(chain)
  }
}

/** SHA-256 of the chain's words: the key the hashes are cached under. */
export function programDigest(program: ProgramForHash): string {
  const hash = createHash('sha256')
  const chain = programHashChain(program)
  for (let at = 0; at < chain.length; at += 4096)
    hash.update(
      `${chain
        .slice(at, at + 4096)
        .map((word) => word.toString(16))
        .join(',')},`,
    )
  return hash.digest('hex')
}

// Program hashes by program digest and variant; a few programs are enough (one CLI or action
// run proves one or a handful).
const CACHE_PROGRAMS = 16
const cache = new Map<string, Partial<Record<ProgramHashVariant, bigint>>>()

function cached(digest: string): Partial<Record<ProgramHashVariant, bigint>> {
  let entry = cache.get(digest)
  if (!entry) {
    entry = {}
    cache.set(digest, entry)
    if (cache.size > CACHE_PROGRAMS) cache.delete(cache.keys().next().value!)
  }
  return entry
}

export function computeProgramHash(program: ProgramForHash, variant: ProgramHashVariant = 'pedersen', digest?: string): bigint {
  const entry = cached(digest ?? programDigest(program))
  return (entry[variant] ??= hashChain(programHashChain(program), variant))
}

const pending = new Map<string, Promise<bigint>>()

/**
 * The same as computeProgramHash, without holding the thread: Pedersen runs in batches that
 * let the event loop go on between them (the other variants are computed at once). Concurrent
 * calls for one program share the computation; the result lands in the cache.
 */
export async function computeProgramHashAsync(
  program: ProgramForHash,
  variant: ProgramHashVariant = 'pedersen',
  options: {
    digest?: string | undefined
    signal?: AbortSignal | undefined
  } = {},
): Promise<bigint> {
  const digest = options.digest ?? programDigest(program)
  const entry = cached(digest)
  const known = entry[variant]
  if (known !== undefined) return known
  if (variant !== 'pedersen') return computeProgramHash(program, variant, digest)
  let running = pending.get(digest)
  if (!running) {
    const chain = programHashChain(program)
    running = fastPedersenHashChainAsync([BigInt(chain.length), ...chain], options.signal)
      .then((hash) => {
        cached(digest).pedersen = hash
        return hash
      })
      .finally(() => pending.delete(digest))
    pending.set(digest, running)
  }
  return running
}

export function computeProgramHashes(program: ProgramForHash): Record<ProgramHashVariant, bigint> {
  const digest = programDigest(program)
  return {
    pedersen: computeProgramHash(program, 'pedersen', digest),
    poseidon: computeProgramHash(program, 'poseidon', digest),
    blake: computeProgramHash(program, 'blake', digest),
  }
}

/**
 * The stripped program of a compiled Cairo 0 program (the compiler's JSON, words as hex
 * strings); `main` is the pc of `<main_scope>.main`.
 */
export function programFromCompiled(compiled: unknown): ProgramForHash {
  const json = compiled as {
    data?: unknown
    builtins?: unknown
    main_scope?: unknown
    identifiers?: Record<string, { pc?: unknown; type?: unknown; destination?: unknown }>
  }
  if (!Array.isArray(json?.data) || !json.data.every((word) => typeof word === 'string')) {
    throw new InvalidInputError('compiled program: "data" must be an array of hex strings')
  }
  const builtins = Array.isArray(json.builtins) ? json.builtins.filter((b): b is string => typeof b === 'string') : []
  const scope = typeof json.main_scope === 'string' ? json.main_scope : '__main__'
  let entry = json.identifiers?.[`${scope}.main`]
  // An alias (e.g. main imported from elsewhere) points at the function's full name.
  if (entry?.type === 'alias' && typeof entry.destination === 'string') entry = json.identifiers?.[entry.destination]
  if (typeof entry?.pc !== 'number') throw new InvalidInputError(`compiled program: no "${scope}.main" function`)
  return {
    data: (json.data as string[]).map((word) => BigInt(word)),
    builtins,
    main: entry.pc,
  }
}
