import type { EmulatorState, StoredQuery } from '../state.ts'

/**
 * Lookups over the stored queries, so that a submission, a read, a list page and a bucket's
 * queries cost O(1) or O(page) however many queries the emulator holds (a bench, a soak test,
 * an orchestrator's day: 100,000 of them), instead of a scan of every query per request.
 *
 * The index is derived, never persisted: it is built once from `state.queries` the first time a
 * state is asked (a fresh start, a reset, a reload from `--state-dir` each bring a new queries
 * object, and so a new index) and kept up to date by `indexQuery`, which `createQuery` calls as
 * it stores a query. Every field it is keyed on (owner, dedupId, bucket and job index, network,
 * facts) is fixed when a query is created; a retry or a control route changes only its run.
 */
export type QueryIndex = {
  /** Every query in creation order (the order of `state.queries`' keys). */
  readonly all: StoredQuery[]
  /** Per API key (keyId), in creation order. */
  readonly byOwner: Map<string, StoredQuery[]>
  /** Per keyId and dedupId: `findByDedupId`. */
  readonly byDedupId: Map<string, StoredQuery>
  /** Per bucket, ordered by job index (queries without one first, then by creation). */
  readonly byBucket: Map<string, StoredQuery[]>
  /** Per Integrity fact (its value in lower-case hex, no leading zeros): the registry's reads. */
  readonly byIntegrityFact: Map<string, StoredQuery[]>
}

const indexes = new WeakMap<Record<string, StoredQuery>, QueryIndex>()

/** The index of this state's queries, built on first use. */
export function queryIndex(state: EmulatorState): QueryIndex {
  let index = indexes.get(state.queries)
  if (!index) {
    index = { all: [], byOwner: new Map(), byDedupId: new Map(), byBucket: new Map(), byIntegrityFact: new Map() }
    indexes.set(state.queries, index)
    for (const query of Object.values(state.queries)) add(index, query)
  }
  return index
}

/** Records a query just stored in `state.queries` (after `queryIndex` was built, or before). */
export function indexQuery(state: EmulatorState, query: StoredQuery): void {
  const index = indexes.get(state.queries)
  // Not built yet: the first `queryIndex` call reads it from state.queries with the others.
  if (index) add(index, query)
}

export function dedupKey(keyId: string, dedupId: string): string {
  return `${keyId}\u0000${dedupId}`
}

/** The normal form of a fact for the index: a felt's value, so 0x00ab and 0xAB meet. */
export function factKey(hash: string | null): string | null {
  if (hash === null) return null
  try {
    return BigInt(hash).toString(16)
  } catch {
    return null
  }
}

function add(index: QueryIndex, query: StoredQuery): void {
  index.all.push(query)
  listOf(index.byOwner, query.owner.keyId).push(query)
  if (query.dedupId !== null) {
    const key = dedupKey(query.owner.keyId, query.dedupId)
    // The first query with a dedupId keeps it: the service refuses a second (and so does the
    // emulator), but a hand-edited state file may hold two; a scan found the first, too.
    if (!index.byDedupId.has(key)) index.byDedupId.set(key, query)
  }
  if (query.bucketId !== null) insertByJobIndex(listOf(index.byBucket, query.bucketId), query)
  const fact = factKey(query.facts.integrityFactHash)
  if (fact !== null) listOf(index.byIntegrityFact, fact).push(query)
}

function listOf<K>(map: Map<K, StoredQuery[]>, key: K): StoredQuery[] {
  let list = map.get(key)
  if (!list) {
    list = []
    map.set(key, list)
  }
  return list
}

/**
 * Keeps a bucket's list ordered by job index, ties (and missing indexes, taken as 0) in
 * creation order, as the stable sort it replaces did. Queries nearly always arrive in index
 * order, so the search from the end stops at once.
 */
function insertByJobIndex(list: StoredQuery[], query: StoredQuery): void {
  const order = query.bucketJobIndex ?? 0
  let at = list.length
  while (at > 0 && (list[at - 1]!.bucketJobIndex ?? 0) > order) at--
  list.splice(at, 0, query)
}

/**
 * Whether a bucket's list (ordered by job index, `insertByJobIndex`) holds a query of job
 * `index`: a binary search, so a submission into a bucket of 100,000 queries does not read them
 * all.
 */
export function holdsJobIndex(list: readonly StoredQuery[], index: number): boolean {
  let low = 0
  let high = list.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((list[middle]!.bucketJobIndex ?? 0) < index) low = middle + 1
    else high = middle
  }
  // Ties: queries without an index sort as 0 beside the one of index 0.
  for (let at = low; at < list.length && (list[at]!.bucketJobIndex ?? 0) === index; at++) {
    if (list[at]!.bucketJobIndex === index) return true
  }
  return false
}

/**
 * The job index a query joining the bucket without one takes: one past the highest used, 0 in
 * an empty bucket. Read from the list's end (ordered by job index), not from every query.
 */
export function nextJobIndex(list: readonly StoredQuery[]): number {
  const last = list.at(-1)
  if (!last) return 0
  const highest = last.bucketJobIndex ?? 0
  // Queries without an index sort as 0: the highest used is 0 only if one of them has it.
  for (let at = list.length - 1; at >= 0 && (list[at]!.bucketJobIndex ?? 0) === highest; at--) {
    if (list[at]!.bucketJobIndex !== null) return Math.max(0, highest + 1)
  }
  return 0
}

/**
 * One page of a list kept in creation order, newest first, and how many items match. Without a
 * filter that is O(page): the page is read from the end and the total is the list's length;
 * with one (a search, a network), every item of the list is tested once.
 */
export function newestFirst<T>(
  list: readonly T[],
  offset: number,
  limit: number,
  matches: ((item: T) => boolean) | null,
): { page: T[]; total: number } {
  const page: T[] = []
  if (matches === null) {
    for (let at = list.length - 1 - offset; at >= 0 && page.length < limit; at--) page.push(list[at]!)
    return { page, total: list.length }
  }
  let total = 0
  for (let at = list.length - 1; at >= 0; at--) {
    if (!matches(list[at]!)) continue
    if (total >= offset && page.length < limit) page.push(list[at]!)
    total++
  }
  return { page, total }
}
