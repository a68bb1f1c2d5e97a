/**
 * Another live run of the same key holds the lock: wait for the query id it records and follow
 * that query, ending at the caller's timeout and at once on its signal; the last follower out
 * removes the owner's `settled` entry.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { AbortedError, WaitTimeoutError } from '../../core/errors.ts'
import { describeOwner, type JournalOwner, ownerStatus, parseOwner, readLock, sameProcess } from './lock.ts'
import type { JournaledSubmission, JournalOptions } from './options.ts'
import type { SubmissionJournal } from './store.ts'

/** How often a run waiting for another one's query looks again. */
const WAIT_POLL_MS = 100

/**
 * Another live run holds the lock: wait for the query id it records and follow that query.
 * `unmark` removes this run's waiting mark, written before it looked at the lock (so the owner
 * keeps its id for this run however early it settles). Undefined when the owner ended (or died)
 * without one, said in a warning: the caller starts over, and finds nothing (the owner was sure
 * nothing was created) or the owner's unfinished entry.
 */
export async function waitForOwner(
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
        logger.warn(
          `Following query ${entry.provingQueryId}, submitted by the other run (${describeOwner(owner)}); nothing was sent again.`,
        )
        return {
          provingQueryId: entry.provingQueryId,
          resumed: true,
          settle: () => forgetSettled(journal, key, unmark),
          keep: () => unmark().catch(() => {}),
        }
      }
      const text = await readLock(journal.lockPathOf(key))
      const holder = text === undefined ? undefined : parseOwner(text)
      const same = holder !== undefined && sameProcess(holder, owner) && holder.since === owner.since
      if (!same || (await ownerStatus(owner)) !== 'alive') {
        // Looked at once more: the id may have been recorded just before the lock went.
        const last = await journal.read(key)
        if (last?.provingQueryId && last.state !== 'submitting' && last.owner && sameProcess(last.owner, owner)) {
          logger.warn(
            `Following query ${last.provingQueryId}, reported by the other run (${describeOwner(owner)}) as it ended; nothing was sent again.`,
          )
          return {
            provingQueryId: last.provingQueryId,
            resumed: true,
            settle: () => forgetSettled(journal, key, unmark),
            keep: () => unmark().catch(() => {}),
          }
        }
        await unmark()
        logger.warn(
          `The other run (${describeOwner(owner)}) ended without recording a query for this PIE (journal ${journal.pathOf(key)}); reading the journal again before submitting.`,
        )
        return undefined
      }
      if (signal?.aborted) throw interruptedWaiting()
      if (Date.now() >= deadline) {
        throw new WaitTimeoutError(
          `Timed out after ${formatSeconds(options.timeoutMs!)} waiting for another run (${describeOwner(owner)}) to record its query for this PIE; nothing was sent.`,
          {
            metaMessages: [
              `The other run holds the lock ${journal.lockPathOf(key)}.`,
              `Run again once that run has reported its query; if it is gone for good, remove its lock (entry ${key}) from the journal.`,
            ],
            nextStep: { kind: 'clear-journal', key },
          },
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
  return new AbortedError("Interrupted while waiting for another run's submission of this PIE; nothing was sent.")
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
