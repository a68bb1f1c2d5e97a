/**
 * The plan: what a run would do with each statement, and why, computed by reading only. Nothing
 * is uploaded, retried, locked or written: the PIE is validated and inspected, the reuse lookup
 * reads the run's index of the key's queries (a re-run's running candidates are named, not
 * waited for), the journal is peeked at, the dedup chain is walked by its records. A real run
 * decides the same way, statement by statement, and says each decision before it pays
 * (./run.ts, the `decided` event); a plan shows them all before anything costs.
 */
import type { ProvingClient } from '../../clients/proving.ts'
import { dedupIdAfterFailure, MAX_FAILED_RESUBMISSIONS } from '../../clients/proving/dedup.ts'
import { retryRefusal } from '../../clients/proving/retries.ts'
import { withBound } from '../../core/deadline.ts'
import { AbortedError, ProvingKitError } from '../../core/errors.ts'
import type { Logger } from '../../core/runtime.ts'
import { SubmissionJournal } from '../journal.ts'
import { KeyQueries } from '../key-queries.ts'
import { limiter } from '../limit.ts'
import type { PreparedPie } from '../prepared-pie.ts'
import { decideReuse } from './decide.ts'
import { checkExpectedProgram, NotTheExpectedProgram, preparePieOf } from './prepare.ts'
import { checkRequest, labelOf, type StatementRequest, type StatementSubject } from './request.ts'
import { declaredJobSize, journalParts } from './submit.ts'

/** What a run does with a statement. */
export const PLAN_DECISIONS = ['reuse-query', 'reuse-chain', 'follow', 'retry', 'submit', 'refuse'] as const
export type PlanDecision = (typeof PLAN_DECISIONS)[number]

/** One statement of the plan: the subject as the user gave it, the decision, why, and the query it concerns. */
export type PlanRow = { pie: string; decision: PlanDecision; reason: string; queryId?: string | undefined }

export type PlanContext = {
  client: ProvingClient
  logger: Logger
  signal?: AbortSignal | undefined
}

/**
 * The plan of every statement of the request, in order, by reading only. A request that cannot
 * mean anything throws (`checkRequest`), as a real run would; a statement that would be refused
 * is a `refuse` row with the reason.
 */
export async function planStatements(request: StatementRequest, context: PlanContext): Promise<PlanRow[]> {
  checkRequest(request)
  const queries = new KeyQueries(context.client)
  const limit = limiter(request.policy.concurrency)
  /** The first PIE (its label) of each statement, by its digest: the same one again is followed, not planned twice. */
  const firstPieByKey = new Map<string, string>()
  const deadline = context.client.http.clock.now() + request.policy.timeoutMs
  const planned = await Promise.all(
    request.subjects.map((subject) =>
      withBound(deadline, () => limit(() => planOne(subject, request, { ...context, queries }, firstPieByKey))),
    ),
  )
  return inGivenOrder(planned)
}

type KeyedRow = PlanRow & { key?: string; sameAs?: string }

/**
 * The same PIE given twice is planned once, by whichever statement was prepared first; the row
 * that carries the decision is the first in the order given, the others say whose they share,
 * whatever the order the preparations ended in.
 */
function inGivenOrder(planned: KeyedRow[]): PlanRow[] {
  const first = new Map<string, number>()
  planned.forEach((row, index) => {
    if (row.key !== undefined && !first.has(row.key)) first.set(row.key, index)
  })
  const decided = new Map<string, KeyedRow>()
  for (const row of planned) if (row.key !== undefined && row.sameAs === undefined) decided.set(row.key, row)
  return planned.map((row, index) => {
    const { key, sameAs: _sameAs, ...shown } = row
    if (key === undefined) return shown
    const firstIndex = first.get(key)!
    const { key: _key, sameAs: _same, ...decision } = decided.get(key)!
    if (index === firstIndex) return { ...decision, pie: row.pie }
    return {
      pie: row.pie,
      decision: 'follow',
      reason: `the same PIE as ${planned[firstIndex]!.pie}: sent once, its query shared`,
    }
  })
}

async function planOne(
  subject: StatementSubject,
  request: StatementRequest,
  context: PlanContext & { queries: KeyQueries },
  firstPieByKey: Map<string, string>,
): Promise<KeyedRow> {
  const label = labelOf(subject)
  let prepared: PreparedPie | undefined
  let key: string | undefined
  try {
    prepared = await preparePieOf(subject, request, { signal: context.signal })
    if (prepared) checkExpectedProgram(prepared, request.policy.gate.expectedProgramHash)
    key = prepared ? `pie:${prepared.sha256}` : `${subject.kind}:${JSON.stringify(subject)}`
    const earlier = firstPieByKey.get(key)
    if (earlier !== undefined) return { pie: label, key, sameAs: earlier, decision: 'follow', reason: '' }
    firstPieByKey.set(key, label)
    return { pie: label, key, ...(await decisionOf(subject, prepared, request, context)) }
  } catch (error) {
    if (error instanceof AbortedError || context.signal?.aborted) throw error
    if (error instanceof NotTheExpectedProgram) return { pie: label, decision: 'refuse', reason: error.refusal.message }
    const reason = error instanceof ProvingKitError ? error.shortMessage : (error as Error).message
    return { pie: label, ...(key === undefined ? {} : { key }), decision: 'refuse', reason }
  } finally {
    await prepared?.cleanup().catch(() => {})
  }
}

type Planned = Omit<PlanRow, 'pie'>

async function decisionOf(
  subject: StatementSubject,
  pie: PreparedPie | undefined,
  request: StatementRequest,
  context: PlanContext & { queries: KeyQueries },
): Promise<Planned> {
  const { policy, endpoint } = request
  const decision = await decideReuse(pie?.inspection, {
    client: context.client,
    endpoint,
    policy,
    logger: context.logger,
    signal: context.signal,
    queries: context.queries,
    dryRun: true,
  })
  if (decision.kind === 'reuse-chain') return { decision: 'reuse-chain', reason: decision.reason }
  if (decision.kind === 'reuse-query')
    return { decision: 'reuse-query', reason: decision.reason, queryId: decision.record.id }
  if (decision.kind === 'follow-running')
    return { decision: decision.retry ? 'retry' : 'follow', reason: decision.reason, queryId: decision.ids[0] }
  if (pie && policy.journal && endpoint.kind !== 'proof' && !(endpoint.kind === 'general' && endpoint.deriveDedupId)) {
    const fromJournal = await journalPlan(pie, request, context)
    if (fromJournal) return fromJournal
  }
  if (endpoint.kind === 'general' && (endpoint.deriveDedupId || endpoint.fields.dedupId !== undefined)) {
    return dedupChainPlan(subject, pie, request, context)
  }
  return { decision: 'submit', reason: decision.reason }
}

/** What the journal would do: follow a live run's or an earlier run's query, retry it, or look for what an unfinished upload created. */
async function journalPlan(
  pie: PreparedPie,
  request: StatementRequest,
  context: PlanContext,
): Promise<Planned | undefined> {
  const policy = request.policy.journal!
  if (policy.forceNew) return { decision: 'submit', reason: 'a new query was asked for, whatever the journal says' }
  const journal = new SubmissionJournal(policy.dir)
  const key = journal.keyOf(
    journalParts(pie, {
      client: context.client,
      endpoint: request.endpoint,
      policy: request.policy,
      logger: context.logger,
    }),
  )
  const { entry, liveOwner } = await journal.peek(key)
  if (liveOwner)
    return {
      decision: 'follow',
      reason: `another run is submitting this PIE now (pid ${liveOwner.pid} on ${liveOwner.host}): its query is followed`,
    }
  if (!entry) return undefined
  if (!entry.provingQueryId) {
    return {
      decision: 'follow',
      reason: `an earlier upload of this PIE did not finish (journal ${journal.pathOf(key)}): the run looks for the query it created and follows it, or refuses to pay twice`,
    }
  }
  return failedOrFollowed(entry.provingQueryId, 'an earlier run of this PIE submitted it', context)
}

/** A query an earlier run made: followed, retried when it FAILED and may be, or a new query submitted. */
async function failedOrFollowed(queryId: string, whose: string, context: PlanContext): Promise<Planned> {
  const status = await statusOf(queryId, context)
  if (status !== 'FAILED')
    return {
      decision: 'follow',
      reason: `${whose} (query ${queryId}, ${status ?? 'status unread'}); nothing is sent again`,
      queryId,
    }
  const retriable = await retriability(queryId, context)
  if (retriable === false)
    return {
      decision: 'submit',
      reason: `${whose}, and query ${queryId} FAILED and cannot be retried: a new query is paid for`,
    }
  const how =
    retriable === undefined
      ? ' (the service did not say whether it is retriable: the retry endpoint decides)'
      : ' with a retriable error'
  return {
    decision: 'retry',
    reason: `${whose}, and query ${queryId} FAILED${how}: it is retried, nothing new paid for`,
    queryId,
  }
}

/** The general submission's dedup chain, walked by its records: the query it stands for, past the FAILED ones. */
async function dedupChainPlan(
  subject: StatementSubject,
  pie: PreparedPie | undefined,
  request: StatementRequest,
  context: PlanContext,
): Promise<Planned> {
  const endpoint = request.endpoint
  if (endpoint.kind !== 'general') return { decision: 'submit', reason: 'no dedup id' }
  const { dedupId: given, ...fields } = endpoint.fields
  const subjectKey = pie
    ? `pie:${pie.sha256}`
    : subject.kind === 'program-hash'
      ? `hash:${subject.programHash}`
      : undefined
  // A program's dedup id is derived from its file's digest at submission: the plan reads none.
  if (given === undefined && subjectKey === undefined)
    return { decision: 'submit', reason: 'a program is sent under a dedup id derived from its files' }
  let dedupId =
    given ??
    endpoint.deriveDedupId!(subjectKey!, {
      ...fields,
      declaredJobSize: declaredJobSize(endpoint, pie),
      layout: endpoint.layout,
      mockFactHash: endpoint.mockFactHash,
    })
  for (let link = 0; link <= MAX_FAILED_RESUBMISSIONS; link++) {
    const existing = await context.client.findQueryByDedupId(dedupId, { signal: context.signal })
    if (!existing)
      return {
        decision: 'submit',
        reason:
          link === 0
            ? `no query has its dedup id ${dedupId} yet`
            : `the chain's FAILED queries cannot be retried: submitted under dedup id ${dedupId}`,
      }
    const planned = await failedOrFollowed(
      existing.id,
      `the service has a query under its dedup id ${dedupId}`,
      context,
    )
    if (planned.decision !== 'submit') return planned
    dedupId = dedupIdAfterFailure(dedupId, existing.id)
  }
  return { decision: 'refuse', reason: 'the dedup chain FAILED too many times; give another dedup id' }
}

async function statusOf(queryId: string, context: PlanContext): Promise<string | undefined> {
  try {
    return (await context.client.readQuery(queryId, { signal: context.signal })).provingQuery.status
  } catch (error) {
    if (error instanceof AbortedError) throw error
    return undefined
  }
}

/** Record D's word on a FAILED query: retriable (true), not (false), or not said (undefined). */
async function retriability(queryId: string, context: PlanContext): Promise<boolean | undefined> {
  try {
    const record = (await context.client.getQuery(queryId, { signal: context.signal })).provingQuery as {
      isRetriable?: unknown
      retryCount?: unknown
    }
    // The rule the retry itself reads (clients/proving/retries.ts).
    if (retryRefusal(record) !== undefined) return false
    return record.isRetriable === true ? true : undefined
  } catch (error) {
    if (error instanceof AbortedError) throw error
    return undefined
  }
}

/** What a run did with a statement, in the plan's words: the check that a run does what its plan said. */
export function actedAs(outcome: {
  decision?: { kind: string } | undefined
  submitted?: { how: string } | undefined
  ending: string
}): PlanDecision {
  if (outcome.decision?.kind === 'reuse-chain') return 'reuse-chain'
  const how = outcome.submitted?.how
  if (how === 'reused') return 'reuse-query'
  if (how === 'followed') return 'follow'
  if (how === 'retried') return 'retry'
  if (how === 'submitted') return 'submit'
  return 'refuse'
}
