/**
 * The root action's journal across the attempts of a run: saved to the runner's Actions cache
 * when the step ends (and by the post step, when the step was stopped before it could), read
 * back by the next attempt into the journal folder its request names, so that "Re-run jobs"
 * follows, retries or settles exactly the queries an earlier attempt created instead of guessing
 * them from the queries still running.
 *
 * Why the cache: its entries are scoped to the branch and outlive the attempt (an attempt's
 * artifacts are not listed to the next one by the runner's own API), and @actions/cache is the
 * runner's own client of it (Twirp API, signed blob URL, tar archive). Its entries are written
 * once, so each save is a key of its own (`<prefix><attempt>`, `-post` for the post step's) and
 * a restore takes the newest entry under the prefix. The prefix is scoped to the run and to a
 * digest of the repository, workflow, job, step and what the step proves where (its `pie`,
 * program, service, API key and settings): never the key itself.
 *
 * Best effort: no cache in the step's environment (`act`, a runner without the service), a
 * service error, a lost runner that saved nothing: a line in the log, and the re-run looks up the
 * queries still running instead (src/pipeline/reuse.ts), as without a cache. What is read back
 * only names queries to follow: each entry is checked against its own key (the digest of its
 * PIE, service and parameters), and the gate judges every query as always. Entries hold no
 * secret (the PIE's digest, the service's origin, the settings, the query id).
 *
 * @actions/cache reads the process's environment (ACTIONS_RESULTS_URL, ACTIONS_RUNTIME_TOKEN,
 * RUNNER_TEMP, GITHUB_WORKSPACE), which is the step's `io.env` on the runner; it is loaded only
 * when the service is there and there is something to read or save.
 */
import { createHash } from 'node:crypto'
import { readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type JournalEntry, SubmissionJournal } from '../../pipeline/journal.ts'
import type { StatementEvent } from '../../pipeline/statement/index.ts'
import type { ActionIO } from '../types.ts'
import { STATE } from './state.ts'

/** The inputs that say what the step proves and where: two steps alike in these keep the same journal entries. */
// Not the API key, not even digested: a cache key is listed to whoever can list caches, and an
// unsalted digest of a key would let its guesses be tested offline (the step's id tells steps apart).
const IDENTITY_INPUTS = [
  'pie',
  'program',
  'program-input',
  'program-hash',
  'base-url',
  'layout',
  'prover',
  'mock-fact-hash',
] as const

/** The step's inputs, parsed (defaults applied however the runner gave them). */
export type StepInputs = Partial<Record<(typeof IDENTITY_INPUTS)[number], unknown>>

/** What a save holds besides the entries. */
const MANIFEST = 'attempt.json'
const FORMAT = 1
/** At most this many entries are read back (a batch of PIEs writes one each). */
const MAX_ENTRIES = 10_000

export type JournalCarry = {
  /** Where the entries are saved from and read back into: the request's `policy.journal.dir`. */
  dir: string
  /** The key prefix of this run and step; each save adds its attempt. */
  prefix: string
  attempt: number
  /** The folder the cache archive holds (the same path on every attempt: it is part of the entry's version). */
  staging: string
}

/** What the next attempt reads back, and what it may rely on. */
export type CarriedJournal = {
  /**
   * The PIEs (SHA-256 of pie.zip) for which the attempt just before this one left its record
   * whole: the journal follows what it left, so no running query is looked up for them. Undefined
   * when nothing was read back, or it came from an older attempt (the one between was lost).
   */
  known: ReadonlySet<string> | undefined
  /** Feed the pipeline's events: which PIEs this attempt prepared, and which it followed outside the journal. */
  observe(event: StatementEvent): void
  /** Saves the journal when the step ends (best effort; says so). */
  save(): Promise<void>
}

/** The carry of this step, or undefined where there is no run to carry it in (no RUNNER_TEMP, no run id). */
export function journalCarryOf(io: ActionIO, inputs: StepInputs, dir: string): JournalCarry | undefined {
  const env = io.env
  if (!env.RUNNER_TEMP || !env.GITHUB_RUN_ID) return undefined
  const identity = JSON.stringify([
    'proving-kit journal',
    env.GITHUB_REPOSITORY ?? '',
    env.GITHUB_WORKFLOW ?? '',
    env.GITHUB_JOB ?? '',
    env.GITHUB_ACTION ?? '',
    ...IDENTITY_INPUTS.map((name) => [name, inputs[name] ?? null]),
  ])
  const digest = createHash('sha256').update(identity).digest('hex').slice(0, 32)
  return {
    dir,
    prefix: `proving-kit-journal-${env.GITHUB_RUN_ID}-${digest}-`,
    attempt: Math.max(1, Number.parseInt(env.GITHUB_RUN_ATTEMPT ?? '1', 10) || 1),
    staging: join(env.RUNNER_TEMP, 'proving-kit', 'journal-carry', digest),
  }
}

/**
 * Opens the carry for the root action's step: on a re-run (attempt 2 and later) reads back the
 * newest journal an earlier attempt saved, into `dir`; tells the post step where to save if the
 * step is stopped before it does.
 */
export async function carryJournal(
  io: ActionIO,
  inputs: StepInputs,
  dir: string,
  signal: AbortSignal,
): Promise<CarriedJournal> {
  const carry = journalCarryOf(io, inputs, dir)
  if (!carry) return { known: undefined, observe: () => {}, save: async () => {} }
  io.saveState(STATE.journalCarry, JSON.stringify(carry))
  const restored = carry.attempt > 1 ? await restore(io, carry, signal) : undefined
  const known = restored?.whole ? restored.known : undefined
  // What this attempt answers for: every PIE it prepared (an entry is written before any upload,
  // so one without an entry has no query of this attempt) and those it was told of, but those it
  // followed outside the journal (a query it reused: it may have been stopped while it waited).
  const prepared = new Map<number, string>()
  const answered = new Set(known)
  const reusedOutside = new Set<string>()
  // Passed on a query the journal did not follow (a DONE one reused): an earlier entry of the PIE is settled too.
  const settled = new Set<string>()
  return {
    known,
    observe(event) {
      if (event.type === 'prepared') {
        prepared.set(event.index, event.pie.sha256)
        answered.add(event.pie.sha256)
      }
      const digest = prepared.get(event.index)
      if (event.type === 'decided' && event.decision.kind === 'reuse-query' && digest !== undefined)
        reusedOutside.add(digest)
      if (event.type === 'ended' && event.outcome.passed && event.outcome.judgement && reusedOutside.has(digest ?? ''))
        settled.add(digest!)
    },
    async save() {
      const saved = await saveJournal(io, carry, `${carry.prefix}${carry.attempt}`, {
        answered,
        reusedOutside,
        settled,
        restored: restored !== undefined,
        stopped: signal.aborted,
      })
      if (saved === 'done') io.saveState(STATE.journalSaved, 'true')
    },
  }
}

/** The post step: saves the journal of a main step stopped before it saved it. */
export async function saveJournalAfterStop(io: ActionIO): Promise<void> {
  if (io.getState(STATE.journalSaved) === 'true') return
  let carry: JournalCarry
  try {
    carry = JSON.parse(io.getState(STATE.journalCarry)) as JournalCarry
  } catch {
    return
  }
  if (
    typeof carry?.dir !== 'string' ||
    typeof carry.prefix !== 'string' ||
    typeof carry.staging !== 'string' ||
    !Number.isInteger(carry.attempt)
  )
    return
  // Which PIEs the main step prepared is its own knowledge: here only its entries are known.
  await saveJournal(io, carry, `${carry.prefix}${carry.attempt}-post`, {
    answered: new Set(),
    reusedOutside: new Set(),
    settled: new Set(),
    restored: false,
    stopped: true,
  })
}

type Restored = { whole: boolean; known: Set<string> }

/** Whether the cache can be reached from this process (the variables the runner gives a node action). */
function cacheReachable(): boolean {
  const env = process.env
  if (!env.ACTIONS_RUNTIME_TOKEN) return false
  return Boolean(
    env.ACTIONS_CACHE_SERVICE_V2 ? env.ACTIONS_RESULTS_URL : env.ACTIONS_CACHE_URL || env.ACTIONS_RESULTS_URL,
  )
}

const NO_CACHE = "no Actions cache in this step's environment (ACTIONS_RUNTIME_TOKEN, ACTIONS_RESULTS_URL)"

async function restore(io: ActionIO, carry: JournalCarry, signal: AbortSignal): Promise<Restored | undefined> {
  const fallback = "the queries of the key still running with each PIE's program and settings are looked up instead"
  if (!cacheReachable()) {
    io.debug(`No journal of an earlier attempt read back: ${NO_CACHE}; ${fallback}.`)
    return undefined
  }
  try {
    await rm(carry.staging, { recursive: true, force: true })
    const { restoreCache } = await import('@actions/cache')
    const matched = await untilAborted(restoreCache([carry.staging], carry.prefix, [carry.prefix]), signal)
    if (matched === undefined) {
      io.info(`No journal of an earlier attempt of this step in the Actions cache; ${fallback}.`)
      return undefined
    }
    const manifest = await readManifest(carry.staging)
    if (!manifest || manifest.attempt >= carry.attempt || !new RegExp(`-${manifest.attempt}(-post)?$`).test(matched)) {
      io.warning(
        `The journal read back from the Actions cache (${matched}) is not an earlier attempt's of this step; ignored, and ${fallback}.`,
      )
      return undefined
    }
    const entries = await copyEntries(carry.staging, carry.dir)
    const whole = manifest.attempt === carry.attempt - 1
    const ids = entries.flatMap((entry) => (entry.provingQueryId ? [entry.provingQueryId] : []))
    const queries = ids.length ? ` (quer${ids.length === 1 ? 'y' : 'ies'} ${ids.join(', ')})` : ''
    const what =
      entries.length === 0
        ? 'no query left to follow'
        : `${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}${queries}`
    io.info(`Read back the journal of attempt ${manifest.attempt} of this step from the Actions cache: ${what}.`)
    io.info('Each query is followed, retried or settled as recorded, and judged as always.')
    if (!whole) io.info(`Attempt ${carry.attempt - 1} left none, so ${fallback} too.`)
    return { whole, known: new Set([...manifest.pies, ...entries.map((entry) => entry.pieDigest)]) }
  } catch (error) {
    if (signal.aborted) throw error
    io.warning(
      `The journal of an earlier attempt could not be read back from the Actions cache (${(error as Error).message.split('\n')[0]}); ${fallback}.`,
    )
    return undefined
  } finally {
    await rm(carry.staging, { recursive: true, force: true }).catch(() => {})
  }
}

type Answers = {
  /** The PIEs this attempt's journal answers for (with the entries' own). */
  answered: ReadonlySet<string>
  /** Those followed outside the journal: the next attempt looks them up. */
  reusedOutside: ReadonlySet<string>
  /** Those of them that passed: their entries are not carried on. */
  settled: ReadonlySet<string>
  /** An earlier attempt's journal was read back: this one's is saved even when empty, to close it. */
  restored: boolean
  /** The step was stopped: a PIE it prepared and did not submit is worth saying so. */
  stopped: boolean
}

/**
 * Saves the journal's entries under `key`, with the PIEs it answers for: only when a re-run
 * needs something (an entry; a stopped step's PIEs, prepared and not submitted, which the next
 * attempt then need not look up) or an earlier attempt's record is to be closed (so the next
 * attempt reads this one's, not an older one). A step that ended with nothing open saves nothing.
 * `done` once saved, or when there is nothing to save or nowhere to save it (the post step then
 * need not try); `failed` when the cache refused it.
 */
async function saveJournal(
  io: ActionIO,
  carry: JournalCarry,
  key: string,
  answers: Answers,
): Promise<'done' | 'failed'> {
  let entries: JournalEntry[]
  try {
    entries = (await validEntries(carry.dir)).filter((entry) => !answers.settled.has(entry.pieDigest))
  } catch {
    entries = []
  }
  const pies = [...new Set([...answers.answered, ...entries.map((entry) => entry.pieDigest)])]
    .filter((pie) => !answers.reusedOutside.has(pie))
    .sort()
  if (entries.length === 0 && !answers.restored && !(answers.stopped && pies.length > 0)) return 'done'
  if (!cacheReachable()) {
    io.debug(`The journal was not saved for a re-run: ${NO_CACHE}.`)
    return 'done'
  }
  try {
    await rm(carry.staging, { recursive: true, force: true })
    const staged = new SubmissionJournal(carry.staging)
    await staged.open()
    for (const entry of entries) await staged.write(entry)
    await writeFile(join(carry.staging, MANIFEST), JSON.stringify({ format: FORMAT, attempt: carry.attempt, pies }), {
      mode: 0o600,
    })
    const { saveCache } = await import('@actions/cache')
    const id = await saveCache([carry.staging], key)
    if (id === -1) {
      io.warning(
        'The journal could not be saved to the Actions cache (see above); a re-run of this job looks up the queries still running instead.',
      )
      return 'failed'
    }
    io.info(
      `Saved the journal to the Actions cache for a re-run of this job: ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} (${key}).`,
    )
    return 'done'
  } catch (error) {
    io.warning(
      `The journal could not be saved to the Actions cache (${(error as Error).message.split('\n')[0]}); a re-run of this job looks up the queries still running instead.`,
    )
    return 'failed'
  } finally {
    await rm(carry.staging, { recursive: true, force: true }).catch(() => {})
  }
}

/** The entries of a journal folder a re-run can follow: whole, recent, still open, each the digest of its own parts. */
async function validEntries(dir: string): Promise<JournalEntry[]> {
  const journal = new SubmissionJournal(dir)
  const listed = await journal.list()
  const entries: JournalEntry[] = []
  for (const item of listed.slice(0, MAX_ENTRIES)) {
    const entry = item.entry
    if (!entry || item.problem || item.expired || !isEntry(entry) || entry.key !== item.key) continue
    if (journal.keyOf(entry) !== entry.key) continue
    entries.push(entry)
  }
  return entries
}

function isEntry(entry: Partial<JournalEntry>): entry is JournalEntry {
  return (
    entry.version === 1 &&
    (entry.state === 'submitting' || entry.state === 'submitted') &&
    typeof entry.startedAt === 'number' &&
    typeof entry.pieDigest === 'string' &&
    /^[0-9a-f]{64}$/.test(entry.pieDigest) &&
    typeof entry.service === 'string' &&
    (entry.endpoint === 'l2-pie' || entry.endpoint === 'general') &&
    typeof entry.params === 'object' &&
    entry.params !== null &&
    (entry.provingQueryId === undefined ||
      (typeof entry.provingQueryId === 'string' &&
        entry.provingQueryId.length > 0 &&
        entry.provingQueryId.length <= 200))
  )
}

/** Copies the entries read back into this attempt's journal; an entry this attempt already has is its own, and kept. */
async function copyEntries(staging: string, dir: string): Promise<JournalEntry[]> {
  const entries = await validEntries(staging)
  const journal = new SubmissionJournal(dir)
  await journal.open()
  const copied: JournalEntry[] = []
  for (const entry of entries) {
    if ((await journal.read(entry.key)) !== undefined) continue
    // Never a lock: the owner recorded is an earlier attempt's runner, gone.
    await journal.write(entry)
    copied.push(entry)
  }
  return copied
}

async function readManifest(staging: string): Promise<{ attempt: number; pies: string[] } | undefined> {
  try {
    const manifest = JSON.parse(await readFile(join(staging, MANIFEST), 'utf8')) as {
      format?: unknown
      attempt?: unknown
      pies?: unknown
    }
    if (manifest.format !== FORMAT || !Number.isInteger(manifest.attempt) || !Array.isArray(manifest.pies))
      return undefined
    const pies = manifest.pies
      .filter((pie): pie is string => typeof pie === 'string' && /^[0-9a-f]{64}$/.test(pie))
      .slice(0, MAX_ENTRIES)
    return { attempt: manifest.attempt as number, pies }
  } catch {
    return undefined
  }
}

/** The restore, or the signal's abort: a cancelled step does not wait for the cache. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason)
  return new Promise<T>((resolve, reject) => {
    const stop = () => reject(signal.reason)
    signal.addEventListener('abort', stop, { once: true })
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop))
  })
}
