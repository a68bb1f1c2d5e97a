/**
 * The journal's entries on disk: what an entry records (the PIE's digest, the service, the
 * parameters, the query id once known), where the folders are, and the `SubmissionJournal`
 * that reads, lists, writes (atomically, 0600, in a 0700 folder of this user) and clears them;
 * its lock and waiting marks are lock.ts's. `recordedResult` reads an entry for `query wait`.
 */
import { createHash, randomUUID } from 'node:crypto'
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { InvalidInputError } from '../../core/errors.ts'
import type { Logger } from '../../core/runtime.ts'
import { userCacheDir } from '../../core/cache-dir.ts'
import { JournalFileError, readRegular } from './files.ts'
import {
  currentOwner,
  type JournalOwner,
  markWaiting,
  ownerStatus,
  parseOwner,
  readLock,
  takeLock,
  waitingKeys,
} from './lock.ts'

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
   * run that waited (see `waitForOwner`) follows it, any later one submits a new query.
   */
  state: 'submitting' | 'submitted' | 'settled'
  provingQueryId?: string | undefined
  owner?: JournalOwner | undefined
  /** The service's clock minus ours when the upload began, from its `Date` header (ms). */
  serviceOffsetMs?: number | undefined
}

const MAX_AGE_MS = 7 * 24 * 3_600_000

/** The CLI's journal folder: PROVING_JOURNAL_DIR, else the platform's user cache directory. */
export function defaultJournalDir(env: Record<string, string | undefined>): string {
  return env.PROVING_JOURNAL_DIR || userCacheDir(env, 'submissions')
}

/** The action's: RUNNER_TEMP, one folder per workflow run and attempt. */
export function actionJournalDir(env: Record<string, string | undefined>): string | undefined {
  if (!env.RUNNER_TEMP) return undefined
  return join(
    env.RUNNER_TEMP,
    'proving-kit',
    'journal',
    `${env.GITHUB_RUN_ID ?? 'run'}-${env.GITHUB_RUN_ATTEMPT ?? '1'}`,
  )
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
        `The submission journal folder ${this.dir} belongs to another user (uid ${info.uid}, not ${uid}): set PROVING_JOURNAL_DIR to a folder of your own.`,
        {
          input: 'PROVING_JOURNAL_DIR',
          metaMessages: ['Refused, since its owner could plant locks and entries; nothing was sent.'],
        },
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
      return {
        version: 1,
        key,
        startedAt: 0,
        state: 'submitting',
        pieDigest: '',
        service: '',
        endpoint: 'l2-pie',
        params: {},
      }
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
        item.problem =
          error instanceof JournalFileError ? error.shortMessage : `unreadable (${(error as Error).message})`
      }
      try {
        const text = await readRegular(this.lockPathOf(key))
        const owner = text === undefined ? undefined : parseOwner(text)
        if (text !== undefined)
          item.lock = owner ? { owner, status: await ownerStatus(owner, this.#now()) } : { status: 'dead' }
      } catch (error) {
        item.problem ??=
          error instanceof JournalFileError ? error.shortMessage : `lock unreadable (${(error as Error).message})`
      }
      listed.push(item)
    }
    return listed
  }

  /**
   * What the journal holds for a key, read only (a plan): its entry when not settled, and the
   * owner of its lock when one is held by a run that is alive. Nothing is locked or written.
   */
  async peek(key: string): Promise<{ entry: JournalEntry | undefined; liveOwner: JournalOwner | undefined }> {
    const found = await this.read(key).catch(() => undefined)
    const entry = found?.state === 'settled' ? undefined : found
    const text = await readLock(this.lockPathOf(key)).catch(() => undefined)
    const owner = text === undefined ? undefined : parseOwner(text)
    const alive = owner !== undefined && (await ownerStatus(owner, this.#now())) === 'alive'
    return { entry, liveOwner: alive ? owner : undefined }
  }

  /**
   * Removes a key's entry, lock and waiting marks (`proving journal clear`). A lock held by a
   * live run of this machine is left alone (that run is submitting now): `{ live: owner }`.
   * Files that are not regular (planted links, pipes) are removed as names, never opened.
   */
  async clear(key: string): Promise<{ removed: string[]; live?: JournalOwner | undefined }> {
    const lockText = await readLock(this.lockPathOf(key)).catch(() => undefined)
    const owner = lockText === undefined ? undefined : parseOwner(lockText)
    if (owner && (await ownerStatus(owner, this.#now())) === 'alive' && owner.host === hostname())
      return { removed: [], live: owner }
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

  /** Takes the key's lock, or names the live run that holds it (lock.ts, `takeLock`). */
  lock(
    key: string,
    logger?: Logger,
  ): Promise<{ taken: true; release: () => Promise<void> } | { taken: false; owner: JournalOwner }> {
    return takeLock(this.lockPathOf(key), logger)
  }

  /** Marks this process as waiting for the key's owner; the owner then keeps its query id for it. */
  markWaiting(key: string): Promise<() => Promise<void>> {
    return markWaiting(this.dir, key)
  }

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

  /**
   * Whether a run waits for the key's owner: a listing of the folder begun after this call (a
   * mark written before it is seen). Calls made while a listing runs share the next one, so a
   * batch that settles N entries at once lists the folder a few times, not N times (N listings of 2N
   * files made a batch's end quadratic).
   */
  async hasWaiters(key: string): Promise<boolean> {
    const keys = await waitingKeys(this.dir)
    return keys.has(key)
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

/**
 * What the journal in `dir` recorded asking for query `queryId` of `service` (an origin): the
 * L2 endpoint's kind, or the general submission's `result` (the service's default,
 * PROOF_GENERATION, when none was sent); undefined when no entry of the last 7 days names that
 * query. Read-only: `query wait` and the `wait` action gate a query against what was asked, and
 * an entry left by an interrupted run is the one place that still says it.
 */
export async function recordedResult(
  dir: string,
  queryId: string,
  service: string,
  now: number = Date.now(),
): Promise<string | undefined> {
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
