import { createHash } from 'node:crypto'
import type { QueryRecord, QueryRecordWithStatus, BucketRecord } from '../../schemas/proving.ts'
import { clientObject } from '../auth.ts'
import type { Progress } from './lifecycle.ts'
import { MAX_RETRIES, queriesOfBucket, queryProgress } from './queries.ts'
import type { EmulatorState, StoredBucket, StoredQuery } from '../state.ts'

/**
 * The three representations of a query (the documented R, D and L columns) and the bucket
 * record, built from a stored query and where it stands now. The field lists mirror the table
 * column by column, so a field is in a representation exactly when the table says so.
 */

const iso = (ms: number) => new Date(ms).toISOString()

/** Every field of the table, with the values of this query at this moment. */
function allFields(query: StoredQuery, progress: Progress) {
  const done = progress.status === 'DONE'
  const override = query.recordOverride ?? {}
  // What a test made the record say: the facts once they are known, the mock state always.
  const fact = (field: 'programHash' | 'sharpFactHash' | 'integrityFactHash') =>
    done ? (field in override ? (override[field] ?? null) : query.facts[field]) : null
  return {
    id: query.id,
    externalId: query.externalId,
    dedupId: query.dedupId,
    transactionId: done ? transactionIdOf(query) : null,
    status: progress.status,
    // A finished record may claim another step (a test's hostile service).
    step: done && 'step' in override ? (override.step ?? null) : progress.step,
    // What was proved is known once the query is DONE.
    programHash: fact('programHash'),
    integrityFactHash: fact('integrityFactHash'),
    sharpFactHash: fact('sharpFactHash'),
    layout: query.layout,
    isFactMocked: 'isFactMocked' in override ? (override.isFactMocked ?? null) : query.mockFactHash,
    isProofMocked: query.isProofMocked,
    chain: query.chain,
    jobSize: query.jobSize,
    declaredJobSize: query.declaredJobSize,
    cairoVm: query.cairoVm,
    cairoVersion: query.cairoVersion,
    steps: progress.steps,
    result: 'result' in override ? (override.result ?? null) : query.result,
    network: query.network,
    hints: query.hints ?? null,
    sharpProver: 'sharpProver' in override ? (override.sharpProver ?? null) : query.sharpProver,
    errorReason: progress.errorReason,
    submittedByClient: query.owner.clientId,
    projectId: query.owner.projectId,
    submittedByWallet: null,
    // The bucket the record names; the listing (queriesOfBucket) is by the bucket that holds it.
    bucketId: 'bucketId' in override ? (override.bucketId ?? null) : query.bucketId,
    bucketJobIndex: query.bucketJobIndex,
    customerName: null,
    isJobSizeValid: query.isJobSizeValid,
    retryCount: query.retryCount,
    createdAt: iso(query.createdAt),
    completedAt: done && progress.endedAt !== null ? iso(progress.endedAt) : null,
    client: clientObject(query.owner),
    // Whether POST retry would be accepted now.
    isRetriable: progress.status === 'FAILED' ? progress.retriable === true && query.retryCount < MAX_RETRIES : null,
  }
}

type AllFields = ReturnType<typeof allFields>

function pick<K extends keyof AllFields>(fields: AllFields, keys: readonly K[]): Pick<AllFields, K> {
  const out = {} as Pick<AllFields, K>
  for (const key of keys) out[key] = fields[key]
  return out
}

const R_FIELDS = [
  'id',
  'externalId',
  'dedupId',
  'transactionId',
  'status',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'isProofMocked',
  'chain',
  'jobSize',
  'declaredJobSize',
  'cairoVm',
  'cairoVersion',
  'steps',
  'result',
  'network',
  'hints',
  'sharpProver',
  'errorReason',
  'submittedByClient',
  'projectId',
  'submittedByWallet',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'isJobSizeValid',
  'retryCount',
  'createdAt',
  'completedAt',
] as const

const D_FIELDS = [
  'id',
  'externalId',
  'dedupId',
  'transactionId',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'isProofMocked',
  'steps',
  'errorReason',
  'submittedByClient',
  'projectId',
  'submittedByWallet',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'isJobSizeValid',
  'retryCount',
  'createdAt',
  'completedAt',
  'client',
  'isRetriable',
] as const

const L_FIELDS = [
  'id',
  'externalId',
  'transactionId',
  'status',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'chain',
  'jobSize',
  'declaredJobSize',
  'cairoVm',
  'cairoVersion',
  'steps',
  'result',
  'network',
  'hints',
  'errorReason',
  'submittedByClient',
  'projectId',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'createdAt',
  'completedAt',
  'client',
] as const

/** Record R: the retry response; every field present, nothing else. */
export function recordR(query: StoredQuery, progress: Progress): QueryRecordWithStatus {
  return pick(allFields(query, progress), R_FIELDS)
}

/**
 * The prover, in a representation whose column lacks it, when a test made the record name one
 * (a newer or hostile service's record): the gate reads it wherever it is.
 */
function namedProver(query: StoredQuery, fields: AllFields): { sharpProver?: string | null } {
  return query.recordOverride && 'sharpProver' in query.recordOverride ? { sharpProver: fields.sharpProver } : {}
}

/** Record D: GET /proving-query/{id}; no `status`, as the table says. */
export function recordD(query: StoredQuery, progress: Progress): QueryRecord {
  const fields = allFields(query, progress)
  return { ...pick(fields, D_FIELDS), ...namedProver(query, fields) }
}

/** Record L: the /docs/... endpoints. */
export function recordL(query: StoredQuery, progress: Progress): QueryRecordWithStatus {
  const fields = allFields(query, progress)
  return { ...pick(fields, L_FIELDS), ...namedProver(query, fields) }
}

/**
 * Production's record, what `--shape production` answers on
 * GET /proving-query/{id}, the list and the dedupId lookup: D's fields without the ones
 * production may leave out (dedupId, isProofMocked, submittedByWallet, isJobSizeValid,
 * retryCount, isRetriable), plus status, chain, jobSize, declaredJobSize, cairoVm, cairoVersion,
 * result, network and hints; the submitter's email and image null. The lookup by dedupId
 * answers without `client`.
 */
export function recordProduction(
  query: StoredQuery,
  progress: Progress,
  options: { withClient: boolean },
): QueryRecord {
  const fields = allFields(query, progress)
  const record: Record<string, unknown> = { ...pick(fields, PRODUCTION_FIELDS), ...namedProver(query, fields) }
  if (options.withClient) record.client = clientObject(query.owner, 'production')
  return record as QueryRecord
}

const PRODUCTION_FIELDS = [
  'id',
  'externalId',
  'transactionId',
  'status',
  'step',
  'programHash',
  'integrityFactHash',
  'sharpFactHash',
  'layout',
  'isFactMocked',
  'chain',
  'jobSize',
  'declaredJobSize',
  'cairoVm',
  'cairoVersion',
  'steps',
  'result',
  'network',
  'hints',
  'errorReason',
  'submittedByClient',
  'projectId',
  'bucketId',
  'bucketJobIndex',
  'customerName',
  'createdAt',
  'completedAt',
] as const

/** A stable, plausible transaction hash for a finished run. */
function transactionIdOf(query: StoredQuery): string {
  return `0x${createHash('sha256').update(`tx:${query.id}:${query.retryCount}`).digest('hex')}`
}

export type BucketStatus = 'OPEN' | 'IN_PROGRESS' | 'DONE' | 'FAILED'

/** OPEN until closed; then FAILED when any query failed, DONE when all are done. */
export function bucketStatusOf(state: EmulatorState, bucket: StoredBucket, now: number): BucketStatus {
  if (bucket.closedAt === null) return 'OPEN'
  const statuses = queriesOfBucket(state, bucket.id).map((query) => queryProgress(state, query, now).status)
  if (statuses.includes('FAILED')) return 'FAILED'
  return statuses.every((status) => status === 'DONE') ? 'DONE' : 'IN_PROGRESS'
}

/**
 * The bucket record: the documented table in the default shape; production's
 * with `--shape production`: no aggregatorParams or mockProof, leaves null until a query
 * joins, bucketType and chain.
 */
export function bucketRecordOf(
  state: EmulatorState,
  bucket: StoredBucket,
  now: number,
  shape: 'interface' | 'production' = 'interface',
): BucketRecord & { status: BucketStatus } {
  if (shape === 'production') {
    const leaves = queriesOfBucket(state, bucket.id).length
    return {
      id: bucket.id,
      externalId: bucket.externalId,
      status: bucketStatusOf(state, bucket, now),
      bucketType: 'SNOS',
      nodeWidth: bucket.nodeWidth,
      leaves: leaves === 0 ? null : leaves,
      chain: 'L1',
      projectId: bucket.owner.projectId,
      createdByClient: bucket.owner.clientId,
      createdAt: iso(bucket.createdAt),
    }
  }
  return {
    id: bucket.id,
    externalId: bucket.externalId,
    aggregatorParams: bucket.aggregatorParams,
    nodeWidth: bucket.nodeWidth,
    leaves: queriesOfBucket(state, bucket.id).length,
    mockProof: bucket.mockProof,
    projectId: bucket.owner.projectId,
    createdByClient: bucket.owner.clientId,
    createdAt: iso(bucket.createdAt),
    status: bucketStatusOf(state, bucket, now),
    aggregatorVersion: bucket.aggregatorVersion,
  }
}
