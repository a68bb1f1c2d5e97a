/**
 * Sending one statement, once: through the local journal (a re-run after a kill follows the
 * query it created, retries it when it FAILED retriably, or refuses to pay twice), through the
 * general submission's dedup chain (a re-run finds the query it paid for, past the FAILED ones),
 * or as a proof verification. What was decided before (./decide.ts) is not decided again here.
 */
import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import type { ProvingClient, RetriedQuery, UploadProgress } from '../../clients/proving.ts'
import type { Logger } from '../../core/runtime.ts'
import type { JobSize } from '../../schemas/proving-constants.ts'
import type { KeyQueries } from '../key-queries.ts'
import { type JournaledSubmission, type JournalParts, SubmissionJournal, submitWithJournal } from '../journal.ts'
import type { PreparedPie } from '../prepared-pie.ts'
import {
  forceNewHintOf,
  type JournalPolicy,
  type StatementEndpoint,
  type StatementPolicy,
  type StatementSubject,
} from './request.ts'

/** How a statement's query came to be this run's. */
export type Submitted = {
  queryId: string
  /**
   * submitted: sent by this run. reused: a DONE query that already proved it. followed: an
   * earlier run's (the journal), or the one the service already has under this dedup id.
   * retried: an earlier run's query FAILED retriably and was retried (nothing new paid for).
   */
  how: 'submitted' | 'reused' | 'followed' | 'retried'
  /** The service already had a query under this dedup id (general submission). */
  deduplicated?: boolean | undefined
  /** The dedup id the query went under (general submission), and the FAILED queries of its chain before it. */
  dedupId?: string | undefined
  failedQueryIds?: string[] | undefined
  retried?: RetriedQuery | undefined
  /** For a reused query: when it was created. */
  createdAt?: string | null | undefined
  /** The job size declared (general submission): measured from the PIE, given, or XS by default. */
  declaredJobSize?: string | undefined
  /** Forgets the journal's entry once the outcome is seen (DONE and judged). */
  settle?: (() => Promise<void>) | undefined
  /** Keeps it (interrupted, not waited for, FAILED): the same run again follows that query. */
  keep?: (() => Promise<void>) | undefined
}

export type SubmitContext = {
  client: ProvingClient
  endpoint: StatementEndpoint
  policy: StatementPolicy
  logger: Logger
  signal?: AbortSignal | undefined
  onUploadProgress?: ((progress: UploadProgress) => void) | undefined
  /** The run's index of the key's queries (the journal's recovery reads it). */
  queries?: KeyQueries | undefined
}

export async function submitStatement(
  subject: StatementSubject,
  pie: PreparedPie | undefined,
  context: SubmitContext,
): Promise<Submitted> {
  const { endpoint, client, signal } = context
  if (endpoint.kind === 'proof') {
    const path = subject.kind === 'proof' ? subject.path : ''
    const answer = await client.submitProofVerification({
      proof: path,
      stoneVersion: endpoint.stoneVersion,
      memoryVerification: endpoint.memoryVerification,
      mockFactHash: endpoint.mockFactHash,
      signal,
    })
    return { queryId: answer.provingQueryId, how: 'submitted' }
  }
  if (endpoint.kind === 'general' && endpoint.deriveDedupId)
    return submitWithDedupChain(subject, pie, endpoint, context)
  const send = async (): Promise<JournaledSubmission> => {
    if (endpoint.kind === 'l2') {
      return client.submitPie({
        pieZip: pie!.zipPath,
        layout: endpoint.layout,
        prover: endpoint.prover,
        mockFactHash: endpoint.mockFactHash,
        signal,
        onUploadProgress: context.onUploadProgress,
      })
    }
    const { dedupId: given, ...fields } = endpoint.fields
    return client.submitQuery({
      ...fields,
      ...(given === undefined ? {} : { dedupId: given }),
      ...sourceOf(subject, pie),
      declaredJobSize: declaredJobSize(endpoint, pie),
      layout: endpoint.layout,
      mockFactHash: endpoint.mockFactHash,
      signal,
      onUploadProgress: context.onUploadProgress,
    })
  }
  const journal = context.policy.journal
  const answer = pie && journal ? await submitWithJournal(journalOptions(pie, journal, context, send)) : await send()
  return fromJournaled(answer, endpoint.kind === 'general' ? declaredJobSize(endpoint, pie) : undefined)
}

/** The journal's options for this statement. */
function journalOptions(
  pie: PreparedPie,
  journal: JournalPolicy,
  context: SubmitContext,
  submit: () => Promise<JournaledSubmission>,
): Parameters<typeof submitWithJournal>[0] {
  return {
    journal: new SubmissionJournal(journal.dir),
    parts: journalParts(pie, context),
    client: context.client,
    forceNew: journal.forceNew,
    forceNewHint: forceNewHintOf(journal),
    inspection: pie.inspection,
    logger: context.logger,
    signal: context.signal,
    timeoutMs: context.policy.timeoutMs,
    factsChecked: context.policy.wait && context.policy.gate.verifyFacts,
    queries: context.queries,
    submit,
  }
}

/** What the journal keys a submission by: the zip's digest, the service, the endpoint and its settings. */
export function journalParts(pie: PreparedPie, context: SubmitContext): JournalParts {
  const { endpoint } = context
  const service = new URL(context.client.http.baseUrl).origin
  if (endpoint.kind === 'l2') {
    return {
      pieDigest: pie.sha256,
      service,
      endpoint: 'l2-pie',
      params: { layout: endpoint.layout, prover: endpoint.prover, mockFactHash: endpoint.mockFactHash },
    }
  }
  if (endpoint.kind === 'proof') throw new Error('a proof verification is not journaled')
  return {
    pieDigest: pie.sha256,
    service,
    endpoint: 'general',
    params: { layout: endpoint.layout, mockFactHash: endpoint.mockFactHash, ...endpoint.fields },
  }
}

function fromJournaled(answer: JournaledSubmission, jobSize: string | undefined): Submitted {
  const how = answer.retried ? 'retried' : answer.resumed || answer.deduplicated ? 'followed' : 'submitted'
  const chain = answer as { dedupId?: string; failedQueryIds?: string[] }
  return {
    queryId: answer.provingQueryId,
    how,
    deduplicated: answer.deduplicated,
    retried: answer.retried,
    dedupId: chain.dedupId,
    failedQueryIds: chain.failedQueryIds,
    declaredJobSize: jobSize,
    settle: answer.settle,
    keep: answer.keep,
  }
}

/**
 * The general submission under a dedup id derived from what it proves: the chain is resolved
 * first (past its FAILED queries, retrying a retriable one), so a re-run of the same job finds
 * the query it already paid for and uploads nothing; after a FAILED one it submits under the
 * next id of the chain (the same for every re-run after that failure).
 */
async function submitWithDedupChain(
  subject: StatementSubject,
  pie: PreparedPie | undefined,
  endpoint: Extract<StatementEndpoint, { kind: 'general' }>,
  context: SubmitContext,
): Promise<Submitted> {
  const { client, signal } = context
  const jobSize = declaredJobSize(endpoint, pie)
  const { dedupId: given, ...fields } = endpoint.fields
  const subjectKey = await subjectKeyOf(subject, pie)
  const first =
    given ??
    endpoint.deriveDedupId!(subjectKey, {
      ...fields,
      declaredJobSize: jobSize,
      layout: endpoint.layout,
      mockFactHash: endpoint.mockFactHash,
    })
  const resolved = await client.resolveDedupId(first, { signal })
  const failed = resolved.failedQueryIds.length ? { failedQueryIds: resolved.failedQueryIds } : {}
  if (resolved.failedQueryIds.length) {
    const next = resolved.existing
      ? `following query ${resolved.existing.id}, submitted after it`
      : `submitting ${pie ? 'the PIE' : 'it'} again as a new query`
    context.logger.info(
      `Query ${resolved.failedQueryIds.join(', then ')} of an earlier attempt FAILED; ${next} with dedup id ${resolved.dedupId}.`,
    )
  }
  if (resolved.existing) {
    return {
      queryId: resolved.existing.id,
      how: resolved.retried ? 'retried' : 'followed',
      deduplicated: true,
      dedupId: resolved.dedupId,
      retried: resolved.retried,
      declaredJobSize: jobSize,
      ...failed,
    }
  }
  const answer = await client.submitQuery({
    ...fields,
    ...sourceOf(subject, pie),
    declaredJobSize: jobSize,
    layout: endpoint.layout,
    mockFactHash: endpoint.mockFactHash,
    dedupId: resolved.dedupId,
    signal,
    onUploadProgress: context.onUploadProgress,
  })
  return {
    queryId: answer.provingQueryId,
    how: answer.deduplicated ? 'followed' : 'submitted',
    deduplicated: answer.deduplicated,
    dedupId: answer.dedupId ?? resolved.dedupId,
    declaredJobSize: jobSize,
    ...(answer.failedQueryIds?.length
      ? { failedQueryIds: [...resolved.failedQueryIds, ...answer.failedQueryIds] }
      : failed),
  }
}

/** The general submission's source fields. */
function sourceOf(
  subject: StatementSubject,
  pie: PreparedPie | undefined,
): { pieZip?: string; programFile?: string; inputFile?: string; programHash?: string } {
  if (pie) return { pieZip: pie.zipPath }
  if (subject.kind === 'program')
    return { programFile: subject.programFile, ...(subject.inputFile ? { inputFile: subject.inputFile } : {}) }
  if (subject.kind === 'program-hash') return { programHash: subject.programHash }
  return {}
}

/** Given, else measured from the PIE's steps, else XS (there is nothing to measure). */
export function declaredJobSize(
  endpoint: Extract<StatementEndpoint, { kind: 'general' }>,
  pie: PreparedPie | undefined,
): JobSize {
  return endpoint.fields.declaredJobSize ?? pie?.inspection?.jobSize ?? 'XS'
}

/** What a derived dedup id knows the statement by: the PIE's digest, the program's and its input's, or the hash. */
async function subjectKeyOf(subject: StatementSubject, pie: PreparedPie | undefined): Promise<string> {
  if (pie) return `pie:${pie.sha256}`
  if (subject.kind === 'program') return `program:${await digestOf(subject.programFile, subject.inputFile)}`
  if (subject.kind === 'program-hash') return `hash:${subject.programHash}`
  return `proof:${subject.path}`
}

/** SHA-256 of a program file and its input. */
async function digestOf(...paths: (string | undefined)[]): Promise<string> {
  const hash = createHash('sha256')
  for (const path of paths) {
    if (path === undefined) continue
    try {
      for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer)
    } catch {
      // A missing file is refused by the submission itself, naming the input.
      hash.update(path)
    }
  }
  return hash.digest('hex')
}
