/**
 * Prove only what is not proven yet (`--reuse auto`, the action's `reuse`): before a PIE is
 * uploaded, a DONE query of this API key that already proves what the submission would (same
 * result kind, same settings, the same facts as the PIE's, computed here) is reused instead of
 * paying for a new one. Found in the run's one index of the key's queries (./key-queries.ts:
 * newest first, read once for every statement, at most the newest 5,000).
 *
 * It never weakens the gate: a candidate is taken only when the very gate the host applies
 * after a wait (`evaluateGate`, with the requested result kind) passes on its record with the
 * facts compared to the PIE's, and the host then reads the query again, compares its facts again
 * and gates it as if it were new. It fails closed: a record that leaves out (or nulls) a setting
 * the submission sets, or the mock state, is not reused; a setting no record shows (the L2
 * endpoint's non-default `prover`, `sharp-prover`) turns reuse off for that submission; a
 * trace (no fact to compare), a bucket, and a given dedup id are never reused.
 */
import type { ProvingClient } from '../clients/proving.ts'
import { AbortedError, ProvingKitError } from '../core/errors.ts'
import { DEADLINE_CODE } from '../core/http/failures.ts'
import type { Logger } from '../core/runtime.ts'
import type { FactCheckResult, PieInspection } from '../pie/index.ts'
import { parseFeltText } from '../pie/shared/index.ts'
import type { QueryRecordWithStatus } from '../schemas/proving.ts'
import { evaluateGate, resultHasFact, expectResult } from './gate.ts'
import { byCreation, KeyQueries, MAX_INDEXED_QUERIES } from './key-queries.ts'

export const REUSE_MODES = ['auto', 'never'] as const
export type ReuseMode = (typeof REUSE_MODES)[number]

/** What the submission would ask for: what a query must show to be reused in its place. */
export type ReuseRequest = {
  /** The result kind the submission asks for; the record must name the same one. */
  result: string
  /** Each setting the submission sets (`layout`, `cairoVersion`, ...), compared with the record's field of that name. */
  settings: Record<string, string | undefined>
  /** Whether the submission asks for a mocked fact: the record's `isFactMocked` must say the same. */
  mockFactHash: boolean
  allowMockedFact: boolean
  expectedProgramHash?: string | undefined
  /** Why no query can be reused for this submission at all (a setting no record shows, a bucket, ...). */
  blocked?: string | undefined
}

export type ReuseFound = { reused: true; record: QueryRecordWithStatus; factCheck: FactCheckResult; scanned: number }
/** `unreadable`: the list could not be read (the submission goes on; its host says so once it succeeded). */
export type ReuseNotFound = {
  reused: false
  reason: string
  scanned: number
  unreadable?: boolean | undefined
  /** A plan on a re-run: the running candidates a run would wait for. */
  running?: string[] | undefined
  /** A plan on a re-run: the FAILED candidate a run would retry. */
  retriable?: string | undefined
}

/**
 * Why this record cannot stand for the submission (undefined: it can). Pure: the settings, the
 * mock state, the facts compared with the PIE's, and the gate the host applies.
 */
export function judgeCandidate(
  record: QueryRecordWithStatus,
  factCheck: FactCheckResult | undefined,
  request: ReuseRequest,
): string | undefined {
  const refused = refusalBesidesFacts(record, request)
  if (refused) return refused
  if (!factCheck) return "its facts were not compared with the PIE's"
  if (!factCheck.ok) return "its facts differ from the PIE's"
  const refusals = evaluateGate(record, factCheck, {
    allowMockedFact: request.allowMockedFact,
    expectedProgramHash: request.expectedProgramHash,
    // The kind the submission asks for, never the record's word for it.
    expected: expectResult(request.result),
  })
  return refusals.length ? `the gate refuses it (${refusals[0]!.kind})` : undefined
}

/** What refuses a record whatever its facts: its status, result kind, settings and mock state. */
function refusalBesidesFacts(record: QueryRecordWithStatus, request: ReuseRequest): string | undefined {
  if (record.status !== 'DONE') return `it is ${record.status}`
  return kindOrSettingsRefusal(record, request) ?? mockRefusal(record, request)
}

/** What refuses a record still running (its mock state may not be known yet): its result kind and settings. */
function kindOrSettingsRefusal(record: QueryRecordWithStatus, request: ReuseRequest): string | undefined {
  if (record.result !== request.result) return `its result is ${record.result ?? 'not given'}, not ${request.result}`
  for (const [name, wanted] of Object.entries(request.settings)) {
    if (wanted === undefined) continue
    const recorded = (record as Record<string, unknown>)[name]
    if (recorded !== wanted)
      return `its ${name} is ${typeof recorded === 'string' ? recorded : 'not given'}, not ${wanted}`
  }
  return undefined
}

function mockRefusal(record: QueryRecordWithStatus, request: ReuseRequest): string | undefined {
  if (typeof record.isFactMocked !== 'boolean') return 'it does not say whether its fact is mocked'
  if (record.isFactMocked !== request.mockFactHash)
    return record.isFactMocked ? 'its fact is mocked' : 'its fact is not mocked, and a mocked one was asked for'
  if (record.isFactMocked && !request.allowMockedFact) return 'its fact is mocked and mocked facts are not allowed'
  return undefined
}

/** Why nothing at all can be reused for this submission, before anything is listed. */
export function reuseBlocker(request: ReuseRequest): string | undefined {
  if (request.blocked) return request.blocked
  if (!resultHasFact(request.result))
    return `a ${request.result} query proves nothing: there is no fact to compare with the PIE's`
  return undefined
}

/**
 * The newest DONE query of this key that proves what the submission would (see above), or why
 * none was taken. A list that cannot be read is a warning and "none": the submission goes on.
 */
export async function findReusableQuery(
  client: ProvingClient,
  inspection: PieInspection,
  request: ReuseRequest,
  options: {
    signal?: AbortSignal | undefined
    logger: Logger
    inFlight?: InFlightOptions | undefined
    queries?: KeyQueries | undefined
    /** A plan: the running candidates are named (`running`), not waited for. */
    dryRun?: boolean | undefined
  },
): Promise<ReuseFound | ReuseNotFound> {
  const blocker = reuseBlocker(request)
  if (blocker) return { reused: false, reason: blocker, scanned: 0 }
  const { compareQueryFacts } = await import('../pie/index.ts')
  const queries = options.queries ?? new KeyQueries(client)
  let scanned = 0
  const running: QueryRecordWithStatus[] = []
  const failed: QueryRecordWithStatus[] = []
  let programs: Set<bigint> | undefined
  let reason: string
  try {
    for await (const record of queries.newestFirst(options.signal)) {
      scanned++
      if (options.inFlight && isRunningCandidate(record, request, inspection, options.inFlight)) running.push(record)
      else if (options.inFlight && isFailedCandidate(record, request, inspection, options.inFlight)) failed.push(record)
      // The settings first, then the program (one comparison of numbers): the facts are
      // computed only for a query of this PIE's program that could stand in.
      if (refusalBesidesFacts(record, request) !== undefined) continue
      programs ??= programHashesOf(inspection)
      if (!provesProgram(record, programs)) continue
      const factCheck = compareQueryFacts(record, inspection)
      if (judgeCandidate(record, factCheck, request) === undefined) return { reused: true, record, factCheck, scanned }
    }
    reason =
      scanned === 0
        ? 'no query of this key was listed'
        : queries.complete
          ? `none of the ${scanned} queries of this key proves it`
          : `none of the newest ${scanned} queries of this key proves it (at most ${MAX_INDEXED_QUERIES} are read)`
  } catch (error) {
    if (error instanceof AbortedError || options.signal?.aborted) throw error
    // Cut by the run's deadline: the run's timeout, not a list that cannot be read.
    if (error instanceof ProvingKitError && error.code === DEADLINE_CODE) throw error
    const message = error instanceof ProvingKitError ? error.shortMessage : (error as Error).message
    if (options.inFlight) {
      // A re-run: an earlier attempt may have left this PIE's query running, and the list is
      // the one place it shows; submitting blind could pay for it twice.
      throw new RerunNothingSentError(
        `This re-run could not list this key's queries to look for one an earlier attempt left running (${message}); nothing was submitted.`,
        { cause: error, nextStep: { kind: 'look-for-query', thenSubmitAnew: true } },
      )
    }
    // Not said here: the submission that follows says it once, or fails with its own error
    // (an address nothing answers, a refused key), which is then the one line a person reads.
    return { reused: false, reason: `this key's queries could not be listed (${message})`, scanned, unreadable: true }
  }
  // Outside the listing's catch: a running candidate that cannot be followed to its end is a
  // refusal (it may be this PIE's), never "the list could not be read, submit".
  const inFlight = options.inFlight
  if (!inFlight) return { reused: false, reason, scanned }
  // A plan names the candidates a run would wait for or retry, and waits for none.
  if (options.dryRun && running.length > 0)
    return { reused: false, reason, scanned, running: byCreation(running).map((record) => record.id) }
  if (options.dryRun && failed.length > 0)
    return { reused: false, reason, scanned, retriable: byCreation(failed)[0]!.id }
  const followed =
    running.length > 0
      ? await followRunning(client, inspection, request, running, scanned, reason, { ...options, inFlight })
      : { reused: false as const, reason, scanned }
  if (followed.reused || failed.length === 0) return followed
  return retryFailedCandidate(client, inspection, request, failed, followed, { ...options, inFlight })
}

/**
 * On a re-run of a job whose earlier attempt may have been stopped after it submitted this PIE
 * (the action's journal is in the runner's temporary folder, gone with the attempt, and the L2
 * endpoint takes no dedup id), a query still running is a candidate too: one with this
 * submission's result kind and settings, created within `sinceMs` of now, whose program hash
 * (once the record shows one) is the PIE's. Its facts are known only once it is DONE, so the
 * candidates are waited for and judged then, as a DONE one is; another PIE's query of the same
 * program ends with other facts and is not taken.
 */
export type InFlightOptions = {
  /** How long to wait for the candidates (the step's timeout). */
  timeoutMs: number
  /** How far back a candidate may have been created (ms before now). */
  sinceMs: number
  /** At most this many candidates are waited for, the newest first. */
  limit?: number | undefined
  now?: (() => number) | undefined
}

const RUNNING = new Set(['RECEIVED', 'IN_PROGRESS'])

function isRunningCandidate(
  record: QueryRecordWithStatus,
  request: ReuseRequest,
  inspection: PieInspection,
  inFlight: InFlightOptions,
): boolean {
  if (typeof record.status !== 'string' || !RUNNING.has(record.status)) return false
  return mayBeThisPies(record, request, inspection, inFlight)
}

/** A FAILED query that may be this PIE's, as a running one may be; whatever facts it shows are the PIE's. */
function isFailedCandidate(
  record: QueryRecordWithStatus,
  request: ReuseRequest,
  inspection: PieInspection,
  inFlight: InFlightOptions,
): boolean {
  if (record.status !== 'FAILED' || !mayBeThisPies(record, request, inspection, inFlight)) return false
  const facts = [
    [record.sharpFactHash, inspection.sharpFactHash],
    [record.integrityFactHash, inspection.integrityFactHash],
  ] as const
  return facts.every(
    ([recorded, computed]) =>
      typeof recorded !== 'string' || recorded === '' || parseFeltText(recorded) === BigInt(computed),
  )
}

/** This submission's result kind and settings, created within the window, and the PIE's program hash once the record shows one. */
function mayBeThisPies(
  record: QueryRecordWithStatus,
  request: ReuseRequest,
  inspection: PieInspection,
  inFlight: InFlightOptions,
): boolean {
  if (kindOrSettingsRefusal(record, request) !== undefined) return false
  const created = typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN
  // Without a creation time it cannot be placed in the window: not a candidate.
  if (Number.isNaN(created) || created < (inFlight.now ?? Date.now)() - inFlight.sinceMs) return false
  if (typeof record.programHash === 'string' && record.programHash !== '') {
    const recorded = parseFeltText(record.programHash)
    if (recorded === undefined || !Object.values(inspection.programHashes).some((hash) => BigInt(hash) === recorded))
      return false
  }
  return true
}

/** Waits for the running candidates and takes the first that ends DONE and passes as a DONE one would; else says why none. */
async function followRunning(
  client: ProvingClient,
  inspection: PieInspection,
  request: ReuseRequest,
  running: QueryRecordWithStatus[],
  scanned: number,
  reason: string,
  options: { signal?: AbortSignal | undefined; logger: Logger; inFlight: InFlightOptions },
): Promise<ReuseFound | ReuseNotFound> {
  const { compareQueryFacts } = await import('../pie/index.ts')
  const candidates = byCreation(running).slice(0, options.inFlight.limit ?? 10)
  const ids = candidates.map((record) => record.id)
  const [count, were, them] =
    candidates.length === 1 ? ['1 query', 'was', 'it'] : [`${candidates.length} queries`, 'were', 'them']
  options.logger.info(
    `This is a re-run: ${count} of this key with this PIE's program and settings ${were} still running (${ids.join(', ')}); waiting for ${them} to end to compare the facts before paying again.`,
  )
  const stop = new AbortController()
  const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal
  const judged = candidates.map(async (candidate) => {
    const { provingQuery: record } = await client.waitForQuery(candidate.id, {
      timeoutMs: options.inFlight.timeoutMs,
      signal,
    })
    if (refusalBesidesFacts(record, request) !== undefined) return undefined
    const factCheck = compareQueryFacts(record, inspection)
    return judgeCandidate(record, factCheck, request) === undefined
      ? { reused: true as const, record, factCheck, scanned }
      : undefined
  })
  try {
    // The first that proves the PIE wins; the other waits end.
    const found = await Promise.any(
      judged.map((each) => each.then((result) => result ?? Promise.reject(new Error('not this PIE')))),
    )
    return found
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason ?? error
    // Every wait ended: none proves it, or one could not be followed to its end (then nothing is paid: it may be this PIE's).
    const outcomes = await Promise.allSettled(judged)
    const unfollowed = outcomes.flatMap((outcome, index) =>
      outcome.status === 'rejected' ? [{ id: ids[index]!, error: outcome.reason as unknown }] : [],
    )
    if (unfollowed.length > 0) {
      const first = unfollowed[0]!
      const which = unfollowed.length === 1 ? 'a running query' : `${unfollowed.length} running queries`
      const why = first.error instanceof ProvingKitError ? first.error.shortMessage : String(first.error)
      throw new RerunNothingSentError(
        `This re-run could not follow ${which} of this PIE's program to the end (${unfollowed.map((each) => each.id).join(', ')}): nothing was submitted.`,
        {
          cause: first.error,
          metaMessages: [
            `Following ${first.id} failed: ${why}`,
            "One may be this PIE's, submitted by an earlier attempt: submitting again could pay twice.",
          ],
          nextStep: { kind: 'follow-candidates', ids: unfollowed.map((each) => each.id) },
        },
      )
    }
    return {
      reused: false,
      reason: `${reason}; the ${candidates.length} still running when this re-run began ended without proving it`,
      scanned,
    }
  } finally {
    stop.abort()
  }
}

/** The PIE's program hashes, every variant, as field elements. */
function programHashesOf(inspection: PieInspection): Set<bigint> {
  return new Set(Object.values(inspection.programHashes).map((hash) => BigInt(hash)))
}

/** A record's program hash as a field element, read once however many PIEs of a run ask. */
const parsedProgram = new WeakMap<QueryRecordWithStatus, bigint | undefined>()

/**
 * Whether the record names one of these programs. A record without a program hash proves nothing
 * the gate would pass (a DONE proof must carry it), so it stands for no PIE.
 */
function provesProgram(record: QueryRecordWithStatus, programs: Set<bigint>): boolean {
  if (!parsedProgram.has(record))
    parsedProgram.set(record, typeof record.programHash === 'string' ? parseFeltText(record.programHash) : undefined)
  const program = parsedProgram.get(record)
  return program !== undefined && programs.has(program)
}

/**
 * No running query proved the PIE: the newest FAILED one that may be this PIE's (the stopped
 * attempt's, whose error was retriable) is retried when the service allows it (fewer than 3
 * retries used: the same query runs again, nothing new is paid for) and followed; it stands for
 * the PIE only if it then ends DONE with the PIE's facts, judged as a DONE one is. Once retried,
 * a wait that cannot end is a refusal, as for a running candidate; a retry whose outcome is
 * unknown too (it may have taken effect).
 */
async function retryFailedCandidate(
  client: ProvingClient,
  inspection: PieInspection,
  request: ReuseRequest,
  failed: QueryRecordWithStatus[],
  none: ReuseNotFound,
  options: { signal?: AbortSignal | undefined; logger: Logger; inFlight: InFlightOptions },
): Promise<ReuseFound | ReuseNotFound> {
  const { compareQueryFacts } = await import('../pie/index.ts')
  const { describeRetry } = await import('../clients/proving.ts')
  const id = byCreation(failed)[0]!.id
  const nothingSentError = (what: string, error: unknown) => {
    if (error instanceof AbortedError || options.signal?.aborted) return error
    const message = error instanceof ProvingKitError ? error.shortMessage : String(error)
    return new RerunNothingSentError(
      `This re-run ${what} query ${id} of this PIE's program (${message}); it may be this PIE's, submitted by an earlier attempt, so nothing was submitted.`,
      {
        cause: error,
        nextStep: { kind: 'follow-candidates', ids: [id] },
      },
    )
  }
  const retry = await client
    .retryFailedQuery(id, { signal: options.signal })
    .catch((error: unknown) => Promise.reject(nothingSentError('retried FAILED', error)))
  if (!retry.retried)
    return {
      ...none,
      reason: `${none.reason}; query ${id} of this PIE's program FAILED and cannot be retried (${retry.reason})`,
    }
  options.logger.info(
    `This is a re-run: ${describeRetry(id, retry).replace(/\.$/, '')} (it may be this PIE's: its facts are compared once it ends).`,
  )
  const { provingQuery: record } = await client
    .waitForQuery(id, { timeoutMs: options.inFlight.timeoutMs, signal: options.signal })
    .catch((error: unknown) => Promise.reject(nothingSentError('could not follow to its end the retried', error)))
  const factCheck = compareQueryFacts(record, inspection)
  if (judgeCandidate(record, factCheck, request) === undefined)
    return { reused: true, record, factCheck, scanned: none.scanned }
  return { ...none, reason: `${none.reason}; query ${id}, FAILED and retried, ended without proving it` }
}

/**
 * Nothing was sent: a re-run cannot tell whether a query still running is this PIE's (unlike
 * {@link SubmissionOutcomeUnknownError}, this run sent nothing; the message names what to follow).
 */
export class RerunNothingSentError extends ProvingKitError {
  override name = 'RerunNothingSentError'
}

/** The L2 endpoint's default prover instance: the only one a reused query may stand for (no record shows it). */
export const DEFAULT_L2_PROVER = 'svc_sharp'

/** What the reused query's fact must be: mocked or not as asked (or allowed to be mocked), of the expected program. */
type FactConditions = Pick<ReuseRequest, 'mockFactHash' | 'allowMockedFact' | 'expectedProgramHash'>

/** A submission to the L2 endpoint (proof generation and verification on L2). */
export function l2ReuseRequest(options: FactConditions & { layout: string; prover: string }): ReuseRequest {
  return {
    result: 'PROOF_VERIFICATION_ON_L2',
    settings: { layout: options.layout },
    mockFactHash: options.mockFactHash,
    allowMockedFact: options.allowMockedFact,
    expectedProgramHash: options.expectedProgramHash,
    blocked:
      options.prover === DEFAULT_L2_PROVER
        ? undefined
        : `no query record shows the L2 endpoint's prover, so one proved by prover ${options.prover} cannot be told apart`,
  }
}

/** A general submission (POST /proving-query) with these fields. */
export function generalReuseRequest(
  fields: {
    result: string
    layout?: string | undefined
    cairoVersion?: string | undefined
    cairoVm?: string | undefined
    network?: string | undefined
    hints?: string | undefined
    externalId?: string | undefined
    dedupId?: string | undefined
    sharpProver?: string | undefined
    bucketId?: string | undefined
  },
  factConditions: FactConditions,
): ReuseRequest {
  const blocked =
    fields.bucketId !== undefined
      ? 'a query in a bucket is verified with its bucket'
      : fields.dedupId !== undefined
        ? 'a given dedup id names the query to follow'
        : fields.sharpProver !== undefined
          ? 'no query record in a list shows sharpProver, so the prover cannot be told apart'
          : undefined
  return {
    result: fields.result,
    settings: {
      layout: fields.layout,
      cairoVersion: fields.cairoVersion,
      cairoVm: fields.cairoVm,
      network: fields.network,
      hints: fields.hints,
      externalId: fields.externalId,
    },
    ...factConditions,
    blocked,
  }
}
