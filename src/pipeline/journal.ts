/**
 * The local submission journal: never pay twice without being told. Before a PIE is uploaded,
 * an entry keyed by the PIE's SHA-256, the service and the parameters is written to disk; it
 * records the query id once the service answers. A process killed mid-upload (a CI timeout, the
 * OOM killer: SIGKILL, no cleanup) leaves the entry behind, and the next run of the same
 * command finds it:
 * - the query id is known: it follows that query instead of submitting again; a FAILED one is
 *   retried when its error is retriable and fewer than 3 retries are used (the same query runs
 *   again, clients/proving/retries.ts), else it submits a new query and says so (on the general
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
 * of paying again (or, FAILED, says so and submits a new query). `proving journal list` and `proving journal clear` show and remove entries. Journals
 * live in the user's cache directory (CLI) or in RUNNER_TEMP per run and attempt (the action),
 * and entries older than 7 days are ignored.
 *
 * This module names the journal's public parts; each concern is a module of ./journal/:
 * store.ts (the entries, their folder, `SubmissionJournal`), lock.ts (the owner, the lock, the
 * waiting marks), submit.ts (`submitWithJournal`), follow.ts (waiting for a live run's query),
 * recover.ts (an unfinished upload's candidates), options.ts (what a submission is given and
 * returns) and files.ts (reading a journal file safely).
 */
export { ownerIsAlive, ownerStatus, UNVERIFIABLE_LOCK_MS } from './journal/lock.ts'
export type { JournaledSubmission } from './journal/options.ts'
export { EarlierUploadOutcomeUnknownError } from '../core/errors.ts'
export {
  actionJournalDir,
  defaultJournalDir,
  type JournalEntry,
  type JournalListing,
  type JournalParts,
  recordedResult,
  SubmissionJournal,
} from './journal/store.ts'
export { submitWithJournal } from './journal/submit.ts'
