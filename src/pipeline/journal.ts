import { createHash, randomUUID } from 'node:crypto'
import { chmod, link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { homedir, hostname } from 'node:os'
import { join } from 'node:path'
import { describeRetry, type ProvingClient, type RetriedQuery } from '../clients/proving.ts'
import { AbortedError, AmbiguousSubmissionError, ProvingKitError } from '../core/errors.ts'
import type { Logger } from '../core/runtime.ts'
import { mayHaveBeenProcessed } from '../core/submission.ts'

/**
 * The local submission journal: never pay twice without being told. Before a PIE is uploaded,
 * an entry keyed by the PIE's SHA-256, the service and the parameters is written to disk; it
 * records the query id once the service answers. A process killed mid-upload (a CI timeout, the
 * OOM killer: SIGKILL, no cleanup) leaves the entry behind, and the next run of the same
 * command finds it:
 * - the query id is known: it follows that query instead of submitting again; a FAILED one is
 *   retried when its error is retriable and fewer than 3 retries are used (the same query runs
 *   again, clients/proving/retries.ts), else it submits anew and says so (on the general
 *   submission the client moves to the next dedupId of the chain, clients/proving/dedup.ts
 *   `dedupIdAfterFailure`);
 * - the upload's outcome is unknown: on the general submission the dedupId settles it (the
 *   client looks it up; the service refuses a second query with it); on the L2 endpoints the
 *   caller's recent queries are listed: none created since the upload began, in the service's
 *   own time (the offset from its `Date` header, measured by the probe before the upload and
 *   recorded in the entry; else by the re-run's list request), means nothing was
 *   created, so it submits; otherwise it refuses, naming the candidates, until told `--new`.
 * Two runs at once: the run that submits holds `<key>.lock` (pid, host, the process's start
 * time), created whole by link(2), from before it reads the entry until it has reported the id.
 * Another run of the same key finds the lock: a live owner is waited for and its query followed
 * (every run leaves a `<key>.waiting.*` mark BEFORE it tries the lock, and removes it once the
 * lock is its own, so an owner that settles after a waiter saw its lock always sees that waiter
 * and keeps the id for it as a `settled` entry; a waiter whose owner ended without a recorded
 * query says so before it looks at the journal again); a dead one (same host, pid gone or reused by a process started at another time) has
 * its lock taken over. Every file is written under a temporary name of its own and renamed, in
 * a 0700 folder, 0600. A folder that cannot be written is a warning and the submission goes on
 * without a journal; a record that cannot be written after the upload never hides the query.
 * What remains: on the L2 endpoints a query created by the service while the caller creates
 * others (same key, after the upload began) is told apart by the candidates listed, not
 * automatically. An entry is removed once the command has reported the query id (or its wait
 * ended): only a killed run leaves one, and a deliberate second run after a finished one
 * submits anew. Journals live in the user's cache directory (CLI) or in RUNNER_TEMP per run and
 * attempt (the action), and entries older than 7 days are ignored.
 */

export type JournalParts = {
  /** SHA-256 of the pie.zip, hex. */
  pieDigest: string
  /** The service's origin. */
  service: string
  /** 'l2-pie' or 'general'. */
  endpoint: 'l2-pie' | 'general'
  /** Every parameter that changes what is proved or paid for. */
  params: Record<string, unknown>
}

/** The run that wrote an entry or holds a lock: told dead from alive on this machine. */
export type JournalOwner = {
  pid: number
  host: string
  /** The process's start as the kernel counts it (Linux: /proc/<pid>/stat), so a reused pid is told apart. */
  processStart?: string | undefined
  /** When it took the lock (ms since the epoch, this machine's clock). */
  since: number
}

export type JournalEntry = JournalParts & {
  version: 1
  key: string
  startedAt: number
  /**
   * `settled`: the run reported its query and ended while another run waited for it; only a
   * run that waited (see `waitForOwner`) follows it, any later one submits anew.
   */
  state: 'submitting' | 'submitted' | 'settled'
  provingQueryId?: string | undefined
  owner?: JournalOwner | undefined
  /** The service's clock minus ours when the upload began, from its `Date` header (ms). */
  serviceOffsetMs?: number | undefined
}

const MAX_AGE_MS = 7 * 24 * 3_600_000
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
/** How often a run waiting for another one's query looks again. */
const WAIT_POLL_MS = 100

/** The CLI's journal folder: PROVING_JOURNAL_DIR, else the platform's user cache directory. */
export function defaultJournalDir(env: Record<string, string | undefined>): string {
  if (env.PROVING_JOURNAL_DIR) return env.PROVING_JOURNAL_DIR
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'proving-kit', 'submissions')
  if (process.platform === 'darwin') return join(env.HOME ?? homedir(), 'Library', 'Caches', 'proving-kit', 'submissions')
  return join(env.XDG_CACHE_HOME || join(env.HOME ?? homedir(), '.cache'), 'proving-kit', 'submissions')
}

/** The action's: RUNNER_TEMP, one folder per workflow run and attempt. */
export function actionJournalDir(env: Record<string, string | undefined>): string | undefined {
  if (!env.RUNNER_TEMP) return undefined
  return join(env.RUNNER_TEMP, 'proving-kit', 'journal', `${env.GITHUB_RUN_ID ?? 'run'}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`)
}

/** A submission whose outcome the journal cannot settle: it was not sent again. */
export class UnresolvedSubmissionError extends AmbiguousSubmissionError {
  override name = 'UnresolvedSubmissionError'
}

/** This process as a journal owner (its kernel start time read once). */
let self: Promise<JournalOwner> | undefined
function currentOwner(): Promise<JournalOwner> {
  self ??= processStartOf(process.pid).then((processStart) => ({ pid: process.pid, host: hostname(), processStart, since: Date.now() }))
  return self
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined off Linux. */
async function processStartOf(pid: number): Promise<string | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count from its closing one.
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

/**
 * Whether the run that owns a lock still runs. Dead: on this machine, its pid is gone (ESRCH)
 * or now belongs to a process started at another time. An owner on another machine (a shared
 * home folder) cannot be checked and counts as alive.
 */
export async function ownerIsAlive(owner: JournalOwner): Promise<boolean> {
  if (owner.host !== hostname()) return true
  try {
    process.kill(owner.pid, 0)
  } catch (error) {
    // EPERM: the pid lives, under another user.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
  }
  if (owner.processStart === undefined) return true
  const start = await processStartOf(owner.pid)
  return start === undefined || start === owner.processStart
}

function describeOwner(owner: JournalOwner): string {
  return `pid ${owner.pid} on ${owner.host}, since ${new Date(owner.since).toISOString()}`
}

export class SubmissionJournal {
  readonly dir: string
  readonly #now: () => number

  constructor(dir: string, now: () => number = Date.now) {
    this.dir = dir
    this.#now = now
  }

  keyOf(parts: JournalParts): string {
    const params = Object.keys(parts.params)
      .sort()
      .map((name) => [name, parts.params[name] ?? null])
    const text = JSON.stringify([parts.pieDigest, parts.service, parts.endpoint, params])
    return createHash('sha256').update(text).digest('hex').slice(0, 32)
  }

  pathOf(key: string): string {
    return join(this.dir, `${key}.json`)
  }

  lockPathOf(key: string): string {
    return join(this.dir, `${key}.lock`)
  }

  /**
   * Creates the folder (0700: entries hold query ids, and a query's record and artifact links
   * need no key) and tightens one left open by an older version.
   */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const info = await stat(this.dir)
    if ((info.mode & 0o077) !== 0 && info.uid === process.getuid?.()) await chmod(this.dir, 0o700).catch(() => {})
  }

  async read(key: string): Promise<JournalEntry | undefined> {
    let text: string
    try {
      text = await readFile(this.pathOf(key), 'utf8')
    } catch {
      return undefined
    }
    try {
      const entry = JSON.parse(text) as JournalEntry
      if (entry?.version !== 1 || entry.key !== key || typeof entry.startedAt !== 'number') return undefined
      if (this.#now() - entry.startedAt > MAX_AGE_MS) return undefined
      return entry
    } catch {
      // A torn write (killed mid-write): treat as "an upload may have started".
      return { version: 1, key, startedAt: 0, state: 'submitting', pieDigest: '', service: '', endpoint: 'l2-pie', params: {} }
    }
  }

  /** Atomic: a temporary file of its own (unique per write, 0600), then a rename over the entry. */
  async write(entry: JournalEntry): Promise<void> {
    await this.#writeAtomically(this.pathOf(entry.key), JSON.stringify(entry, null, 2))
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true })
  }

  async #writeAtomically(path: string, text: string): Promise<void> {
    const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`
    try {
      await writeFile(temporary, text, { mode: 0o600, flag: 'wx' })
      await rename(temporary, path)
    } catch (error) {
      await rm(temporary, { force: true })
      throw error
    }
  }

  /**
   * Takes the key's lock, or names the live run that holds it. The lock file is written whole
   * under a temporary name and linked into place (link fails when the name exists), so nobody
   * reads half an owner. A lock whose owner died is removed, then taken.
   */
  async lock(key: string): Promise<{ taken: true; release: () => Promise<void> } | { taken: false; owner: JournalOwner }> {
    const owner = await currentOwner()
    const path = this.lockPathOf(key)
    for (;;) {
      const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`
      const mine = JSON.stringify({ ...owner, since: Date.now() })
      await writeFile(temporary, mine, { mode: 0o600, flag: 'wx' })
      try {
        await link(temporary, path)
        return { taken: true, release: releaseOnce(path, mine) }
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      } finally {
        await rm(temporary, { force: true })
      }
      const text = await readFile(path, 'utf8').catch(() => undefined)
      if (text === undefined) continue
      const holder = parseOwner(text)
      if (holder && (await ownerIsAlive(holder))) return { taken: false, owner: holder }
      await this.#removeStaleLock(path, text)
    }
  }

  /** Moves a dead owner's lock aside; puts it back if another run replaced it in the meantime. */
  async #removeStaleLock(path: string, seen: string): Promise<void> {
    const aside = `${path}.${process.pid}.${randomUUID()}.stale`
    try {
      await rename(path, aside)
    } catch {
      return
    }
    const moved = await readFile(aside, 'utf8').catch(() => seen)
    if (moved !== seen) await link(aside, path).catch(() => {})
    await rm(aside, { force: true })
  }

  /** Marks this process as waiting for the key's owner; the owner then keeps its query id for it. */
  async markWaiting(key: string): Promise<() => Promise<void>> {
    const path = join(this.dir, `${key}.waiting.${process.pid}.${randomUUID()}`)
    await writeFile(path, '', { mode: 0o600, flag: 'wx' })
    return () => rm(path, { force: true })
  }

  async hasWaiters(key: string): Promise<boolean> {
    const names = await readdir(this.dir).catch(() => [] as string[])
    return names.some((name) => name.startsWith(`${key}.waiting.`))
  }

  /**
   * The owner's closing: releases the lock first, then keeps the reported id for the runs that
   * waited (they registered before they saw the lock, so none is missed), or forgets the entry.
   */
  async settle(key: string, release: () => Promise<void>): Promise<void> {
    try {
      await release()
      const entry = await this.read(key)
      // Signed by this run: a waiter follows only the run it waited for, never an older leftover.
      if (entry?.provingQueryId && (await this.hasWaiters(key))) {
        await this.write({ ...entry, state: 'settled', owner: await currentOwner() })
        // The last waiter may have left while this was written, having read `submitted`: look again.
        if (!(await this.hasWaiters(key))) await this.remove(key)
      } else {
        await this.remove(key)
      }
    } catch {
      // Best effort: the id was reported; an entry left behind is followed by a re-run, never paid twice.
    }
  }
}

/** Removes the lock once, and only while it is still this run's (another may hold it after a release). */
function releaseOnce(path: string, mine: string): () => Promise<void> {
  let released = false
  return async () => {
    if (released) return
    released = true
    if ((await readFile(path, 'utf8').catch(() => undefined)) === mine) await rm(path, { force: true })
  }
}

function sameProcess(a: JournalOwner, b: JournalOwner): boolean {
  return a.pid === b.pid && a.host === b.host && a.processStart === b.processStart
}

function parseOwner(text: string): JournalOwner | undefined {
  try {
    const owner = JSON.parse(text) as JournalOwner
    return typeof owner?.pid === 'number' && typeof owner.host === 'string' ? owner : undefined
  } catch {
    return undefined
  }
}

export type JournaledSubmission = {
  provingQueryId: string
  deduplicated?: boolean | undefined
  resumed?: boolean
  /** The journal's query had FAILED and was retried: it is the one followed. */
  retried?: RetriedQuery | undefined
  /** Forgets the entry once the caller has reported the id (or its wait ended): only a killed run leaves one. */
  settle?: (() => Promise<void>) | undefined
}

type JournalOptions = {
  journal: SubmissionJournal
  parts: JournalParts
  client: ProvingClient
  forceNew: boolean
  logger: Logger
  signal?: AbortSignal | undefined
  submit: () => Promise<JournaledSubmission>
}

/**
 * Submits through the journal: waits for a live run of the same PIE and parameters and follows
 * its query; resolves an entry left by an earlier run (see above); writes `submitting` before
 * the upload and the id after it. `forceNew` (--new) submits whatever the journal says, and says
 * so. A journal folder that cannot be written is a warning: the submission goes on without it.
 */
export async function submitWithJournal(options: JournalOptions): Promise<JournaledSubmission> {
  const { journal, parts, logger } = options
  const key = journal.keyOf(parts)
  let lock: Awaited<ReturnType<SubmissionJournal['lock']>>
  let unmark: (() => Promise<void>) | undefined
  try {
    await journal.open()
    // The waiting mark first, the lock after: an owner that settles after this run saw its lock
    // finds the mark (it was written before the look), so it keeps its id for this run. Marked
    // only after seeing the lock, this run could miss an owner that settled in between and find
    // neither entry nor lock, then pay twice.
    unmark = await journal.markWaiting(key)
    lock = await journal.lock(key)
  } catch (error) {
    await unmark?.().catch(() => {})
    if (!isFileSystemError(error)) throw error
    logger.warn(
      `The submission journal folder ${journal.dir} cannot be used (${(error as NodeJS.ErrnoException).code}); submitting without it, so a re-run after this one is killed cannot tell whether it created a query. Set PROVING_JOURNAL_DIR to a writable folder.`,
    )
    return options.submit()
  }
  if (lock.taken) {
    // Not a waiter: an owner's own mark would make it keep a settled entry for nobody.
    await unmark().catch(() => {})
  } else {
    if (options.forceNew) {
      await unmark().catch(() => {})
      logger.warn(`Another run (${describeOwner(lock.owner)}) is submitting this PIE to ${parts.service}; --new: submitting it again, as a new query.`)
      return options.submit()
    }
    const followed = await waitForOwner(key, lock.owner, options, unmark)
    if (followed) return followed
    // The owner ended without a query (sure that none was created, or it left an unfinished entry).
    return submitWithJournal(options)
  }
  const release = lock.release
  try {
    return await submitLocked(key, options, release)
  } catch (error) {
    await release().catch(() => {})
    throw error
  }
}

async function submitLocked(key: string, options: JournalOptions, release: () => Promise<void>): Promise<JournaledSubmission> {
  const { journal, parts, logger } = options
  const settle = () => journal.settle(key, release)
  const found = await journal.read(key)
  // A settled entry is a finished run's, kept only for the runs that waited for it.
  const previous = found?.state === 'settled' ? undefined : found
  const where = `(journal ${journal.pathOf(key)})`
  if (previous && options.forceNew) {
    logger.warn(`This PIE was submitted to ${parts.service} before ${where}; --new: submitting it again, as a new query.`)
  } else if (previous?.provingQueryId) {
    const failed = await hasFailed(previous.provingQueryId, options)
    if (!failed) {
      logger.warn(
        `This PIE was already submitted to ${parts.service} with these parameters, as query ${previous.provingQueryId} ${where}; following it instead of paying again. Pass --new to submit it anyway.`,
      )
      return { provingQueryId: previous.provingQueryId, resumed: true, settle }
    }
    // Retriable (fewer than 3 retries used): the same query runs again; nothing new is paid for.
    const retry = await options.client.retryFailedQuery(previous.provingQueryId, { signal: options.signal })
    if (retry.retried) {
      logger.warn(`${describeRetry(previous.provingQueryId, retry).replace(/\.$/, '')} ${where}.`)
      return { provingQueryId: previous.provingQueryId, resumed: true, retried: retry, settle }
    }
    logger.warn(`This PIE's earlier query ${previous.provingQueryId} FAILED ${where} and cannot be retried (${retry.reason}); submitting it again, as a new query.`)
  } else if (previous) {
    await resolveUnfinished(previous, options, where)
  }
  // The client probes the service once before any submission: done now, its answer's `Date`
  // gives the service's clock for the entry (nothing extra is sent: the submission skips it then).
  await options.client.checkService({ signal: options.signal })
  const owner = await currentOwner()
  const entry: JournalEntry = { version: 1, key, ...parts, startedAt: Date.now(), state: 'submitting', owner, serviceOffsetMs: options.client.http.serviceOffsetMs() }
  try {
    await journal.write(entry)
  } catch (error) {
    if (!isFileSystemError(error)) throw error
    await release()
    logger.warn(
      `The submission journal entry ${journal.pathOf(key)} could not be written (${(error as NodeJS.ErrnoException).code}); submitting without it. Set PROVING_JOURNAL_DIR to a writable folder.`,
    )
    return options.submit()
  }
  let submitted: JournaledSubmission
  try {
    submitted = await options.submit()
  } catch (error) {
    // Sure that nothing was created: forget the entry. Unsure (a lost answer, a cancelled
    // upload): keep it, so the next run checks before paying again.
    if (!(error instanceof AbortedError) && !(error instanceof AmbiguousSubmissionError) && !mayHaveBeenProcessed(error)) {
      // A journal that cannot forget never replaces the submission's own error.
      await journal.remove(key).catch(() => {})
    }
    throw error
  }
  try {
    await journal.write({ ...entry, state: 'submitted', provingQueryId: submitted.provingQueryId })
  } catch (error) {
    // The query exists: a journal that cannot record it must not hide it. Its entry stays
    // `submitting` when this run ends (only the lock goes): a run waiting for this one, or the
    // next, finds an unfinished submission and asks the service before paying again.
    logger.warn(
      `Query ${submitted.provingQueryId} was created, but the journal could not record it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); a re-run asks the service for it before submitting.`,
    )
    return { ...submitted, settle: () => release().catch(() => {}) }
  }
  return { ...submitted, settle }
}

/**
 * Another live run holds the lock: wait for the query id it records and follow that query.
 * `unmark` removes this run's waiting mark, written before it looked at the lock (so the owner
 * keeps its id for this run however early it settles). Undefined when the owner ended (or died)
 * without one, said in a warning: the caller starts over, and finds nothing (the owner was sure
 * nothing was created) or the owner's unfinished entry.
 */
async function waitForOwner(
  key: string,
  owner: JournalOwner,
  options: JournalOptions,
  unmark: () => Promise<void>,
): Promise<JournaledSubmission | undefined> {
  const { journal, parts, logger, signal } = options
  try {
    logger.warn(
      `Another run (${describeOwner(owner)}) is submitting this PIE to ${parts.service} with these parameters (lock ${journal.lockPathOf(key)}); waiting for its query instead of paying twice.`,
    )
    for (;;) {
      const entry = await journal.read(key)
      // The owner's own record at once; one it followed (a killed run's) once it let go.
      if (entry?.provingQueryId && entry.state !== 'submitting' && entry.owner && sameProcess(entry.owner, owner)) {
        logger.warn(`Following query ${entry.provingQueryId}, submitted by the other run (${describeOwner(owner)}); nothing was sent again.`)
        return { provingQueryId: entry.provingQueryId, resumed: true, settle: () => forgetSettled(journal, key, unmark) }
      }
      const text = await readFile(journal.lockPathOf(key), 'utf8').catch(() => undefined)
      const holder = text === undefined ? undefined : parseOwner(text)
      const same = holder !== undefined && sameProcess(holder, owner) && holder.since === owner.since
      if (!same || !(await ownerIsAlive(owner))) {
        // Looked at once more: the id may have been recorded just before the lock went.
        const last = await journal.read(key)
        if (last?.provingQueryId && last.state !== 'submitting' && last.owner && sameProcess(last.owner, owner)) {
          logger.warn(`Following query ${last.provingQueryId}, reported by the other run (${describeOwner(owner)}) as it ended; nothing was sent again.`)
          return { provingQueryId: last.provingQueryId, resumed: true, settle: () => forgetSettled(journal, key, unmark) }
        }
        await unmark()
        logger.warn(
          `The other run (${describeOwner(owner)}) ended without recording a query for this PIE (journal ${journal.pathOf(key)}); looking at the journal again: this run submits only if it shows that no query was created.`,
        )
        return undefined
      }
      if (signal?.aborted) throw new AbortedError('Interrupted while waiting for another run\'s submission of this PIE; nothing was sent.')
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS))
    }
  } catch (error) {
    await unmark()
    throw error
  }
}

/** A follower's closing: its mark goes, and the last one out removes a settled entry. */
async function forgetSettled(journal: SubmissionJournal, key: string, unmark: () => Promise<void>): Promise<void> {
  try {
    await unmark()
    const entry = await journal.read(key)
    if (entry?.state !== 'settled' || (await journal.hasWaiters(key))) return
    const lock = await journal.lock(key)
    if (!lock.taken) return
    if ((await journal.read(key))?.state === 'settled') await journal.remove(key)
    await lock.release()
  } catch {
    // Best effort: a settled entry left behind is ignored by every later run.
  }
}

/** Whether the journal's query ended FAILED (then a re-run submits anew). Unreadable: not known to have failed. */
async function hasFailed(queryId: string, options: JournalOptions): Promise<boolean> {
  try {
    const { provingQuery } = await options.client.readQuery(queryId, { signal: options.signal })
    return provingQuery.status === 'FAILED'
  } catch (error) {
    // A read that fails says nothing about the query: follow it. A cancellation is the user's.
    if (error instanceof AbortedError) throw error
    return false
  }
}

function isFileSystemError(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && /^E[A-Z]+$/.test(code) && !(error instanceof ProvingKitError)
}

async function resolveUnfinished(previous: JournalEntry, options: JournalOptions, where: string): Promise<void> {
  const { parts, client, logger } = options
  if (parts.endpoint === 'general') {
    // The dedupId settles it: the client looks it up and the service refuses a second query.
    logger.warn(`An earlier upload of this PIE to ${parts.service} did not finish ${where}; its dedupId decides whether a query exists.`)
    return
  }
  let candidates: { id: string; createdAt: string | null | undefined }[]
  let since: number
  try {
    const page = await client.listQueries({ limit: 20, offset: 0, signal: options.signal })
    // The service stamps createdAt with its own clock: compare in its time, from the offset
    // measured when the upload began (or now), else allow for any skew.
    const offset = previous.serviceOffsetMs ?? client.http.serviceOffsetMs()
    since = offset === undefined ? previous.startedAt - SKEW_MS : previous.startedAt + offset - OFFSET_MARGIN_MS
    candidates = page.provingQueries
      .map((record) => ({ id: record.id, createdAt: record.createdAt ?? null }))
      .filter((record) => record.createdAt === null || !(Date.parse(record.createdAt) < since))
  } catch (error) {
    throw new UnresolvedSubmissionError(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and the list of your queries could not be read to check it; nothing was sent. Check \`proving query list\`, then rerun with --new if no query came of it.`,
      { cause: error },
    )
  }
  if (candidates.length === 0) {
    logger.warn(`An earlier upload of this PIE to ${parts.service} did not finish ${where}; the service lists no query since the upload began (by its own clock), so it is submitted now, once.`)
    return
  }
  const shown = candidates.slice(0, 5).map((record) => record.id).join(', ')
  throw new UnresolvedSubmissionError(
    `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and your key has ${candidates.length} quer${candidates.length === 1 ? 'y' : 'ies'} since the upload began (${shown}); one may be it. Nothing was sent. Follow it with \`proving query wait <id>\`, or rerun with --new to submit anyway.`,
  )
}
