import { z } from 'zod'
import {
  encodeVerifications,
  GET_ALL_VERIFICATIONS_SELECTOR,
  makeVerification,
  selectorFromName,
} from '../../chain/integrity.ts'
import { STARKNET_NETWORKS } from '../../chain/starknet.ts'
import { DEFAULT_MIN_SECURITY_BITS, type IntegrityVerification } from '../../chain/types.ts'
import { STARK_PRIME } from '../../pie/shared/index.ts'
import { shortString } from '../../pie/hash/index.ts'
import type { EmulatorContext } from '../context.ts'
import { flag, objectBody, parseControl } from '../control-body.ts'
import { badRequest } from '../errors.ts'
import { queryProgress } from '../proving/queries.ts'
import { queryIndex } from '../proving/query-index.ts'
import { controlRoute, HttpError, type Reply, type Route, type RouteContext } from '../router.ts'
import type { EmulatorState, StoredQuery } from '../state.ts'

/**
 * A minimal Starknet JSON-RPC endpoint (POST /starknet-rpc) standing in for Starknet Sepolia, so
 * the on-chain check of an Integrity fact runs end to end against the emulator. It knows three
 * contracts at their Sepolia addresses, answered in their ABI encoding from the emulated queries:
 *
 * - Integrity's FactRegistry, `get_all_verifications_for_fact_hash(fact)`: a query proved with
 *   Stone and verified on L2 that is DONE, with a fact that is not mocked, has registered one
 *   verification of its Integrity fact;
 * - Integrity's mocked FactRegistry, the same getter: the mocked facts of such queries;
 * - the Satellite, `get_all_verifications_for_fact_hash(fact, is_mocked)` and
 *   `isCairoFactValid(fact, is_mocked)`, which, like the real one, reads the two registries above
 *   (HerodotusDev/satellite, cairo/src/cairo_fact_registry.cairo: 96 bits for isCairoFactValid),
 *   and also holds the facts of queries proved with Stwo: production bridges those through the
 *   Satellite and no longer writes them to Integrity's FactRegistry.
 *
 * `POST /_emulator/starknet/verifications` adds a verification with any settings (say 1
 * security bit), so the checks' refusals can be shown. Documented in docs/emulator.md.
 *
 * Methods: starknet_specVersion, starknet_chainId, starknet_blockNumber, starknet_call. Errors
 * are JSON-RPC error objects (HTTP 200) with the codes of the Starknet spec: 20 contract not
 * found, 21 entry point not found, 24 block not found, 40 contract error, -32601 method not
 * found, -32602 invalid params, -32600 invalid request, -32700 parse error.
 */

export const STARKNET_RPC_PATH = '/starknet-rpc'
export const EMULATED_STARKNET_CHAIN_ID = STARKNET_NETWORKS.sepolia.chainId
export const EMULATED_INTEGRITY_REGISTRY = STARKNET_NETWORKS.sepolia.factRegistry
export const EMULATED_MOCKED_REGISTRY = STARKNET_NETWORKS.sepolia.mockedFactRegistry!
export const EMULATED_SATELLITE = STARKNET_NETWORKS.sepolia.satellite
/** The JSON-RPC specification version the answers follow (starknet_specVersion). */
export const EMULATED_SPEC_VERSION = '0.9.0'
const IS_CAIRO_FACT_VALID_SELECTOR = selectorFromName('isCairoFactValid')
/** One block every 2 s of the emulator's clock (simulated or real): block = floor(now / 2 s). */
export const EMULATED_BLOCK_MS = 2_000

/**
 * The verifier settings every emulated registration uses. Layout: the query's when Integrity has
 * a verifier for it, else `recursive` (for `auto` and `dynamic`); the rest follow the shared
 * prover's proofs (stone6, relaxed memory verification), with Integrity's usual
 * keccak_160_lsb hasher and 96 security bits.
 */
export const EMULATED_VERIFIER = {
  layout: 'recursive',
  hasher: 'keccak_160_lsb',
  stoneVersion: 'stone6',
  memoryVerification: 'relaxed',
  securityBits: 96,
} as const

const INTEGRITY_LAYOUTS = new Set([
  'dex',
  'recursive',
  'recursive_with_poseidon',
  'small',
  'starknet',
  'starknet_with_keccak',
])

const PARSE_ERROR = -32700
const INVALID_REQUEST = -32600
const METHOD_NOT_FOUND = -32601
const INVALID_PARAMS = -32602
const CONTRACT_NOT_FOUND = 20
const ENTRYPOINT_NOT_FOUND = 21
const BLOCK_NOT_FOUND = 24
const CONTRACT_ERROR = 40

type RpcId = string | number | null
type RpcAnswer = {
  jsonrpc: '2.0'
  id: RpcId
  result?: unknown
  error?: { code: number; message: string; data?: unknown }
}

class RpcFailure extends Error {
  readonly code: number
  readonly data: unknown
  constructor(code: number, message: string, data?: unknown) {
    super(message)
    this.code = code
    this.data = data
  }
}

export function starknetRpcRoutes(emulator: EmulatorContext): Route[] {
  return [
    { method: 'POST', pattern: STARKNET_RPC_PATH, handler: (ctx) => answer(emulator, ctx) },
    controlRoute('POST', '/_emulator/starknet/verifications', (ctx) => addVerification(emulator, ctx)),
  ]
}

/**
 * Verifications added through the control API, per state: a reset (which replaces the state)
 * forgets them, and they are not written to the state file.
 */
const added = new WeakMap<
  EmulatorState,
  { verification: IntegrityVerification & { fact: bigint }; mocked: boolean }[]
>()

const shortText = (field: string) =>
  z
    .string({ error: `${field} must be a string.` })
    .regex(/^[\x20-\x7e]{1,31}$/, { error: `${field} must be a Cairo short string (1 to 31 ASCII characters).` })

const VERIFICATION_BODY = z.object({
  fact: z
    .string({ error: 'fact must be a felt, 0x hex.' })
    .regex(/^0x[0-9a-fA-F]{1,63}$/, { error: 'fact must be a felt, 0x hex.' }),
  mocked: flag('mocked').optional(),
  layout: shortText('layout').optional(),
  hasher: shortText('hasher').optional(),
  stoneVersion: shortText('stoneVersion').optional(),
  memoryVerification: shortText('memoryVerification').optional(),
  securityBits: z
    .number({ error: 'securityBits must be a whole number from 0 to 2^32 - 1.' })
    .int({ error: 'securityBits must be a whole number from 0 to 2^32 - 1.' })
    .min(0, { error: 'securityBits must be a whole number from 0 to 2^32 - 1.' })
    .max(2 ** 32 - 1, { error: 'securityBits must be a whole number from 0 to 2^32 - 1.' })
    .optional(),
})

/** POST /_emulator/starknet/verifications: registers one verification now (EMULATED_VERIFIER's settings unless given). */
async function addVerification(emulator: EmulatorContext, ctx: RouteContext): Promise<Reply> {
  const parsed = parseControl(VERIFICATION_BODY, await objectBody(ctx))
  if (!parsed.ok) return { status: 400, body: badRequest(parsed.message) }
  const { fact: factText, mocked = false, ...settings } = parsed.data
  const fact = BigInt(factText)
  if (fact >= STARK_PRIME) return { status: 400, body: badRequest('fact must be below the Stark prime.') }
  const verification = { ...makeVerification(fact, { ...EMULATED_VERIFIER, ...definedOnly(settings) }), fact }
  const state = emulator.store.state
  const list = added.get(state) ?? []
  list.push({ verification, mocked })
  added.set(state, list)
  const { fact: _fact, ...shown } = verification
  return { status: 201, body: { verification: shown, mocked } }
}

function definedOnly<T extends object>(value: T): { [K in keyof T]: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as never
}

async function answer(emulator: EmulatorContext, ctx: RouteContext): Promise<Reply> {
  let body: unknown
  try {
    body = await ctx.json()
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    return { status: 200, body: failure(null, new RpcFailure(PARSE_ERROR, 'Parse error')) }
  }
  // A batch is an array of calls answered in order; an empty batch is an invalid request.
  if (Array.isArray(body)) {
    if (body.length === 0)
      return { status: 200, body: failure(null, new RpcFailure(INVALID_REQUEST, 'Invalid request')) }
    return { status: 200, body: body.map((call) => answerOne(emulator, call)) }
  }
  return { status: 200, body: answerOne(emulator, body) }
}

function answerOne(emulator: EmulatorContext, call: unknown): RpcAnswer {
  const request = call as { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: unknown }
  const id: RpcId = typeof request?.id === 'string' || typeof request?.id === 'number' ? request.id : null
  if (!request || typeof request !== 'object' || request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
    return failure(id, new RpcFailure(INVALID_REQUEST, 'Invalid request'))
  }
  try {
    return { jsonrpc: '2.0', id, result: dispatch(emulator, request.method, request.params) }
  } catch (error) {
    if (error instanceof RpcFailure) return failure(id, error)
    throw error
  }
}

function dispatch(emulator: EmulatorContext, method: string, params: unknown): unknown {
  switch (method) {
    case 'starknet_specVersion':
      return EMULATED_SPEC_VERSION
    case 'starknet_chainId':
      return `0x${shortString(EMULATED_STARKNET_CHAIN_ID).toString(16)}`
    case 'starknet_blockNumber':
      return currentBlock(emulator)
    case 'starknet_call':
      return call(emulator, params)
    default:
      throw new RpcFailure(METHOD_NOT_FOUND, 'Method not found')
  }
}

function call(emulator: EmulatorContext, params: unknown): string[] {
  // Params by name ({ request, block_id }) or by position ([request, block_id]).
  const [request, blockId] = Array.isArray(params)
    ? [params[0], params[1]]
    : [
        (params as Record<string, unknown> | undefined)?.request,
        (params as Record<string, unknown> | undefined)?.block_id,
      ]
  if (!request || typeof request !== 'object') throw new RpcFailure(INVALID_PARAMS, 'Invalid params', 'missing request')
  const { contract_address: address, entry_point_selector: selector, calldata } = request as Record<string, unknown>
  const at = blockTime(emulator, blockId)
  if (!isFelt(address) || !isFelt(selector) || !Array.isArray(calldata) || !calldata.every(isFelt)) {
    throw new RpcFailure(
      INVALID_PARAMS,
      'Invalid params',
      'request needs contract_address, entry_point_selector and calldata as felts',
    )
  }
  const contract = BigInt(address)
  const entryPoint = BigInt(selector)
  const args = calldata.map((felt) => BigInt(felt as string))
  if (contract === BigInt(EMULATED_INTEGRITY_REGISTRY) || contract === BigInt(EMULATED_MOCKED_REGISTRY)) {
    if (entryPoint !== GET_ALL_VERIFICATIONS_SELECTOR) throw entryPointNotFound()
    const [fact] = expectArguments(args, 1) as [bigint]
    return encodeVerifications(verificationsOf(emulator, fact, at, contract === BigInt(EMULATED_MOCKED_REGISTRY)))
  }
  if (contract === BigInt(EMULATED_SATELLITE)) {
    if (entryPoint !== GET_ALL_VERIFICATIONS_SELECTOR && entryPoint !== IS_CAIRO_FACT_VALID_SELECTOR)
      throw entryPointNotFound()
    const [fact, isMocked] = expectArguments(args, 2) as [bigint, bigint]
    if (isMocked !== 0n && isMocked !== 1n) {
      throw new RpcFailure(CONTRACT_ERROR, 'Contract error', {
        revert_error: 'Failed to deserialize param #2: a bool is 0 or 1',
      })
    }
    const verifications = verificationsOf(emulator, fact, at, isMocked === 1n, 'satellite')
    if (entryPoint === GET_ALL_VERIFICATIONS_SELECTOR) return encodeVerifications(verifications)
    // isCairoFactValid: Integrity's is_fact_hash_valid_with_security(fact, 96) on the registry read.
    return [
      verifications.some((verification) => verification.securityBits >= DEFAULT_MIN_SECURITY_BITS) ? '0x1' : '0x0',
    ]
  }
  throw new RpcFailure(CONTRACT_NOT_FOUND, 'Contract not found')
}

function entryPointNotFound(): RpcFailure {
  return new RpcFailure(ENTRYPOINT_NOT_FOUND, 'Requested entrypoint does not exist in the contract')
}

function expectArguments(args: bigint[], count: number): bigint[] {
  if (args.length !== count) {
    throw new RpcFailure(CONTRACT_ERROR, 'Contract error', {
      revert_error: `Failed to deserialize param #${Math.min(args.length, count) + 1}: expected ${count} felts, got ${args.length}`,
    })
  }
  return args
}

/**
 * The verifications registered for a fact by the emulated queries that had ended by `at`, in
 * Integrity's FactRegistry or (`mocked`) its mocked one, then those added through the control API.
 * `satellite`: as the Satellite answers, with the facts of Stwo proofs bridged to it too.
 */
export function verificationsOf(
  emulator: EmulatorContext,
  fact: bigint,
  at: number,
  mocked = false,
  contract: 'integrity' | 'satellite' = 'integrity',
): IntegrityVerification[] {
  const state = emulator.store.state
  const seen = new Set<string>()
  const verifications: IntegrityVerification[] = []
  for (const query of queryIndex(state).byIntegrityFact.get(fact.toString(16)) ?? []) {
    if (!registersOnStarknet(query) || query.mockFactHash !== mocked) continue
    if (provedWithStwo(query) && contract !== 'satellite') continue
    const progress = queryProgress(state, query, at)
    if (progress.status !== 'DONE' || progress.endedAt === null || progress.endedAt > at) continue
    const verification = makeVerification(fact, { ...EMULATED_VERIFIER, layout: integrityLayout(query.layout) })
    // The registry keeps one entry per verification hash: proving the same PIE twice adds none.
    if (seen.has(verification.verificationHash)) continue
    seen.add(verification.verificationHash)
    verifications.push(verification)
  }
  for (const entry of added.get(state) ?? []) {
    if (entry.mocked !== mocked || entry.verification.fact !== fact || seen.has(entry.verification.verificationHash))
      continue
    seen.add(entry.verification.verificationHash)
    const { fact: _fact, ...verification } = entry.verification
    verifications.push(verification)
  }
  return verifications
}

/** `stwo`, `stwoHerodotus` (the values production accepts today). */
function provedWithStwo(query: StoredQuery): boolean {
  return query.sharpProver?.startsWith('stwo') === true
}

function registersOnStarknet(query: StoredQuery): boolean {
  return query.facts.integrityFactHash !== null && query.run.steps.includes('PROOF_VERIFICATION_ON_L2')
}

function integrityLayout(layout: string): string {
  return INTEGRITY_LAYOUTS.has(layout) ? layout : EMULATED_VERIFIER.layout
}

function currentBlock(emulator: EmulatorContext): number {
  return Math.floor(emulator.clock.now() / EMULATED_BLOCK_MS)
}

/** The instant a block id stands for: the end of that block, or now for the latest. */
function blockTime(emulator: EmulatorContext, blockId: unknown): number {
  const now = emulator.clock.now()
  if (
    blockId === undefined ||
    blockId === 'latest' ||
    blockId === 'pending' ||
    blockId === 'pre_confirmed' ||
    blockId === 'l1_accepted'
  )
    return now
  if (blockId && typeof blockId === 'object' && 'block_number' in blockId) {
    const number = (blockId as { block_number: unknown }).block_number
    if (typeof number !== 'number' || !Number.isInteger(number) || number < 0) {
      throw new RpcFailure(INVALID_PARAMS, 'Invalid params', 'block_number must be a whole number')
    }
    if (number > currentBlock(emulator)) throw new RpcFailure(BLOCK_NOT_FOUND, 'Block not found')
    return Math.min(now, (number + 1) * EMULATED_BLOCK_MS - 1)
  }
  if (blockId && typeof blockId === 'object' && 'block_hash' in blockId)
    throw new RpcFailure(BLOCK_NOT_FOUND, 'Block not found')
  throw new RpcFailure(INVALID_PARAMS, 'Invalid params', 'block_id must be a tag or { block_number }')
}

function isFelt(value: unknown): value is string {
  return typeof value === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(value)
}

function failure(id: RpcId, error: RpcFailure): RpcAnswer {
  return {
    jsonrpc: '2.0',
    id,
    error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
  }
}
