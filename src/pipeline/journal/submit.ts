/**
 * Submits through the journal: follows a live run of the same key or an earlier run's query
 * (retried when it FAILED and may be), settles an unfinished upload (recover.ts), else writes
 * `submitting` before the upload and the id after it. A folder or entry that cannot be written
 * is a warning: the submission goes on without it.
 */
import { describeRetry } from '../../clients/proving.ts'
import { AbortedError, SubmissionOutcomeUnknownError, ProvingKitError } from '../../core/errors.ts'
import { mayHaveBeenProcessed } from '../../core/submission.ts'
import { waitForOwner } from './follow.ts'
import { currentOwner, describeOwner } from './lock.ts'
import { forceNewAdvice, type JournaledSubmission, type JournalOptions } from './options.ts'
import { resolveUnfinished } from './recover.ts'
import type { JournalEntry, SubmissionJournal } from './store.ts'

/**
 * Submits through the journal: waits for a live run of the same PIE and parameters and follows
 * its query; resolves an entry left by an earlier run (src/pipeline/journal.ts); writes `submitting` before
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
    const code = (error as NodeJS.ErrnoException).code
    logger.warn(
      `The submission journal folder ${journal.dir} cannot be used (${code}): without it, a re-run cannot tell whether this run created a query. Set PROVING_JOURNAL_DIR to a writable folder.`,
    )
    return options.submit()
  }
  if (lock.taken) {
    // Not a waiter: an owner's own mark would make it keep a settled entry for nobody.
    await unmark().catch(() => {})
  } else {
    if (options.forceNew) {
      await unmark().catch(() => {})
      logger.warn(
        `Another run (${describeOwner(lock.owner)}) is submitting this PIE to ${parts.service}; submitting it again as a new query, as asked.`,
      )
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

async function submitLocked(
  key: string,
  options: JournalOptions,
  release: () => Promise<void>,
): Promise<JournaledSubmission> {
  const { journal, parts, logger } = options
  const settle = () => journal.settle(key, release)
  const found = await journal.read(key)
  // A settled entry is a finished run's, kept only for the runs that waited for it.
  const previous = found?.state === 'settled' ? undefined : found
  const where = `(journal ${journal.pathOf(key)})`
  if (previous && options.forceNew) {
    logger.warn(
      `This PIE was submitted to ${parts.service} before ${where}; submitting it again as a new query, as asked.`,
    )
  } else if (previous?.provingQueryId) {
    const failed = await hasFailed(previous.provingQueryId, options)
    if (!failed) {
      const by = previous.owner ? ` (${describeOwner(previous.owner)})` : ''
      logger.warn(
        `Following query ${previous.provingQueryId}, submitted by an earlier run${by} of this PIE to ${parts.service} ${where}.${forceNewAdvice(options, 'submit it anyway, as a new paid query')}`,
      )
      return { provingQueryId: previous.provingQueryId, resumed: true, settle, keep: release }
    }
    // Retriable (fewer than 3 retries used): the same query runs again; nothing new is paid for.
    const retry = await options.client.retryFailedQuery(previous.provingQueryId, { signal: options.signal })
    if (retry.retried) {
      logger.warn(`${describeRetry(previous.provingQueryId, retry).replace(/\.$/, '')} ${where}.`)
      return { provingQueryId: previous.provingQueryId, resumed: true, retried: retry, settle, keep: release }
    }
    logger.warn(
      `This PIE's earlier query ${previous.provingQueryId} FAILED ${where} and cannot be retried (${retry.reason}); submitting it again, as a new query.`,
    )
  } else if (previous) {
    const candidate = await resolveUnfinished(previous, options, where, key)
    if (candidate) {
      const found: JournalEntry = {
        ...previous,
        startedAt: previous.startedAt || Date.now(),
        state: 'submitted',
        provingQueryId: candidate,
      }
      // Recorded, so the next run follows it too; a record that cannot be written changes nothing now.
      await journal.write(found).catch(() => {})
      return { provingQueryId: candidate, resumed: true, settle, keep: release }
    }
  }
  // The client probes the service once before any submission: done now, its answer's `Date`
  // gives the service's clock for the entry (nothing extra is sent: the submission skips it then).
  await options.client.checkService({ signal: options.signal })
  const owner = await currentOwner()
  const entry: JournalEntry = {
    version: 1,
    key,
    ...parts,
    startedAt: Date.now(),
    state: 'submitting',
    owner,
    serviceOffsetMs: options.client.http.serviceOffsetMs(),
  }
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
    if (
      !(error instanceof AbortedError) &&
      !(error instanceof SubmissionOutcomeUnknownError) &&
      !mayHaveBeenProcessed(error)
    ) {
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
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message
    logger.warn(
      `Query ${submitted.provingQueryId} was created, but the journal could not record it (${reason}); a re-run asks the service for it before submitting.`,
    )
    return { ...submitted, settle: () => release().catch(() => {}), keep: () => release().catch(() => {}) }
  }
  return { ...submitted, settle, keep: () => release().catch(() => {}) }
}

/** Whether the journal's query ended FAILED (then a re-run submits a new query). Unreadable: not known to have failed. */
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
