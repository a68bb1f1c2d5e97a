import { defaultDispatcher } from '../core/dispatcher.ts'
import { AbortedError, ChainError, InvalidInputError } from '../core/errors.ts'
import { inputNames } from '../core/checks.ts'
import { describeRedirect, fetchWithoutRedirects, isRedirect } from '../core/http/network-rule.ts'
import { sanitizedCause } from './errors.ts'
import { parseFact, toBytes32 } from './fact.ts'
import { type RpcEndpoint, rpcEndpoint } from './rpc.ts'
import {
  type ChainNetwork,
  CHAIN_NETWORKS,
  type CommonCheckOptions,
  type EthereumFactCheck,
  type EthereumRegistryKind,
  ETHEREUM_REGISTRY_KINDS,
} from './types.ts'

/**
 * Is a SHARP fact registered on Ethereum? One call, read at a pinned block after checking that
 * the RPC is on the expected chain and that the registry address holds code (a call to an
 * address without code "succeeds" with empty data, which must never read as "not registered"):
 * `isValid(bytes32)` on SHARP's fact registry, or
 * `isCairoFactValid(bytes32 factHash, bool isMocked)` on Herodotus' Satellite
 * (HerodotusDev/satellite, solidity/src/interfaces/modules/ICairoFactRegistryModule.sol), the
 * only one of the two that also holds mocked facts.
 *
 * viem is imported here, lazily: it costs ~400 ms at start-up (perf-notes.md) and only the paths
 * that call a chain need it.
 */

export type EthereumNetworkInfo = {
  chainId: number
  /** SHARP's fact registry. */
  factRegistry: `0x${string}`
  /** Herodotus' Satellite. */
  satellite: `0x${string}`
}

/**
 * Per network: SHARP's fact registry (GpsStatementVerifier's) and the Satellite, as the
 * service documents them and the Satellite repository's deployments/prod.json lists them.
 */
export const ETHEREUM_NETWORKS: Readonly<Record<ChainNetwork, EthereumNetworkInfo>> = {
  mainnet: {
    chainId: 1,
    factRegistry: '0x47312450B3Ac8b5b8e247a6bB6d523e7605bDb60',
    satellite: '0x2E6F182B06F37CbDC966Ff5471c7D98cec2bfe70',
  },
  sepolia: {
    chainId: 11155111,
    factRegistry: '0x07ec0D28e50322Eb0C159B9090ecF3aeA8346DFe',
    satellite: '0x396bF739f7b37D81f6CdD4571fDEF298150db88f',
  },
}

/** L1 results are registered by SHARP's verifier in its fact registry. */
export const DEFAULT_ETHEREUM_REGISTRY_KIND: EthereumRegistryKind = 'sharp'

/** The ABI of SHARP's fact registry as the check reads it: `isValid(bytes32)`. */
export const FACT_REGISTRY_ABI = [
  {
    type: 'function',
    name: 'isValid',
    stateMutability: 'view',
    inputs: [{ name: 'fact', type: 'bytes32' }],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const

/** The Satellite's end-user getter (ICairoFactRegistryModule): verified facts, or mocked ones. */
export const SATELLITE_ABI = [
  {
    type: 'function',
    name: 'isCairoFactValid',
    stateMutability: 'view',
    inputs: [
      { name: 'factHash', type: 'bytes32' },
      { name: 'isMocked', type: 'bool' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const

/** Where and how {@link checkFactOnEthereum} looks a fact up. */
export type CheckFactOnEthereumOptions = CommonCheckOptions & {
  /** Which contract to read; default `sharp` (DEFAULT_ETHEREUM_REGISTRY_KIND), or `satellite` with `mocked`. */
  registryKind?: EthereumRegistryKind | undefined
  /** Per RPC request (viem's transport timeout); default 15 s. */
  requestTimeoutMs?: number | undefined
}

/**
 * Checks whether a fact is registered on Ethereum: `isValid` on SHARP's fact registry, or
 * `isCairoFactValid` on the Satellite (the one that holds mocked facts too). The chain the RPC is
 * on is read first: a network given must match it. viem loads when this is called.
 *
 * @param options The RPC URL, the fact, and which registry (the network's own unless `registry` is given).
 * @returns `{ registered, chainId, network, registry, blockNumber, ... }`.
 * @throws {InvalidInputError} When an option is malformed (the fact, the registry address, the RPC URL, the network).
 * @throws {ChainError} When the check cannot be carried out: the RPC is unreachable or answers for
 * another chain, no contract is at the registry's address.
 * @example
 * ```ts
 * import { checkFactOnEthereum } from 'proving-kit/chain'
 *
 * const check = await checkFactOnEthereum({
 *   rpcUrl: process.env.SEPOLIA_RPC_URL!,
 *   fact: '0x5ab1...',
 *   network: 'sepolia',
 * })
 * console.log(check.registered, check.blockNumber)
 * ```
 */
export async function checkFactOnEthereum(options: CheckFactOnEthereumOptions): Promise<EthereumFactCheck> {
  const fact = toBytes32(parseFact(options.fact, 'fact'))
  const mocked = options.mocked === true
  // Mocked facts are only on the Satellite: asking for them without a kind means the Satellite.
  const kind = options.registryKind ?? (mocked ? 'satellite' : DEFAULT_ETHEREUM_REGISTRY_KIND)
  if (!ETHEREUM_REGISTRY_KINDS.includes(kind)) {
    throw new InvalidInputError(
      `registryKind must be one of ${ETHEREUM_REGISTRY_KINDS.join(', ')} on Ethereum; got ${JSON.stringify(kind)}.`,
      {
        input: 'registryKind',
      },
    )
  }
  if (mocked && kind === 'sharp') {
    throw new InvalidInputError(
      "SHARP's fact registry holds no mocked facts: check a mocked fact on the Satellite (registry kind satellite), which takes isMocked.",
      { input: 'registryKind' },
    )
  }
  if (options.network !== undefined && !CHAIN_NETWORKS.includes(options.network)) {
    throw new InvalidInputError(
      `network must be one of ${CHAIN_NETWORKS.join(', ')}; got ${JSON.stringify(options.network)}.`,
      {
        input: 'network',
      },
    )
  }
  const endpoint = rpcEndpoint(options.rpcUrl, 'rpcUrl', options.redactor, options.allowInsecureHttp)
  const viem = await import('viem')
  let registry: `0x${string}` | undefined
  if (options.registry !== undefined) {
    const given = options.registry.trim()
    if (!viem.isAddress(given)) {
      throw new InvalidInputError(
        `registry ${JSON.stringify(given)} is not an Ethereum address (0x and 40 hex digits, with a valid checksum if mixed-case).`,
        { input: 'registry' },
      )
    }
    registry = viem.getAddress(given)
  }

  const { fetch: undiciFetch } = await import('undici')
  // fetch follows redirects on its own: this one never does (core/http/network-rule.ts), so a
  // 3xx comes back to viem as an answer, and classify() refuses it. Another origin's answer
  // must never become the verdict.
  const proxiedFetch = fetchWithoutRedirects(((input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input as string, { ...(init as object), dispatcher: defaultDispatcher() })) as unknown as (
    input: string | URL | Request,
    init?: RequestInit,
  ) => Promise<Response>)
  const client = viem.createPublicClient({
    transport: viem.http(endpoint.url, {
      timeout: options.requestTimeoutMs ?? 15_000,
      retryCount: 2,
      retryDelay: 250,
      fetchOptions: options.signal ? { signal: options.signal } : undefined,
      // Through the process's one dispatcher, so HTTPS_PROXY/HTTP_PROXY/NO_PROXY apply to the
      // RPC as to every other request.
      fetchFn: proxiedFetch,
    }),
  })
  const call = <T>(what: string, run: () => Promise<T>) => rpcCall(viem, endpoint, what, run, options.signal)

  const chainId = await call('eth_chainId', () => client.getChainId())
  const network = networkOf(chainId)
  if (options.network !== undefined && network !== options.network) {
    const expected = ETHEREUM_NETWORKS[options.network].chainId
    throw new ChainError(
      `The Ethereum RPC at ${endpoint.display} is on chain ${chainId}${network ? ` (${network})` : ''}, not ${options.network} (chain ${expected}).`,
      { metaMessages: ['Check the RPC URL, or the network asked for.'], code: 'WRONG_CHAIN' },
    )
  }
  if (!registry) {
    if (!network) {
      throw new InvalidInputError(
        `Chain ${chainId} has no known ${kind === 'satellite' ? 'Satellite' : 'fact registry'}: give the registry address (${inputNames('fact-registry', 'registry')}).`,
        { input: 'registry' },
      )
    }
    registry = kind === 'satellite' ? ETHEREUM_NETWORKS[network].satellite : ETHEREUM_NETWORKS[network].factRegistry
  }

  const blockNumber = await call('eth_blockNumber', () => client.getBlockNumber({ cacheTime: 0 }))
  const code = await call('eth_getCode', () => client.getCode({ address: registry, blockNumber }))
  if (!code || code === '0x') {
    throw new ChainError(
      `No contract at ${registry} on ${describeChain(chainId, network)} at block ${blockNumber}: it cannot be ${kind === 'satellite' ? 'the Satellite' : 'the fact registry'}.`,
      {
        metaMessages: [
          `Check the registry address (${inputNames('fact-registry', 'registry')}) and that the RPC is on the chain it was deployed to.`,
        ],
        code: 'NO_CODE',
      },
    )
  }
  const registered =
    kind === 'satellite'
      ? await call(SATELLITE_CALL, () =>
          client.readContract({
            address: registry,
            abi: SATELLITE_ABI,
            functionName: 'isCairoFactValid',
            args: [fact, mocked],
            blockNumber,
          }),
        )
      : await call(SHARP_CALL, () =>
          client.readContract({
            address: registry,
            abi: FACT_REGISTRY_ABI,
            functionName: 'isValid',
            args: [fact],
            blockNumber,
          }),
        )
  return {
    chain: 'ethereum',
    fact,
    registered,
    network,
    chainId,
    registry,
    registryKind: kind,
    mocked,
    blockNumber: Number(blockNumber),
    rpc: endpoint.display,
  }
}

const SHARP_CALL = 'isValid(bytes32)'
const SATELLITE_CALL = 'isCairoFactValid(bytes32,bool)'

function networkOf(chainId: number): ChainNetwork | null {
  for (const network of CHAIN_NETWORKS) if (ETHEREUM_NETWORKS[network].chainId === chainId) return network
  return null
}

function describeChain(chainId: number, network: ChainNetwork | null): string {
  return network ? `${network} (chain ${chainId})` : `chain ${chainId}`
}

type Viem = typeof import('viem')

/**
 * One RPC request, its failure turned into a ChainError whose text names the RPC by host only.
 * Transport failures (unreachable, timeout, 429, 5xx) are marked retryable, so a wait for
 * registration keeps polling through them; anything else ends it.
 */
async function rpcCall<T>(
  viem: Viem,
  endpoint: RpcEndpoint,
  what: string,
  run: () => Promise<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal?.aborted) throw new AbortedError(`Cancelled before ${what}.`, { cause: signal.reason })
  try {
    return await run()
  } catch (error) {
    if (signal?.aborted) throw new AbortedError(`Cancelled during ${what}.`, { cause: signal.reason })
    throw classify(viem, endpoint, what, error)
  }
}

function classify(viem: Viem, endpoint: RpcEndpoint, what: string, error: unknown): ChainError {
  const where = `the Ethereum RPC at ${endpoint.display}`
  const details = endpoint.scrub(
    error instanceof viem.BaseError ? error.shortMessage : String((error as Error)?.message ?? error),
  )
  const cause = sanitizedCause(error, endpoint.scrub)
  const find = <E>(kind: abstract new (...args: never[]) => E): E | undefined =>
    error instanceof viem.BaseError
      ? ((error.walk((inner) => inner instanceof kind) as E | null) ?? undefined)
      : undefined

  const answered = find(viem.HttpRequestError) ?? find(viem.RpcRequestError)
  if (answered?.status !== undefined && isRedirect(answered.status)) {
    const redirect = describeRedirect(answered.status, answered.headers?.get('location'), endpoint.url)
    return new ChainError(
      `${capitalise(where)} answered ${what} with ${redirect} (refused, not followed: the answer must come from the URL given).`,
      {
        details,
        cause,
        status: answered.status,
        code: 'RPC_REDIRECT',
      },
    )
  }
  if (
    find(viem.ContractFunctionZeroDataError) ||
    find(viem.ContractFunctionRevertedError) ||
    find(viem.AbiDecodingZeroDataError)
  ) {
    const [asked, expected] =
      what === SATELLITE_CALL ? [SATELLITE_CALL, 'the Satellite'] : [SHARP_CALL, 'a fact registry']
    return new ChainError(
      `The contract at the registry address did not answer ${asked} through ${where}: is it ${expected}?`,
      {
        details,
        cause,
        code: 'NOT_A_REGISTRY',
        metaMessages: [`${inputNames('registry-kind', 'registryKind')} chooses which contract is read.`],
      },
    )
  }
  const timeout = find(viem.TimeoutError)
  if (timeout)
    return new ChainError(`${capitalise(where)} did not answer ${what} in time.`, {
      details,
      cause,
      retryable: true,
      code: 'RPC_TIMEOUT',
    })
  const http = find(viem.HttpRequestError)
  if (http) {
    if (http.status === undefined) {
      return new ChainError(`Could not reach ${where} (${what}): is the URL right and the node up?`, {
        details: endpoint.scrub(rootMessage(error)),
        cause,
        retryable: true,
        code: 'RPC_UNREACHABLE',
      })
    }
    return new ChainError(`${capitalise(where)} answered HTTP ${http.status} to ${what}.`, {
      details,
      cause,
      status: http.status,
      retryable: http.status === 429 || http.status >= 500,
      code: 'RPC_HTTP_ERROR',
    })
  }
  const rpc = find(viem.RpcRequestError)
  if (rpc) {
    // -32005 is the usual "limit exceeded" of hosted providers: worth another try later.
    return new ChainError(`${capitalise(where)} refused ${what} (JSON-RPC error ${rpc.code}).`, {
      details,
      cause,
      retryable: rpc.code === -32005,
      code: 'RPC_ERROR',
    })
  }
  return new ChainError(`${capitalise(where)} failed during ${what}.`, { details, cause, code: 'RPC_ERROR' })
}

/** The deepest message of a cause chain: "connect ECONNREFUSED 127.0.0.1:1" rather than "fetch failed". */
function rootMessage(error: unknown): string {
  let current: unknown = error
  let message = String((error as Error)?.message ?? error)
  for (let depth = 0; current && depth < 8; depth++) {
    if (current instanceof Error && current.message) message = current.message
    current = (current as { cause?: unknown }).cause
  }
  return message.split('\n')[0]!
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
