/**
 * The root action's on-chain check (`verify-onchain`): once the query is DONE and the rest of
 * the gate passed, the fact must be registered on chain, waited for up to
 * `onchain-timeout-minutes` (a registration lands some minutes after DONE). Ethereum checks the
 * SHARP fact in SHARP's fact registry (or the Satellite), Starknet the Integrity fact on the
 * Satellite (or Integrity's FactRegistry) with at least `min-security-bits`; `both` waits for the
 * two at once. A mocked fact (allowed, or the gate would have refused it) is looked up among the
 * mocked facts, which proves it was registered as a mock, no more. Every way this ends is a gate
 * refusal or a pass, never a throw (cancellation aside): an RPC that cannot be read fails the
 * gate, with the reason.
 *
 * Imported by the root action only (its inputs live in ./onchain-inputs.ts); the chain code
 * (and viem) is imported only when a check is asked for.
 */
import type { OnchainFactCheck } from '../../chain/types.ts'
import type { Logger } from '../../core/runtime.ts'
import { AbortedError, ProvingKitError, WaitTimeoutError } from '../../core/errors.ts'
import { formatDuration } from '../../core/poll.ts'
import { forSummary } from '../../core/service-text.ts'
import type { GateRecord, GateRefusal } from '../../pipeline/gate.ts'
import { loggerFor } from './io.ts'
import type { OnchainInputs } from './onchain-inputs.ts'
import type { QueryStep } from './query-step.ts'
import type { ActionIO } from '../types.ts'

type Chain = 'ethereum' | 'starknet'

type ChainOutcome = { chain: Chain; mocked: boolean } & (
  | { status: 'registered'; check: OnchainFactCheck }
  | { status: 'timed-out'; check: OnchainFactCheck | undefined }
  | { status: 'error'; message: string }
)

const LABEL: Record<Chain, string> = { ethereum: 'Ethereum', starknet: 'Starknet' }
const FACT_NAME: Record<Chain, string> = { ethereum: 'SHARP fact', starknet: 'Integrity fact' }
/** "SHARP fact", or "mocked SHARP fact" when the mocked facts are read. */
const factName = (chain: Chain, mocked: boolean): string => `${mocked ? 'mocked ' : ''}${FACT_NAME[chain]}`

/**
 * Checks the facts on chain when `verify-onchain` asks for it; sets `onchain-verified` and
 * `onchain-details`, adds the summary row, and returns the refusals (none when registered).
 */
export async function verifyOnchain(
  io: ActionIO,
  step: QueryStep,
  inputs: OnchainInputs,
  record: GateRecord & { sharpFactHash?: string | null | undefined; integrityFactHash?: string | null | undefined },
  refusedSoFar: readonly GateRefusal[],
  options: { signal: AbortSignal; emulatorUrl?: string | undefined },
): Promise<GateRefusal[]> {
  const mode = inputs['verify-onchain']
  const skip = (reason: string): GateRefusal[] => {
    step.outputs.set({ 'onchain-verified': 'false', 'onchain-details': '[]' })
    step.extraRows.push(['On chain', `not checked: ${reason}`])
    return []
  }
  // Not asked for: nothing was refused, so `onchain-verified` is left empty ('false' read as a
  // fact found missing), as every output that does not apply is.
  if (mode === 'none') {
    step.outputs.set({ 'onchain-details': '[]' })
    return []
  }
  if (record.status !== 'DONE') return skip(`the query is ${record.status}`)
  if (refusedSoFar.length) return skip('the gate already refused the result')

  const chains: Chain[] = mode === 'both' ? ['ethereum', 'starknet'] : [mode]
  const mocked = record.isFactMocked === true
  const timeoutMs = inputs['onchain-timeout-minutes'] * 60_000
  const logger = loggerFor(io)
  const { waitForFactRegistration, describeWhere } = await import('../../chain/index.ts')

  const checkOne = async (chain: Chain): Promise<ChainOutcome> => {
    const fact = chain === 'ethereum' ? record.sharpFactHash : record.integrityFactHash
    if (!fact) return { chain, mocked, status: 'error', message: `the service reported no ${FACT_NAME[chain]}, so none can be checked` }
    const check = await factCheck(chain, fact, mocked, inputs, { ...options, logger })
    try {
      const result = await waitForFactRegistration(check, {
        timeoutMs,
        signal: options.signal,
        logger,
        onProgress: ({ elapsedMs, check: seen }) =>
          io.info(
            `[${formatDuration(elapsedMs).padStart(6)}] ${LABEL[chain]}: ${factName(chain, mocked)} ${seen.fact} not registered yet on ${describeWhere(seen)} (block ${seen.blockNumber})${seen.chain === 'starknet' && seen.reason ? `: ${seen.reason}` : ''}`,
          ),
      })
      io.info(`${LABEL[chain]}: ${factName(chain, mocked)} ${result.fact} is registered on ${describeWhere(result)} (registry ${result.registry}, block ${result.blockNumber}).`)
      return { chain, mocked, status: 'registered', check: result }
    } catch (error) {
      if (error instanceof AbortedError) throw error
      if (error instanceof WaitTimeoutError) return { chain, mocked, status: 'timed-out', check: error.lastSeen as OnchainFactCheck | undefined }
      const message = error instanceof ProvingKitError ? error.shortMessage : error instanceof Error ? error.message : String(error)
      return { chain, mocked, status: 'error', message }
    }
  }

  io.startGroup(`Checking the ${chains.map((chain) => factName(chain, mocked)).join(' and ')} on chain (up to ${formatDuration(timeoutMs)})`)
  let outcomes: ChainOutcome[]
  try {
    outcomes = await Promise.all(chains.map(checkOne))
  } finally {
    io.endGroup()
  }

  const verified = outcomes.every((outcome) => outcome.status === 'registered')
  step.outputs.set({ 'onchain-verified': String(verified), 'onchain-details': JSON.stringify(outcomes.map(detail)) })
  // The network's name comes from the RPC's chain id when it is not a known one: service text,
  // escaped for the summary like any other.
  const describeForSummary = (check: OnchainFactCheck) => forSummary(describeWhere(check))
  step.extraRows.push(['On chain', { markdown: outcomes.map((outcome) => summaryLine(outcome, timeoutMs, describeForSummary)).join('<br>') }])
  return outcomes.filter((outcome) => outcome.status !== 'registered').map((outcome) => refusal(outcome, timeoutMs, describeWhere))
}

/**
 * One read of a fact on a chain, as `verify-onchain` asks for it: the registry (`fact-registry`,
 * `registry-kind`, else the chain's known one) and, on Starknet, the security bits and verifier
 * settings the verification must have.
 */
async function factCheck(
  chain: Chain,
  fact: string,
  mocked: boolean,
  inputs: OnchainInputs,
  options: { signal: AbortSignal; emulatorUrl?: string | undefined; logger: Logger },
): Promise<() => Promise<OnchainFactCheck>> {
  const { checkFactOnEthereum, checkFactOnStarknet } = await import('../../chain/index.ts')
  const expected = {
    securityBits: inputs['min-security-bits'],
    layout: inputs['verifier-layout'],
    hasher: inputs['verifier-hasher'],
    stoneVersion: inputs['verifier-stone-version'],
    memoryVerification: inputs['verifier-memory-verification'],
  }
  const rpcUrl =
    chain === 'ethereum'
      ? inputs['ethereum-rpc-url']!
      : (inputs['starknet-rpc-url'] ?? (options.emulatorUrl ? `${options.emulatorUrl}/starknet-rpc` : undefined))!
  const common = { rpcUrl, fact, registry: inputs['fact-registry'], signal: options.signal, logger: options.logger, mocked, allowInsecureHttp: inputs['allow-insecure-http'] }
  const kind = inputs['registry-kind']
  return () =>
    chain === 'ethereum'
      ? checkFactOnEthereum({ ...common, registryKind: kind === 'integrity' ? undefined : kind })
      : checkFactOnStarknet({ ...common, registryKind: kind === 'sharp' ? undefined : kind, expected })
}

/**
 * `reuse: auto` with `verify-onchain`, before anything is submitted: whether the PIE's own facts
 * (computed here: the SHARP fact for Ethereum, the Integrity fact for Starknet) are already
 * registered on every chain asked for, under the same registry and security policy the gate
 * applies after a proof, read once each (no waiting). All registered: `onchain-verified`,
 * `onchain-details` and the summary's row are set, and true is returned (the step passes with
 * no submission). Otherwise nothing is set and the PIE is submitted; a chain that cannot be
 * read is a warning. Real facts only: a mocked fact is never taken from the chain.
 */
export async function alreadyOnChain(
  io: ActionIO,
  step: QueryStep,
  inputs: OnchainInputs,
  facts: { sharpFactHash: string; integrityFactHash: string },
  options: { signal: AbortSignal; emulatorUrl?: string | undefined },
): Promise<boolean> {
  const mode = inputs['verify-onchain']
  if (mode === 'none') return false
  const chains: Chain[] = mode === 'both' ? ['ethereum', 'starknet'] : [mode]
  const { describeWhere } = await import('../../chain/index.ts')
  const seen: OnchainFactCheck[] = []
  for (const chain of chains) {
    const fact = chain === 'ethereum' ? facts.sharpFactHash : facts.integrityFactHash
    try {
      const result = await (await factCheck(chain, fact, false, inputs, { ...options, logger: loggerFor(io) }))()
      if (!result.registered) {
        io.info(`Not proven on chain yet: the PIE's ${FACT_NAME[chain]} ${result.fact} is not registered on ${describeWhere(result)} (block ${result.blockNumber}).`)
        return false
      }
      seen.push(result)
    } catch (error) {
      if (error instanceof AbortedError) throw error
      const message = error instanceof ProvingKitError ? error.shortMessage : error instanceof Error ? error.message : String(error)
      io.warning(`Could not read whether the PIE's ${FACT_NAME[chain]} is already registered on ${LABEL[chain]} (${message}); proving it.`)
      return false
    }
  }
  const outcomes: ChainOutcome[] = seen.map((check) => ({ chain: check.chain, mocked: false, status: 'registered', check }))
  for (const check of seen) {
    const accepted = check.chain === 'starknet' ? check.verifications.filter((verification) => verification.meetsExpected && verification.hashMatches) : []
    const bits = accepted.length ? `, ${Math.max(...accepted.map((verification) => verification.securityBits))} security bits` : ''
    io.info(`Already proven on chain: the PIE's ${FACT_NAME[check.chain]} ${check.fact} is registered on ${describeWhere(check)} (registry ${check.registry}, block ${check.blockNumber}${bits}).`)
  }
  step.outputs.set({ 'onchain-verified': 'true', 'onchain-details': JSON.stringify(outcomes.map(detail)) })
  const describeForSummary = (check: OnchainFactCheck) => forSummary(describeWhere(check))
  step.extraRows.push(['On chain', { markdown: outcomes.map((outcome) => summaryLine(outcome, 0, describeForSummary)).join('<br>') }])
  return true
}

/** `onchain-details`: one object per chain; the check as the library returns it. */
function detail(outcome: ChainOutcome): Record<string, unknown> {
  if (outcome.status === 'error') return { chain: outcome.chain, registered: false, error: outcome.message }
  if (!outcome.check) return { chain: outcome.chain, registered: false, timedOut: true }
  return { ...outcome.check, ...(outcome.status === 'timed-out' ? { timedOut: true } : {}) }
}

type Describe = (check: OnchainFactCheck) => string

const KIND_NAME: Record<OnchainFactCheck['registryKind'], string> = { sharp: 'SHARP', integrity: 'Integrity', satellite: 'Satellite' }

/** "Starknet sepolia, Satellite registry `0x…`, block 7", so a reader sees which contract was read. */
function where(check: OnchainFactCheck, describe: Describe): string {
  return `${describe(check)}, ${KIND_NAME[check.registryKind]} registry \`${check.registry}\`, block ${check.blockNumber}`
}

function summaryLine(outcome: ChainOutcome, timeoutMs: number, describe: Describe): string {
  const name = factName(outcome.chain, outcome.mocked)
  if (outcome.status === 'registered') return `✅ ${name} registered (${where(outcome.check, describe)})`
  // An RPC's words (an error message): data, never Markdown.
  if (outcome.status === 'error') return `❌ ${LABEL[outcome.chain]}: ${forSummary(outcome.message)}`
  const seen = outcome.check
  return `❌ ${name} not registered within ${formatDuration(timeoutMs)}${seen ? ` (${where(seen, describe)})` : ''}`
}

function refusal(outcome: ChainOutcome, timeoutMs: number, describe: Describe): GateRefusal {
  const name = factName(outcome.chain, outcome.mocked)
  if (outcome.status === 'error') {
    return { kind: 'not-on-chain', message: `The ${name} could not be checked on ${LABEL[outcome.chain]}: ${outcome.message}` }
  }
  const seen = outcome.check
  const reason = seen?.chain === 'starknet' && seen.reason ? ` (${seen.reason})` : ''
  return {
    kind: 'not-on-chain',
    message: seen
      ? `The ${name} ${seen.fact} is not registered on ${describe(seen)} (registry ${seen.registry}, last block ${seen.blockNumber}) after ${formatDuration(timeoutMs)}${reason}.`
      : `The ${name} is not registered on ${LABEL[outcome.chain]} after ${formatDuration(timeoutMs)}.`,
  }
}
