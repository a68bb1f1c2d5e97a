/**
 * The proving service's enumerations: statuses,
 * chains, layouts, steps and error codes. Plain values with no zod, so that the main entry
 * (`import { ProvingClient } from 'proving-kit'`) loads without the schemas; the clients load
 * schemas/proving.ts on their first request.
 */

/** The statuses of a query, in order: RECEIVED, IN_PROGRESS, then DONE or FAILED. */
export const QUERY_STATUSES = ['RECEIVED', 'IN_PROGRESS', 'DONE', 'FAILED'] as const
/** The statuses a query ends in. */
export const TERMINAL_QUERY_STATUSES = ['DONE', 'FAILED'] as const
/** The chains a query's result goes to. */
export const CHAINS = ['L1', 'L2', 'APE_CHAIN', 'OFFCHAIN', 'WORLD_CHAIN'] as const
/** The job sizes a query is billed and scheduled as, smallest first (see `jobSizeForSteps`). */
export const JOB_SIZES = ['XS', 'S', 'M', 'L'] as const
/** The Cairo VMs a submitted program runs on. */
export const CAIRO_VMS = ['rust', 'python'] as const
/** The Cairo versions of a submitted program. */
export const CAIRO_VERSIONS = ['cairo0', 'cairo1'] as const
/** What a query can be asked to produce: a trace, a proof, or a proof verified on a chain. */
export const RESULTS = [
  'TRACE_GENERATION',
  'PROOF_GENERATION',
  'PROOF_VERIFICATION_ON_L1',
  'PROOF_VERIFICATION_ON_L2',
  'PROOF_VERIFICATION_ON_APE_CHAIN',
  'PROOF_VERIFICATION_ON_WORLD_CHAIN',
] as const
/** The networks a query's result goes to. */
export const NETWORKS = ['MAINNET', 'TESTNET'] as const
/** The hints the general submission knows; the service may know newer ones. */
export const HINTS = ['svc_evm_grower', 'svc_sn_grower'] as const
/** The SHARP provers the service runs. */
export const SHARP_PROVERS = ['stone', 'stwo'] as const
/** The layouts of the documented L2 endpoint (what the emulator's L2 endpoint accepts). */
export const L2_LAYOUTS = [
  'auto',
  'recursive',
  'recursive_with_poseidon',
  'small',
  'dex',
  'starknet',
  'starknet_with_keccak',
  'dynamic',
] as const
/** Every layout production accepts on a submission: the L2 ones and four more. */
export const LAYOUTS = [
  'auto',
  'plain',
  'recursive',
  'recursive_with_poseidon',
  'recursive_large_output',
  'all_solidity',
  'all_cairo',
  'dynamic',
  'small',
  'dex',
  'starknet',
  'starknet_with_keccak',
] as const

/** The layouts an endpoint accepts: the L2 endpoint's or the general submission's. */
export function layoutsOf(endpoint: 'l2' | 'general'): readonly string[] {
  return endpoint === 'l2' ? L2_LAYOUTS : LAYOUTS
}

/**
 * Why `layout` is not one the endpoint accepts (one line, with the endpoint's list), or undefined
 * when it is. Checked before anything is uploaded: the service would refuse it after the upload.
 * `name` is how the user gave it (`--layout`, `` `layout` ``).
 */
export function layoutProblem(layout: string, endpoint: 'l2' | 'general', name: string): string | undefined {
  const allowed = layoutsOf(endpoint)
  if (allowed.includes(layout)) return undefined
  const generalOnly =
    endpoint === 'l2' && (LAYOUTS as readonly string[]).includes(layout)
      ? ` (${layout} is a layout of the general submission only)`
      : ''
  return `${name} must be one of ${allowed.join(', ')}${generalOnly}; got ${JSON.stringify(layout.slice(0, 80))}. Nothing was sent.`
}

/** The Stone versions a proof to verify may come from. */
export const STONE_VERSIONS = ['stone5', 'stone6'] as const
/** How a proof to verify may check memory. */
export const MEMORY_VERIFICATIONS = ['strict', 'relaxed', 'cairo1'] as const
/** Steps seen in production; `step` stays an open string. */
export const KNOWN_STEPS = [
  'TRACE_GENERATION',
  'TRACE_AND_METADATA_GENERATION',
  'PROOF_GENERATION',
  'PROOF_GENERATION_AND_VERIFICATION',
  'FACT_HASH_REGISTRATION',
  'BRIDGE_FACT_HASH',
  'PROOF_VERIFICATION_ON_L1',
  'PROOF_VERIFICATION_ON_L2',
] as const

/** A query's status: one of {@link QUERY_STATUSES}. */
export type QueryStatus = (typeof QUERY_STATUSES)[number]
/** The job size of a query: one of {@link JOB_SIZES}. */
export type JobSize = (typeof JOB_SIZES)[number]
/** A layout the general submission (`ProvingClient.submitQuery`) takes: one of {@link LAYOUTS}. */
export type Layout = (typeof LAYOUTS)[number]
/** A layout the L2 endpoint (`ProvingClient.submitPie`) takes: one of {@link L2_LAYOUTS}. */
export type L2Layout = (typeof L2_LAYOUTS)[number]
/** The Stone prover version of a proof to verify: one of {@link STONE_VERSIONS}. */
export type StoneVersion = (typeof STONE_VERSIONS)[number]
/** How a proof to verify checks memory: one of {@link MEMORY_VERIFICATIONS}. */
export type MemoryVerification = (typeof MEMORY_VERIFICATIONS)[number]
/** The Cairo VM that runs a submitted program: one of {@link CAIRO_VMS}. */
export type CairoVm = (typeof CAIRO_VMS)[number]
/** The Cairo version of a submitted program: one of {@link CAIRO_VERSIONS}. */
export type CairoVersion = (typeof CAIRO_VERSIONS)[number]
/** What a query is asked to produce, from a trace to a proof verified on a chain: one of {@link RESULTS}. */
export type ResultKind = (typeof RESULTS)[number]
/** The network a query's result goes to: one of {@link NETWORKS}. */
export type ProvingNetwork = (typeof NETWORKS)[number]
/** The SHARP prover of a query: one of {@link SHARP_PROVERS}. */
export type SharpProver = (typeof SHARP_PROVERS)[number]
/** A hint of the general submission: one of {@link HINTS}. */
export type Hint = (typeof HINTS)[number]

/** The statuses of a bucket. */
export const BUCKET_STATUSES = ['OPEN', 'IN_PROGRESS', 'DONE', 'FAILED'] as const
/** The kinds of bucket. */
export const BUCKET_TYPES = ['SNOS', 'SVC_AR'] as const

/** The error codes of a refused retry. */
export const RETRY_ERROR_CODES = [
  'QUERY_NOT_RETRIABLE',
  'MAX_RETRIES_REACHED',
  'FORBIDDEN',
  'PROVING_QUERY_NOT_FOUND',
  'QUERY_NOT_IN_FAILED_STATUS',
] as const
