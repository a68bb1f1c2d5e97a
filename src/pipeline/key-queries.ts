/**
 * One index of the API key's queries for a run: read once, newest first, page by page as far as
 * a reader needs, and shared by every statement of the run and by the listings made before it
 * pays (the reuse lookup, a re-run's running candidates). The journal's recovery of an unfinished
 * upload reads a listing of its own, made when it runs (rare: a killed run's entry): a run that
 * waited for another's lock read its index before that run created its query. So a batch of N PIEs makes a number of list requests that does not grow with N, each inside the
 * process's one request budget (src/core/budget.ts) and the run's deadline.
 *
 * How far back: the newest MAX_INDEXED_QUERIES (50 pages of 100, the list's largest page). That
 * is the bound the journal's recovery always had, five seconds of reads at the default ten a
 * second, once per run whatever its size. A query older than that is not reused (the statement is
 * proven again, and paid: nothing is ever passed on a query not read) and not taken for a lost
 * upload's (which began minutes, not thousands of queries, ago).
 *
 * Pages are read by offset from the newest: a query created while the index is read (this run's
 * own) moves the older ones down, so a record can come twice (kept once, by id), never be missed.
 * The run's own submissions are named in `created`, so no listing takes them for an earlier run's.
 */
import type { ProvingClient } from '../clients/proving.ts'
import { type RequestBudget, requestBudgetFor } from '../core/budget.ts'
import { currentBound } from '../core/deadline.ts'
import { AbortedError, RequestTimeoutError } from '../core/errors.ts'
import { DEADLINE_CODE } from '../core/http/failures.ts'
import { systemClock } from '../core/runtime.ts'
import type { QueryRecordWithStatus } from '../schemas/proving.ts'

/** The list's largest page. */
export const QUERY_PAGE_SIZE = 100
/** How many of the key's newest queries a run reads at most (see above). */
export const MAX_INDEXED_QUERIES = 5_000

export class KeyQueries {
  readonly #client: ProvingClient
  readonly #records: QueryRecordWithStatus[] = []
  /** The ids of the records indexed: a query listed again (the list moved between pages) is indexed once. */
  readonly #indexedIds = new Set<string>()
  #offset = 0
  #ended = false
  /** The bound was reached before the list's end. */
  #bounded = false
  #loading: Promise<void> | undefined
  /** The list could not be read: every reader of this run gets the same failure, nobody asks again. */
  #failure: unknown
  #requests = 0
  /** The ids of the queries this run created: never an earlier run's. */
  readonly created = new Set<string>()

  readonly #budget: RequestBudget | undefined

  /** `budget`: the request budget list requests take turns from (the process's, by the client's clock, by default). */
  constructor(client: ProvingClient, options: { budget?: RequestBudget | undefined } = {}) {
    this.#client = client
    this.#budget = options.budget
  }

  /** The key's queries in the order the service lists them (newest first), read as far as the caller iterates. */
  async *newestFirst(signal?: AbortSignal): AsyncGenerator<QueryRecordWithStatus> {
    let index = 0
    while (true) {
      while (index < this.#records.length) yield this.#records[index++]!
      if (this.#ended) return
      await this.#loadNext(signal)
    }
  }

  /** Whether every query of the key was read (false: the list goes on past the bound). */
  get complete(): boolean {
    return this.#ended && !this.#bounded
  }

  /** How many queries were read so far, and with how many list requests. */
  get read(): { queries: number; requests: number } {
    return { queries: this.#records.length, requests: this.#requests }
  }

  #loadNext(signal: AbortSignal | undefined): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure)
    this.#loading ??= this.#load(signal).finally(() => {
      this.#loading = undefined
    })
    return this.#loading
  }

  async #load(signal: AbortSignal | undefined): Promise<void> {
    // A client without its HTTP side (a stand-in in a test) reads by the system's clock.
    const clock = (this.#client.http as ProvingClient['http'] | undefined)?.clock ?? systemClock
    let granted: boolean
    try {
      // A list request takes its turn of the process's budget, as every status read does.
      granted = await (this.#budget ?? requestBudgetFor(clock)).take(clock.now(), { signal, deadline: currentBound() })
    } catch (error) {
      if (error instanceof AbortedError) throw error
      throw new AbortedError('Reading the list of queries was cancelled.', { cause: error })
    }
    // The deadline's timeout, outside the catch: it is not a cancellation.
    if (!granted)
      throw new RequestTimeoutError("The run's deadline came before the list of queries could be read.", {
        code: DEADLINE_CODE,
      })
    let answer
    try {
      this.#requests++
      answer = await this.#client.listQueries({ limit: QUERY_PAGE_SIZE, offset: this.#offset, signal })
    } catch (error) {
      if (!(error instanceof AbortedError) && !signal?.aborted) this.#failure = error
      throw error
    }
    const records = answer.provingQueries
    // In the service's order (newest first, as it lists them): a reader that checks the order sees it as sent.
    for (const record of records) {
      if (this.#indexedIds.has(record.id) || this.created.has(record.id)) continue
      this.#indexedIds.add(record.id)
      this.#records.push(record)
    }
    this.#offset += records.length
    const total = typeof answer.total === 'number' ? answer.total : undefined
    const listEnded =
      records.length === 0 || (total !== undefined ? this.#offset >= total : records.length < QUERY_PAGE_SIZE)
    if (listEnded) this.#ended = true
    else if (this.#offset >= MAX_INDEXED_QUERIES) this.#ended = this.#bounded = true
  }
}

/** A page's records, newest first by `createdAt` (a record without one keeps its place, after the dated ones). */
export function byCreation(records: QueryRecordWithStatus[]): QueryRecordWithStatus[] {
  const time = (record: QueryRecordWithStatus) => {
    const parsed = typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN
    return Number.isNaN(parsed) ? Number.NEGATIVE_INFINITY : parsed
  }
  return records
    .map((record, index) => ({ record, index }))
    .sort((a, b) => time(b.record) - time(a.record) || a.index - b.index)
    .map(({ record }) => record)
}
