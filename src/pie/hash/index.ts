/**
 * Program hashes: the Pedersen chain (WebAssembly, a worker thread for long chains), Poseidon
 * and Blake2s variants, each of a validated program; and Cairo short strings.
 */
export { poseidonHashManyFast } from './poseidon.ts'
export {
  blakeHashFelts,
  computeProgramHash,
  computeProgramHashAsync,
  computeProgramHashes,
  pedersenHashChain,
  PROGRAM_HASH_VARIANTS,
  programDigest,
  programFromCompiled,
  programHashChain,
  shortString,
  type ProgramForHash,
  type ProgramHashVariant,
} from './hash.ts'
