/**
 * Who runs a submission, and the lock it holds: the owner (pid, host, the process's start
 * time) and whether it still runs, the `<key>.lock` file taken whole by link(2) and released only
 * while it is still this run's, and the `<key>.waiting.*` marks of the runs waiting for it.
 */
import { randomUUID } from 'node:crypto'
import { link, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import type { Logger } from '../../core/runtime.ts'
import { JournalFileError, readRegular } from './files.ts'

/** The run that wrote an entry or holds a lock: told dead from alive on this machine. */
export type JournalOwner = {
  pid: number
  host: string
  /** The process's start as the kernel counts it (Linux: /proc/<pid>/stat), so a reused pid is told apart. */
  processStart?: string | undefined
  /** When it took the lock (ms since the epoch, this machine's clock). */
  since: number
}

/**
 * A lock whose owner cannot be checked from this machine (written on another host, or without a
 * process start time, as on macOS) is taken over once it is this old: the lock is held from
 * before the upload until the id is recorded (a run that waits follows the id as soon as it is),
 * and an hour is more than any upload the service takes (its 4 GiB limit at 10 Mbit/s).
 */
export const UNVERIFIABLE_LOCK_MS = 60 * 60_000

/** This process as a journal owner (its kernel start time read once). */
let self: Promise<JournalOwner> | undefined
export function currentOwner(): Promise<JournalOwner> {
  self ??= processStartOf(process.pid).then((processStart) => ({
    pid: process.pid,
    host: hostname(),
    processStart,
    since: Date.now(),
  }))
  return self
}

/** Field 22 of /proc/<pid>/stat (start time in clock ticks since boot); undefined off Linux. */
async function processStartOf(pid: number): Promise<string | undefined> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined)
  // The command name (field 2) may hold spaces and parentheses: count from its closing one.
  return text?.slice(text.lastIndexOf(')') + 2).split(' ')[19]
}

/**
 * Whether the run that owns a lock still runs. `dead`: on this machine, its pid is gone (ESRCH)
 * or now belongs to a process started at another time. An owner that cannot be checked (on
 * another machine: a shared home folder, a container's random hostname; or a live pid with no
 * start time to compare) counts as alive until its lock is `UNVERIFIABLE_LOCK_MS` old: then
 * `expired`.
 */
export async function ownerStatus(
  owner: JournalOwner,
  now: number = Date.now(),
): Promise<'alive' | 'dead' | 'expired'> {
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

export function describeOwner(owner: JournalOwner): string {
  return `pid ${owner.pid} on ${owner.host}, since ${new Date(owner.since).toISOString()}`
}

/**
 * Takes the lock at `path`, or names the live run that holds it. The lock file is written whole
 * under a temporary name and linked into place (link fails when the name exists), so nobody
 * reads half an owner. A lock whose owner died is removed, then taken.
 */
export async function takeLock(
  path: string,
  logger?: Logger,
): Promise<{ taken: true; release: () => Promise<void> } | { taken: false; owner: JournalOwner }> {
  const owner = await currentOwner()
  for (;;) {
    const temporary = `${path}.${process.pid}.${randomUUID()}.tmp`
    const mine = JSON.stringify({ ...owner, since: Date.now() })
    // Stryker disable next-line StringLiteral: 'wx' refuses a file already there, and no file has the fresh UUID's name
    await writeFile(temporary, mine, { mode: 0o600, flag: 'wx' })
    try {
      await link(temporary, path)
      return { taken: true, release: releaseOnce(path, mine) }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    } finally {
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: the temporary file was just written, and only this run knows its name
      await rm(temporary, { force: true })
    }
    const text = await lockInTheWay(path)
    if (text === undefined) continue
    // A lock that names no owner is a dead one's.
    const holder = parseOwner(text)
    if (holder) {
      const status = await ownerStatus(holder)
      if (status === 'alive') return { taken: false, owner: holder }
      if (status === 'expired') {
        logger?.warn(
          `The lock ${path} of ${describeOwner(holder)} (another host, or no start time: it cannot be checked) is older than any upload takes (${UNVERIFIABLE_LOCK_MS / 60_000} minutes): taken over.`,
        )
      }
    }
    await removeStaleLock(path, text)
  }
}

/**
 * The lock that made the link fail: undefined when it vanished since (the link is tried again).
 * One that is there but cannot be read (EACCES, EIO) is refused: taken for no lock, it would be
 * tried forever; taken for a broken folder, this run would submit beside a run that may hold it.
 */
async function lockInTheWay(path: string): Promise<string | undefined> {
  try {
    return await readRegular(path)
  } catch (error) {
    if (error instanceof JournalFileError) throw error
    const why = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    throw new JournalFileError(
      `The submission journal lock ${path} cannot be read (${why}): refused, nothing was sent. Remove it if no run holds it.`,
      { input: 'PROVING_JOURNAL_DIR', cause: error, nextStep: { kind: 'clear-journal' } },
    )
  }
}

/** Moves a dead owner's lock aside; puts it back if another run replaced it in the meantime. */
async function removeStaleLock(path: string, staleText: string): Promise<void> {
  const aside = `${path}.${process.pid}.${randomUUID()}.stale`
  try {
    await rename(path, aside)
  } catch {
    return
  }
  const moved = await readLock(aside).catch(() => staleText)
  if (moved !== staleText) await link(aside, path).catch(() => {})
  // Stryker disable next-line ObjectLiteral,BooleanLiteral: the aside name was just renamed to, and only this run knows it
  await rm(aside, { force: true })
}

/** Marks this process as waiting for the owner of the key in `dir`; the owner then keeps its query id for it. */
export async function markWaiting(dir: string, key: string): Promise<() => Promise<void>> {
  const path = join(dir, `${key}.waiting.${process.pid}.${randomUUID()}`)
  // Stryker disable next-line StringLiteral: a mark is its name (its text is never read), and no file has the fresh UUID's name
  await writeFile(path, '', { mode: 0o600, flag: 'wx' })
  return () => rm(path, { force: true })
}

/**
 * The keys with a waiting mark in `dir`, from one listing begun after the call, shared by the
 * calls made meanwhile through any SubmissionJournal of the folder (a batch makes one per PIE).
 */
export function waitingKeys(dir: string): Promise<Set<string>> {
  let listings = folderListings.get(dir)
  if (!listings) {
    // Stryker disable next-line ObjectLiteral: both start undefined, named or not
    listings = { running: undefined, next: undefined }
    folderListings.set(dir, listings)
  }
  const state = listings
  state.next ??= (state.running ?? Promise.resolve()).then(() => {
    state.next = undefined
    const listing = waitingKeysIn(dir)
    state.running = listing
    // The last listing of a quiet folder forgets its state.
    // Stryker disable all: memory only; whether kept or forgotten, every listing begins after its call
    void listing.then(() => {
      if (state.running === listing && state.next === undefined) folderListings.delete(dir)
    })
    // Stryker restore all
    return listing
  })
  return state.next
}

/** Per folder: the listing under way, and the one the calls made meanwhile will share (see hasWaiters). */
const folderListings = new Map<
  string,
  { running: Promise<Set<string>> | undefined; next: Promise<Set<string>> | undefined }
>()

/** The keys of a folder's waiting marks. */
async function waitingKeysIn(dir: string): Promise<Set<string>> {
  // Stryker disable next-line ArrayDeclaration: any name without '.waiting.' is no key, as none is
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
    // Stryker disable next-line ObjectLiteral,BooleanLiteral: the lock was just read as this run's, and no other run removes a live owner's lock
    if ((await readLock(path).catch(() => undefined)) === mine) await rm(path, { force: true })
  }
}

/** A lock's text; unreadable (EACCES, gone) is no lock, a lock that is not a regular file is refused. */
export async function readLock(path: string): Promise<string | undefined> {
  try {
    return await readRegular(path)
  } catch (error) {
    if (error instanceof JournalFileError) throw error
    return undefined
  }
}

export function sameProcess(a: JournalOwner, b: JournalOwner): boolean {
  return a.pid === b.pid && a.host === b.host && a.processStart === b.processStart
}

export function parseOwner(text: string): JournalOwner | undefined {
  try {
    const owner = JSON.parse(text) as JournalOwner
    // Stryker disable next-line OptionalChaining: `null.pid` throws, and the catch gives undefined as well
    return typeof owner?.pid === 'number' && typeof owner.host === 'string' ? owner : undefined
  } catch {
    return undefined
  }
}
