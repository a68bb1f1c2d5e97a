import type { SecretRedactor } from '../core/redact.ts'
import type { Logger } from '../core/runtime.ts'

/** The networks with a known registry address; any other chain needs the address given. */
export type ChainNetwork = 'mainnet' | 'sepolia'

/** Every {@link ChainNetwork}. */
export const CHAIN_NETWORKS: readonly ChainNetwork[] = ['mainnet', 'sepolia']

/**
 * Which contract holds a fact on Ethereum: SHARP's fact registry (`isValid`) or Herodotus'
 * Satellite (`isCairoFactValid(fact, isMocked)`). On Starknet the Satellite answers Integrity's
 * getters with an extra `is_mocked`.
 */
export type EthereumRegistryKind = 'sharp' | 'satellite'
/** Which contract holds a fact on Starknet: Integrity's FactRegistry or the Satellite. */
export type StarknetRegistryKind = 'integrity' | 'satellite'
/** Which contract holds a fact, on either chain. */
export type RegistryKind = EthereumRegistryKind | StarknetRegistryKind

/** Every {@link EthereumRegistryKind}. */
export const ETHEREUM_REGISTRY_KINDS: readonly EthereumRegistryKind[] = ['sharp', 'satellite']
/** Every {@link StarknetRegistryKind}. */
export const STARKNET_REGISTRY_KINDS: readonly StarknetRegistryKind[] = ['integrity', 'satellite']

/**
 * The least security bits a Starknet verification must have to count unless the caller asks
 * otherwise: what Satellite itself requires (ALLOWED_SECURITY_BITS in its cairo_fact_registry.cairo)
 * and what the service's L2 proofs carry.
 */
export const DEFAULT_MIN_SECURITY_BITS = 96

/** What every on-chain check takes besides its chain-specific options. */
export type CommonCheckOptions = {
  /** The RPC URL; treated as a secret (providers embed their key in it). */
  rpcUrl: string
  /** The fact: 0x hex, at most 32 bytes. */
  fact: string
  /** The registry address; by default the one of `network` (or of the chain the RPC is on). */
  registry?: string | undefined
  /** The network the RPC must be on; its chain id is read and checked when this is given. */
  network?: ChainNetwork | undefined
  /** Cancels the check (an AbortedError). */
  signal?: AbortSignal | undefined
  /**
   * Where the check's debug lines go.
   * @default silentLogger
   */
  logger?: Logger | undefined
  /** Shared with the caller so its own output masks the RPC URL too; one is made otherwise. */
  redactor?: SecretRedactor | undefined
  /**
   * Look the fact up among mocked facts (a query sent with `mockFactHash`): Satellite's
   * `isMocked = true`, or Integrity's mocked FactRegistry. Default false: real verifications only.
   */
  mocked?: boolean | undefined
  /** Allow an `http:` RPC URL to a host that is not this machine (refused otherwise). */
  allowInsecureHttp?: boolean | undefined
}

/** Where and how a fact was looked up, and the answer; JSON-serialisable (the action's output). */
type CheckBase = {
  /** The fact as the registry takes it. */
  fact: string
  /** Whether the registry holds the fact (on Starknet: a verification of it that counts). */
  registered: boolean
  /** null when the chain is not one of the known networks. */
  network: ChainNetwork | null
  registry: string
  /** The block the registry was read at. */
  blockNumber: number
  /** The RPC's host (never its path or query: they may hold a key). */
  rpc: string
  /** True when the mocked facts were read (a mocked fact proves nothing). */
  mocked: boolean
}

/** What {@link checkFactOnEthereum} found: whether the fact is registered, where and at which block. */
export type EthereumFactCheck = CheckBase & {
  chain: 'ethereum'
  chainId: number
  registryKind: EthereumRegistryKind
}

/**
 * What {@link checkFactOnStarknet} found: whether the fact counts as registered, every verification
 * the registry holds for it, and why not when it does not.
 */
export type StarknetFactCheck = CheckBase & {
  chain: 'starknet'
  /** The decoded chain id (`SN_SEPOLIA`), or its hex when it is not a short string. */
  chainId: string
  registryKind: StarknetRegistryKind
  /** Every verification the registry holds for the fact, each judged against `expected`. */
  verifications: JudgedVerification[]
  /** What a verification had to have to count (the security bits always: 96 unless asked otherwise). */
  expected: ExpectedVerification
  /** Why the fact does not count as registered (null when it does). */
  reason: string | null
}

/** A fact check on either chain. */
export type OnchainFactCheck = EthereumFactCheck | StarknetFactCheck

/** Integrity's `VerifierConfiguration`: four Cairo short strings. */
export type VerifierConfiguration = {
  layout: string
  hasher: string
  stoneVersion: string
  memoryVerification: string
}

/** One element of `get_all_verifications_for_fact_hash`'s answer. */
export type IntegrityVerification = VerifierConfiguration & {
  verificationHash: string
  securityBits: number
}

/** A verification the registry holds, judged: whether its hash recomputes and whether it has the settings asked for. */
export type JudgedVerification = IntegrityVerification & {
  /** The verification hash recomputed from the fact and these settings equals the registry's. */
  hashMatches: boolean
  /** The settings equal the expected ones and the security bits reach the expected minimum. */
  meetsExpected: boolean
}

/** Settings a verification must have to count; each one left out is not checked. */
export type ExpectedVerification = Partial<VerifierConfiguration> & {
  /** The least acceptable security bits (Integrity's own `is_fact_hash_valid_with_security` rule). */
  securityBits?: number | undefined
}
