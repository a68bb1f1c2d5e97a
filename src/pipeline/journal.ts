import { createHash } from 'node:crypto'
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { ProvingClient } from '../clients/proving.ts'
import { AbortedError, AmbiguousSubmissionError } from '../core/errors.ts'
import type { Logger } from '../core/runtime.ts'
import { mayHaveBeenProcessed } from '../core/submission.ts'

/**
 * The local submission journal: never pay twice without being told. Before a PIE is uploaded,
 * an entry keyed by the PIE's SHA-256, the service and the parameters is written to disk; it
 * records the query id once the service answers. A process killed mid-upload (a CI timeout, the
 * OOM killer: SIGKILL, no cleanup) leaves the entry behind, and the next run of the same
 * command finds it:
 * - the query id is known: it follows that query instead of submitting again;
 * - the upload's outcome is unknown: on the general submission the dedupId settles it (the
 *   client looks it up; the service refuses a second query with it); on the L2 endpoints the
 *   caller's recent queries are listed: none since the upload began means nothing was created,
 *   so it submits; otherwise it refuses, naming the candidates, until told `--new`.
 * What remains: an entry is written before the upload and the id after the answer, so the
 * window is the answer itself on the L2 endpoints: a query created by the service while the
 * caller creates others (same key, same minutes) is told apart by the candidates listed, not
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

export type JournalEntry = JournalParts & {
  version: 1
  key: string
  startedAt: number
  state: 'submitting' | 'submitted'
  provingQueryId?: string | undefined
}

const MAX_AGE_MS = 7 * 24 * 3_600_000
/** Queries created this long before the entry still count as candidates (clock skew). */
const SKEW_MS = 5 * 60_000

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

  async write(entry: JournalEntry): Promise<void> {
    await mkdir(this.dir, { recursive: true })
    const path = this.pathOf(entry.key)
    const temporary = `${path}.${process.pid}.tmp`
    await writeFile(temporary, JSON.stringify(entry, null, 2))
    await rename(temporary, path)
  }

  async remove(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true })
  }
}

export type JournaledSubmission = {
  provingQueryId: string
  deduplicated?: boolean | undefined
  resumed?: boolean
  /** Forgets the entry once the caller has reported the id (or its wait ended): only a killed run leaves one. */
  settle?: (() => Promise<void>) | undefined
}

/**
 * Submits through the journal: resolves an entry left by an earlier run first (see above),
 * writes `submitting` before the upload and the id after it. `forceNew` (--new) submits
 * whatever the journal says, and says so.
 */
export async function submitWithJournal(options: {
  journal: SubmissionJournal
  parts: JournalParts
  client: ProvingClient
  forceNew: boolean
  logger: Logger
  signal?: AbortSignal | undefined
  submit: () => Promise<JournaledSubmission>
}): Promise<JournaledSubmission> {
  const { journal, parts, logger } = options
  const key = journal.keyOf(parts)
  const previous = await journal.read(key)
  const where = `(journal ${journal.pathOf(key)})`
  if (previous && options.forceNew) {
    logger.warn(`This PIE was submitted to ${parts.service} before ${where}; --new: submitting it again, as a new query.`)
  } else if (previous?.state === 'submitted' && previous.provingQueryId) {
    logger.warn(
      `This PIE was already submitted to ${parts.service} with these parameters, as query ${previous.provingQueryId} ${where}; following it instead of paying again. Pass --new to submit it anyway.`,
    )
    return { provingQueryId: previous.provingQueryId, resumed: true, settle: () => journal.remove(key) }
  } else if (previous) {
    await resolveUnfinished(previous, options, where)
  }
  await journal.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitting' })
  let submitted: JournaledSubmission
  try {
    submitted = await options.submit()
  } catch (error) {
    // Sure that nothing was created: forget the entry. Unsure (a lost answer, a cancelled
    // upload): keep it, so the next run checks before paying again.
    if (!(error instanceof AbortedError) && !(error instanceof AmbiguousSubmissionError) && !mayHaveBeenProcessed(error)) {
      await journal.remove(key)
    }
    throw error
  }
  await journal.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitted', provingQueryId: submitted.provingQueryId })
  return { ...submitted, settle: () => journal.remove(key) }
}

async function resolveUnfinished(
  previous: JournalEntry,
  options: { parts: JournalParts; client: ProvingClient; logger: Logger; signal?: AbortSignal | undefined },
  where: string,
): Promise<void> {
  const { parts, client, logger } = options
  if (parts.endpoint === 'general') {
    // The dedupId settles it: the client looks it up and the service refuses a second query.
    logger.warn(`An earlier upload of this PIE to ${parts.service} did not finish ${where}; its dedupId decides whether a query exists.`)
    return
  }
  let candidates: { id: string; createdAt: string | null | undefined }[]
  try {
    const page = await client.listQueries({ limit: 20, offset: 0, signal: options.signal })
    candidates = page.provingQueries
      .map((record) => ({ id: record.id, createdAt: record.createdAt ?? null }))
      .filter((record) => record.createdAt === null || Date.parse(record.createdAt) >= previous.startedAt - SKEW_MS)
  } catch (error) {
    throw new UnresolvedSubmissionError(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and the list of your queries could not be read to check it; nothing was sent. Check \`proving query list\`, then rerun with --new if no query came of it.`,
      { cause: error },
    )
  }
  if (candidates.length === 0) {
    logger.warn(`An earlier upload of this PIE to ${parts.service} did not finish ${where}; the service lists no query since, so it is submitted now.`)
    return
  }
  const shown = candidates.slice(0, 5).map((record) => record.id).join(', ')
  throw new UnresolvedSubmissionError(
    `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and your key has ${candidates.length} quer${candidates.length === 1 ? 'y' : 'ies'} since (${shown}); one may be it. Nothing was sent. Follow it with \`proving query wait <id>\`, or rerun with --new to submit anyway.`,
  )
}
