/**
 * An entry an earlier run left without its query id (killed mid-upload): on the general
 * submission the dedupId settles it; on the L2 endpoints the key's queries created since the
 * upload began, in the service's time, are listed: none, submit; the one whose facts are this
 * PIE's, follow it; otherwise refuse, naming them.
 */
import type { ProvingClient } from '../../clients/proving.ts'
import { abortable } from '../../core/abortable.ts'
import { AbortedError, EarlierUploadOutcomeUnknownError } from '../../core/errors.ts'
import type { PieInspection } from '../../pie/index.ts'
import type { QueryRecordWithStatus } from '../../schemas/proving.ts'
import { KeyQueries, QUERY_PAGE_SIZE } from '../key-queries.ts'
import { forceNewAdvice, type JournalOptions } from './options.ts'
import type { JournalEntry } from './store.ts'

/**
 * Without the service's time (no `Date` header seen), queries created this long before the
 * entry still count as candidates (clock skew).
 */
const SKEW_MS = 5 * 60_000
/**
 * With it: the offset measured from a `Date` header is a lower bound of the real one (the header
 * is truncated to the second and read after the answer travelled), so this margin only covers
 * our own clock being stepped between the two runs.
 */
const OFFSET_MARGIN_MS = 2_000

/**
 * An earlier upload whose outcome is unknown: nothing to follow (returns undefined: submit), the
 * one query the service created since it began (returned: follow it, when the caller checks
 * its facts against this PIE before the gate passes), or a refusal naming the candidates.
 */
export async function resolveUnfinished(
  previous: JournalEntry,
  options: JournalOptions,
  where: string,
  key: string,
): Promise<string | undefined> {
  const { parts, client, logger, journal } = options
  if (parts.endpoint === 'general') {
    // The dedupId settles it: the client looks it up and the service refuses a second query.
    logger.warn(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}; its dedupId decides whether a query exists.`,
    )
    return
  }
  let found: { candidates: string[]; complete: boolean }
  try {
    // The service stamps createdAt with its own clock: compare in its time, from the offset
    // measured when the upload began (or now), else allow for any skew.
    const since = () => {
      const offset = previous.serviceOffsetMs ?? client.http.serviceOffsetMs()
      return offset === undefined ? previous.startedAt - SKEW_MS : previous.startedAt + offset - OFFSET_MARGIN_MS
    }
    // The queries this journal recorded (the rest of a killed batch, this run's) are accounted
    // for: none of them is this PIE's (issue 35: a batch's own uploads were counted).
    found = await queriesSince(options, since, await journal.recordedQueryIds())
  } catch (error) {
    if (error instanceof AbortedError) throw error
    throw new EarlierUploadOutcomeUnknownError(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and your queries could not be listed to check it.`,
      {
        cause: error,
        metaMessages: [
          'Nothing was sent. Look among your queries; submit the PIE again as a new query only if none came of it.',
        ],
        nextStep: { kind: 'look-for-query', thenSubmitAnew: true },
      },
    )
  }
  const { candidates, complete } = found
  if (candidates.length === 0 && complete) {
    logger.warn(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}; the service lists no query since the upload began (by its own clock), so it is submitted now, once.`,
    )
    return undefined
  }
  if (complete && options.inspection && candidates.length <= MAX_MATCHED_CANDIDATES) {
    // The facts settle it, one candidate or many: the one that proves this PIE, or none.
    const matched = await matchByFacts(candidates, options.inspection, options, where)
    if (matched !== 'unknown') return matched
  } else if (candidates.length === 1 && complete && options.factsChecked) {
    // The one query since the upload began (that this journal did not record) is this PIE's
    // unless another run of the key made it; the facts compared before the gate tell: another
    // PIE's query never passes it (one with the same facts proves the same statement).
    const [only] = candidates
    logger.warn(
      `Following query ${only!}, submitted by an earlier run: the only query of your key since its upload began ${where}; its facts are checked.${forceNewAdvice(options, 'submit anyway')}`,
    )
    return only!
  }
  const shown = candidates.slice(0, 5).join(', ')
  const count = `${complete ? '' : 'at least '}${describeCount(candidates.length)}`
  // A new query is not offered: a query exists that may be this PIE's, and would be paid again.
  throw new EarlierUploadOutcomeUnknownError(
    `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and a query since may be its own: nothing was sent.`,
    {
      metaMessages: [
        `Your key has ${count} since the upload began that this journal did not record${candidates.length ? ` (${shown})` : ''}; one may be this PIE's.`,
        "Nothing is sent while the entry stands: submitting again would pay twice if one of them is this PIE's.",
        'Follow them; remove the entry only once you know that none of them is.',
      ],
      nextStep: { kind: 'follow-candidates', ids: candidates.slice(0, 5), key },
    },
  )
}

/**
 * The ids of the caller's queries created since `since()` (the service's clock) and not in
 * `known`, from a listing of the key's queries read now (newest first, as far as needed, at
 * most MAX_INDEXED_QUERIES): until the list ends, or a record older than `since()` while every
 * record so far came newest first (the order is not documented: it is checked, not assumed), or
 * the index's bound: `complete` false then, the count a lower bound. The run's own queries are
 * not in the index.
 */
async function queriesSince(
  options: JournalOptions,
  since: () => number,
  known: Set<string>,
): Promise<{ candidates: string[]; complete: boolean }> {
  // Read afresh, not from the run's index: a run that waited for another's lock read its index
  // before that run (killed since) created its query, which must be among the candidates. The
  // run's own queries are still not an earlier run's.
  const queries = new KeyQueries(options.client)
  for (const id of options.queries?.created ?? []) queries.created.add(id)
  const candidates: string[] = []
  let newestFirst = true
  let previousTime = Number.POSITIVE_INFINITY
  // A page's worth of older records in a row, the list newest first: none after them is recent.
  let older = 0
  for await (const record of queries.newestFirst(options.signal)) {
    // The offset is read after the first answer (its `Date` header), when the entry has none.
    const from = since()
    const createdAt = record.createdAt ?? null
    const time = createdAt === null ? Number.NaN : Date.parse(createdAt)
    if (Number.isNaN(time)) newestFirst = false
    else if (time > previousTime) newestFirst = false
    else previousTime = time
    if (time < from) {
      if (newestFirst && ++older >= QUERY_PAGE_SIZE) return { candidates, complete: true }
      continue
    }
    older = 0
    if (!known.has(record.id)) candidates.push(record.id)
  }
  return { candidates, complete: queries.complete }
}

/** At most this many queries since an unfinished upload are waited for and matched by facts; more are refused as before. */
const MAX_MATCHED_CANDIDATES = 200

/**
 * Each query waited for once per client, whichever rows of a batch ask (a killed batch's rows
 * share their candidates): its final record, or the failure that ended the wait. The shared wait
 * ends when the last row waiting for it stops (Ctrl-C ends every row), so no poll outlives them.
 */
type SharedWait = { record: Promise<QueryRecordWithStatus>; stop: AbortController; waiting: number; pending: boolean }
const candidateWaits = new WeakMap<ProvingClient, Map<string, SharedWait>>()

function finalRecord(options: JournalOptions, id: string): Promise<QueryRecordWithStatus> {
  let waits = candidateWaits.get(options.client)
  if (!waits) candidateWaits.set(options.client, (waits = new Map()))
  const all = waits
  let shared = all.get(id)
  if (!shared) {
    const stop = new AbortController()
    const record = options.client
      .waitForQuery(id, { timeoutMs: options.timeoutMs, signal: stop.signal })
      .then((result) => result.provingQuery)
    const created: SharedWait = { record, stop, waiting: 0, pending: true }
    record.then(
      () => (created.pending = false),
      () => all.delete(id),
    )
    all.set(id, (shared = created))
  }
  const wait = shared
  wait.waiting++
  return abortable(wait.record, options.signal).finally(() => {
    if (--wait.waiting > 0 || !wait.pending) return
    all.delete(id)
    wait.stop.abort()
  })
}

/**
 * Settles an unfinished upload with several candidates (a killed batch's rows): waits
 * for each to end and compares its facts with the PIE's. The one that proves this PIE is
 * followed (and gated later as any); when every candidate ended and none does, it is submitted,
 * once: a DONE query of another PIE has other facts, and a FAILED one carries none to tell whose
 * it is (so a FAILED query of this PIE is not retried here, as a recorded one would be: the new
 * submission takes its place). 'unknown' when a candidate could not be followed to its end: the
 * caller refuses, as before.
 */
async function matchByFacts(
  candidates: string[],
  inspection: PieInspection,
  options: JournalOptions,
  where: string,
): Promise<string | undefined | 'unknown'> {
  const { compareQueryFacts } = await import('../../pie/index.ts')
  const them = candidates.length === 1 ? 'it' : 'them'
  options.logger.warn(
    `An earlier upload of this PIE did not finish ${where}, and ${describeCount(candidates.length)} came since. Waiting for ${them} to end to compare the facts; nothing is sent meanwhile.`,
  )
  const settled = await Promise.allSettled(
    candidates.map(async (id) => {
      const record = await finalRecord(options, id)
      return { id, record, proves: record.status === 'DONE' && compareQueryFacts(record, inspection).ok }
    }),
  )
  if (options.signal?.aborted)
    throw new AbortedError('Stopped waiting for the queries of an earlier upload: cancelled.', {
      cause: options.signal.reason,
    })
  const ended = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
  const proving = ended.find((each) => each.proves)
  if (proving) {
    options.logger.warn(
      `Following query ${proving.id}, submitted by an earlier run whose upload of this PIE ended before its answer ${where}: its facts are this PIE's.`,
    )
    return proving.id
  }
  if (ended.length < candidates.length) return 'unknown'
  options.logger.warn(
    `None of the ${describeCount(candidates.length)} since the earlier upload began ${where} proves this PIE (other facts, or FAILED): it is submitted now, once.`,
  )
  return undefined
}

/** "1 query", "3 queries". */
function describeCount(count: number): string {
  return `${count} quer${count === 1 ? 'y' : 'ies'}`
}
