/**
 * The on-chain part of the gate: once the query is DONE and the rest of the gate passed, the
 * fact must be registered on chain, waited for up to the policy's timeout (a registration lands
 * some minutes after DONE). Ethereum checks the SHARP fact in SHARP's fact registry (or the
 * Satellite), Starknet the Integrity fact on the Satellite (or Integrity's FactRegistry) with at
 * least the policy's security bits; `both` waits for the two at once. A mocked fact (allowed, or
 * the gate would have refused it) is looked up among the mocked facts, which proves it was
 * registered as a mock, no more. Every way this ends is a refusal or a pass, never a throw
 * (cancellation aside): an RPC that cannot be read fails the gate, with the reason.
 *
 * Decides only; each host shows the verdict its own way (the action's outputs and summary). The
 * chain code (and viem) is imported only when a check runs.
 */
import type { OnchainFactCheck } from '../chain/types.ts'
import { AbortedError, ProvingKitError, WaitTimeoutError } from '../core/errors.ts'
import { formatDuration } from '../core/poll.ts'
import type { Logger } from '../core/runtime.ts'
import type { GateRecord, GateRefusal } from './gate.ts'

export type OnchainChain = 'ethereum' | 'starknet'
/** The chains a fact must be registered on: `ethereum`, `starknet` or `both`. */
export type OnchainMode = OnchainChain | 'both'

/** Where and how a fact must be registered for the gate to pass. */
export type OnchainPolicy = {
  mode: OnchainMode
  /** How long a registration is waited for once the query is DONE. */
  timeoutMs: number
  ethereumRpcUrl?: string | undefined
  starknetRpcUrl?: string | undefined
  /** One registry's address (one chain only); each chain's known one when absent. */
  registry?: string | undefined
  registryKind?: 'sharp' | 'integrity' | 'satellite' | undefined
  /** What a Starknet verification must show. */
  expected: {
    securityBits: number
    layout?: string | undefined
    hasher?: string | undefined
    stoneVersion?: string | undefined
    memoryVerification?: string | undefined
  }
  allowInsecureHttp: boolean
}

/** How one chain's check ended. */
export type OnchainOutcome = { chain: OnchainChain; mocked: boolean } & (
  | { status: 'registered'; check: OnchainFactCheck }
  | { status: 'timed-out'; check: OnchainFactCheck | undefined }
  | { status: 'error'; message: string }
)

/** The on-chain verdict: checked (each chain's outcome, the refusals) or not, and why not. */
export type OnchainVerdict =
  | { checked: true; outcomes: OnchainOutcome[]; registered: boolean; refusals: GateRefusal[]; timeoutMs: number }
  | { checked: false; reason: string | undefined; refusals: [] }

export const ONCHAIN_LABEL: Record<OnchainChain, string> = { ethereum: 'Ethereum', starknet: 'Starknet' }
export const ONCHAIN_FACT_NAME: Record<OnchainChain, string> = { ethereum: 'SHARP fact', starknet: 'Integrity fact' }

/** "SHARP fact", or "mocked SHARP fact" when the mocked facts are read. */
export function onchainFactName(chain: OnchainChain, mocked: boolean): string {
  return `${mocked ? 'mocked ' : ''}${ONCHAIN_FACT_NAME[chain]}`
}

export function chainsOf(mode: OnchainMode): OnchainChain[] {
  return mode === 'both' ? ['ethereum', 'starknet'] : [mode]
}

type CheckOptions = {
  signal?: AbortSignal | undefined
  logger: Logger
  /** Starknet's RPC of the built-in emulator, when no other is given. */
  emulatorUrl?: string | undefined
  /** A line for a person while a registration is waited for. */
  onProgress?: ((line: string) => void) | undefined
}

/**
 * Checks the facts on chain as the policy asks: nothing when no policy is given, the query is
 * not DONE, or the gate already refused the result (`refusedSoFar`); otherwise each chain's
 * outcome and the refusals (none when every fact is registered).
 */
export async function judgeOnChain(
  record: GateRecord & { sharpFactHash?: string | null | undefined; integrityFactHash?: string | null | undefined },
  policy: OnchainPolicy | undefined,
  refusedSoFar: readonly GateRefusal[],
  options: CheckOptions,
): Promise<OnchainVerdict> {
  if (!policy) return { checked: false, reason: undefined, refusals: [] }
  if (record.status !== 'DONE') return { checked: false, reason: `the query is ${record.status}`, refusals: [] }
  if (refusedSoFar.length) return { checked: false, reason: 'the gate already refused the result', refusals: [] }
  const mocked = record.isFactMocked === true
  const { waitForFactRegistration, describeNotYetRegistered, describeWhere } = await import('../chain/index.ts')
  const checkOne = async (chain: OnchainChain): Promise<OnchainOutcome> => {
    const fact = chain === 'ethereum' ? record.sharpFactHash : record.integrityFactHash
    if (!fact)
      return {
        chain,
        mocked,
        status: 'error',
        message: `the service reported no ${ONCHAIN_FACT_NAME[chain]}, so none can be checked`,
      }
    try {
      const check = await factReader(chain, fact, mocked, policy, options)
      const result = await waitForFactRegistration(check, {
        timeoutMs: policy.timeoutMs,
        signal: options.signal,
        logger: options.logger,
        onProgress: ({ elapsedMs, check: latest }) => {
          const fact = `${onchainFactName(chain, mocked)} ${latest.fact}`
          options.onProgress?.(
            `[${formatDuration(elapsedMs).padStart(6)}] ${ONCHAIN_LABEL[chain]}: ${fact} ${describeNotYetRegistered(latest)}`,
          )
        },
      })
      options.onProgress?.(
        `${ONCHAIN_LABEL[chain]}: ${onchainFactName(chain, mocked)} ${result.fact} is registered on ${describeWhere(result)} (registry ${result.registry}, block ${result.blockNumber}).`,
      )
      return { chain, mocked, status: 'registered', check: result }
    } catch (error) {
      if (error instanceof AbortedError) throw error
      if (error instanceof WaitTimeoutError)
        return { chain, mocked, status: 'timed-out', check: error.lastSeen as OnchainFactCheck | undefined }
      return { chain, mocked, status: 'error', message: messageOf(error) }
    }
  }
  const outcomes = await Promise.all(chainsOf(policy.mode).map(checkOne))
  const refusals = outcomes
    .filter((outcome) => outcome.status !== 'registered')
    .map((outcome) => refusalOf(outcome, policy.timeoutMs, describeWhere))
  return { checked: true, outcomes, registered: refusals.length === 0, refusals, timeoutMs: policy.timeoutMs }
}

/**
 * Before anything is submitted (reuse): whether the PIE's own facts (the SHARP fact for
 * Ethereum, the Integrity fact for Starknet) are already registered on every chain the policy
 * asks for, under the same registry and security policy, read once each (no waiting). Real facts
 * only: a mocked fact is never taken from the chain. A chain that cannot be read is "not
 * registered", with the reason.
 */
export async function factsAlreadyOnChain(
  facts: { sharpFactHash: string; integrityFactHash: string },
  policy: OnchainPolicy,
  options: CheckOptions,
): Promise<
  { registered: true; outcomes: OnchainOutcome[] } | { registered: false; reason: string; unreadable: boolean }
> {
  const { describeWhere } = await import('../chain/index.ts')
  const outcomes: OnchainOutcome[] = []
  for (const chain of chainsOf(policy.mode)) {
    const fact = chain === 'ethereum' ? facts.sharpFactHash : facts.integrityFactHash
    try {
      const result = await (await factReader(chain, fact, false, policy, options))()
      if (!result.registered) {
        return {
          registered: false,
          unreadable: false,
          reason: `the PIE's ${ONCHAIN_FACT_NAME[chain]} ${result.fact} is not registered on ${describeWhere(result)} (block ${result.blockNumber})`,
        }
      }
      outcomes.push({ chain, mocked: false, status: 'registered', check: result })
    } catch (error) {
      if (error instanceof AbortedError) throw error
      return {
        registered: false,
        unreadable: true,
        reason: `whether the PIE's ${ONCHAIN_FACT_NAME[chain]} is already registered on ${ONCHAIN_LABEL[chain]} could not be read (${messageOf(error)})`,
      }
    }
  }
  return { registered: true, outcomes }
}

/**
 * One read of a fact on a chain, as the policy asks for it: the registry (its address, its
 * kind, else the chain's known one) and, on Starknet, the security bits and verifier settings
 * the verification must have.
 */
async function factReader(
  chain: OnchainChain,
  fact: string,
  mocked: boolean,
  policy: OnchainPolicy,
  options: CheckOptions,
): Promise<() => Promise<OnchainFactCheck>> {
  const { checkFactOnEthereum, checkFactOnStarknet } = await import('../chain/index.ts')
  const rpcUrl =
    chain === 'ethereum'
      ? policy.ethereumRpcUrl
      : (policy.starknetRpcUrl ?? (options.emulatorUrl ? `${options.emulatorUrl}/starknet-rpc` : undefined))
  if (!rpcUrl) throw new ProvingKitError(`no ${ONCHAIN_LABEL[chain]} RPC URL was given`)
  const common = {
    rpcUrl,
    fact,
    registry: policy.registry,
    signal: options.signal,
    logger: options.logger,
    mocked,
    allowInsecureHttp: policy.allowInsecureHttp,
  }
  const kind = policy.registryKind
  return () =>
    chain === 'ethereum'
      ? checkFactOnEthereum({ ...common, registryKind: kind === 'integrity' ? undefined : kind })
      : checkFactOnStarknet({ ...common, registryKind: kind === 'sharp' ? undefined : kind, expected: policy.expected })
}

function refusalOf(
  outcome: OnchainOutcome,
  timeoutMs: number,
  describe: (check: OnchainFactCheck) => string,
): GateRefusal {
  const name = onchainFactName(outcome.chain, outcome.mocked)
  if (outcome.status === 'error') {
    return {
      kind: 'not-on-chain',
      message: `The ${name} could not be checked on ${ONCHAIN_LABEL[outcome.chain]}: ${outcome.message}`,
    }
  }
  const lastCheck = outcome.status === 'timed-out' ? outcome.check : undefined
  const reason = lastCheck?.chain === 'starknet' && lastCheck.reason ? ` (${lastCheck.reason})` : ''
  return {
    kind: 'not-on-chain',
    message: lastCheck
      ? `The ${name} ${lastCheck.fact} is not registered on ${describe(lastCheck)} (registry ${lastCheck.registry}, last block ${lastCheck.blockNumber}) after ${formatDuration(timeoutMs)}${reason}.`
      : `The ${name} is not registered on ${ONCHAIN_LABEL[outcome.chain]} after ${formatDuration(timeoutMs)}.`,
  }
}

function messageOf(error: unknown): string {
  return error instanceof ProvingKitError ? error.shortMessage : error instanceof Error ? error.message : String(error)
}
