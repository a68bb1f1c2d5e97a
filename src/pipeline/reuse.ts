/**
 * Prove only what is not proven yet (`--reuse auto`, the action's `reuse`): before a PIE is
 * uploaded, a DONE query of this API key that already proves what the submission would (same
 * result kind, same settings, the same facts as the PIE's, computed here) is reused instead of
 * paying for a new one. Found by a bounded listing, newest first: at most `REUSE_PAGES` pages of
 * `REUSE_PAGE_SIZE` queries (the list's maximum page size), so at most 500 queries are read.
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
import type { Logger } from '../core/runtime.ts'
import type { FactCheckResult, PieInspection } from '../pie/index.ts'
import type { QueryRecordL } from '../schemas/proving.ts'
import { evaluateGate, resultHasFact, expectResult } from './gate.ts'

export const REUSE_MODES = ['auto', 'never'] as const
export type ReuseMode = (typeof REUSE_MODES)[number]

/** How many pages of the list are read, newest first, and how many queries a page holds (the list's maximum). */
export const REUSE_PAGES = 5
export const REUSE_PAGE_SIZE = 100

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

export type ReuseFound = { reused: true; record: QueryRecordL; factCheck: FactCheckResult; scanned: number }
export type ReuseNotFound = { reused: false; reason: string; scanned: number }

/**
 * Why this record cannot stand for the submission (undefined: it can). Pure: the settings, the
 * mock state, the facts compared with the PIE's, and the gate the host applies.
 */
export function judgeCandidate(record: QueryRecordL, factCheck: FactCheckResult | undefined, request: ReuseRequest): string | undefined {
  const refused = settingsRefusal(record, request)
  if (refused) return refused
  if (!factCheck) return 'its facts were not compared with the PIE\'s'
  if (!factCheck.ok) return 'its facts differ from the PIE\'s'
  const refusals = evaluateGate(record, factCheck, {
    allowMockedFact: request.allowMockedFact,
    expectedProgramHash: request.expectedProgramHash,
    // The kind the submission asks for, never the record's word for it.
    expected: expectResult(request.result),
  })
  return refusals.length ? `the gate refuses it (${refusals[0]!.kind})` : undefined
}

/** What refuses a record whatever its facts: its status, result kind, settings and mock state. */
function settingsRefusal(record: QueryRecordL, request: ReuseRequest): string | undefined {
  if (record.status !== 'DONE') return `it is ${record.status}`
  if (record.result !== request.result) return `its result is ${record.result ?? 'not given'}, not ${request.result}`
  for (const [name, wanted] of Object.entries(request.settings)) {
    if (wanted === undefined) continue
    const shown = (record as Record<string, unknown>)[name]
    if (shown !== wanted) return `its ${name} is ${typeof shown === 'string' ? shown : 'not given'}, not ${wanted}`
  }
  if (typeof record.isFactMocked !== 'boolean') return 'it does not say whether its fact is mocked'
  if (record.isFactMocked !== request.mockFactHash) return record.isFactMocked ? 'its fact is mocked' : 'its fact is not mocked, and a mocked one was asked for'
  if (record.isFactMocked && !request.allowMockedFact) return 'its fact is mocked and mocked facts are not allowed'
  return undefined
}

/** Why nothing at all can be reused for this submission, before anything is listed. */
export function reuseBlocker(request: ReuseRequest): string | undefined {
  if (request.blocked) return request.blocked
  if (!resultHasFact(request.result)) return `a ${request.result} query proves nothing: there is no fact to compare with the PIE's`
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
  options: { signal?: AbortSignal | undefined; logger: Logger },
): Promise<ReuseFound | ReuseNotFound> {
  const blocker = reuseBlocker(request)
  if (blocker) return { reused: false, reason: blocker, scanned: 0 }
  const { compareQueryFacts } = await import('../pie/index.ts')
  let scanned = 0
  try {
    for (let page = 0; page < REUSE_PAGES; page++) {
      const answer = await client.listQueries({ limit: REUSE_PAGE_SIZE, offset: page * REUSE_PAGE_SIZE, signal: options.signal })
      const records = answer.provingQueries
      for (const record of newestFirst(records)) {
        scanned++
        // The settings first: the facts are computed only for a query that could stand in.
        if (settingsRefusal(record, request) !== undefined) continue
        const factCheck = compareQueryFacts(record, inspection)
        if (judgeCandidate(record, factCheck, request) === undefined) return { reused: true, record, factCheck, scanned }
      }
      const ended = typeof answer.total === 'number' ? (page + 1) * REUSE_PAGE_SIZE >= answer.total : records.length < REUSE_PAGE_SIZE
      if (records.length === 0 || ended) return { reused: false, reason: `none of the ${scanned} queries of this key proves it`, scanned }
    }
  } catch (error) {
    if (error instanceof AbortedError || options.signal?.aborted) throw error
    const message = error instanceof ProvingKitError ? error.shortMessage : (error as Error).message
    options.logger.warn(`Could not list this key's queries to look for one that already proves this PIE (${message}); submitting it.`)
    return { reused: false, reason: 'the list of queries could not be read', scanned }
  }
  return { reused: false, reason: `none of the newest ${scanned} queries of this key proves it (at most ${REUSE_PAGES * REUSE_PAGE_SIZE} are read)`, scanned }
}

/** The page's records, newest first by `createdAt` (a record without one keeps its place, after the dated ones). */
function newestFirst(records: QueryRecordL[]): QueryRecordL[] {
  const time = (record: QueryRecordL) => {
    const parsed = typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN
    return Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed
  }
  return records.map((record, index) => ({ record, index })).sort((a, b) => time(b.record) - time(a.record) || a.index - b.index).map(({ record }) => record)
}

/** The L2 endpoint's default prover instance: the only one a reused query may stand for (no record shows it). */
export const DEFAULT_L2_PROVER = 'svc_sharp'

type Allowance = { mockFactHash: boolean; allowMockedFact: boolean; expectedProgramHash?: string | undefined }

/** A submission to the L2 endpoint (proof generation and verification on L2). */
export function l2ReuseRequest(options: Allowance & { layout: string; prover: string }): ReuseRequest {
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
  allowance: Allowance,
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
    ...allowance,
    blocked,
  }
}

/** One line for the log: which query is reused and when it was created. */
export function describeReuse(found: ReuseFound): string {
  const created = typeof found.record.createdAt === 'string' ? `, created ${found.record.createdAt}` : ''
  return `Reused query ${found.record.id}${created}: it is DONE and proves this PIE (same result kind, settings and facts); nothing was submitted. It is gated as if new.`
}
