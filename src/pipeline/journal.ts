import { createHash, randomUUID } from 'node:crypto'
import { constants, type Stats } from 'node:fs'
import { chmod, link, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { describeRetry, type ProvingClient, type RetriedQuery } from '../clients/proving.ts'
import { AbortedError, AmbiguousSubmissionError, InvalidInputError, ProvingKitError, WaitTimeoutError } from '../core/errors.ts'
import type { Logger } from '../core/runtime.ts'
import type { PieInspection } from '../pie/index.ts'
import type { QueryRecordL } from '../schemas/proving.ts'
import { mayHaveBeenProcessed } from '../core/submission.ts'
import { abortable } from '../core/abortable.ts'
import { userCacheDir } from '../core/cache-dir.ts'
import { setTimeout as sleep } from 'node:timers/promises'

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
 * its lock taken over, and so has one whose owner cannot be checked from here (another host, or
 * no process start time: macOS) once it is older than `UNVERIFIABLE_LOCK_MS`, saying so. A wait
 * for another run ends at the caller's timeout and at once on its signal. Every file is written
 * under a temporary name of its own and renamed, in a 0700 folder of this user (a folder of
 * another user is refused), 0600; an entry or lock that is not a regular file (a symlink, a FIFO,
 * a folder) is refused naming it, and never opened in a way that could block. A folder that
 * cannot be written is a warning and the submission goes on without a journal; a record that
 * cannot be written after the upload never hides the query.
 * What remains: on the L2 endpoints a query created by the service while the caller creates
 * others (same key, after the upload began) is told apart by the candidates listed, not
 * automatically. An entry is removed only once the statement's outcome is settled: its wait saw
 * the query DONE and the gate ran (`settle`), or the submission surely failed. A run that ends
 * otherwise (interrupted by SIGINT or SIGTERM, a timeout, a dropped connection, no `--wait`, a
 * FAILED query) keeps it (`keep`): the same command again follows that query, saying so, instead
 * of paying again (or, FAILED, says so and submits anew). `proving journal list` and `proving journal clear` show and remove entries. Journals
 * live in the user's cache directory (CLI) or in RUNNER_TEMP per run and attempt (the action),
 * and entries older than 7 days are ignored.
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

/** One key of the folder, as `proving journal list` shows it. */
export type JournalListing = {
  key: string
  path: string
  entry?: JournalEntry | undefined
  /** Older than 7 days: ignored by every run. */
  expired?: boolean | undefined
  lock?: { owner?: JournalOwner | undefined; status: 'alive' | 'dead' | 'expired' } | undefined
  /** Why the entry or lock cannot be used (not a regular file, unreadable). */
  problem?: string | undefined
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
/**
 * A lock whose owner cannot be checked from this machine (written on another host, or without a
 * process start time, as on macOS) is taken over once it is this old: the lock is held from
 * before the upload until the id is recorded (a run that waits follows the id as soon as it is),
 * and an hour is more than any upload the service takes (its 4 GiB limit at 10 Mbit/s).
 */
export const UNVERIFIABLE_LOCK_MS = 60 * 60_000

/** The CLI's journal folder: PROVING_JOURNAL_DIR, else the platform's user cache directory. */
export function defaultJournalDir(env: Record<string, string | undefined>): string {
  return env.PROVING_JOURNAL_DIR || userCacheDir(env, 'submissions')
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
 * Whether the run that owns a lock still runs. `dead`: on this machine, its pid is gone (ESRCH)
 * or now belongs to a process started at another time. An owner that cannot be checked (on
 * another machine: a shared home folder, a container's random hostname; or a live pid with no
 * start time to compare) counts as alive until its lock is `UNVERIFIABLE_LOCK_MS` old: then
 * `expired`.
 */
export async function ownerStatus(owner: JournalOwner, now: number = Date.now()): Promise<'alive' | 'dead' | 'expired'> {
  if (owner.host === hostname()) {
    try {
      process.kill(owner.pid, 0)
    } catch (error) {
      // EPERM: the pid lives, under another user.
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return 'dead'
    }
    if (owner.processStart !== undefined) {
      const start = await processStartOf(owner.pid)
      if (start !== undefined) return start === owner.processStart ? 'alive' : 'dead'
    }
  }
  return now - owner.since > UNVERIFIABLE_LOCK_MS ? 'expired' : 'alive'
}

/** `ownerStatus` is `alive`. */
export async function ownerIsAlive(owner: JournalOwner): Promise<boolean> {
  return (await ownerStatus(owner)) === 'alive'
}

/**
 * The text of a journal file, undefined when there is none. Opened without following a symlink
 * and without blocking (a FIFO would hold the read forever), then refused unless it is a regular
 * file: a lock or entry planted as a link or a pipe never steers a run.
 */
async function readRegular(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    // O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD).
    if (code === 'ELOOP' || code === 'EMLINK') throw notRegular(path, 'a symbolic link')
    throw error
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw notRegular(path, kindOf(info))
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a folder'
  if (info.isFIFO()) return 'a named pipe (FIFO)'
  if (info.isSocket()) return 'a socket'
  if (info.isSymbolicLink()) return 'a symbolic link'
  return 'a device or other special file'
}

/** A journal file that is not a regular file: refused, naming it (nothing was sent). */
class JournalFileError extends InvalidInputError {
  override name = 'JournalFileError'
}

function notRegular(path: string, kind: string): JournalFileError {
  return new JournalFileError(
    `The submission journal file ${path} is ${kind}, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
    { input: 'PROVING_JOURNAL_DIR', nextStep: { kind: 'clear-journal' } },
  )
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
   * need no key) and tightens one left open by an older version. A folder of another user (say
   * a symlink to someone's 0777 folder) is refused: whoever owns it could plant locks and
   * entries.
   */
  async open(): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 })
    const info = await stat(this.dir)
    const uid = process.getuid?.()
    if (uid !== undefined && info.uid !== uid) {
      throw new InvalidInputError(
        `The submission journal folder ${this.dir} belongs to another user (uid ${info.uid}, not ${uid}): refused, since its owner could plant locks and entries; nothing was sent. Set PROVING_JOURNAL_DIR to a folder of your own.`,
        { input: 'PROVING_JOURNAL_DIR' },
      )
    }
    if ((info.mode & 0o077) !== 0) await chmod(this.dir, 0o700).catch(() => {})
  }

  async read(key: string): Promise<JournalEntry | undefined> {
    let text: string | undefined
    try {
      text = await readRegular(this.pathOf(key))
    } catch (error) {
      if (error instanceof JournalFileError) throw error
      return undefined
    }
    if (text === undefined) return undefined
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

  /**
   * Every entry and lock in the folder, for `proving journal list`: an entry older than 7 days
   * is shown `expired` (every run ignores it), one that cannot be read says why.
   */
  async list(): Promise<JournalListing[]> {
    const names = await readdir(this.dir).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return [] as string[]
      throw error
    })
    const keys = new Set<string>()
    for (const name of names) {
      const match = /^([0-9a-f]{32})\.(json|lock)$/.exec(name)
      if (match) keys.add(match[1]!)
    }
    const listed: JournalListing[] = []
    for (const key of [...keys].sort()) {
      const item: JournalListing = { key, path: this.pathOf(key) }
      try {
        const text = await readRegular(this.pathOf(key))
        if (text !== undefined) {
          const entry = JSON.parse(text) as JournalEntry
          item.entry = entry
          item.expired = typeof entry.startedAt === 'number' && this.#now() - entry.startedAt > MAX_AGE_MS
        }
      } catch (error) {
        item.problem = error instanceof JournalFileError ? error.shortMessage : `unreadable (${(error as Error).message})`
      }
      try {
        const text = await readRegular(this.lockPathOf(key))
        const owner = text === undefined ? undefined : parseOwner(text)
        if (text !== undefined) item.lock = owner ? { owner, status: await ownerStatus(owner, this.#now()) } : { status: 'dead' }
      } catch (error) {
        item.problem ??= error instanceof JournalFileError ? error.shortMessage : `lock unreadable (${(error as Error).message})`
      }
      listed.push(item)
    }
    return listed
  }

  /**
   * Removes a key's entry, lock and waiting marks (`proving journal clear`). A lock held by a
   * live run of this machine is left alone (that run is submitting now): `{ live: owner }`.
   * Files that are not regular (planted links, pipes) are removed as names, never opened.
   */
  async clear(key: string): Promise<{ removed: string[]; live?: JournalOwner | undefined }> {
    const lockText = await readLock(this.lockPathOf(key)).catch(() => undefined)
    const owner = lockText === undefined ? undefined : parseOwner(lockText)
    if (owner && (await ownerStatus(owner, this.#now())) === 'alive' && owner.host === hostname()) return { removed: [], live: owner }
    const names = await readdir(this.dir).catch(() => [] as string[])
    const removed: string[] = []
    for (const name of names) {
      if (name === `${key}.json` || name === `${key}.lock` || name.startsWith(`${key}.waiting.`)) {
        await rm(join(this.dir, name), { force: true, recursive: true })
        removed.push(join(this.dir, name))
      }
    }
    return { removed }
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
  async lock(key: string, logger?: Logger): Promise<{ taken: true; release: () => Promise<void> } | { taken: false; owner: JournalOwner }> {
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
      const text = await readLock(path)
      if (text === undefined) continue
      const holder = parseOwner(text)
      const status = holder ? await ownerStatus(holder) : 'dead'
      if (holder && status === 'alive') return { taken: false, owner: holder }
      if (holder && status === 'expired') {
        logger?.warn(
          `The lock ${path} of ${describeOwner(holder)} cannot be checked from here (another host, or no process start time) and is older than ${UNVERIFIABLE_LOCK_MS / 60_000} minutes, longer than any upload takes: taken over.`,
        )
      }
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
    const moved = await readLock(aside).catch(() => seen)
    if (moved !== seen) await link(aside, path).catch(() => {})
    await rm(aside, { force: true })
  }

  /** Marks this process as waiting for the key's owner; the owner then keeps its query id for it. */
  async markWaiting(key: string): Promise<() => Promise<void>> {
    const path = join(this.dir, `${key}.waiting.${process.pid}.${randomUUID()}`)
    await writeFile(path, '', { mode: 0o600, flag: 'wx' })
    return () => rm(path, { force: true })
  }

  /**
   * Whether a run waits for the key's owner: a listing of the folder begun after this call (a
   * mark written before it is seen). Calls made while a listing runs share the next one, so a
   * batch that settles N entries at once lists the folder a few times, not N times (issue 35:
   * N listings of 2N files made a batch's end quadratic).
   */
  /**
   * The query ids the entries of this folder record: the queries this journal accounts for (a
   * killed batch's finished uploads, this run's). Read once per call (a re-run resolving an
   * unfinished upload), the entries read a few at a time.
   */
  async recordedQueryIds(): Promise<Set<string>> {
    const names = await readdir(this.dir).catch(() => [] as string[])
    const ids = new Set<string>()
    const entries = names.filter((name) => /^[0-9a-f]{32}\.json$/.test(name))
    for (let at = 0; at < entries.length; at += 32) {
      await Promise.all(
        entries.slice(at, at + 32).map(async (name) => {
          const entry = await this.read(name.slice(0, -'.json'.length))
          if (entry?.provingQueryId) ids.add(entry.provingQueryId)
        }),
      )
    }
    return ids
  }

  async hasWaiters(key: string): Promise<boolean> {
    const keys = await this.#waitingKeys()
    return keys.has(key)
  }

  /**
   * The keys with a waiting mark, from one listing begun after the call, shared by the calls made
   * meanwhile through any SubmissionJournal of the folder (a batch makes one per PIE).
   */
  #waitingKeys(): Promise<Set<string>> {
    let listings = folderListings.get(this.dir)
    if (!listings) {
      listings = { running: undefined, next: undefined }
      folderListings.set(this.dir, listings)
    }
    const state = listings
    state.next ??= (state.running ?? Promise.resolve()).then(() => {
      state.next = undefined
      const listing = waitingKeysIn(this.dir)
      state.running = listing
      // The last listing of a quiet folder forgets its state.
      void listing.then(() => {
        if (state.running === listing && state.next === undefined) folderListings.delete(this.dir)
      })
      return listing
    })
    return state.next
  }

  /**
   * The owner's closing: releases the lock first, then keeps the reported id for the runs that
   * waited (they registered before they saw the lock, so none is missed), or forgets the entry.
   */
  async settle(key: string, release: () => Promise<void>): Promise<void> {
    try {
      await release()
      // Read only when a run waits: a batch settling thousands of entries reads none of them.
      const entry = (await this.hasWaiters(key)) ? await this.read(key) : undefined
      // Signed by this run: a waiter follows only the run it waited for, never an older leftover.
      if (entry?.provingQueryId) {
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

/** Per folder: the listing under way, and the one the calls made meanwhile will share (see hasWaiters). */
const folderListings = new Map<string, { running: Promise<Set<string>> | undefined; next: Promise<Set<string>> | undefined }>()

/** The keys of a folder's waiting marks. */
async function waitingKeysIn(dir: string): Promise<Set<string>> {
  const names = await readdir(dir).catch(() => [] as string[])
  const keys = new Set<string>()
  for (const name of names) {
    const at = name.indexOf('.waiting.')
    if (at > 0) keys.add(name.slice(0, at))
  }
  return keys
}

/** Removes the lock once, and only while it is still this run's (another may hold it after a release). */
function releaseOnce(path: string, mine: string): () => Promise<void> {
  let released = false
  return async () => {
    if (released) return
    released = true
    if ((await readLock(path).catch(() => undefined)) === mine) await rm(path, { force: true })
  }
}

/** A lock's text; unreadable (EACCES, gone) is no lock, a lock that is not a regular file is refused. */
async function readLock(path: string): Promise<string | undefined> {
  try {
    return await readRegular(path)
  } catch (error) {
    if (error instanceof JournalFileError) throw error
    return undefined
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
  /**
   * The statement's outcome is settled (its wait saw the query DONE and the gate ran): forgets
   * the entry, so a later run of the same command submits anew.
   */
  settle?: (() => Promise<void>) | undefined
  /**
   * This run ends without that outcome (interrupted, timed out, not waited for, FAILED): lets the
   * lock go and keeps the entry with its query id, so the same command again follows that query
   * (or finds it FAILED and says so).
   */
  keep?: (() => Promise<void>) | undefined
}

type JournalOptions = {
  journal: SubmissionJournal
  parts: JournalParts
  client: ProvingClient
  forceNew: boolean
  /**
   * How the host lets a person submit anew whatever the journal says (the CLI: "pass --new"),
   * added to the lines that follow an earlier query; absent where there is no such way (the action).
   */
  submitAnew?: string | undefined
  logger: Logger
  signal?: AbortSignal | undefined
  /**
   * The caller compares the query's facts with this PIE before its gate passes (a wait with the
   * fact check): then the one query created since an unfinished upload began is followed.
   */
  factsChecked?: boolean | undefined
  /**
   * The PIE's inspection, when the caller has it: an unfinished upload with several queries
   * since it began (a killed batch's rows) is then settled by waiting for those queries and
   * comparing their facts with this PIE's, instead of refused.
   */
  inspection?: PieInspection | undefined
  /** How long a wait for another run's lock may last (the command's --timeout); unbounded when absent. */
  timeoutMs?: number | undefined
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
    lock = await journal.lock(key, logger)
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
      logger.warn(`Another run (${describeOwner(lock.owner)}) is submitting this PIE to ${parts.service}; asked to submit anew: submitting it again, as a new query.`)
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
    logger.warn(`This PIE was submitted to ${parts.service} before ${where}; asked to submit anew: submitting it again, as a new query.`)
  } else if (previous?.provingQueryId) {
    const failed = await hasFailed(previous.provingQueryId, options)
    if (!failed) {
      const by = previous.owner ? ` (${describeOwner(previous.owner)})` : ''
      logger.warn(
        `Following query ${previous.provingQueryId}, submitted by an earlier run${by} of this PIE to ${parts.service} with these parameters ${where}; nothing is sent again.${anewAdvice(options, 'submit it anyway, as a new paid query')}`,
      )
      return { provingQueryId: previous.provingQueryId, resumed: true, settle, keep: release }
    }
    // Retriable (fewer than 3 retries used): the same query runs again; nothing new is paid for.
    const retry = await options.client.retryFailedQuery(previous.provingQueryId, { signal: options.signal })
    if (retry.retried) {
      logger.warn(`${describeRetry(previous.provingQueryId, retry).replace(/\.$/, '')} ${where}.`)
      return { provingQueryId: previous.provingQueryId, resumed: true, retried: retry, settle }
    }
    logger.warn(`This PIE's earlier query ${previous.provingQueryId} FAILED ${where} and cannot be retried (${retry.reason}); submitting it again, as a new query.`)
  } else if (previous) {
    const candidate = await resolveUnfinished(previous, options, where, key)
    if (candidate) {
      const found: JournalEntry = { ...previous, startedAt: previous.startedAt || Date.now(), state: 'submitted', provingQueryId: candidate }
      // Recorded, so the next run follows it too; a record that cannot be written changes nothing now.
      await journal.write(found).catch(() => {})
      return { provingQueryId: candidate, resumed: true, settle, keep: release }
    }
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
    return { ...submitted, settle: () => release().catch(() => {}), keep: () => release().catch(() => {}) }
  }
  return { ...submitted, settle, keep: () => release().catch(() => {}) }
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
  const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs
  try {
    logger.warn(
      `Another run (${describeOwner(owner)}) is submitting this PIE to ${parts.service} with these parameters (lock ${journal.lockPathOf(key)}); waiting for its query instead of paying twice.`,
    )
    for (;;) {
      const entry = await journal.read(key)
      // The owner's own record at once; one it followed (a killed run's) once it let go.
      if (entry?.provingQueryId && entry.state !== 'submitting' && entry.owner && sameProcess(entry.owner, owner)) {
        logger.warn(`Following query ${entry.provingQueryId}, submitted by the other run (${describeOwner(owner)}); nothing was sent again.`)
        return { provingQueryId: entry.provingQueryId, resumed: true, settle: () => forgetSettled(journal, key, unmark), keep: () => unmark().catch(() => {}) }
      }
      const text = await readLock(journal.lockPathOf(key))
      const holder = text === undefined ? undefined : parseOwner(text)
      const same = holder !== undefined && sameProcess(holder, owner) && holder.since === owner.since
      if (!same || (await ownerStatus(owner)) !== 'alive') {
        // Looked at once more: the id may have been recorded just before the lock went.
        const last = await journal.read(key)
        if (last?.provingQueryId && last.state !== 'submitting' && last.owner && sameProcess(last.owner, owner)) {
          logger.warn(`Following query ${last.provingQueryId}, reported by the other run (${describeOwner(owner)}) as it ended; nothing was sent again.`)
          return { provingQueryId: last.provingQueryId, resumed: true, settle: () => forgetSettled(journal, key, unmark), keep: () => unmark().catch(() => {}) }
        }
        await unmark()
        logger.warn(
          `The other run (${describeOwner(owner)}) ended without recording a query for this PIE (journal ${journal.pathOf(key)}); looking at the journal again: this run submits only if it shows that no query was created.`,
        )
        return undefined
      }
      if (signal?.aborted) throw interruptedWaiting()
      if (Date.now() >= deadline) {
        throw new WaitTimeoutError(
          `Timed out after ${formatSeconds(options.timeoutMs!)} waiting for another run (${describeOwner(owner)}) to record its query for this PIE (lock ${journal.lockPathOf(key)}); nothing was sent. Run again once that run has reported its query; if it is gone for good, remove its lock (entry ${key}) from the journal.`,
          { nextStep: { kind: 'clear-journal', key } },
        )
      }
      // Ends at once on the signal (SIGINT, SIGTERM), and at the deadline.
      await sleep(Math.max(0, Math.min(WAIT_POLL_MS, deadline - Date.now())), undefined, { signal }).catch(() => {
        throw interruptedWaiting()
      })
    }
  } catch (error) {
    await unmark()
    throw error
  }
}

function interruptedWaiting(): AbortedError {
  return new AbortedError('Interrupted while waiting for another run\'s submission of this PIE; nothing was sent.')
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
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

/**
 * An earlier upload whose outcome is unknown: nothing to follow (returns undefined: submit), the
 * one query the service created since it began (returned: follow it, when the caller checks
 * its facts against this PIE before the gate passes), or a refusal naming the candidates.
 */
async function resolveUnfinished(previous: JournalEntry, options: JournalOptions, where: string, key: string): Promise<string | undefined> {
  const { parts, client, logger, journal } = options
  if (parts.endpoint === 'general') {
    // The dedupId settles it: the client looks it up and the service refuses a second query.
    logger.warn(`An earlier upload of this PIE to ${parts.service} did not finish ${where}; its dedupId decides whether a query exists.`)
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
    throw new UnresolvedSubmissionError(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and the list of your queries could not be read to check it; nothing was sent. Look among your queries; submit anew only if no query came of it.`,
      { cause: error, nextStep: { kind: 'look-for-query', thenSubmitAnew: true } },
    )
  }
  const { candidates, complete } = found
  if (candidates.length === 0 && complete) {
    logger.warn(`An earlier upload of this PIE to ${parts.service} did not finish ${where}; the service lists no query since the upload began (by its own clock), so it is submitted now, once.`)
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
      `Following query ${only!}, submitted by an earlier run whose upload of this PIE to ${parts.service} ended before its answer ${where}: the only query of your key since that upload began; its facts are checked against this PIE before the gate passes. Nothing is sent again.${anewAdvice(options, 'submit anyway')}`,
    )
    return only!
  }
  const shown = candidates.slice(0, 5).join(', ')
  const count = `${complete ? '' : 'at least '}${candidates.length} quer${candidates.length === 1 ? 'y' : 'ies'}`
  // Submitting anew is not offered: a query exists that may be this PIE's, and would be paid again.
  throw new UnresolvedSubmissionError(
    `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and your key has ${count} since the upload began that this journal did not record${candidates.length ? ` (${shown})` : ''}; one may be this PIE's. Nothing was sent, and nothing is while the entry stands (submitting anew would pay twice if one of them is this PIE's). Follow them; remove the entry only once you know that none of them is.`,
    { nextStep: { kind: 'follow-candidates', ids: candidates.slice(0, 5), key } },
  )
}

/**
 * What the journal in `dir` recorded asking for query `queryId` of `service` (an origin): the
 * L2 endpoint's kind, or the general submission's `result` (the service's default,
 * PROOF_GENERATION, when none was sent); undefined when no entry of the last 7 days names that
 * query. Read-only: `query wait` and the `wait` action gate a query against what was asked, and
 * an entry left by an interrupted run is the one place that still says it.
 */
export async function recordedResult(dir: string, queryId: string, service: string, now: number = Date.now()): Promise<string | undefined> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch {
    return undefined
  }
  for (const name of names.filter((file) => /^[0-9a-f]{32}\.json$/.test(file))) {
    try {
      const entry = JSON.parse(await readFile(join(dir, name), 'utf8')) as Partial<JournalEntry> | null
      if (entry?.version !== 1 || entry.provingQueryId !== queryId || entry.service !== service) continue
      if (typeof entry.startedAt !== 'number' || now - entry.startedAt > MAX_AGE_MS) continue
      if (entry.endpoint === 'l2-pie') return 'PROOF_VERIFICATION_ON_L2'
      const result = entry.params?.result
      return typeof result === 'string' ? result : 'PROOF_GENERATION'
    } catch {
      // An entry being written or torn: it names no query yet.
    }
  }
  return undefined
}

/** At most this many pages (of 100) are read to find the queries since an unfinished upload. */
const MAX_LIST_PAGES = 50

/**
 * The ids of the caller's queries created since `since()` (the service's clock) and not in
 * `known`, page after page (100 a page) until the list ends, a page holds none that recent
 * while every record so far came newest first (the order is not documented: it is checked, not
 * assumed), or MAX_LIST_PAGES: `complete` false then, the count a lower bound.
 */
async function queriesSince(options: JournalOptions, since: () => number, known: Set<string>): Promise<{ candidates: string[]; complete: boolean }> {
  const limit = 100
  const candidates: string[] = []
  let newestFirst = true
  let previous = Number.POSITIVE_INFINITY
  for (let page = 0, offset = 0; page < MAX_LIST_PAGES; page++) {
    const answer = await options.client.listQueries({ limit, offset, signal: options.signal })
    const records = answer.provingQueries
    // The offset is read after the first answer (its `Date` header), when the entry has none.
    const from = since()
    let recent = 0
    for (const record of records) {
      const createdAt = record.createdAt ?? null
      const time = createdAt === null ? Number.NaN : Date.parse(createdAt)
      if (Number.isNaN(time)) newestFirst = false
      else if (time > previous) newestFirst = false
      else previous = time
      if (time < from) continue
      recent++
      if (!known.has(record.id)) candidates.push(record.id)
    }
    offset += records.length
    const ended = typeof answer.total === 'number' ? offset >= answer.total : records.length < limit
    if (records.length === 0 || ended || (recent === 0 && newestFirst)) return { candidates, complete: true }
  }
  return { candidates, complete: false }
}

/** At most this many queries since an unfinished upload are waited for and matched by facts; more are refused as before. */
const MAX_MATCHED_CANDIDATES = 200

/**
 * Each query waited for once per client, whichever rows of a batch ask (a killed batch's rows
 * share their candidates): its final record, or the failure that ended the wait. The shared wait
 * ends when the last row waiting for it stops (Ctrl-C ends every row), so no poll outlives them.
 */
type SharedWait = { record: Promise<QueryRecordL>; stop: AbortController; waiting: number; pending: boolean }
const candidateWaits = new WeakMap<ProvingClient, Map<string, SharedWait>>()

function finalRecord(options: JournalOptions, id: string): Promise<QueryRecordL> {
  let waits = candidateWaits.get(options.client)
  if (!waits) candidateWaits.set(options.client, (waits = new Map()))
  const all = waits
  let shared = all.get(id)
  if (!shared) {
    const stop = new AbortController()
    const record = options.client.waitForQuery(id, { timeoutMs: options.timeoutMs, signal: stop.signal }).then((result) => result.provingQuery)
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
 * Settles an unfinished upload with several candidates (issue 35: a killed batch's rows): waits
 * for each to end and compares its facts with the PIE's. The one that proves this PIE is
 * followed (and gated later as any); when every candidate ended and none does, it is submitted,
 * once: a DONE query of another PIE has other facts, and a FAILED one carries none to tell whose
 * it is (so a FAILED query of this PIE is not retried here, as a recorded one would be: the new
 * submission takes its place). 'unknown' when a candidate could not be followed to its end: the
 * caller refuses, as before.
 */
async function matchByFacts(candidates: string[], inspection: PieInspection, options: JournalOptions, where: string): Promise<string | undefined | 'unknown'> {
  const { compareQueryFacts } = await import('../pie/index.ts')
  options.logger.warn(
    `An earlier upload of this PIE to ${options.parts.service} did not finish ${where}; your key has ${candidates.length} quer${candidates.length === 1 ? 'y' : 'ies'} since it began that this journal did not record. Waiting for ${candidates.length === 1 ? 'it' : 'them'} to end to compare the facts with this PIE's; nothing is sent meanwhile.`,
  )
  const settled = await Promise.allSettled(
    candidates.map(async (id) => {
      const record = await finalRecord(options, id)
      return { id, record, proves: record.status === 'DONE' && compareQueryFacts(record, inspection).ok }
    }),
  )
  if (options.signal?.aborted) throw new AbortedError('Stopped waiting for the queries of an earlier upload: cancelled.', { cause: options.signal.reason })
  const ended = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []))
  const proving = ended.find((each) => each.proves)
  if (proving) {
    options.logger.warn(`Following query ${proving.id}, submitted by an earlier run whose upload of this PIE ended before its answer ${where}: its facts are this PIE's. Nothing is sent again.`)
    return proving.id
  }
  if (ended.length < candidates.length) return 'unknown'
  options.logger.warn(
    `None of the ${candidates.length} quer${candidates.length === 1 ? 'y' : 'ies'} since the earlier upload began ${where} proves this PIE (each ended with other facts, or FAILED), so it is submitted now, once.`,
  )
  return undefined
}

/** The host's way to submit anew, as a sentence ending a journal line (" Pass --new to …."), or nothing. */
function anewAdvice(options: JournalOptions, what: string): string {
  if (!options.submitAnew) return ''
  const how = options.submitAnew.charAt(0).toUpperCase() + options.submitAnew.slice(1)
  return ` ${how} to ${what}.`
}
