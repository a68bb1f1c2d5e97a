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

/**
 * Which hash a program hash is computed with: SHARP uses Pedersen by default; Poseidon and Blake2s
 * are the others Cairo knows.
 */
export type ProgramHashVariant = 'pedersen' | 'poseidon' | 'blake'
/** Every {@link ProgramHashVariant}. */
export const PROGRAM_HASH_VARIANTS: readonly ProgramHashVariant[] = ['pedersen', 'poseidon', 'blake']

/** The parts of a program its hash covers: its words (`data`), its builtins and the pc of `main`. */
export type ProgramForHash = {
  data: readonly bigint[]
  builtins: readonly string[]
  main: number | bigint
}

/**
 * A Cairo short string: up to 31 ASCII characters read as a big-endian integer.
 *
 * @param text The string.
 * @returns Its felt.
 * @throws {InvalidInputError} When it is longer than 31 characters or not ASCII.
 * @example
 * ```ts
 * import { shortString } from 'proving-kit/pie'
 *
 * shortString('output') // 0x6f7574707574n
 * ```
 */
export function shortString(text: string): bigint {
  if (text.length > 31 || !/^[\x00-\x7f]*$/.test(text)) {
    throw new InvalidInputError(`"${text}" is not a Cairo short string (at most 31 ASCII characters)`)
  }
  let value = 0n
  for (let i = 0; i < text.length; i++) value = (value << 8n) | BigInt(text.charCodeAt(i))
  return value
}

/**
 * The words a program hash is computed over: `[0, main, len(builtins), ...builtins as short strings, ...data]`.
 *
 * @param program The program.
 * @returns The words, in order.
 * @example
 * ```ts
 * import { programHashChain } from 'proving-kit/pie'
 *
 * const words = programHashChain({ data: [0x40780017fff7fffn], builtins: ['output'], main: 0 })
 * ```
 */
export function programHashChain(program: ProgramForHash): bigint[] {
  return [
    0n,
    BigInt(program.main),
    BigInt(program.builtins.length),
    ...program.builtins.map(shortString),
    ...program.data,
  ]
}

/**
 * Starknet Pedersen over a chain of felts: h(d0, h(d1, ... h(d[n-2], d[n-1]))).
 *
 * @param values The felts, at least two.
 * @param signal Stops a long chain between batches (an AbortedError).
 * @returns The hash.
 * @example
 * ```ts
 * import { pedersenHashChain } from 'proving-kit/pie'
 *
 * const hash = pedersenHashChain([3n, 1n, 2n, 3n])
 * ```
 */
export function pedersenHashChain(values: readonly bigint[], signal?: AbortSignal): bigint {
  return fastPedersenHashChain(values, signal)
}

/**
 * Blake2s-256 of felts encoded as Cairo's `encode_felt252_data_and_calc_blake_hash` does.
 *
 * @param values The felts.
 * @returns The hash, as an integer.
 * @example
 * ```ts
 * import { blakeHashFelts } from 'proving-kit/pie'
 *
 * const hash = blakeHashFelts([1n, 2n ** 200n])
 * ```
 */
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

/**
 * The SHA-256 of a program's hash chain: the key its hashes are cached under (cheap to compute, unlike the hashes).
 *
 * @param program The program.
 * @returns 64 hex digits.
 * @example
 * ```ts
 * import { programDigest } from 'proving-kit/pie'
 *
 * const digest = programDigest({ data: [1n, 2n], builtins: [], main: 0 })
 * ```
 */
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

/**
 * A program's hash, with Pedersen (SHARP's default), Poseidon or Blake2s. Pedersen takes seconds
 * for a long program and holds the thread: see {@link computeProgramHashAsync}. The last 16
 * programs' hashes are cached.
 *
 * @param program The program (`programFromCompiled` reads a compiled one).
 * @param variant The hash.
 * @param digest The program's {@link programDigest}, when already known.
 * @returns The program hash, as an integer.
 * @default variant 'pedersen'
 * @example
 * ```ts
 * import { readFile } from 'node:fs/promises'
 * import { computeProgramHash, programFromCompiled, toHex } from 'proving-kit/pie'
 *
 * const program = programFromCompiled(JSON.parse(await readFile('build/program.json', 'utf8')))
 * console.log(toHex(computeProgramHash(program)))
 * ```
 */
export function computeProgramHash(
  program: ProgramForHash,
  variant: ProgramHashVariant = 'pedersen',
  digest?: string,
): bigint {
  const entry = cached(digest ?? programDigest(program))
  return (entry[variant] ??= hashChain(programHashChain(program), variant))
}

const pending = new Map<string, Promise<bigint>>()

/**
 * The same as {@link computeProgramHash}, without holding the thread: Pedersen runs in batches
 * that let the event loop go on between them (the other variants are computed at once).
 * Concurrent calls for one program share the computation; the result lands in the cache.
 *
 * @param program The program.
 * @param variant The hash.
 * @param options.digest The program's {@link programDigest}, when already known.
 * @param options.signal Stops the computation between batches (an AbortedError).
 * @returns The program hash, as an integer.
 * @default variant 'pedersen'
 * @example
 * ```ts
 * import { readFile } from 'node:fs/promises'
 * import { computeProgramHashAsync, programFromCompiled } from 'proving-kit/pie'
 *
 * const compiled: unknown = JSON.parse(await readFile('build/program.json', 'utf8'))
 * const hash = await computeProgramHashAsync(programFromCompiled(compiled), 'pedersen', {
 *   signal: AbortSignal.timeout(60_000),
 * })
 * ```
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

/**
 * A program's hash with each variant.
 *
 * @param program The program.
 * @returns `{ pedersen, poseidon, blake }`, as integers.
 * @example
 * ```ts
 * import { computeProgramHashes } from 'proving-kit'
 *
 * const { pedersen, poseidon, blake } = computeProgramHashes({ data: [1n, 2n], builtins: ['output'], main: 0 })
 * ```
 */
export function computeProgramHashes(program: ProgramForHash): Record<ProgramHashVariant, bigint> {
  const digest = programDigest(program)
  return {
    pedersen: computeProgramHash(program, 'pedersen', digest),
    poseidon: computeProgramHash(program, 'poseidon', digest),
    blake: computeProgramHash(program, 'blake', digest),
  }
}

/**
 * The parts of a compiled Cairo 0 program (the compiler's JSON) that its hash covers: `data` as
 * integers, the builtins, and `main`, the pc of `<main_scope>.main`.
 *
 * @param compiled The compiled program, parsed.
 * @returns The program, for {@link computeProgramHash}.
 * @throws {InvalidInputError} When it is not a compiled program (no `data` of hex strings, no `main`).
 * @example
 * ```ts
 * import { readFile } from 'node:fs/promises'
 * import { computeProgramHash, programFromCompiled } from 'proving-kit/pie'
 *
 * const program = programFromCompiled(JSON.parse(await readFile('build/program.json', 'utf8')))
 * const hash = computeProgramHash(program)
 * ```
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
