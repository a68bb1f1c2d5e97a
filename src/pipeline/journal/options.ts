/**
 * What a submission through the journal is given (the journal, the key's parts, the client,
 * how the host lets a person force a new query) and what it returns (the query, and how its run
 * settles or keeps the entry): shared by submit.ts, follow.ts and recover.ts.
 */
import type { ProvingClient, RetriedQuery } from '../../clients/proving.ts'
import type { Logger } from '../../core/runtime.ts'
import type { PieInspection } from '../../pie/index.ts'
import type { KeyQueries } from '../key-queries.ts'
import type { JournalParts, SubmissionJournal } from './store.ts'

export type JournaledSubmission = {
  provingQueryId: string
  deduplicated?: boolean | undefined
  resumed?: boolean
  /** The journal's query had FAILED and was retried: it is the one followed. */
  retried?: RetriedQuery | undefined
  /**
   * The statement's outcome is settled (its wait saw the query DONE and the gate ran): forgets
   * the entry, so a later run of the same command submits a new query.
   */
  settle?: (() => Promise<void>) | undefined
  /**
   * This run ends without that outcome (interrupted, timed out, not waited for, FAILED): lets the
   * lock go and keeps the entry with its query id, so the same command again follows that query
   * (or finds it FAILED and says so).
   */
  keep?: (() => Promise<void>) | undefined
}

export type JournalOptions = {
  journal: SubmissionJournal
  parts: JournalParts
  client: ProvingClient
  forceNew: boolean
  /**
   * How the host lets a person force a new query whatever the journal says (the CLI: "pass --new"),
   * added to the lines that follow an earlier query; absent where there is no such way (the action).
   */
  forceNewHint?: string | undefined
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
  /** The run's index of the key's queries (../key-queries.ts), read once for every statement; a fresh one when absent. */
  queries?: KeyQueries | undefined
  /** How long a wait for another run's lock may last (the command's --timeout); unbounded when absent. */
  timeoutMs?: number | undefined
  submit: () => Promise<JournaledSubmission>
}

/** The host's way to force a new query, as a sentence ending a journal line (" Pass --new to …."), or nothing. */
export function forceNewAdvice(options: JournalOptions, what: string): string {
  if (!options.forceNewHint) return ''
  const how = options.forceNewHint.charAt(0).toUpperCase() + options.forceNewHint.slice(1)
  return ` ${how} to ${what}.`
}
