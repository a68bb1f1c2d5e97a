/**
 * What to do with one prepared statement before anything costs: reuse what already proves it
 * (its fact registered on chain, or a DONE query of this key), follow what an earlier attempt
 * left running (a re-run), or submit it; each decision with its reason. Reads only: the journal
 * and the dedup chain, which may follow or retry an earlier query, act in ./submit.ts.
 */
import type { ProvingClient } from '../../clients/proving.ts'
import type { Logger } from '../../core/runtime.ts'
import type { PieInspection } from '../../pie/index.ts'
import type { QueryRecordWithStatus } from '../../schemas/proving.ts'
import type { KeyQueries } from '../key-queries.ts'
import { factsAlreadyOnChain, type OnchainOutcome } from '../onchain.ts'
import { findReusableQuery, generalReuseRequest, l2ReuseRequest, type ReuseRequest } from '../reuse.ts'
import { resultOf, type StatementPolicy, type StatementEndpoint } from './request.ts'

/**
 * What a run decided for a statement before paying: reuse a fact on chain or a query, follow queries
 * still running, or submit.
 */
export type Decision =
  /** The PIE's own fact is registered on every chain the policy asks for: nothing is submitted. */
  | { kind: 'reuse-chain'; reason: string; outcomes: OnchainOutcome[] }
  /** A DONE query of this key already proves it (or, on a re-run, one an earlier attempt left running ended proving it). */
  | { kind: 'reuse-query'; reason: string; record: QueryRecordWithStatus }
  /** Submit it (the journal or the dedup chain may still follow or retry an earlier query: ./submit.ts). */
  /** A plan on a re-run: queries still running may be this PIE's; a run waits for them and judges them before paying. */
  | { kind: 'follow-running'; reason: string; ids: string[]; retry?: boolean | undefined }
  /** `looked`: earlier queries were looked through; `quiet`: their list could not be read (said once the submission went through). */
  | { kind: 'submit'; reason: string; looked?: boolean | undefined; quiet?: boolean | undefined }

export type DecideContext = {
  client: ProvingClient
  endpoint: StatementEndpoint
  policy: StatementPolicy
  logger: Logger
  signal?: AbortSignal | undefined
  /** SHA-256 of the statement's pie.zip (what a re-run's `known` PIEs are named by). */
  pieDigest?: string | undefined
  /** The run's index of the key's queries: read once for every statement. */
  queries?: KeyQueries | undefined
  /** A plan: read only (a re-run's running candidates are named, not waited for). */
  dryRun?: boolean | undefined
}

/** The reuse decision for a statement whose PIE is inspected (else it is submitted). */
export async function decideReuse(inspection: PieInspection | undefined, context: DecideContext): Promise<Decision> {
  const { policy, endpoint } = context
  if (policy.reuse.mode !== 'auto') return { kind: 'submit', reason: 'reuse is off' }
  if (policy.journal?.forceNew) return { kind: 'submit', reason: 'a new query was asked for' }
  if (!inspection) return { kind: 'submit', reason: 'there is no PIE to compare an earlier query with' }
  if (endpoint.kind === 'proof') return { kind: 'submit', reason: 'a proof verification is not reused' }
  const onChain = await reuseFromChain(inspection, context)
  if (onChain) return onChain
  const request = reuseRequestOf(endpoint, policy)
  // A re-run after an attempt was stopped: its record of what it submitted may be gone, and the
  // L2 endpoint takes no dedup id, so a query it left running is found here, waited for and
  // judged. (A general submission's derived dedup id finds the earlier attempt's query itself.)
  const rerun = policy.reuse.rerun
  const known = context.pieDigest !== undefined && rerun?.known?.has(context.pieDigest) === true
  const inFlight =
    rerun && endpoint.kind === 'l2' && !known ? { timeoutMs: policy.timeoutMs, sinceMs: rerun.sinceMs } : undefined
  const found = await findReusableQuery(context.client, inspection, request, {
    signal: context.signal,
    logger: context.logger,
    inFlight,
    queries: context.queries,
    dryRun: context.dryRun,
  })
  if (!found.reused && found.retriable) {
    return {
      kind: 'follow-running',
      ids: [found.retriable],
      retry: true,
      reason: `a re-run: query ${found.retriable} of this PIE's program FAILED; it is retried and judged before anything is paid`,
    }
  }
  if (!found.reused && found.running?.length) {
    const count = found.running.length
    const [queries, are] = count === 1 ? ['1 query', 'is'] : [`${count} queries`, 'are']
    const ids = `${found.running.slice(0, 3).join(', ')}${count > 3 ? ', ...' : ''}`
    return {
      kind: 'follow-running',
      ids: found.running,
      reason: `a re-run: ${queries} of this PIE's program and settings ${are} still running (${ids}); waited for and judged before anything is paid`,
    }
  }
  if (!found.reused) return { kind: 'submit', reason: found.reason, looked: true, quiet: found.unreadable }
  const created = typeof found.record.createdAt === 'string' ? `, created ${found.record.createdAt}` : ''
  return {
    kind: 'reuse-query',
    record: found.record,
    reason: `query ${found.record.id}${created} is DONE and proves this PIE (same result kind, settings and facts)`,
  }
}

/**
 * The PIE's facts already registered on chain: only with an on-chain policy, never for a mocked
 * fact (only a real proof's registration counts), never when the run needs a query (`chain`
 * reuse off, as for a decommitment that follows the proof).
 */
async function reuseFromChain(inspection: PieInspection, context: DecideContext): Promise<Decision | undefined> {
  const { policy, endpoint } = context
  if (!policy.onchain || policy.reuse.chain === false || endpoint.mockFactHash) return undefined
  const onChain = await factsAlreadyOnChain(
    { sharpFactHash: inspection.sharpFactHash, integrityFactHash: inspection.integrityFactHash },
    policy.onchain,
    { signal: context.signal, logger: context.logger, emulatorUrl: policy.emulatorUrl },
  )
  if (!onChain.registered) {
    if (onChain.unreadable) context.logger.warn(`Not reused from chain: ${onChain.reason}; proving it.`)
    else context.logger.info(`Not proven on chain yet: ${onChain.reason}.`)
    return undefined
  }
  return {
    kind: 'reuse-chain',
    reason: 'the fact this PIE gives is already registered on chain',
    outcomes: onChain.outcomes,
  }
}

/** What a query must show to stand for this statement. */
export function reuseRequestOf(
  endpoint: Exclude<StatementEndpoint, { kind: 'proof' }>,
  policy: StatementPolicy,
): ReuseRequest {
  const factConditions = {
    mockFactHash: endpoint.mockFactHash,
    allowMockedFact: policy.gate.allowMockedFact,
    expectedProgramHash: policy.gate.expectedProgramHash,
  }
  if (endpoint.kind === 'l2')
    return l2ReuseRequest({ ...factConditions, layout: endpoint.layout, prover: endpoint.prover })
  return generalReuseRequest(
    { ...endpoint.fields, result: resultOf(endpoint), layout: endpoint.layout },
    factConditions,
  )
}

/**
 * The line a person is told about a decision before anything is paid, or undefined when there is
 * nothing to say (reuse off, no PIE, a list that could not be read: said once the submission went
 * through). Every host shows this one line its own way.
 */
export function decisionLine(decision: Decision): string | undefined {
  if (decision.kind === 'reuse-query') return `Reused ${decision.reason}; nothing was submitted. It is gated as if new.`
  if (decision.kind === 'submit' && decision.looked && !decision.quiet)
    return `No earlier query reused: ${decision.reason}.`
  return undefined
}
