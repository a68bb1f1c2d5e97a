/**
 * The root action's on-chain check as a person and a workflow see it: the pipeline decides
 * (src/pipeline/onchain.ts: registered, timed out, unreadable; the refusals), and this sets
 * `onchain-verified` and `onchain-details` and writes the summary's "On chain" row.
 */
import type { OnchainFactCheck } from '../../chain/types.ts'
import { formatDuration } from '../../core/poll.ts'
import { forSummary } from '../../core/service-text.ts'
import { ONCHAIN_LABEL, type OnchainOutcome, type OnchainVerdict, onchainFactName } from '../../pipeline/onchain.ts'
import type { QueryStep } from './query-step.ts'

/** The outputs and the summary's row of an on-chain verdict (`checkRequested`: the run asked for a check at all). */
export async function showOnchain(step: QueryStep, verdict: OnchainVerdict, checkRequested: boolean): Promise<void> {
  if (!verdict.checked) {
    // Not asked for: nothing was refused, so `onchain-verified` is left empty ('false' read as a
    // fact found missing), as every output that does not apply is.
    if (!checkRequested) {
      step.outputs.set({ 'onchain-details': '[]' })
      return
    }
    step.outputs.set({ 'onchain-verified': 'false', 'onchain-details': '[]' })
    if (verdict.reason) step.extraRows.push(['On chain', `not checked: ${verdict.reason}`])
    return
  }
  await showOutcomes(step, verdict.outcomes, verdict.timeoutMs)
}

/** The outcomes of the chains read: `onchain-verified` true only when every fact is registered. */
export async function showOutcomes(step: QueryStep, outcomes: OnchainOutcome[], timeoutMs: number): Promise<void> {
  const { describeWhere } = await import('../../chain/index.ts')
  const verified = outcomes.every((outcome) => outcome.status === 'registered')
  step.outputs.set({ 'onchain-verified': String(verified), 'onchain-details': JSON.stringify(outcomes.map(detail)) })
  // The network's name comes from the RPC's chain id when it is not a known one: service text,
  // escaped for the summary like any other.
  const describeForSummary = (check: OnchainFactCheck) => forSummary(describeWhere(check))
  step.extraRows.push([
    'On chain',
    { markdown: outcomes.map((outcome) => summaryLine(outcome, timeoutMs, describeForSummary)).join('<br>') },
  ])
}

/** Lines for the log once a PIE's facts were found registered before anything was submitted. */
export async function alreadyOnChainLines(outcomes: OnchainOutcome[]): Promise<string[]> {
  const { describeWhere } = await import('../../chain/index.ts')
  return outcomes.flatMap((outcome) => {
    if (outcome.status !== 'registered') return []
    const check = outcome.check
    const accepted =
      check.chain === 'starknet'
        ? check.verifications.filter((verification) => verification.meetsExpected && verification.hashMatches)
        : []
    const bits = accepted.length
      ? `, ${Math.max(...accepted.map((verification) => verification.securityBits))} security bits`
      : ''
    const fact = `${onchainFactName(check.chain, false)} ${check.fact}`
    return [
      `Already proven on chain: the PIE's ${fact} is registered on ${describeWhere(check)} (registry ${check.registry}, block ${check.blockNumber}${bits}).`,
    ]
  })
}

/** `onchain-details`: one object per chain; the check as the library returns it. */
function detail(outcome: OnchainOutcome): Record<string, unknown> {
  if (outcome.status === 'error') return { chain: outcome.chain, registered: false, error: outcome.message }
  if (!outcome.check) return { chain: outcome.chain, registered: false, timedOut: true }
  return { ...outcome.check, ...(outcome.status === 'timed-out' ? { timedOut: true } : {}) }
}

type Describe = (check: OnchainFactCheck) => string

const KIND_NAME: Record<OnchainFactCheck['registryKind'], string> = {
  sharp: 'SHARP',
  integrity: 'Integrity',
  satellite: 'Satellite',
}

/** "Starknet sepolia, Satellite registry `0x…`, block 7", so a reader sees which contract was read. */
function where(check: OnchainFactCheck, describe: Describe): string {
  return `${describe(check)}, ${KIND_NAME[check.registryKind]} registry \`${check.registry}\`, block ${check.blockNumber}`
}

function summaryLine(outcome: OnchainOutcome, timeoutMs: number, describe: Describe): string {
  const name = onchainFactName(outcome.chain, outcome.mocked)
  if (outcome.status === 'registered') return `✅ ${name} registered (${where(outcome.check, describe)})`
  // An RPC's words (an error message): data, never Markdown.
  if (outcome.status === 'error') return `❌ ${ONCHAIN_LABEL[outcome.chain]}: ${forSummary(outcome.message)}`
  const lastCheck = outcome.check
  return `❌ ${name} not registered within ${formatDuration(timeoutMs)}${lastCheck ? ` (${where(lastCheck, describe)})` : ''}`
}
