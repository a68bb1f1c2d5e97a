import type { Dispatcher } from 'undici'
import { z } from 'zod'
import {
  AbortedError,
  ChainError,
  InvalidInputError,
  NetworkError,
  ProvingKitError,
  ServiceError,
} from '../core/errors.ts'
import { inputNames } from '../core/checks.ts'
import { HttpClient } from '../core/http.ts'
import { isRedirect } from '../core/http/network-rule.ts'
import type { Clock } from '../core/runtime.ts'
import { sanitizedCause } from './errors.ts'
import { assertFelt, feltHex, parseFact } from './fact.ts'
import {
  decodeVerifications,
  GET_ALL_VERIFICATIONS,
  GET_ALL_VERIFICATIONS_SELECTOR,
  judgeVerifications,
  VerificationDecodeError,
  verificationsCalldata,
  whyNotRegistered,
} from './integrity.ts'
import { type RpcEndpoint, rpcEndpoint } from './rpc.ts'
import {
  type ChainNetwork,
  CHAIN_NETWORKS,
  type CommonCheckOptions,
  DEFAULT_MIN_SECURITY_BITS,
  type ExpectedVerification,
  type StarknetFactCheck,
  type StarknetRegistryKind,
  STARKNET_REGISTRY_KINDS,
} from './types.ts'

/**
 * Is an Integrity fact registered on Starknet? Starknet JSON-RPC `starknet_call` of
 * `get_all_verifications_for_fact_hash` at a pinned block, after checking the chain id: on the
 * Satellite (the default: where production's Stwo results land, bridged) with `is_mocked`, or on
 * Integrity's FactRegistry (Stone results verified on L2). The fact counts as registered when at
 * least one verification has the expected settings and at least the required security bits (96
 * unless asked otherwise), and its verification hash recomputes locally from the fact and those
 * settings: the registry's word alone is not taken.
 *
 * Requests go through the project's HttpClient (timeouts, redaction, User-Agent). JSON-RPC reads
 * are idempotent, but HttpClient repeats a POST only when it was refused before processing; a
 * failure mid-request is marked retryable here, so a wait for registration polls through it.
 */

export type StarknetNetworkInfo = {
  chainId: string
  /** Integrity's FactRegistry. */
  factRegistry: string
  /** Integrity's mocked FactRegistry (mocked facts), where one is published. */
  mockedFactRegistry: string | null
  /** Herodotus' Satellite: real and mocked facts, by `is_mocked`. */
  satellite: string
}

/**
 * Per network: Integrity's FactRegistry and the Satellite are INTEGRITY_ADDRESS_* and
 * SATELLITE_ADDRESS_* in Integrity's src/lib_utils.cairo (the Satellite's also in the Satellite
 * repository's deployments/prod.json); the mocked FactRegistry on Sepolia is production's.
 */
export const STARKNET_NETWORKS: Readonly<Record<ChainNetwork, StarknetNetworkInfo>> = {
  mainnet: {
    chainId: 'SN_MAIN',
    factRegistry: '0xcc63a1e8e7824642b89fa6baf996b8ed21fa4707be90ef7605570ca8e4f00b',
    mockedFactRegistry: null,
    satellite: '0x1ba7d4b5707f8878c22fb335763abfc26c2ae157c434d597f6416fe6a79bf2e',
  },
  sepolia: {
    chainId: 'SN_SEPOLIA',
    factRegistry: '0x4ce7851f00b6c3289674841fd7a1b96b6fd41ed1edc248faccd672c26371b8c',
    mockedFactRegistry: '0x2fd1f617a9caeeeadd0cd7da2d99391ee9dd9ad6c5cd1960e3034ffdfad3ae1',
    satellite: '0x421cd95f9ddabdd090db74c9429f257cb6bc1ccc339278d1db1de39156676e',
  },
}

/** Production proves with Stwo only, and its L2 facts reach Starknet through the Satellite. */
export const DEFAULT_STARKNET_REGISTRY_KIND: StarknetRegistryKind = 'satellite'

/**
 * The registry a kind reads by default on a network.
 *
 * @param network The network.
 * @param kind Integrity's FactRegistry or the Satellite.
 * @param mocked Whether mocked facts are looked up (Integrity keeps them in another registry).
 * @returns The registry's address, or null when none is published (then it must be given).
 * @example
 * ```ts
 * import { defaultStarknetRegistry } from 'proving-kit/chain'
 *
 * const registry = defaultStarknetRegistry('sepolia', 'integrity', false)
 * ```
 */
export function defaultStarknetRegistry(
  network: ChainNetwork,
  kind: StarknetRegistryKind,
  mocked: boolean,
): string | null {
  const info = STARKNET_NETWORKS[network]
  if (kind === 'satellite') return info.satellite
  return mocked ? info.mockedFactRegistry : info.factRegistry
}

/** Where and how {@link checkFactOnStarknet} looks a fact up, and what a verification must have to count. */
export type CheckFactOnStarknetOptions = CommonCheckOptions & {
  /** Which contract to read; default `satellite` (DEFAULT_STARKNET_REGISTRY_KIND). */
  registryKind?: StarknetRegistryKind | undefined
  /**
   * Settings a verification must have to count; each one left out is not checked, except the
   * security bits: at least DEFAULT_MIN_SECURITY_BITS (96) unless `securityBits` says otherwise.
   */
  expected?: ExpectedVerification | undefined
  /** Per request; default 15 s. */
  requestTimeoutMs?: number | undefined
  /** The undici dispatcher the RPC requests go through. Default: the library's shared agent. */
  dispatcher?: Dispatcher | undefined
  /**
   * The clock request timeouts are kept by.
   * @default systemClock
   */
  clock?: Clock | undefined
}

/** Starknet JSON-RPC error codes (starknet_api_openrpc.json) the check tells apart. */
const CONTRACT_NOT_FOUND = 20
const ENTRYPOINT_NOT_FOUND = 21
const BLOCK_NOT_FOUND = 24
const CONTRACT_ERROR = 40
const METHOD_NOT_FOUND = -32601

const ADDRESS_LIMIT = 1n << 251n

/**
 * Checks whether a fact is verified on Starknet: reads every verification Integrity's FactRegistry
 * or the Satellite holds for it, recomputes each one's hash from the fact and its settings, and
 * counts only those with the expected settings and at least the expected security bits (96 unless
 * told otherwise). The registry's word alone is not taken.
 *
 * @param options The RPC URL, the fact, which registry, and the `expected` settings.
 * @returns `{ registered, verifications, expected, reason, ... }`: `reason` says why it does not
 * count when `registered` is false.
 * @throws {InvalidInputError} When an option is malformed (the fact, the registry address, the RPC URL, the network).
 * @throws {ChainError} When the check cannot be carried out: the RPC is unreachable or answers for
 * another chain, no contract is at the registry's address.
 * @example
 * ```ts
 * import { checkFactOnStarknet } from 'proving-kit/chain'
 *
 * const check = await checkFactOnStarknet({
 *   rpcUrl: process.env.STARKNET_RPC_URL!,
 *   fact: '0x2f3a...',
 *   network: 'sepolia',
 *   expected: { securityBits: 96, layout: 'recursive_with_poseidon' },
 * })
 * if (!check.registered) console.log(check.reason)
 * ```
 */
export async function checkFactOnStarknet(options: CheckFactOnStarknetOptions): Promise<StarknetFactCheck> {
  const fact = assertFelt(parseFact(options.fact, 'fact'), 'fact')
  if (options.network !== undefined && !CHAIN_NETWORKS.includes(options.network)) {
    throw new InvalidInputError(
      `network must be one of ${CHAIN_NETWORKS.join(', ')}; got ${JSON.stringify(options.network)}.`,
      {
        input: 'network',
      },
    )
  }
  const kind = options.registryKind ?? DEFAULT_STARKNET_REGISTRY_KIND
  if (!STARKNET_REGISTRY_KINDS.includes(kind)) {
    throw new InvalidInputError(
      `registryKind must be one of ${STARKNET_REGISTRY_KINDS.join(', ')} on Starknet; got ${JSON.stringify(kind)}.`,
      {
        input: 'registryKind',
      },
    )
  }
  const mocked = options.mocked === true
  let registry = options.registry === undefined ? undefined : parseAddress(options.registry)
  const expected = validateExpected({ securityBits: DEFAULT_MIN_SECURITY_BITS, ...definedOnly(options.expected ?? {}) })
  const endpoint = rpcEndpoint(options.rpcUrl, 'rpcUrl', options.redactor, options.allowInsecureHttp)
  const rpc = new StarknetRpc(endpoint, options)

  const chainIdFelt = BigInt(await rpc.call('starknet_chainId', [], z.string().regex(/^0x[0-9a-fA-F]+$/)))
  const chainId = decodeChainId(chainIdFelt)
  const network = CHAIN_NETWORKS.find((name) => STARKNET_NETWORKS[name].chainId === chainId) ?? null
  if (options.network !== undefined && network !== options.network) {
    throw new ChainError(
      `The Starknet RPC at ${endpoint.display} is on chain ${chainId}${network ? ` (${network})` : ''}, not ${options.network} (${STARKNET_NETWORKS[options.network].chainId}).`,
      { metaMessages: ['Check the RPC URL, or the network asked for.'], code: 'WRONG_CHAIN' },
    )
  }
  if (registry === undefined) {
    const known = network ? defaultStarknetRegistry(network, kind, mocked) : null
    if (!known) {
      throw new InvalidInputError(
        `Chain ${chainId} has no known ${describeKind(kind, mocked)}: give the registry address (${inputNames('fact-registry', 'registry')}).`,
        {
          input: 'registry',
          metaMessages: [`Or choose another registry kind (${inputNames('registry-kind', 'registryKind')}).`],
        },
      )
    }
    registry = known
  }

  const blockNumber = await rpc.call('starknet_blockNumber', [], z.number().int().nonnegative())
  const where = `${network ?? `chain ${chainId}`} at block ${blockNumber}`
  let felts: string[]
  try {
    felts = await rpc.call(
      'starknet_call',
      {
        request: {
          contract_address: registry,
          entry_point_selector: feltHex(GET_ALL_VERIFICATIONS_SELECTOR),
          calldata: verificationsCalldata(fact, kind, mocked).map(feltHex),
        },
        block_id: { block_number: blockNumber },
      },
      z.array(z.string()),
    )
  } catch (error) {
    throw explainCallError(error, registry, where, endpoint, kind, mocked)
  }
  let verifications
  try {
    verifications = decodeVerifications(felts)
  } catch (error) {
    if (!(error instanceof VerificationDecodeError)) throw error
    throw new ChainError(
      `The contract at ${registry} on ${where} answered ${GET_ALL_VERIFICATIONS} with data that is not a list of verifications: is it ${describeKind(kind, mocked, 'the')}?`,
      { details: error.message, code: 'NOT_A_REGISTRY' },
    )
  }
  const judged = judgeVerifications(fact, verifications, expected)
  const reason = whyNotRegistered(judged, expected)
  return {
    chain: 'starknet',
    fact: feltHex(fact),
    registered: reason === null,
    network,
    chainId,
    registry,
    registryKind: kind,
    mocked,
    blockNumber,
    rpc: endpoint.display,
    verifications: judged,
    expected,
    reason,
  }
}

/**
 * Reads a Starknet chain id: a short string (`SN_MAIN`, `SN_SEPOLIA`) when it is one, else hex.
 *
 * @param felt The chain id, as `starknet_chainId` answers it.
 * @returns Its text.
 * @example
 * ```ts
 * import { decodeChainId } from 'proving-kit/chain'
 *
 * decodeChainId(0x534e5f5345504f4c4941n) // 'SN_SEPOLIA'
 * ```
 */
export function decodeChainId(felt: bigint): string {
  const hex = felt.toString(16)
  const bytes = Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex')
  return felt > 0n && bytes.length <= 31 && bytes.every((byte) => byte >= 0x20 && byte < 0x7f)
    ? bytes.toString('latin1')
    : feltHex(felt)
}

function parseAddress(text: string): string {
  const trimmed = text.trim()
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(trimmed) || BigInt(trimmed) >= ADDRESS_LIMIT) {
    throw new InvalidInputError(
      `registry ${JSON.stringify(trimmed)} is not a Starknet contract address (0x hex below 2^251).`,
      {
        input: 'registry',
      },
    )
  }
  return feltHex(BigInt(trimmed))
}

function validateExpected(expected: ExpectedVerification): ExpectedVerification {
  const result: ExpectedVerification = {}
  for (const key of ['layout', 'hasher', 'stoneVersion', 'memoryVerification'] as const) {
    const value = expected[key]
    if (value === undefined) continue
    if (value.length === 0 || value.length > 31 || !/^[\x20-\x7e]+$/.test(value)) {
      throw new InvalidInputError(
        `expected ${key} ${JSON.stringify(value)} is not a Cairo short string (1 to 31 ASCII characters).`,
        {
          input: key,
        },
      )
    }
    result[key] = value
  }
  if (expected.securityBits !== undefined) {
    if (!Number.isInteger(expected.securityBits) || expected.securityBits < 0 || expected.securityBits >= 2 ** 32) {
      throw new InvalidInputError(
        `expected securityBits must be a whole number from 0 to 2^32 - 1; got ${expected.securityBits}.`,
        {
          input: 'securityBits',
        },
      )
    }
    result.securityBits = expected.securityBits
  }
  return result
}

const jsonRpcResponse = z.object({
  jsonrpc: z.string().optional(),
  id: z.union([z.number(), z.string(), z.null()]).optional(),
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
})

/** A JSON-RPC error object the node answered with. */
class JsonRpcError extends ChainError {
  override name = 'JsonRpcError'
  readonly rpcCode: number
  readonly data: unknown
  constructor(message: string, options: { rpcCode: number; data: unknown; details?: string; retryable?: boolean }) {
    super(message, { details: options.details, code: `JSON_RPC_${options.rpcCode}`, retryable: options.retryable })
    this.rpcCode = options.rpcCode
    this.data = options.data
  }
}

class StarknetRpc {
  readonly #endpoint: RpcEndpoint
  readonly #http: HttpClient
  readonly #path: string
  readonly #query: Record<string, string>
  readonly #headers: Record<string, string>
  readonly #signal: AbortSignal | undefined
  #id = 0

  constructor(endpoint: RpcEndpoint, options: CheckFactOnStarknetOptions) {
    this.#endpoint = endpoint
    const url = new URL(endpoint.url)
    this.#path = url.pathname
    this.#query = Object.fromEntries(url.searchParams)
    this.#headers = {}
    if (url.username || url.password) {
      const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`
      this.#headers.authorization = `Basic ${Buffer.from(credentials).toString('base64')}`
    }
    this.#signal = options.signal
    const timeout = options.requestTimeoutMs ?? 15_000
    this.#http = new HttpClient({
      baseUrl: url.origin,
      serviceName: 'Starknet RPC',
      redactor: endpoint.redactor,
      logger: options.logger,
      clock: options.clock,
      dispatcher: options.dispatcher,
      timeouts: { connectMs: Math.min(timeout, 10_000), headersMs: timeout, bodyMs: timeout },
      // A check is short: a few quick attempts where HttpClient may repeat; the wait polls on.
      retry: { maxAttempts: 3, budgetMs: 2 * timeout, maxDelayMs: 2_000 },
    })
  }

  async call<T>(method: string, params: unknown, schema: z.ZodType<T>): Promise<T> {
    const id = ++this.#id
    let body: z.infer<typeof jsonRpcResponse>
    try {
      const response = await this.#http.request({
        method: 'POST',
        path: this.#path,
        query: this.#query,
        headers: this.#headers,
        json: { jsonrpc: '2.0', id, method, params },
        schema: jsonRpcResponse,
        signal: this.#signal,
        operation: method,
        // starknet_call and starknet_chainId only read: repeating them is harmless.
        idempotent: true,
      })
      body = response.data
    } catch (error) {
      throw this.#transportError(error, method)
    }
    if (body.error) {
      const { code, message, data } = body.error
      const details = this.#endpoint.scrub(`${message}${data === undefined ? '' : `: ${summarise(data)}`}`)
      if (code === METHOD_NOT_FOUND) {
        throw new JsonRpcError(
          `The Starknet RPC at ${this.#endpoint.display} does not know ${method}: is it a Starknet JSON-RPC endpoint?`,
          {
            rpcCode: code,
            data,
            details,
          },
        )
      }
      throw new JsonRpcError(`The Starknet RPC at ${this.#endpoint.display} answered ${method} with error ${code}.`, {
        rpcCode: code,
        data,
        details,
        retryable: code === BLOCK_NOT_FOUND,
      })
    }
    const parsed = schema.safeParse(body.result)
    if (!parsed.success) {
      throw new ChainError(
        `The Starknet RPC at ${this.#endpoint.display} answered ${method} with an unexpected result.`,
        {
          details: this.#endpoint.scrub(
            `result ${summarise(body.result)}: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
          ),
          code: 'RPC_BAD_RESULT',
        },
      )
    }
    return parsed.data
  }

  #transportError(error: unknown, method: string): ProvingKitError {
    if (error instanceof AbortedError) return error
    if (!(error instanceof ProvingKitError)) throw error
    const status = error instanceof ServiceError ? error.status : undefined
    const retryable = error instanceof NetworkError || (status !== undefined && (status === 429 || status >= 500))
    const shortMessage =
      error instanceof NetworkError && error.beforeProcessing
        ? `Could not reach the Starknet RPC at ${this.#endpoint.display} (${method}): is the URL right and the node up?`
        : error.shortMessage
    return new ChainError(shortMessage, {
      details: error.details ?? error.shortMessage,
      metaMessages: error.metaMessages,
      cause: sanitizedCause(error, this.#endpoint.scrub),
      status,
      retryable,
      code:
        error instanceof NetworkError
          ? 'RPC_UNREACHABLE'
          : status !== undefined && isRedirect(status)
            ? 'RPC_REDIRECT'
            : 'RPC_HTTP_ERROR',
    })
  }
}

/** "Integrity's FactRegistry", "the Satellite", "Integrity's mocked FactRegistry", for messages. */
function describeKind(kind: StarknetRegistryKind, mocked: boolean, article: 'a' | 'the' = 'a'): string {
  if (kind === 'satellite')
    return `${article === 'a' ? 'Satellite' : 'the Satellite'}${mocked ? ' (mocked facts)' : ''}`
  return mocked ? "Integrity's mocked FactRegistry" : "Integrity's FactRegistry"
}

function definedOnly(expected: ExpectedVerification): ExpectedVerification {
  return Object.fromEntries(Object.entries(expected).filter(([, value]) => value !== undefined)) as ExpectedVerification
}

function explainCallError(
  error: unknown,
  registry: string,
  where: string,
  endpoint: RpcEndpoint,
  kind: StarknetRegistryKind,
  mocked: boolean,
): unknown {
  if (!(error instanceof JsonRpcError)) return error
  if (error.rpcCode === CONTRACT_NOT_FOUND) {
    return new ChainError(
      `No contract at ${registry} on ${where}: it cannot be ${describeKind(kind, mocked, 'the')}.`,
      {
        metaMessages: [
          `Check the registry address (${inputNames('fact-registry', 'registry')}) and that the RPC is on the chain it was deployed to.`,
        ],
        details: error.details,
        code: 'NO_CODE',
      },
    )
  }
  if (error.rpcCode === ENTRYPOINT_NOT_FOUND || error.rpcCode === CONTRACT_ERROR) {
    return new ChainError(
      `The contract at ${registry} on ${where} did not answer ${GET_ALL_VERIFICATIONS}: is it ${describeKind(kind, mocked, 'the')}?`,
      {
        details: error.details,
        code: 'NOT_A_REGISTRY',
        metaMessages: [
          `Read through the Starknet RPC at ${endpoint.display}.`,
          `${inputNames('registry-kind', 'registryKind')} chooses which contract is read.`,
        ],
      },
    )
  }
  return error
}

function summarise(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  return text.length > 300 ? `${text.slice(0, 297)}...` : text
}
