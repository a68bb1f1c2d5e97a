/**
 * A bucket as a release gate, shared by the CLI (`proving bucket close --wait`) and the
 * bucket-close action: wait for the closed bucket to end (DONE or FAILED), then judge every
 * query in it with the same gate as a single query, expecting a proof of each (never what the
 * record says it is), and, when the PIEs are given, check each query's facts against the PIE
 * they fit (and that every PIE given has its query). The listing itself is judged against what
 * the caller expected (`expected`: the query ids the jobs submitted, or their count), and a
 * listing that names a query twice is refused: an answer the gate cannot read is not a pass.
 * Each query's own record must say it is in the bucket: the listing is not its word.
 * Nothing here prints: hosts get rows and refusals to show.
 */
import type { ProvingClient } from '../clients/proving.ts'
import { requestBudgetFor } from '../core/budget.ts'
import { AbortedError, UnknownStatusError, WaitTimeoutError } from '../core/errors.ts'
import { isDeadlineError } from '../core/http.ts'
import { withDeadline } from '../core/deadline.ts'
import type { Clock } from '../core/runtime.ts'
import { pollUntil } from '../core/poll.ts'
import { forSummaryCell, serviceLine } from '../core/service-text.ts'
import type { PieInspection } from '../pie/index.ts'
import type { BucketDetailsResponse, BucketRecord, QueryRecordWithStatus } from '../schemas/proving.ts'
import { BUCKET_STATUSES } from '../schemas/proving-constants.ts'
import { ANY_PROOF, evaluateGate, outputFacts, showValue } from './gate.ts'

export type BucketProgress = { bucketId: string; status: string; leaves: number; elapsedMs: number }

/** Polls GET /buckets/{id} until the bucket is DONE or FAILED; returns it with its queries. */
export async function waitForBucket(
  client: ProvingClient,
  bucketId: string,
  options: {
    timeoutMs: number
    signal?: AbortSignal | undefined
    onProgress?: ((progress: BucketProgress) => void) | undefined
  },
): Promise<BucketDetailsResponse> {
  const clock = client.http.clock
  const started = clock.now()
  let last: string | undefined
  return pollUntil<BucketDetailsResponse>(
    async () => {
      const details = await client.getBucket(bucketId, { signal: options.signal })
      const status = bucketStatus(details)
      const key = `${status}|${details.queries.length}`
      if (key !== last) {
        last = key
        options.onProgress?.({ bucketId, status, leaves: details.queries.length, elapsedMs: clock.now() - started })
      }
      if (status === 'DONE' || status === 'FAILED') return { done: true, value: details }
      if (!(BUCKET_STATUSES as readonly string[]).includes(status)) {
        throw new UnknownStatusError(
          `Bucket ${bucketId} reports status "${serviceLine(status, 200)}", which this version of proving-kit does not know.`,
        )
      }
      return { done: false, state: details.bucket }
    },
    {
      what: `bucket ${bucketId}`,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      clock,
      logger: client.http.logger,
      waitedFor: { kind: 'bucket', id: bucketId },
    },
  )
}

/** The bucket's status; a service that reports none is judged by its queries' statuses. */
export function bucketStatus(details: { bucket: BucketRecord; queries: { status?: unknown }[] }): string {
  if (typeof details.bucket.status === 'string') return details.bucket.status
  const statuses = details.queries.map((query) => (typeof query.status === 'string' ? query.status : 'IN_PROGRESS'))
  if (statuses.includes('FAILED')) return 'FAILED'
  return statuses.length > 0 && statuses.every((status) => status === 'DONE') ? 'DONE' : 'IN_PROGRESS'
}

/** One row of the per-query table. */
export type BucketQueryRow = {
  bucketJobIndex: number | null
  queryId: string
  status: string
  result: string | null
  programHash: string | null
  /** The query's SHARP fact as on chain (`0x` and 64 hex digits), null when the service gave none. */
  sharpFactHash: string | null
  integrityFactHash: string | null
  isFactMocked: boolean | null
  /** match: fits a PIE given; differ: fits none; not checked: no PIEs given or not DONE. */
  facts: 'match' | 'differ' | 'not checked'
  /** The PIE its facts fit, when PIEs were given. */
  pie: string | null
  errorReason: string | null
  /** Why the gate refuses this query; empty when it passes. */
  problems: string[]
}

export type BucketVerdict = {
  bucket: BucketRecord
  status: string
  rows: BucketQueryRow[]
  /** Why the gate refuses the bucket (every query's problems, and the bucket's own); empty when it passes. */
  refusals: string[]
  ok: boolean
}

export type GivenPie = { path: string; inspection: PieInspection }

/**
 * What the caller expected the bucket to hold (`expected-queries`, `--expect-query`,
 * `--expect-count`): the ids of the queries its jobs submitted, or how many there are. A query
 * missing from the listing, or listed without being expected, is a refusal naming it.
 */
export type ExpectedQueries = { ids: readonly string[] } | { count: number }

export type JudgeBucketOptions = {
  /** Lets a mocked fact, or a mock state the service does not give, pass. */
  allowMockedFact: boolean
  expectedProgramHash?: string | undefined
  /** The queries the bucket must hold, no more, no fewer; any listing when absent (the other checks stand). */
  expected?: ExpectedQueries | undefined
  /** The PIEs proved into the bucket: each query's facts must fit one, and each must have its query. */
  pies?: GivenPie[] | undefined
  signal?: AbortSignal | undefined
  /**
   * The command's deadline (ms since the epoch, by the client's clock): the reads of the
   * queries count against the same timeout as the wait, and one past it is a WaitTimeoutError.
   */
  deadline?: number | undefined
}

/** How many query reads run at once. */
const READS_AT_ONCE = 8

/** Reads every query of the bucket (with its status) and gates each. */
export async function judgeBucket(
  client: ProvingClient,
  details: BucketDetailsResponse,
  options: JudgeBucketOptions,
): Promise<BucketVerdict> {
  const { compareQueryFacts } = await import('../pie/index.ts')
  const records: QueryRecordWithStatus[] = []
  const times = new Map<string, number>()
  for (const query of details.queries) times.set(query.id, (times.get(query.id) ?? 0) + 1)
  const ids = [...times.keys()]
  // The service's ids and status are data in a refusal: one line each, whatever they hold.
  const bucketName = idText(details.bucket.id)
  const unread = (refusals: string[]): BucketVerdict => ({
    bucket: details.bucket,
    status: bucketStatus(details),
    rows: [],
    refusals,
    ok: false,
  })
  if (ids.length < details.queries.length) {
    // A listing that names a query twice cannot be the bucket's leaves, and whatever the gate
    // made of it (read once, counted twice) would be a guess: nothing is read or judged.
    const twice = ids.filter((id) => times.get(id)! > 1)
    const named = twice.slice(0, NAMED_AT_MOST).map((id) => `${idText(id)} (${times.get(id)} times)`)
    if (twice.length > NAMED_AT_MOST) named.push(`and ${twice.length - NAMED_AT_MOST} more`)
    const which = twice.length === 1 ? 'a query' : `${twice.length} queries`
    return unread([
      `Bucket ${bucketName} lists ${which} more than once: ${named.join(', ')}. A listing the gate cannot read is not a pass; nothing was judged.`,
    ])
  }
  const leaves = details.bucket.leaves
  if (typeof leaves === 'number' && ids.length > leaves) {
    // More queries than the bucket's leaves: the listing cannot be the bucket's, and reading
    // them all (a listing may name thousands) would judge something else. (Fewer is not refused:
    // what production's `leaves` counts beyond the queries, e.g. a padded tree, is not documented.)
    return unread([
      `Bucket ${bucketName} lists ${ids.length} distinct queries but has ${leaves} ${leaves === 1 ? 'leaf' : 'leaves'}: the listing does not match the bucket.`,
    ])
  }
  const unexpected = listingRefusals(bucketName, ids, options.expected)
  // A listing longer than what was expected is not read (it may name thousands): its extra
  // queries are named, and nothing was judged.
  if (options.expected && ids.length > expectedCount(options.expected)) return unread(unexpected)
  // The bucket lists record D (no status in the contract): read each query with its status, a
  // few at a time, from whichever path the service serves (production has no /docs/ routes).
  const clock = client.http.clock
  // Each read takes a turn of the process's request budget (src/core/budget.ts): a bucket of
  // thousands is read at the rate every wait shares, never past the deadline.
  const budget = requestBudgetFor(clock)
  const read = async (id: string) => {
    let granted: boolean
    try {
      granted = await budget.take(clock.now(), { signal: options.signal, deadline: options.deadline })
    } catch (error) {
      throw new AbortedError(
        `Stopped reading the queries of bucket ${details.bucket.id}: cancelled; nothing was judged.`,
        { cause: error },
      )
    }
    if (!granted) throw bucketReadTimeout(details.bucket.id)
    return client.readQuery(id, { signal: options.signal })
  }
  for (let start = 0; start < ids.length; start += READS_AT_ONCE) {
    const slice = ids.slice(start, start + READS_AT_ONCE)
    const batch =
      options.deadline === undefined
        ? await Promise.all(slice.map(read))
        : await readBefore(options.deadline, details.bucket.id, clock, () => Promise.all(slice.map(read)))
    records.push(...batch.map((answer) => answer.provingQuery))
  }
  // Each record must be the query it was read for: an answer about another query would be
  // judged in its place.
  const misread = records.map((record, index): string | undefined => {
    const requestedId = ids[index]!
    return record.id === requestedId
      ? undefined
      : `Read as query ${idText(requestedId)}, the service answered with the record of another query.`
  })
  const matched = new Set<string>()
  const rows = records
    .map((record, index): BucketQueryRow => {
      let facts: BucketQueryRow['facts'] = 'not checked'
      let pie: string | null = null
      let factCheck
      if (record.status === 'DONE' && options.pies?.length) {
        const fits = options.pies.find((given) => compareQueryFacts(record, given.inspection).ok)
        if (fits) {
          facts = 'match'
          pie = fits.path
          matched.add(fits.path)
        } else {
          facts = 'differ'
          // The closest PIE for the message: the one with the same program hash, else the first.
          const closest =
            options.pies.find((given) =>
              Object.values(given.inspection.programHashes).includes(record.programHash ?? ''),
            ) ?? options.pies[0]!
          factCheck = compareQueryFacts(record, closest.inspection)
        }
      }
      const problems = evaluateGate(record, facts === 'differ' ? factCheck : undefined, {
        allowMockedFact: options.allowMockedFact,
        expectedProgramHash: options.expectedProgramHash,
        // Every query of a bucket is a proof: a record that says it is a trace is refused.
        expected: ANY_PROOF,
        // And in this bucket by its own record: the listing alone does not make it a leaf.
        bucketId: details.bucket.id,
      })
        .map((refusal) =>
          facts === 'differ' && refusal.kind === 'fact-mismatch'
            ? 'Its facts fit none of the PIEs given.'
            : refusal.message,
        )
        .concat(misread[index] === undefined ? [] : [misread[index]!])
      return {
        bucketJobIndex: record.bucketJobIndex ?? null,
        queryId: record.id,
        status: record.status,
        result: record.result ?? null,
        ...outputFacts(record),
        isFactMocked: record.isFactMocked ?? null,
        facts,
        pie,
        errorReason: record.errorReason ?? null,
        problems,
      }
    })
    .sort((a, b) => (a.bucketJobIndex ?? Number.MAX_SAFE_INTEGER) - (b.bucketJobIndex ?? Number.MAX_SAFE_INTEGER))
  const status = bucketStatus({ bucket: details.bucket, queries: records })
  const refusals: string[] = [...unexpected]
  if (rows.length === 0) refusals.push(`Bucket ${bucketName} holds no query: nothing was proved into it.`)
  if (status !== 'DONE') refusals.push(`Bucket ${bucketName} is ${serviceLine(status, 200)}, not DONE.`)
  for (const row of rows) {
    for (const problem of row.problems)
      refusals.push(
        `Query #${row.bucketJobIndex ?? '?'} (${idText(row.queryId)}): ${problem.replace(/^The query /, 'it ')}`,
      )
  }
  for (const given of options.pies ?? []) {
    if (!matched.has(given.path) && rows.some((row) => row.status === 'DONE')) {
      refusals.push(`No query in the bucket proved ${given.path}: its facts match none of the bucket's queries.`)
    }
  }
  return { bucket: details.bucket, status, rows, refusals, ok: refusals.length === 0 }
}

/** How many ids a refusal names before it counts the rest. */
const NAMED_AT_MOST = 10

/** An id the service sent (or one expected of it), as one line of data in a refusal. */
const idText = (id: string): string => serviceLine(id, 120)

function expectedCount(expected: ExpectedQueries): number {
  return 'count' in expected ? expected.count : expected.ids.length
}

/** Why a listing may lack a query a job of the run submitted. */
const MISSING = "a job's query is missing (it never submitted, or the listing left it out)"

/** The listing (distinct ids) against what the caller expected: each missing or unexpected query named (`bucketName` as shown). */
function listingRefusals(bucketId: string, ids: readonly string[], expected: ExpectedQueries | undefined): string[] {
  if (!expected) return []
  if ('count' in expected) {
    if (ids.length === expected.count) return []
    const why = ids.length < expected.count ? MISSING : 'it holds queries no job of this run submitted'
    return [
      `Bucket ${bucketId} lists ${ids.length} ${ids.length === 1 ? 'query' : 'queries'}, not the ${expected.count} expected: ${why}.`,
    ]
  }
  const wanted = new Set(expected.ids)
  const present = new Set(ids)
  const named = (list: string[]) =>
    `${list.slice(0, NAMED_AT_MOST).map(idText).join(', ')}${list.length > NAMED_AT_MOST ? ` and ${list.length - NAMED_AT_MOST} more` : ''}`
  const missing = expected.ids.filter((id) => !present.has(id))
  const extra = ids.filter((id) => !wanted.has(id))
  const refusals: string[] = []
  const which = missing.length === 1 ? 'the expected query' : `${missing.length} expected queries`
  if (missing.length) refusals.push(`Bucket ${bucketId} does not list ${which} ${named(missing)}: ${MISSING}.`)
  if (extra.length)
    refusals.push(
      `Bucket ${bucketId} lists ${extra.length === 1 ? 'a query' : `${extra.length} queries`} that no job was expected to submit: ${named(extra)}.`,
    )
  return refusals
}

/** Runs the reads under the command's deadline; one that would pass it ends as the wait's timeout. */
function bucketReadTimeout(bucketId: string): WaitTimeoutError {
  return new WaitTimeoutError(
    `Bucket ${bucketId} ended, but its queries could not all be read before the timeout; nothing was judged.`,
    {
      waitedFor: { kind: 'bucket', id: bucketId },
    },
  )
}

async function readBefore<T>(deadline: number, bucketId: string, clock: Clock, reads: () => Promise<T>): Promise<T> {
  const timedOut = () => bucketReadTimeout(bucketId)
  if (clock.now() >= deadline) throw timedOut()
  try {
    return await withDeadline(deadline, reads)
  } catch (error) {
    if (isDeadlineError(error)) throw timedOut()
    throw error
  }
}

/** The per-query table as plain text (the CLI) or Markdown (the job summary). */
export function bucketTable(rows: BucketQueryRow[], format: 'text' | 'markdown'): string {
  const header = ['#', 'query', 'status', 'program hash', 'mocked', 'facts', 'PIE', 'problems']
  const cells = rows.map((row) =>
    [
      row.bucketJobIndex === null ? '?' : String(row.bucketJobIndex),
      row.queryId,
      row.status,
      row.programHash === null ? '' : showValue(row.programHash),
      row.isFactMocked === null ? '' : row.isFactMocked ? 'yes' : 'no',
      row.facts,
      row.pie ?? '',
      row.problems.join(' ') || (row.errorReason ?? ''),
    ].map((cell) => (format === 'text' ? serviceLine(cell, 500) : cell)),
  )
  if (format === 'markdown') {
    // The service's ids, statuses and reasons: data, never Markdown (core/service-text.ts).
    return [
      `| ${header.join(' | ')} |`,
      `|${header.map(() => '---').join('|')}|`,
      ...cells.map(
        (row) =>
          `| ${row.map((cell, column) => forSummaryCell(cell, column === 1 || column === 3 ? 'code' : 'text')).join(' | ')} |`,
      ),
    ].join('\n')
  }
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => row[column]!.length)))
  const line = (row: string[]) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd()
  return [line(header), ...cells.map(line)].join('\n')
}
