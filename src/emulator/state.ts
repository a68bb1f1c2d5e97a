import { appendFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { DEFAULT_TIMING, type QueryRun, type Timing } from './proving/lifecycle.ts'
import { checkStateFile, notAState, parseJsonState, STATE_VERSION } from './state-schema.ts'

/**
 * Everything the emulator knows, as plain JSON-serialisable objects: no class instances, no
 * timers, no derived values (status and step are computed from `run` on each read). With a
 * `stateDir`, every change is written through to disk as it happens (`StateStore`: the records
 * it touched, appended to a log beside `state.json`) and read back on start: an emulator
 * restarted mid-wait still knows its queries and where they stand.
 */

export { STATE_VERSION }
export const STATE_FILE = 'state.json'

/** Who submitted: derived from the API key (a digest; the key itself is never stored). */
export type Owner = { keyId: string; projectId: string; clientId: string }

/** An uploaded file, kept at `<uploads>/<queryId>/<name>`. */
export type StoredFile = { name: string; size: number; sha256: string }

export type StoredFacts = {
  programHash: string | null
  sharpFactHash: string | null
  integrityFactHash: string | null
  /** Program output, 0x hex words (felts exceed 2^53). */
  output: string[] | null
  nSteps: number | null
}

export type Endpoint = 'l2-pie' | 'l2-proof' | 'general'

export type RepeatFailure = { remaining: number; retriable: boolean; reason: string | null; atStep: string | null }

/** A query as the emulator keeps it: what was submitted, by whom, and how it will run. */
export type StoredQuery = {
  id: string
  owner: Owner
  endpoint: Endpoint
  externalId: string | null
  dedupId: string | null
  layout: string
  mockFactHash: boolean
  isProofMocked: boolean
  chain: string | null
  result: string
  network: string | null
  cairoVm: string
  cairoVersion: string
  sharpProver: string | null
  /** The submission's `hints` (null when none, and in states saved before it existed). */
  hints?: string | null
  declaredJobSize: string | null
  jobSize: string | null
  isJobSizeValid: boolean
  bucketId: string | null
  bucketJobIndex: number | null
  facts: StoredFacts
  files: { pie?: StoredFile; proof?: StoredFile; program?: StoredFile; input?: StoredFile }
  createdAt: number
  retryCount: number
  run: QueryRun
  /** Later runs (retries) that are still to fail, from a next-query plan with `times` > 1. */
  repeatFailure: RepeatFailure | null
  /**
   * What the record says instead of what was proved (POST /_emulator/queries/{id}/record, or a
   * next-query plan's `record`): null facts, a null mock state, a malformed hash. Absent in
   * states saved before it existed.
   */
  recordOverride?: RecordOverride | null
}

/** Fields a test makes the record say, as a service that nulls or garbles them would. */
export type RecordOverride = {
  programHash?: string | null
  sharpFactHash?: string | null
  integrityFactHash?: string | null
  isFactMocked?: boolean | null
  /** The result kind the record claims (not what was asked for): a hostile service's word. */
  result?: string | null
  /** The step a finished record claims. */
  step?: string | null
  /** The bucket the record names; the bucket that holds the query still lists it. */
  bucketId?: string | null
  /** The prover the record names, in every representation (records D and L carry none otherwise). */
  sharpProver?: string | null
}

/** A bucket as the emulator keeps it. */
export type StoredBucket = {
  id: string
  owner: Owner
  externalId: string | null
  nodeWidth: number | null
  aggregatorVersion: string
  aggregatorParams: string | null
  mockProof: boolean
  createdAt: number
  closedAt: number | null
}

/** Applies to the next submitted query (POST /_emulator/next-query). */
export type NextQueryPlan = {
  outcome: 'done' | 'fail'
  retriable: boolean
  atStep: string | null
  reason: string | null
  /** Failures only: how many runs fail in a row (the first, then retries). */
  times: number
  /** What the query's record says instead of what was proved (see StoredQuery.recordOverride). */
  record?: RecordOverride | undefined
}

export type FaultKind =
  | 'error'
  | 'status'
  | 'html-502'
  | 'gateway-404'
  | 'delay'
  | 'delay-body'
  | 'drop'
  | 'drop-after-body'
  | 'drop-after'
  | 'truncate'

/**
 * A failure planned through the control API: which requests it hits, and how (a status, a delay, a
 * dropped connection, a cut body).
 */
export type Fault = {
  id: string
  method: string | null
  /** A route pattern or a literal path: `/proving-queries/:id/retry`; `*` for every route. */
  path: string
  kind: FaultKind
  status: number | null
  /** JSON, or a string sent as raw text (`contentType`, default text/plain). */
  body: unknown
  /** Extra response headers (`retry-after`, ...) of the answers the fault makes. */
  headers?: Record<string, string> | null
  contentType?: string | null
  delayMs: number
  /** Matching requests still to let through before the fault hits (default 0). */
  skip: number
  /** Requests still to hit; the fault is removed at 0. */
  remaining: number
}

/**
 * What the emulator's proving service holds: its timing, counters, queries, buckets, the plans for
 * the next queries, and the planned faults.
 */
export type EmulatorState = {
  version: typeof STATE_VERSION
  timing: Timing
  counters: { submissions: number; retries: number; buckets: number }
  queries: Record<string, StoredQuery>
  buckets: Record<string, StoredBucket>
  nextQueries: NextQueryPlan[]
  faults: Fault[]
}

export function emptyState(timing: Timing = DEFAULT_TIMING): EmulatorState {
  return {
    version: STATE_VERSION,
    timing: { ...timing },
    counters: { submissions: 0, retries: 0, buckets: 0 },
    queries: {},
    buckets: {},
    nextQueries: [],
    faults: [],
  }
}

/**
 * The record collections of the state: every other field (timing, counters, plans, faults, the
 * task service's queue) is small and written whole when it changes; a record of a collection is
 * written alone when it was touched. Each is found by its path from the state's top.
 */
const COLLECTIONS = {
  queries: ['queries'],
  buckets: ['buckets'],
  tasks: ['taskService', 'tasks'],
  batchQueries: ['storageProof', 'queries'],
} as const satisfies Record<string, readonly string[]>

export type Collection = keyof typeof COLLECTIONS

/** The file beside state.json that the changes since it was written are appended to. */
export const CHANGES_FILE = 'changes.jsonl'
/** The log is folded into state.json once it outgrows this, or twice state.json, whichever is larger. */
const COMPACT_AT_BYTES = 8 * 1024 * 1024

type Change = { g: number; rest?: Record<string, unknown>; c?: Collection; id?: string; v?: unknown }

export class StateStore {
  state: EmulatorState
  readonly #dir: string | undefined
  readonly #verify: boolean
  /** Records touched since the last save, per collection, in the order first touched. */
  #touched = new Map<Collection, Set<string>>()
  /** The generation of state.json: the log's lines carry it, and a line of another is not replayed. */
  #generation = 0
  #lastRest = ''
  /** A save failed to append its changes: the next one writes the whole state. */
  #unwritten = false
  #logBytes = 0
  #snapshotBytes = 0

  private constructor(state: EmulatorState, dir: string | undefined, verify: boolean) {
    this.state = state
    this.#dir = dir
    this.#verify = verify
  }

  /**
   * In memory only, or backed by `<stateDir>`: `state.json`, the whole state as of some moment,
   * and `changes.jsonl`, every change since, one line each (a touched record, or the small rest
   * of the state), appended as it happens. A change costs what it changed, not a rewrite of
   * every query (4.4 MB at 4,000 queries); on open the log is replayed and folded into a new
   * state.json, and so it is whenever it outgrows twice that file. A line cut short by a crash
   * is the end of the log. A state file that cannot be read is an error, not a fresh start: it
   * may hold a test's only record.
   *
   * `verify` (the test suite sets PROVING_EMULATOR_VERIFY_STATE) reads the state back after
   * every save and fails when it differs from the one in memory: a change nobody touched would
   * be lost by a restart.
   */
  static open(
    stateDir: string | undefined,
    timing: Timing,
    verify = process.env.PROVING_EMULATOR_VERIFY_STATE === '1',
  ): StateStore {
    if (!stateDir) return new StateStore(emptyState(timing), undefined, false)
    mkdirSync(stateDir, { recursive: true })
    const loaded = readStateDir(stateDir)
    const store = new StateStore(loaded?.state ?? emptyState(timing), stateDir, verify)
    store.#generation = loaded?.generation ?? 0
    store.#compact()
    return store
  }

  get persistent(): boolean {
    return this.#dir !== undefined
  }

  /** Marks a record as changed (created, updated or removed): the next `save` writes it. */
  touch(collection: Collection, id: string): void {
    if (!this.#dir) return
    let ids = this.#touched.get(collection)
    if (!ids) {
      ids = new Set()
      this.#touched.set(collection, ids)
    }
    ids.add(id)
  }

  /**
   * Writes the changes through to disk (no-op in memory): the touched records and, when it
   * changed, the rest, as lines appended to the log in one write. Synchronous, so writes never
   * interleave.
   */
  save(): void {
    if (!this.#dir) return
    if (this.#unwritten) {
      // The last append failed (a full disk), maybe half way through a line that would end the
      // log: the whole state is written again instead, and what it held is not lost.
      this.#compact()
      this.#touched.clear()
    } else {
      const lines: string[] = []
      const rest = JSON.stringify(restOf(this.state))
      if (rest !== this.#lastRest) lines.push(`{"g":${this.#generation},"rest":${rest}}`)
      for (const [collection, ids] of this.#touched) {
        const records = collectionOf(this.state, collection)
        for (const id of ids) {
          const record = records && Object.hasOwn(records, id) ? records[id] : null
          lines.push(JSON.stringify({ g: this.#generation, c: collection, id, v: record }))
        }
      }
      if (lines.length > 0) {
        const text = `${lines.join('\n')}\n`
        try {
          appendFileSync(join(this.#dir, CHANGES_FILE), text)
        } catch (error) {
          this.#unwritten = true
          throw error
        }
        this.#logBytes += Buffer.byteLength(text)
      }
      this.#touched.clear()
      this.#lastRest = rest
      if (this.#logBytes > Math.max(COMPACT_AT_BYTES, 2 * this.#snapshotBytes)) this.#compact()
    }
    if (this.#verify) this.#verifyWritten()
  }

  /** Saves, then folds the log into state.json: a stopped emulator leaves one file to read. */
  close(): void {
    this.save()
    this.#compact()
  }

  /** Reads the state back from disk, as a restarted emulator does (no-op in memory). */
  reload(): void {
    if (!this.#dir) return
    const loaded = readStateDir(this.#dir)
    if (!loaded) throw new Error(`The emulator state in ${this.#dir} is gone.`)
    this.state = loaded.state
    this.#generation = loaded.generation
    this.#compact()
  }

  /** Forgets everything but keeps the given timing (POST /_emulator/reset). */
  reset(timing: Timing): void {
    this.state = emptyState(timing)
    this.#touched.clear()
    this.#compact()
  }

  /**
   * Writes the whole state to state.json under the next generation (a temporary file renamed
   * over the old one, so a crash leaves the old file and its log, or the new file) and starts
   * an empty log.
   */
  #compact(): void {
    if (!this.#dir) return
    const file = join(this.#dir, STATE_FILE)
    const generation = this.#generation + 1
    const text = JSON.stringify({ ...this.state, changeLog: generation })
    const temporary = `${file}.${process.pid}.tmp`
    writeFileSync(temporary, text)
    renameSync(temporary, file)
    writeFileSync(join(this.#dir, CHANGES_FILE), '')
    this.#generation = generation
    this.#snapshotBytes = Buffer.byteLength(text)
    this.#logBytes = 0
    this.#lastRest = JSON.stringify(restOf(this.state))
    this.#unwritten = false
  }

  #verifyWritten(): void {
    const written = readStateDir(this.#dir!)
    if (!written || !isDeepStrictEqual(written.state, withoutUndefined(this.state))) {
      throw new Error(
        `The emulator state written to ${this.#dir} differs from the state in memory: a change was not touched (StateStore.touch).`,
      )
    }
  }
}

/**
 * The state a `stateDir` holds: state.json and its log replayed, as an emulator starting there
 * would read it; undefined when there is no state.json yet.
 */
export function readStateDir(dir: string): { state: EmulatorState; generation: number } | undefined {
  const file = join(dir, STATE_FILE)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const json = parseJsonState(file, text)
  const generation = typeof json.changeLog === 'number' ? json.changeLog : 0
  delete json.changeLog
  let log = ''
  try {
    log = readFileSync(join(dir, CHANGES_FILE), 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const collections = Object.keys(COLLECTIONS) as Collection[]
  for (const collection of collections) checkCollectionPath(file, json, COLLECTIONS[collection])
  const records = new Map(
    collections.map((collection) => [collection, { ...collectionOf(json as EmulatorState, collection) }]),
  )
  let rest = restOf(json as EmulatorState)
  for (const line of log.split('\n')) {
    let change: Change
    try {
      change = JSON.parse(line) as Change
    } catch {
      break // the end of the log, or a line a crash cut short
    }
    if (change.g !== generation) continue
    if (change.rest) rest = change.rest
    const ofCollection = change.c === undefined ? undefined : records.get(change.c)
    if (ofCollection && typeof change.id === 'string') {
      if (change.v === null || change.v === undefined) delete ofCollection[change.id]
      else ofCollection[change.id] = change.v
    }
  }
  const state = rest as unknown as EmulatorState
  for (const [collection, held] of records) {
    const target = collectionOf(state, collection, Object.keys(held).length > 0)
    if (target) Object.assign(target, held)
  }
  return { state: checkStateFile<EmulatorState>(file, state), generation }
}

/**
 * Each collection's path in the file holds objects (or nothing yet), before the log is replayed
 * into them: a string or a number there (`"queries": "abc"`) made the replay fail with "Cannot
 * assign to read only property '0' of object '[object String]'", naming no file. What the objects
 * hold is the schema's to judge, after the replay.
 */
function checkCollectionPath(file: string, json: Record<string, unknown>, path: readonly string[]): void {
  let at: unknown = json
  for (const [depth, key] of path.entries()) {
    const value = (at as Record<string, unknown>)[key]
    if (value === undefined || value === null) return
    if (typeof value !== 'object')
      throw notAState(file, path.slice(0, depth + 1).join('.'), `expected an object, received ${typeof value}`)
    at = value
  }
}

/** The state without its collections' records (each collection an empty object in its place). */
function restOf(state: EmulatorState): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...state }
  for (const path of Object.values(COLLECTIONS)) {
    let from: Record<string, unknown> = state as unknown as Record<string, unknown>
    let to = rest
    for (const [depth, key] of path.entries()) {
      const value = from[key]
      if (value === undefined || value === null || typeof value !== 'object') break
      if (depth === path.length - 1) {
        to[key] = {}
        break
      }
      to[key] = { ...(value as Record<string, unknown>) }
      from = value as Record<string, unknown>
      to = to[key] as Record<string, unknown>
    }
  }
  return rest
}

function collectionOf(
  state: EmulatorState,
  collection: Collection,
  create = false,
): Record<string, unknown> | undefined {
  let at = state as unknown as Record<string, unknown>
  for (const key of COLLECTIONS[collection]) {
    if (at[key] === undefined || at[key] === null) {
      if (!create) return undefined
      at[key] = {}
    }
    at = at[key] as Record<string, unknown>
  }
  return at
}

/** What JSON keeps of a value: fields holding undefined are dropped, as a write drops them. */
function withoutUndefined(state: EmulatorState): unknown {
  return JSON.parse(JSON.stringify(state))
}

/**
 * A record's own entry: ids come from URLs and bodies, and `__proto__`, `constructor` or
 * `toString` must find nothing rather than Object.prototype's members.
 */
export function own<T>(record: Record<string, T>, key: string | null | undefined): T | undefined {
  return typeof key === 'string' && Object.hasOwn(record, key) ? record[key] : undefined
}
