import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { DEFAULT_TIMING, type QueryRun, type Timing } from './proving/lifecycle.ts'
import { parseStateFile, STATE_VERSION } from './state-schema.ts'

/**
 * Everything the emulator knows, as plain JSON-serialisable objects: no class instances, no
 * timers, no derived values (status and step are computed from `run` on each read). With a
 * `stateDir`, every change is written through to `state.json` (written to a temporary file,
 * then renamed over the old one, so a crash never leaves half a file) and read back on start:
 * an emulator restarted mid-wait still knows its queries and where they stand.
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
}

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

export class StateStore {
  state: EmulatorState
  readonly #file: string | undefined

  private constructor(state: EmulatorState, file: string | undefined) {
    this.state = state
    this.#file = file
  }

  /**
   * In memory only, or backed by `<stateDir>/state.json` (loaded when present). A state file
   * that cannot be read is an error, not a fresh start: it may hold a test's only record.
   */
  static open(stateDir: string | undefined, timing: Timing): StateStore {
    if (!stateDir) return new StateStore(emptyState(timing), undefined)
    mkdirSync(stateDir, { recursive: true })
    const file = join(stateDir, STATE_FILE)
    let text: string | undefined
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    if (text === undefined) {
      const store = new StateStore(emptyState(timing), file)
      store.save()
      return store
    }
    return new StateStore(parseStateFile<EmulatorState>(file, text), file)
  }

  get persistent(): boolean {
    return this.#file !== undefined
  }

  /** Writes the state through to disk (no-op in memory). Synchronous, so writes never interleave. */
  save(): void {
    if (!this.#file) return
    const temporary = `${this.#file}.${process.pid}.tmp`
    writeFileSync(temporary, JSON.stringify(this.state))
    renameSync(temporary, this.#file)
  }

  /** Reads the state back from disk, as a restarted emulator does (no-op in memory). */
  reload(): void {
    if (!this.#file) return
    this.state = parseStateFile<EmulatorState>(this.#file, readFileSync(this.#file, 'utf8'))
  }

  /** Forgets everything but keeps the given timing (POST /_emulator/reset). */
  reset(timing: Timing): void {
    this.state = emptyState(timing)
    this.save()
  }
}

/**
 * A record's own entry: ids come from URLs and bodies, and `__proto__`, `constructor` or
 * `toString` must find nothing rather than Object.prototype's members.
 */
export function own<T>(record: Record<string, T>, key: string | null | undefined): T | undefined {
  return typeof key === 'string' && Object.hasOwn(record, key) ? record[key] : undefined
}
