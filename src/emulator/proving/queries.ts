import { randomUUID } from 'node:crypto'
import { jobSizeForSteps } from '../../pie/index.ts'
import { JOB_SIZES, type JobSize } from '../../schemas/proving-constants.ts'
import { defaultFailureReason, type PlannedFailure, type Progress, progressOf, type QueryRun } from './lifecycle.ts'
import { own, type EmulatorState, type Endpoint, type NextQueryPlan, type Owner, type StoredQuery } from '../state.ts'
import { dedupKey, indexQuery, queryIndex } from './query-index.ts'

/**
 * The life of a proving query in the emulator: which steps it runs (by endpoint and `result`),
 * how a submission becomes a stored query, how a retry starts a new run, and where a query
 * stands now.
 */

export const MAX_RETRIES = 3

const PROVE = ['TRACE_GENERATION', 'PROOF_GENERATION']

/** The steps a query passes through, in order. */
export function stepsFor(endpoint: Endpoint, result: string): string[] {
  if (endpoint === 'l2-proof') return ['PROOF_VERIFICATION_ON_L2']
  if (endpoint === 'l2-pie') return [...PROVE, 'PROOF_VERIFICATION_ON_L2']
  switch (result) {
    case 'TRACE_GENERATION':
      return ['TRACE_GENERATION']
    case 'PROOF_VERIFICATION_ON_L1':
      return [...PROVE, 'PROOF_VERIFICATION_ON_L1', 'FACT_HASH_REGISTRATION']
    case 'PROOF_VERIFICATION_ON_L2':
      return [...PROVE, 'PROOF_VERIFICATION_ON_L2']
    case 'PROOF_VERIFICATION_ON_APE_CHAIN':
    case 'PROOF_VERIFICATION_ON_WORLD_CHAIN':
      return [...PROVE, 'PROOF_VERIFICATION_ON_L1', 'FACT_HASH_REGISTRATION', 'BRIDGE_FACT_HASH']
    default:
      return PROVE
  }
}

export function chainFor(result: string): string {
  switch (result) {
    case 'PROOF_VERIFICATION_ON_L1':
      return 'L1'
    case 'PROOF_VERIFICATION_ON_L2':
      return 'L2'
    case 'PROOF_VERIFICATION_ON_APE_CHAIN':
      return 'APE_CHAIN'
    case 'PROOF_VERIFICATION_ON_WORLD_CHAIN':
      return 'WORLD_CHAIN'
    default:
      return 'OFFCHAIN'
  }
}

/** A bucket query proves on its own, then waits for the bucket's close to verify in aggregate. */
function holdFromFor(steps: readonly string[]): number {
  const proved = steps.indexOf('PROOF_GENERATION')
  return proved < 0 ? steps.length : proved + 1
}

/** What a submission gives a new query: the stored record's own fields, the job size as declared. */
export type NewQuery = Pick<
  StoredQuery,
  | 'owner'
  | 'endpoint'
  | 'externalId'
  | 'dedupId'
  | 'layout'
  | 'mockFactHash'
  | 'result'
  | 'network'
  | 'cairoVm'
  | 'cairoVersion'
  | 'sharpProver'
  | 'hints'
  | 'bucketId'
  | 'bucketJobIndex'
  | 'isProofMocked'
  | 'facts'
> & { declaredJobSize: JobSize | null }

/**
 * A stored query for a submission, in RECEIVED. The next-query plan (if any) decides its
 * ending; a declared job size smaller than the job's makes it fail at its first step, as the
 * service does.
 */
export function createQuery(
  state: EmulatorState,
  input: NewQuery,
  now: number,
  id: string = randomUUID(),
): StoredQuery {
  const steps = stepsFor(input.endpoint, input.result)
  const jobSize = input.facts.nSteps !== null ? jobSizeForSteps(input.facts.nSteps) : input.declaredJobSize
  const isJobSizeValid =
    input.declaredJobSize === null ||
    jobSize === null ||
    JOB_SIZES.indexOf(input.declaredJobSize) >= JOB_SIZES.indexOf(jobSize)
  const plan = state.nextQueries.shift()
  const run: QueryRun = {
    startedAt: now,
    timing: { ...state.timing },
    steps,
    holdFrom: input.bucketId === null ? null : holdFromFor(steps),
    failure: null,
    forced: null,
  }
  let repeatFailure: StoredQuery['repeatFailure'] = null
  if (!isJobSizeValid) {
    run.failure = {
      stepIndex: 0,
      retriable: false,
      reason: `Declared job size ${input.declaredJobSize} is too small for this job (size ${jobSize}, ${input.facts.nSteps} steps)`,
    }
  } else if (plan?.outcome === 'done') {
    run.forced = { at: now, outcome: 'done' }
  } else if (plan?.outcome === 'fail') {
    run.failure = plannedFailure(steps, plan)
    if (plan.times > 1)
      repeatFailure = { remaining: plan.times - 1, retriable: plan.retriable, reason: plan.reason, atStep: plan.atStep }
  }
  const chain = input.endpoint === 'general' ? chainFor(input.result) : 'L2'
  const query: StoredQuery = {
    id,
    owner: input.owner,
    endpoint: input.endpoint,
    externalId: input.externalId,
    dedupId: input.dedupId,
    layout: input.layout,
    mockFactHash: input.mockFactHash,
    isProofMocked: input.isProofMocked,
    chain,
    result: input.result,
    network: input.network,
    cairoVm: input.cairoVm,
    cairoVersion: input.cairoVersion,
    sharpProver: input.sharpProver,
    hints: input.hints ?? null,
    declaredJobSize: input.declaredJobSize,
    jobSize,
    isJobSizeValid,
    bucketId: input.bucketId,
    bucketJobIndex: input.bucketJobIndex,
    facts: input.facts,
    files: {},
    createdAt: now,
    retryCount: 0,
    run,
    repeatFailure,
    recordOverride: plan?.record ?? null,
  }
  state.queries[id] = query
  indexQuery(state, query)
  state.counters.submissions++
  return query
}

/** The failure a plan asks for; a step the query does not have falls back to its first. */
export function plannedFailure(
  steps: readonly string[],
  plan: Pick<NextQueryPlan, 'retriable' | 'atStep' | 'reason'>,
): PlannedFailure {
  const found = plan.atStep === null ? -1 : steps.indexOf(plan.atStep)
  const stepIndex = Math.max(0, found)
  return {
    stepIndex,
    retriable: plan.retriable,
    reason: plan.reason ?? defaultFailureReason(steps[stepIndex] ?? 'the query', plan.retriable),
  }
}

/** POST retry: back to RECEIVED with a fresh run, retryCount + 1, errorReason cleared. */
export function restartQuery(state: EmulatorState, query: StoredQuery, now: number): void {
  query.retryCount++
  query.run = {
    startedAt: now,
    timing: { ...state.timing },
    steps: query.run.steps,
    holdFrom: query.run.holdFrom,
    failure: null,
    forced: null,
  }
  const repeat = query.repeatFailure
  if (repeat && repeat.remaining > 0) {
    query.run.failure = plannedFailure(query.run.steps, repeat)
    repeat.remaining--
    if (repeat.remaining === 0) query.repeatFailure = null
  }
  state.counters.retries++
}

/** When the query's bucket was closed: the moment its held steps may run. */
export function gateOf(state: EmulatorState, query: StoredQuery): number | null {
  if (query.bucketId === null) return null
  return own(state.buckets, query.bucketId)?.closedAt ?? null
}

export function queryProgress(state: EmulatorState, query: StoredQuery, now: number): Progress {
  return progressOf(query.run, gateOf(state, query), now)
}

/** A bucket's queries by job index (the index's own list: read it, do not change it). */
export function queriesOfBucket(state: EmulatorState, bucketId: string): readonly StoredQuery[] {
  return queryIndex(state).byBucket.get(bucketId) ?? []
}

export function findByDedupId(state: EmulatorState, owner: Owner, dedupId: string): StoredQuery | undefined {
  return queryIndex(state).byDedupId.get(dedupKey(owner.keyId, dedupId))
}
