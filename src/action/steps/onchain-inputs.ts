/**
 * The root action's on-chain inputs as input parsing needs them: the modes of `verify-onchain`,
 * the cross-check between them, and the masking of the RPC URLs. Kept apart from ./onchain.ts
 * so parsing inputs (which every action does) never reaches the chain code: only the root
 * action's on-chain path imports ./onchain.ts, and only it loads ../../chain/index.ts (and viem).
 */
import { urlSecrets } from '../../chain/rpc.ts'
import { refusesPlainHttp } from '../../core/http/network-rule.ts'
import type { OnchainPolicy } from '../../pipeline/onchain.ts'
import type { ActionIO, CrossCheck, InputSpecs, InputValues } from '../types.ts'

export const VERIFY_ONCHAIN_MODES = ['none', 'ethereum', 'starknet', 'both'] as const
export type VerifyOnchainMode = (typeof VERIFY_ONCHAIN_MODES)[number]

export const ONCHAIN_RPC_INPUTS = ['ethereum-rpc-url', 'starknet-rpc-url'] as const

/** `registry-kind`: `sharp` is Ethereum's, `integrity` Starknet's, `satellite` both chains'. */
export const REGISTRY_KIND_VALUES = ['sharp', 'integrity', 'satellite'] as const
export type RegistryKindInput = (typeof REGISTRY_KIND_VALUES)[number]

/** The inputs the on-chain check reads, as MAIN_INPUTS declares them. */
export type OnchainInputs = {
  'verify-onchain': VerifyOnchainMode
  'ethereum-rpc-url'?: string | undefined
  'starknet-rpc-url'?: string | undefined
  'fact-registry'?: string | undefined
  'registry-kind'?: RegistryKindInput | undefined
  'min-security-bits': number
  'verifier-layout'?: string | undefined
  'verifier-hasher'?: string | undefined
  'verifier-stone-version'?: string | undefined
  'verifier-memory-verification'?: string | undefined
  'onchain-timeout-minutes': number
  emulator: boolean
  'allow-insecure-http': boolean
}

/** RPC URLs carry provider keys: mask them (and their key-like parts) before anything prints. */
export function registerOnchainSecrets(io: Pick<ActionIO, 'getInput' | 'setSecret'>): void {
  for (const name of ONCHAIN_RPC_INPUTS) {
    for (const secret of urlSecrets(io.getInput(name))) io.setSecret(secret)
  }
}

type OnchainSpecs = { [K in keyof OnchainInputs]: InputSpecs[string] }

/**
 * Each chain asked for needs its RPC; one `fact-registry` cannot serve two chains; a
 * `registry-kind` must exist on every chain checked.
 */
export const onchainCrossCheck: CrossCheck<OnchainSpecs> = ({ values, raw, parsed, problem }) => {
  if (!parsed('verify-onchain')) return
  const mode = (values as Partial<InputValues<OnchainSpecs>>)['verify-onchain'] as VerifyOnchainMode | undefined
  if (!mode || mode === 'none') return
  const emulator = raw.emulator === 'true' || raw.emulator === 'True' || raw.emulator === 'TRUE'
  if ((mode === 'ethereum' || mode === 'both') && !raw['ethereum-rpc-url']) {
    problem(
      'ethereum-rpc-url',
      `\`ethereum-rpc-url\` is required with \`verify-onchain: ${mode}\`: pass it from a secret, e.g. \`\${{ secrets.SEPOLIA_RPC_URL }}\`.`,
    )
  }
  if ((mode === 'starknet' || mode === 'both') && !raw['starknet-rpc-url'] && !emulator) {
    problem(
      'starknet-rpc-url',
      `\`starknet-rpc-url\` is required with \`verify-onchain: ${mode}\` (unless \`emulator\` is true): pass it from a secret.`,
    )
  }
  // The services' plain-http rule, checked here so that nothing is submitted (and paid for) first.
  const insecureAllowed = ['true', 'True', 'TRUE'].includes(raw['allow-insecure-http'] ?? '')
  for (const name of ONCHAIN_RPC_INPUTS) {
    if (raw[name] && refusesPlainHttp(raw[name], insecureAllowed)) {
      problem(
        name,
        `\`${name}\` is plain http to another machine: the key in the URL and the registry's answer would cross the network in clear. Use https, or set \`allow-insecure-http: true\`.`,
      )
    }
  }
  if (mode === 'both' && raw['fact-registry']) {
    problem(
      'fact-registry',
      "`fact-registry` names one registry, and `verify-onchain: both` checks two chains: leave it out to use each network's known registry.",
    )
  }
  const kind = raw['registry-kind']
  if ((kind === 'sharp' && mode !== 'ethereum') || (kind === 'integrity' && mode !== 'starknet')) {
    const only = kind === 'sharp' ? 'Ethereum' : 'Starknet'
    const checks = mode === 'both' ? 'both chains' : mode === 'ethereum' ? 'Ethereum' : 'Starknet'
    problem(
      'registry-kind',
      `\`registry-kind\` ${kind} is ${only}'s only, and \`verify-onchain: ${mode}\` checks ${checks}: use \`satellite\` (both chains) or leave it out for each chain's default.`,
    )
  }
}

/** The on-chain policy the inputs ask for, or none (`verify-onchain: none`). */
export function onchainPolicyOf(inputs: OnchainInputs): OnchainPolicy | undefined {
  const mode = inputs['verify-onchain']
  if (mode === 'none') return undefined
  return {
    mode,
    timeoutMs: inputs['onchain-timeout-minutes'] * 60_000,
    ethereumRpcUrl: inputs['ethereum-rpc-url'],
    starknetRpcUrl: inputs['starknet-rpc-url'],
    registry: inputs['fact-registry'],
    registryKind: inputs['registry-kind'],
    expected: {
      securityBits: inputs['min-security-bits'],
      layout: inputs['verifier-layout'],
      hasher: inputs['verifier-hasher'],
      stoneVersion: inputs['verifier-stone-version'],
      memoryVerification: inputs['verifier-memory-verification'],
    },
    allowInsecureHttp: inputs['allow-insecure-http'],
  }
}
