import {
  CHAIN_NETWORKS,
  type ChainNetwork,
  DEFAULT_MIN_SECURITY_BITS,
  ETHEREUM_REGISTRY_KINDS,
  type EthereumRegistryKind,
  type ExpectedVerification,
  type OnchainFactCheck,
  STARKNET_REGISTRY_KINDS,
  type StarknetRegistryKind,
} from '../../chain/types.ts'
import { InvalidInputError, WaitTimeoutError } from '../../core/errors.ts'
import { formatDuration } from '../../core/poll.ts'
import { serviceLine } from '../../core/service-text.ts'
import {
  allowInsecureHttp,
  type CommandContext,
  defineCommand,
  type OptionSpecs,
  parseDuration,
  parseInteger,
} from '../context.ts'
import { EXIT } from '../exit-codes.ts'

/**
 * `proving fact check <fact>`: is the fact registered on chain? Exit codes (README.md): 0
 * registered, 1 not registered, 4 still not registered when --timeout ran out, 3 the check could
 * not be made (RPC unreachable or failing, wrong chain, no contract at the registry address),
 * 2 bad input. Without --timeout the registry is read once.
 */

const ENV_ETHEREUM_RPC = 'PROVING_ETHEREUM_RPC_URL'
const ENV_STARKNET_RPC = 'PROVING_STARKNET_RPC_URL'

const FACT_CHECK_OPTIONS = {
  'ethereum-rpc': {
    type: 'string',
    valueName: '<url>',
    description: `Ethereum JSON-RPC URL (or ${ENV_ETHEREUM_RPC}).`,
  },
  'starknet-rpc': {
    type: 'string',
    valueName: '<url>',
    description: `Starknet JSON-RPC URL (or ${ENV_STARKNET_RPC}).`,
  },
  'fact-registry': {
    type: 'string',
    valueName: '<address>',
    description: 'Registry address; by default the known one (of --registry-kind) of the network the RPC is on.',
  },
  'registry-kind': {
    type: 'string',
    valueName: '<kind>',
    description:
      'Which contract: Ethereum sharp (default, isValid) or satellite; Starknet satellite (default) or integrity.',
  },
  mocked: {
    type: 'boolean',
    description:
      "Look among mocked facts (a mockFactHash query): the Satellite with isMocked, or Integrity's mocked registry.",
  },
  network: {
    type: 'string',
    valueName: '<mainnet|sepolia>',
    description: 'Fail unless the RPC is on this network (its chain id is checked).',
  },
  timeout: {
    type: 'string',
    valueName: '<duration>',
    description: 'Wait up to this long for the fact to be registered: 90 (seconds), 10m, 1h. Default: check once.',
  },
  layout: { type: 'string', valueName: '<name>', description: 'Starknet: count only verifications with this layout.' },
  hasher: { type: 'string', valueName: '<name>', description: 'Starknet: ... with this hasher (keccak_160_lsb, ...).' },
  'stone-version': {
    type: 'string',
    valueName: '<version>',
    description: 'Starknet: ... with this Stone version (stone5, stone6).',
  },
  'memory-verification': {
    type: 'string',
    valueName: '<mode>',
    description: 'Starknet: ... with this memory verification (strict, relaxed, cairo1).',
  },
  'min-security-bits': {
    type: 'string',
    valueName: '<n>',
    description: `Starknet: ... with at least this many security bits (default ${DEFAULT_MIN_SECURITY_BITS}).`,
  },
} as const satisfies OptionSpecs

type FactCheckContext = CommandContext<typeof FACT_CHECK_OPTIONS>

/** The on-chain checks (zod, @scure/starknet; viem when a check runs) load when the command runs. */
const loadChain = () => import('./fact-chain.ts')
type Chain = Awaited<ReturnType<typeof loadChain>>

export const factCheck = defineCommand({
  path: ['fact', 'check'],
  args: '<fact>',
  summary:
    'Check that a fact is registered on chain: Ethereum fact registry or Satellite, Starknet Satellite or Integrity.',
  positionals: { min: 1, max: 1 },
  details: [
    'Give exactly one of --ethereum-rpc (a SHARP fact: isValid on the fact registry, or',
    'isCairoFactValid on the Satellite) or --starknet-rpc (an Integrity fact:',
    "get_all_verifications_for_fact_hash on the Satellite or Integrity's FactRegistry; a verification",
    `counts with at least ${DEFAULT_MIN_SECURITY_BITS} security bits unless --min-security-bits says otherwise).`,
    `Without either flag, ${ENV_ETHEREUM_RPC} or ${ENV_STARKNET_RPC} is used (exactly one of them set).`,
    'RPC URLs often hold a provider key: prefer the environment variables; the URL is masked in',
    'all output.',
    'Exit codes: 0 registered, 1 not registered, 4 still not registered at --timeout, 3 RPC failure',
    '(including a registry address with no contract, or the wrong chain), 2 bad input.',
  ],
  options: FACT_CHECK_OPTIONS,
  async run(context) {
    const chainModules = await loadChain()
    const {
      assertFelt,
      checkFactOnEthereum,
      checkFactOnStarknet,
      describeNotYetRegistered,
      describeWhere,
      parseFact,
      rpcEndpoint,
      waitForFactRegistration,
    } = chainModules
    const factText = context.positionals[0]!
    const { chain, url, flag } = chosenRpc(context)
    const fact = parseFact(factText, '<fact>')
    if (chain === 'starknet') assertFelt(fact, '<fact>')
    rpcEndpoint(url, flag, context.redactor, allowInsecureHttp(context)) // validates the URL and registers its secrets for all output
    const network = networkFrom(context)
    const registry = context.values['fact-registry']?.trim()
    const expected = expectedFrom(context, chain)
    const registryKind = registryKindFrom(context, chain)
    const mocked = context.values.mocked === true
    if (mocked && registryKind === 'sharp') {
      throw new InvalidInputError(
        "--mocked: SHARP's fact registry holds no mocked facts; add --registry-kind satellite.",
        { input: '--mocked' },
      )
    }
    const timeoutText = context.values.timeout
    const timeoutMs = timeoutText === undefined ? undefined : parseDuration(timeoutText, 'timeout')

    const common = {
      rpcUrl: url,
      fact: factText,
      registry,
      network,
      signal: context.signal,
      logger: context.logger,
      redactor: context.redactor,
      mocked,
      allowInsecureHttp: allowInsecureHttp(context),
    }
    const check = (): Promise<OnchainFactCheck> =>
      chain === 'ethereum'
        ? checkFactOnEthereum({ ...common, registryKind: registryKind as EthereumRegistryKind | undefined })
        : checkFactOnStarknet({ ...common, expected, registryKind: registryKind as StarknetRegistryKind | undefined })

    let result: OnchainFactCheck
    if (timeoutMs === undefined) {
      result = await check()
    } else {
      try {
        result = await waitForFactRegistration(check, {
          timeoutMs,
          signal: context.signal,
          logger: context.logger,
          onProgress: ({ elapsedMs, check: latest }) =>
            context.progress(
              `[${formatDuration(elapsedMs).padStart(6)}] fact ${latest.fact}: ${describeNotYetRegistered(latest)}`,
            ),
        })
      } catch (error) {
        // A script reading --json still gets the last answer; the error goes to stderr (exit 4).
        if (error instanceof WaitTimeoutError && context.json && error.lastSeen) context.print('', error.lastSeen)
        throw error
      }
    }
    context.print(describeCheck(result, chainModules), result)
    return result.registered ? EXIT.ok : EXIT.remoteFailure
  },
})

function chosenRpc(context: FactCheckContext): { chain: 'ethereum' | 'starknet'; url: string; flag: string } {
  let ethereum = context.values['ethereum-rpc']?.trim()
  let starknet = context.values['starknet-rpc']?.trim()
  let source = 'flags'
  if (!ethereum && !starknet) {
    // The environment is read only when no flag chooses: both may be set for different jobs.
    ethereum = context.io.env[ENV_ETHEREUM_RPC]?.trim() || undefined
    starknet = context.io.env[ENV_STARKNET_RPC]?.trim() || undefined
    source = 'environment'
  }
  if (ethereum && starknet) {
    throw new InvalidInputError(
      source === 'flags'
        ? 'Give exactly one of --ethereum-rpc and --starknet-rpc: a fact is checked on one chain at a time.'
        : `Both ${ENV_ETHEREUM_RPC} and ${ENV_STARKNET_RPC} are set: choose with --ethereum-rpc or --starknet-rpc.`,
      { input: '--ethereum-rpc' },
    )
  }
  if (ethereum)
    return { chain: 'ethereum', url: ethereum, flag: source === 'flags' ? '--ethereum-rpc' : ENV_ETHEREUM_RPC }
  if (starknet)
    return { chain: 'starknet', url: starknet, flag: source === 'flags' ? '--starknet-rpc' : ENV_STARKNET_RPC }
  throw new InvalidInputError(
    `No RPC: pass --ethereum-rpc <url> (SHARP fact on Ethereum) or --starknet-rpc <url> (Integrity fact on Starknet), or set ${ENV_ETHEREUM_RPC} or ${ENV_STARKNET_RPC}.`,
    { input: '--ethereum-rpc' },
  )
}

function networkFrom(context: FactCheckContext): ChainNetwork | undefined {
  const network = context.values.network?.trim()
  if (network === undefined) return undefined
  if (!CHAIN_NETWORKS.includes(network as ChainNetwork)) {
    throw new InvalidInputError(`--network must be ${CHAIN_NETWORKS.join(' or ')}; got ${JSON.stringify(network)}.`, {
      input: '--network',
    })
  }
  return network as ChainNetwork
}

function expectedFrom(context: FactCheckContext, chain: 'ethereum' | 'starknet'): ExpectedVerification | undefined {
  const flags = {
    layout: 'layout',
    hasher: 'hasher',
    stoneVersion: 'stone-version',
    memoryVerification: 'memory-verification',
  } as const
  const expected: ExpectedVerification = {}
  for (const [key, flag] of Object.entries(flags) as [keyof typeof flags, (typeof flags)[keyof typeof flags]][]) {
    const value = context.values[flag]?.trim()
    if (value !== undefined) expected[key] = value
  }
  const bits = context.values['min-security-bits']
  if (bits !== undefined) expected.securityBits = parseInteger(bits, 'min-security-bits', 0, 2 ** 32 - 1)
  const given = Object.keys(expected)
  if (given.length === 0) return undefined
  if (chain === 'ethereum') {
    const flag = given[0] === 'securityBits' ? 'min-security-bits' : flags[given[0] as keyof typeof flags]
    throw new InvalidInputError(
      `--${flag} applies to Integrity verifications on Starknet; an Ethereum fact registry has no settings.`,
      {
        input: `--${flag}`,
      },
    )
  }
  return expected
}

/** --registry-kind, checked against the chain: `sharp` is Ethereum's, `integrity` Starknet's, `satellite` both. */
function registryKindFrom(
  context: FactCheckContext,
  chain: 'ethereum' | 'starknet',
): EthereumRegistryKind | StarknetRegistryKind | undefined {
  const kind = context.values['registry-kind']?.trim()
  if (kind === undefined) return undefined
  const kinds: readonly string[] = chain === 'ethereum' ? ETHEREUM_REGISTRY_KINDS : STARKNET_REGISTRY_KINDS
  if (!kinds.includes(kind)) {
    throw new InvalidInputError(
      `--registry-kind on ${chain === 'ethereum' ? 'Ethereum' : 'Starknet'} must be ${kinds.join(' or ')}; got ${JSON.stringify(kind)}.`,
      { input: '--registry-kind' },
    )
  }
  return kind as EthereumRegistryKind | StarknetRegistryKind
}

function describeCheck(
  result: OnchainFactCheck,
  { describeExpected, describeVerification, describeWhere }: Chain,
): string {
  const rows: [string, string][] = [
    ['registered', result.registered ? 'yes' : 'no'],
    ['fact', result.fact],
    ['chain', `${describeWhere(result)}${result.network ? ` (chain ${result.chainId})` : ''}`],
    ['registry', `${result.registry} (${describeKind(result)})`],
    ['block', String(result.blockNumber)],
    ['rpc', result.rpc],
  ]
  if (result.chain === 'starknet') {
    rows.push(['required', describeExpected(result.expected)])
    for (const verification of result.verifications) {
      const verdict = !verification.hashMatches
        ? 'hash does not recompute'
        : verification.meetsExpected
          ? 'ok'
          : 'does not meet the requirement'
      rows.push([
        'verification',
        `${verification.verificationHash}  ${describeVerification(verification)}  (${verdict})`,
      ])
    }
    if (result.reason) rows.push(['reason', result.reason])
  }
  return rows.map(([label, value]) => `${label.padEnd(15)}${serviceLine(String(value))}`).join('\n')
}

function describeKind(result: OnchainFactCheck): string {
  const name = { sharp: 'SHARP fact registry', integrity: "Integrity's FactRegistry", satellite: 'Satellite' }[
    result.registryKind
  ]
  return result.mocked ? `${name}, mocked facts` : name
}
