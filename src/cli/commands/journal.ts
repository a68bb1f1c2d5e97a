import { InvalidInputError } from '../../core/errors.ts'
import { serviceLine } from '../../core/service-text.ts'
import {
  defaultJournalDir,
  type JournalListing,
  SubmissionJournal,
  UNVERIFIABLE_LOCK_MS,
} from '../../pipeline/journal.ts'
import { defineCommand } from '../context.ts'
import { EXIT } from '../exit-codes.ts'

/**
 * `proving journal ...`: the local submission journal (src/pipeline/journal.ts), which keeps a
 * submission's query id until its outcome is seen, so the same command again follows that query
 * instead of paying twice. These show and remove its entries and locks.
 */
const JOURNAL_DETAILS = [
  'The journal is PROVING_JOURNAL_DIR, else the user cache folder (~/.cache/proving-kit/submissions).',
  'An entry is written before a PIE is uploaded and keeps the query id until a wait sees it DONE or',
  'FAILED; a run interrupted before that (Ctrl-C, SIGTERM, a timeout, no --wait) leaves it, and the same',
  'command again follows that query instead of paying for another. A lock is held while a PIE is uploaded.',
]

export const journalList = defineCommand({
  path: ['journal', 'list'],
  summary: "List the submission journal's entries and locks: the queries a re-run of the same command would follow.",
  details: [
    ...JOURNAL_DETAILS,
    `A lock whose owner cannot be checked from this machine (another host, or no process start time, as on`,
    `macOS) is taken over once it is ${UNVERIFIABLE_LOCK_MS / 60_000} minutes old. Entries older than 7 days are ignored (shown "expired").`,
  ],
  positionals: { min: 0, max: 0 },
  options: {},
  async run(context) {
    const journal = new SubmissionJournal(defaultJournalDir(context.io.env))
    const listed = await journal.list()
    const lines =
      listed.length === 0
        ? [`No entries in ${journal.dir}.`]
        : [`${journal.dir}:`, ...listed.map((item) => serviceLine(describeListing(item)))]
    context.print(lines.join('\n'), { dir: journal.dir, entries: listed.map(jsonOf) })
    return EXIT.ok
  },
})

export const journalClear = defineCommand({
  path: ['journal', 'clear'],
  args: '<key>... | --all',
  summary:
    'Remove journal entries and locks (by key, from `proving journal list`, or --all): the next run submits the PIE again.',
  details: [
    ...JOURNAL_DETAILS,
    "A cleared entry's query is not cancelled on the service; the same command run next pays for a new one.",
    'A lock held by a live run on this machine is left alone (it is uploading now).',
  ],
  positionals: { min: 0, max: Number.POSITIVE_INFINITY },
  options: {
    all: { type: 'boolean', description: 'Remove every entry and lock of the journal folder.' },
  },
  async run(context) {
    const all = context.values.all === true
    if (all === context.positionals.length > 0) {
      throw new InvalidInputError('Give the keys to remove (see `proving journal list`), or --all; not both.', {
        input: '<key>',
      })
    }
    for (const key of context.positionals) {
      if (!/^[0-9a-f]{32}$/.test(key))
        throw new InvalidInputError(
          `<key>: ${JSON.stringify(key)} is not a journal key (32 hex digits, as \`proving journal list\` shows them).`,
          { input: '<key>' },
        )
    }
    const journal = new SubmissionJournal(defaultJournalDir(context.io.env))
    const keys = all ? (await journal.list()).map((item) => item.key) : context.positionals
    const removed: string[] = []
    const kept: { key: string; pid: number; host: string }[] = []
    for (const key of keys) {
      const cleared = await journal.clear(key)
      if (cleared.live) kept.push({ key, pid: cleared.live.pid, host: cleared.live.host })
      else if (cleared.removed.length) removed.push(key)
    }
    const lines = [
      removed.length
        ? `Removed ${removed.length} entr${removed.length === 1 ? 'y' : 'ies'} from ${journal.dir}: ${removed.join(', ')}.`
        : `Nothing removed from ${journal.dir}.`,
      ...kept.map((item) => `Kept ${item.key}: a live run (pid ${item.pid} on ${item.host}) holds its lock.`),
    ]
    context.print(lines.join('\n'), { dir: journal.dir, removed, kept })
    return EXIT.ok
  },
})

function describeListing(item: JournalListing): string {
  const entry = item.entry
  const parts = [item.key]
  if (item.problem) parts.push(`refused: ${item.problem}`)
  if (entry) {
    parts.push(
      entry.provingQueryId ? `query ${entry.provingQueryId}` : 'no query recorded (an upload that did not finish)',
    )
    parts.push(`${entry.state}${item.expired ? ', expired (ignored)' : ''}`)
    parts.push(`${entry.endpoint} at ${entry.service}`)
    if (typeof entry.startedAt === 'number' && entry.startedAt > 0)
      parts.push(`since ${new Date(entry.startedAt).toISOString()}`)
  }
  if (item.lock) {
    const owner = item.lock.owner
    parts.push(owner ? `locked by pid ${owner.pid} on ${owner.host} (${item.lock.status})` : 'an unreadable lock')
  }
  return `  ${parts.join('  ')}`
}

function jsonOf(item: JournalListing) {
  const entry = item.entry
  return {
    key: item.key,
    path: item.path,
    provingQueryId: entry?.provingQueryId ?? null,
    state: entry?.state ?? null,
    service: entry?.service ?? null,
    endpoint: entry?.endpoint ?? null,
    pieDigest: entry?.pieDigest ?? null,
    startedAt: typeof entry?.startedAt === 'number' ? new Date(entry.startedAt).toISOString() : null,
    expired: item.expired === true,
    lock: item.lock
      ? { pid: item.lock.owner?.pid ?? null, host: item.lock.owner?.host ?? null, status: item.lock.status }
      : null,
    problem: item.problem ?? null,
  }
}
