import { existsSync, readFileSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { homedir, hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { FailedQueryRetry, ProvingClient } from '../../../src/clients/proving.ts'
import {
  AbortedError,
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  NetworkError,
  ServiceError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import {
  actionJournalDir,
  defaultJournalDir,
  type JournaledSubmission,
  type JournalEntry,
  type JournalParts,
  ownerIsAlive,
  ownerStatus,
  SubmissionJournal,
  submitWithJournal,
  UNVERIFIABLE_LOCK_MS,
  EarlierUploadOutcomeUnknownError,
} from '../../../src/pipeline/journal.ts'

/** Field 22 of /proc/<pid>/stat: a process's start time, as the journal records it (Linux). */
function processStartOf(pid: number): string | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]
  } catch {
    return undefined
  }
}

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-unit-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const parts: JournalParts = {
  pieDigest: 'ab'.repeat(32),
  service: 'https://proving.example',
  endpoint: 'l2-pie',
  params: { layout: 'auto', prover: 'svc_sharp', mockFactHash: false },
}

describe('SubmissionJournal', () => {
  it('keys by digest, service, endpoint and every parameter (order does not matter)', () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    expect(journal.keyOf({ ...parts, params: { mockFactHash: false, prover: 'svc_sharp', layout: 'auto' } })).toBe(key)
    expect(journal.keyOf({ ...parts, params: { ...parts.params, layout: 'recursive' } })).not.toBe(key)
    expect(journal.keyOf({ ...parts, service: 'https://other.example' })).not.toBe(key)
    expect(journal.keyOf({ ...parts, pieDigest: 'cd'.repeat(32) })).not.toBe(key)
    expect(journal.keyOf({ ...parts, endpoint: 'general' })).not.toBe(key)
  })

  it('a torn entry (killed mid-write) reads as an upload that may have started; an old one is ignored', async () => {
    let now = Date.parse('2026-01-10T00:00:00Z')
    const journal = new SubmissionJournal(dir, () => now)
    const key = journal.keyOf(parts)
    await writeFile(journal.pathOf(key), '{"version":1,"key":')
    expect((await journal.read(key))?.state).toBe('submitting')
    await journal.write({ version: 1, key, ...parts, startedAt: now, state: 'submitted', provingQueryId: 'q-1' })
    expect((await journal.read(key))?.provingQueryId).toBe('q-1')
    now += 8 * 24 * 3_600_000
    expect(await journal.read(key)).toBeUndefined()
    await journal.remove(key)
    expect(await journal.read(key)).toBeUndefined()
  })
})

describe('where journals live', () => {
  it('CLI: PROVING_JOURNAL_DIR, else the user cache directory', () => {
    expect(defaultJournalDir({ PROVING_JOURNAL_DIR: '/j' })).toBe('/j')
    if (process.platform === 'linux') {
      expect(defaultJournalDir({ XDG_CACHE_HOME: '/c', HOME: '/h' })).toBe('/c/proving-kit/submissions')
      expect(defaultJournalDir({ HOME: '/h' })).toBe('/h/.cache/proving-kit/submissions')
    }
  })
  it('action: RUNNER_TEMP, per run and attempt; none outside a runner', () => {
    expect(actionJournalDir({ RUNNER_TEMP: '/t', GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '2' })).toBe(
      '/t/proving-kit/journal/42-2',
    )
    expect(actionJournalDir({})).toBeUndefined()
  })
})

/** A logger that keeps the warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} }
}
/** What submitWithJournal asks of a client when nothing is left over: the probe and the service's clock offset. */
const quietClient = {
  http: { serviceOffsetMs: () => undefined },
  checkService: async () => {},
} as unknown as ProvingClient

describe('the journal on disk (issue 24)', () => {
  it('folders 0700, entries and locks 0600; a folder left open by an older version is tightened', async () => {
    const journal = new SubmissionJournal(join(dir, 'nested', 'journal'))
    await journal.open()
    expect((await stat(journal.dir)).mode & 0o777).toBe(0o700)
    const key = journal.keyOf(parts)
    await journal.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitting' })
    expect((await stat(journal.pathOf(key))).mode & 0o777).toBe(0o600)
    const lock = await journal.lock(key)
    expect(lock.taken).toBe(true)
    expect((await stat(journal.lockPathOf(key))).mode & 0o777).toBe(0o600)
    const old = join(dir, 'old')
    await mkdir(old, { mode: 0o755 })
    await chmod(old, 0o755)
    await new SubmissionJournal(old).open()
    expect((await stat(old)).mode & 0o777).toBe(0o700)
  })

  it('writes of one entry at once never collide (each its own temporary file), and leave none behind (50 rounds)', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    for (let round = 0; round < 50; round++) {
      const writes = Array.from({ length: 8 }, (_, index) =>
        journal.write({
          version: 1,
          key,
          ...parts,
          startedAt: Date.now(),
          state: 'submitted',
          provingQueryId: `q-${index}`,
        }),
      )
      await Promise.all(writes)
      expect((await journal.read(key))?.provingQueryId).toMatch(/^q-\d$/)
    }
    expect(await readdir(dir)).toEqual([`${key}.json`])
  })

  it('cancelled while checking whether the earlier query FAILED: the run ends cancelled, neither following nor submitting', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await journal.write({
      version: 1,
      key,
      ...parts,
      startedAt: Date.now(),
      state: 'submitted',
      provingQueryId: 'q-earlier',
    })
    const cancelling = {
      ...quietClient,
      http: { serviceOffsetMs: () => undefined },
      checkService: async () => {},
      readQuery: async () => {
        throw new AbortedError('Cancelled while reading query q-earlier.')
      },
    } as unknown as ProvingClient
    let submitted = 0
    const logger = recordingLogger()
    await expect(
      submitWithJournal({
        journal,
        parts,
        client: cancelling,
        forceNew: false,
        logger,
        submit: async () => ({ provingQueryId: `q-${++submitted}` }),
      }),
    ).rejects.toBeInstanceOf(AbortedError)
    expect(submitted).toBe(0)
    expect(logger.warnings.join('\n')).not.toMatch(/following it/)
  })

  it('a journal write that fails after the query was created never hides it: the id is returned, with a warning, and the unfinished entry outlives the run', async () => {
    class FailingAfterSubmit extends SubmissionJournal {
      override async write(entry: JournalEntry): Promise<void> {
        if (entry.state === 'submitted') throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
        return super.write(entry)
      }
    }
    const logger = recordingLogger()
    const journal = new FailingAfterSubmit(dir)
    const submitted = await submitWithJournal({
      journal,
      parts,
      client: quietClient,
      forceNew: false,
      logger,
      submit: async () => ({ provingQueryId: 'q-created' }),
    })
    expect(submitted.provingQueryId).toBe('q-created')
    expect(logger.warnings.join('\n')).toMatch(
      /Query q-created was created, but the journal could not record it \(ENOSPC\); a re-run asks the service for it before submitting\./,
    )
    await submitted.settle?.()
    // Settled: the lock is free, and the entry still says a submission is unfinished, so a run
    // that waited for this one (or the next) asks the service instead of submitting again.
    const key = journal.keyOf(parts)
    expect((await journal.read(key))?.state).toBe('submitting')
    const lock = await journal.lock(key)
    expect(lock.taken).toBe(true)
    if (lock.taken) await lock.release()
  })
})

describe('locks: a live owner is told from a dead one (issue 24)', () => {
  const lockWith = async (journal: SubmissionJournal, key: string, owner: Record<string, unknown>) => {
    await journal.open()
    await writeFile(journal.lockPathOf(key), JSON.stringify(owner))
  }

  it('held by this live process: not taken, the owner named', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    const first = await journal.lock(key)
    expect(first.taken).toBe(true)
    const second = await journal.lock(key)
    expect(second).toMatchObject({ taken: false, owner: { pid: process.pid, host: hostname() } })
  })

  it('held by a process that exited: taken over', async () => {
    const child = spawn(process.execPath, ['-e', '0'])
    const pid = child.pid!
    await new Promise((resolve) => child.on('exit', resolve))
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await lockWith(journal, key, { pid, host: hostname(), since: Date.now() })
    expect((await journal.lock(key)).taken).toBe(true)
    expect(JSON.parse(await readFile(journal.lockPathOf(key), 'utf8')).pid).toBe(process.pid)
  })

  it('held under a pid now reused by a process started at another time: taken over where the start time can be read', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await lockWith(journal, key, { pid: process.pid, host: hostname(), processStart: '1', since: Date.now() })
    // Linux tells a reused pid by /proc/<pid>/stat's start time; where there is no /proc the
    // live pid is taken for the owner, and the lock is (safely) left alone.
    expect((await journal.lock(key)).taken).toBe(existsSync('/proc/self/stat'))
  })

  it('held on another machine (a shared folder): counted as alive, never taken', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await lockWith(journal, key, { pid: 1, host: `not-${hostname()}`, since: Date.now() })
    expect((await journal.lock(key)).taken).toBe(false)
  })
})

describe('two submissions of one key at once, in one process (issue 24)', () => {
  /** A submission that ends when the test says so; `started` resolves once it began (its run holds the lock). */
  function held() {
    let finish!: (id: string) => void
    let fail!: (error: Error) => void
    let began!: () => void
    const started = new Promise<void>((resolve) => (began = resolve))
    const answer = new Promise<{ provingQueryId: string }>((resolve, reject) => {
      finish = (id) => resolve({ provingQueryId: id })
      fail = reject
    })
    const submit = () => {
      began()
      return answer
    }
    return { submit, started, finish, fail }
  }
  /** A logger that calls back on the waiting run's warning. */
  function waitingLogger(onWaiting: () => void): Logger & { warnings: string[] } {
    const logger = recordingLogger()
    const warn = logger.warn
    logger.warn = (message) => {
      warn(message)
      if (/waiting for its query/.test(message)) onWaiting()
    }
    return logger
  }

  it('the second waits for the first and follows its query; nothing is submitted twice, nothing is left behind', async () => {
    const journal = new SubmissionJournal(dir)
    const first = held()
    let secondSubmitted = 0
    const firstRun = submitWithJournal({
      journal,
      parts,
      client: quietClient,
      forceNew: false,
      logger: recordingLogger(),
      submit: first.submit,
    })
    await first.started
    const logger = waitingLogger(() => first.finish('q-first'))
    const second = await submitWithJournal({
      journal,
      parts,
      client: quietClient,
      forceNew: false,
      logger,
      submit: async () => ({ provingQueryId: `q-second-${++secondSubmitted}` }),
    })
    const firstDone = await firstRun
    expect(second).toMatchObject({ provingQueryId: 'q-first', resumed: true })
    expect(secondSubmitted).toBe(0)
    expect(logger.warnings.join('\n')).toMatch(/Following query q-first, submitted by the other run/)
    await firstDone.settle?.()
    await second.settle?.()
    expect(await readdir(dir)).toEqual([])
  })

  it("the first settling between the second's look at the lock and its waiting mark: the second still follows its query, never submits silently", async () => {
    // The interleaving is driven by hand: the second run's lock attempt finds the first's live
    // lock, and before it returns the first finishes, reports its id and settles (releases the
    // lock, looks for waiters, keeps or forgets the entry).
    const first = held()
    const firstRun = submitWithJournal({
      journal: new SubmissionJournal(dir),
      parts,
      client: quietClient,
      forceNew: false,
      logger: recordingLogger(),
      submit: first.submit,
    })
    await first.started
    let firstSettled = false
    class SettlesAfterLookingAtTheLock extends SubmissionJournal {
      override async lock(key: string) {
        const lock = await super.lock(key)
        if (!lock.taken && !firstSettled) {
          firstSettled = true
          first.finish('q-first')
          await (await firstRun).settle?.()
        }
        return lock
      }
    }
    let secondSubmitted = 0
    const logger = recordingLogger()
    const second = await submitWithJournal({
      journal: new SettlesAfterLookingAtTheLock(dir),
      parts,
      client: quietClient,
      forceNew: false,
      logger,
      submit: async () => ({ provingQueryId: `q-second-${++secondSubmitted}` }),
    })
    expect(firstSettled).toBe(true)
    expect(secondSubmitted).toBe(0)
    expect(second).toMatchObject({ provingQueryId: 'q-first', resumed: true })
    expect(logger.warnings.join('\n')).toMatch(
      /waiting for its query instead of paying twice[\s\S]*Following query q-first/,
    )
    await second.settle?.()
    expect(await readdir(dir)).toEqual([])
  })

  it('when the first fails surely (nothing created), the second submits, once', async () => {
    const journal = new SubmissionJournal(dir)
    const first = held()
    // Its failure is read below, after the second run ended.
    const firstRun = submitWithJournal({
      journal,
      parts,
      client: quietClient,
      forceNew: false,
      logger: recordingLogger(),
      submit: first.submit,
    }).then(
      () => undefined,
      (error: Error) => error,
    )
    await first.started
    const refused = Object.assign(new Error('bad input'), { name: 'InvalidInputError' })
    const logger = waitingLogger(() => first.fail(refused))
    const second = await submitWithJournal({
      journal,
      parts,
      client: quietClient,
      forceNew: false,
      logger,
      submit: async () => ({ provingQueryId: 'q-second' }),
    })
    expect((await firstRun)?.message).toBe('bad input')
    expect(second.provingQueryId).toBe('q-second')
    expect(second.resumed).toBeUndefined()
    // Having said it would wait instead of paying twice, it says why it submits after all.
    expect(logger.warnings.join('\n')).toMatch(
      /The other run \(pid \d+ .*\) ended without recording a query for this PIE/,
    )
    await second.settle?.()
    expect(await readdir(dir)).toEqual([])
  })
})

/** What a re-run needs of the client: its probe, the service's clock, the read of a query and the list of queries. */
type FakeService = {
  offset?: number | undefined
  status?: string | Error
  queries?: { id: string; createdAt?: string | null }[] | Error
  /** The signal each request was given, in order. */
  signals?: (AbortSignal | undefined)[]
  listed?: number
  /** What retrying a FAILED query gives (default: not retriable). */
  retry?: FailedQueryRetry
  retried?: string[]
}
function fakeClient(service: FakeService = {}): ProvingClient {
  const seen = (options?: { signal?: AbortSignal | undefined }) => service.signals?.push(options?.signal)
  return {
    http: { serviceOffsetMs: () => service.offset },
    checkService: async (options?: { signal?: AbortSignal }) => void seen(options),
    readQuery: async (id: string, options?: { signal?: AbortSignal }) => {
      seen(options)
      if (service.status instanceof Error) throw service.status
      return { provingQuery: { id, status: service.status ?? 'IN_PROGRESS' } }
    },
    retryFailedQuery: async (id: string, options?: { signal?: AbortSignal }) => {
      seen(options)
      service.retried = [...(service.retried ?? []), id]
      return service.retry ?? { retried: false, queryId: id, reason: 'its error is not retriable (out of memory)' }
    },
    listQueries: async (options?: { signal?: AbortSignal }) => {
      seen(options)
      service.listed = (service.listed ?? 0) + 1
      if (service.queries instanceof Error) throw service.queries
      return { provingQueries: service.queries ?? [] }
    },
  } as unknown as ProvingClient
}

type Attempt = { result?: JournaledSubmission; error?: unknown; submits: number; warnings: string }
/** One run of the command: what it returned or threw, how many times it submitted, what it warned. */
async function attempt(
  journal: SubmissionJournal,
  options: Partial<Parameters<typeof submitWithJournal>[0]> = {},
): Promise<Attempt> {
  const logger = recordingLogger()
  let submits = 0
  const inner = options.submit ?? (async () => ({ provingQueryId: `q-new-${submits}` }))
  const outcome: Attempt = { submits: 0, warnings: '' }
  try {
    outcome.result = await submitWithJournal({
      journal,
      parts,
      client: fakeClient(),
      forceNew: false,
      logger,
      ...options,
      submit: () => {
        submits++
        return inner()
      },
    })
  } catch (error) {
    outcome.error = error
  }
  return { ...outcome, submits, warnings: logger.warnings.join('\n') }
}

const STARTED = Date.parse('2026-01-10T00:00:00Z')
/** A journal whose clock reads one hour after STARTED (entries written at STARTED are fresh). */
const journalAt = (folder: string, now = STARTED + 3_600_000) => new SubmissionJournal(folder, () => now)
/** The entry a run killed at STARTED left: `submitting` unless told otherwise. */
async function leftover(
  journal: SubmissionJournal,
  fields: Partial<JournalEntry> = {},
  entryParts: JournalParts = parts,
): Promise<string> {
  await journal.open()
  const key = journal.keyOf(entryParts)
  await journal.write({ version: 1, key, ...entryParts, startedAt: STARTED, state: 'submitting', ...fields })
  return key
}
const at = (ms: number) => new Date(ms).toISOString()

describe('a failed upload: the entry is kept exactly when the service may have created the query (issue 27)', () => {
  /** A first run whose upload fails so, then a re-run against a service listing a query created since. */
  async function failThenRerun(failure: Error) {
    const journal = journalAt(dir)
    const first = await attempt(journal, {
      submit: async () => {
        throw failure
      },
    })
    expect(first.error, failure.message).toBe(failure)
    const leftBehind = await readdir(dir)
    const service: FakeService = { queries: [{ id: 'q-maybe', createdAt: at(Date.now()) }] }
    return { journal, leftBehind, service, rerun: await attempt(journal, { client: fakeClient(service) }) }
  }

  it('an unknown outcome (a cut after sending, a 502, an accepted but unread answer, a cancellation) keeps the entry; the re-run checks before paying', async () => {
    const unknown = [
      new NetworkError('socket hang up'),
      new ServiceError('Bad Gateway', { status: 502 }),
      new SubmissionOutcomeUnknownError(
        'The proving service accepted the PIE (HTTP 201), but its answer could not be read.',
      ),
      new AbortedError('Cancelled during the upload.'),
    ]
    for (const failure of unknown) {
      // The re-run: the service lists a query created since the upload began; it is not paid again.
      const { journal, rerun } = await failThenRerun(failure)
      const key = journal.keyOf(parts)
      expect((await journal.read(key))?.state, failure.message).toBe('submitting')
      expect(existsSync(journal.lockPathOf(key)), failure.message).toBe(false)
      expect(rerun.submits, failure.message).toBe(0)
      expect(rerun.error, failure.message).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
      await journal.remove(key)
    }
  })

  it('a failure that surely created nothing (bad input, a 400, a 429, a refused connection) forgets the entry: the re-run submits at once, without a check', async () => {
    const sure = [
      new InvalidInputError('bad layout'),
      new ServiceError('Bad Request', { status: 400 }),
      new ServiceError('Too Many Requests', { status: 429 }),
      new NetworkError('connect ECONNREFUSED', { beforeProcessing: true }),
    ]
    for (const failure of sure) {
      const { rerun, service, leftBehind } = await failThenRerun(failure)
      expect(leftBehind, failure.message).toEqual([])
      expect(rerun.submits, failure.message).toBe(1)
      expect(rerun.warnings, failure.message).toBe('')
      expect(service.listed, failure.message).toBeUndefined()
      await rerun.result?.settle?.()
    }
  })

  it("before the upload the entry is on disk, `submitting`, with the service's clock offset from the probe", async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    let during: JournalEntry | undefined
    const done = await attempt(journal, {
      client: fakeClient({ offset: 4_321 }),
      submit: async () => {
        during = await journal.read(key)
        return { provingQueryId: 'q-1' }
      },
    })
    expect(during).toMatchObject({
      state: 'submitting',
      serviceOffsetMs: 4_321,
      pieDigest: parts.pieDigest,
      owner: { pid: process.pid, host: hostname() },
    })
    expect(done.result).toMatchObject({ provingQueryId: 'q-1' })
    expect(await journal.read(key)).toMatchObject({ state: 'submitted', provingQueryId: 'q-1' })
    await done.result?.settle?.()
    expect(await readdir(dir)).toEqual([])
  })
})

describe('an unfinished upload on the L2 endpoint: the list of queries decides (issue 27)', () => {
  it('a list that cannot be read: refused, nothing sent, the entry kept, and the message says what to do', async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal)
    const cause = new NetworkError('connect ECONNREFUSED', { beforeProcessing: true })
    const rerun = await attempt(journal, { client: fakeClient({ queries: cause }) })
    expect(rerun.submits).toBe(0)
    expect(rerun.error).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    expect(rerun.error).toBeInstanceOf(SubmissionOutcomeUnknownError)
    const error = rerun.error as EarlierUploadOutcomeUnknownError
    expect(error.name).toBe('EarlierUploadOutcomeUnknownError')
    expect(error.cause).toBe(cause)
    expect(error.shortMessage).toBe(
      `An earlier upload of this PIE to ${parts.service} did not finish (journal ${journal.pathOf(key)}), and your queries could not be listed to check it.`,
    )
    expect(error.metaMessages).toEqual([
      'Nothing was sent. Look among your queries; submit the PIE again as a new query only if none came of it.',
    ])
    // The way out as data, for each host to word (the CLI names its commands: src/cli/advice.ts).
    expect(error.nextStep).toEqual({ kind: 'look-for-query', thenSubmitAnew: true })
    expect((await journal.read(key))?.state).toBe('submitting')
  })

  it('no query since the upload began: submitted now, once, saying so', async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal, { serviceOffsetMs: 0 })
    const service: FakeService = { queries: [{ id: 'q-yesterday', createdAt: at(STARTED - 86_400_000) }] }
    const rerun = await attempt(journal, { client: fakeClient(service) })
    expect(rerun.submits).toBe(1)
    expect(rerun.result?.provingQueryId).toBe('q-new-1')
    expect(rerun.warnings).toBe(
      `An earlier upload of this PIE to ${parts.service} did not finish (journal ${journal.pathOf(key)}); the service lists no query since the upload began (by its own clock), so it is submitted now, once.`,
    )
    await rerun.result?.settle?.()
  })

  it('one query since then: refused, naming it; seven: counted, the first five named', async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal, { serviceOffsetMs: 0 })
    const one = await attempt(journal, {
      client: fakeClient({ queries: [{ id: 'q-a', createdAt: at(STARTED + 1_000) }] }),
    })
    expect(one.submits).toBe(0)
    expect((one.error as EarlierUploadOutcomeUnknownError).shortMessage).toBe(
      `An earlier upload of this PIE to ${parts.service} did not finish (journal ${journal.pathOf(key)}), and a query since may be its own: nothing was sent.`,
    )
    expect((one.error as EarlierUploadOutcomeUnknownError).metaMessages).toEqual([
      "Your key has 1 query since the upload began that this journal did not record (q-a); one may be this PIE's.",
      "Nothing is sent while the entry stands: submitting again would pay twice if one of them is this PIE's.",
      'Follow them; remove the entry only once you know that none of them is.',
    ])
    expect((one.error as EarlierUploadOutcomeUnknownError).nextStep).toEqual({
      kind: 'follow-candidates',
      ids: ['q-a'],
      key,
    })
    const seven = Array.from({ length: 7 }, (_, index) => ({ id: `q-${index + 1}`, createdAt: at(STARTED + index) }))
    const many = await attempt(journal, { client: fakeClient({ queries: seven }) })
    expect(many.submits).toBe(0)
    expect((many.error as EarlierUploadOutcomeUnknownError).metaMessages?.[0]).toMatch(
      /Your key has 7 queries since the upload began that this journal did not record \(q-1, q-2, q-3, q-4, q-5\); one may be this PIE's/,
    )
  })

  it('a query the service gives no creation time counts as a candidate', async () => {
    const journal = journalAt(dir)
    await leftover(journal, { serviceOffsetMs: 0 })
    for (const record of [{ id: 'q-null', createdAt: null }, { id: 'q-none' }]) {
      const rerun = await attempt(journal, { client: fakeClient({ queries: [record] }) })
      expect(rerun.submits, record.id).toBe(0)
      expect((rerun.error as Error).message, record.id).toMatch(
        new RegExp(`1 query since the upload began that this journal did not record \\(${record.id}\\)`),
      )
    }
  })

  it("without the service's time, queries created up to 5 minutes before the upload began count (clock skew), not one ms more", async () => {
    const journal = journalAt(dir)
    await leftover(journal)
    const edge = STARTED - 5 * 60_000
    const inside = await attempt(journal, { client: fakeClient({ queries: [{ id: 'q-edge', createdAt: at(edge) }] }) })
    expect(inside.submits).toBe(0)
    expect((inside.error as Error).message).toMatch(
      /1 query since the upload began that this journal did not record \(q-edge\)/,
    )
    const outside = await attempt(journal, {
      client: fakeClient({ queries: [{ id: 'q-before', createdAt: at(edge - 1) }] }),
    })
    expect(outside.submits).toBe(1)
    expect(outside.warnings).toMatch(/lists no query since the upload began/)
    await outside.result?.settle?.()
  })

  it("with the service's offset recorded in the entry: compared in its time, 2 s of margin", async () => {
    const journal = journalAt(dir)
    const offset = 90_000
    await leftover(journal, { serviceOffsetMs: offset })
    const edge = STARTED + offset - 2_000
    // The re-run's own offset is not used when the entry has one.
    const inside = await attempt(journal, {
      client: fakeClient({ offset: -3_600_000, queries: [{ id: 'q-edge', createdAt: at(edge) }] }),
    })
    expect(inside.submits).toBe(0)
    expect((inside.error as Error).message).toMatch(
      /1 query since the upload began that this journal did not record \(q-edge\)/,
    )
    const outside = await attempt(journal, {
      client: fakeClient({ offset: -3_600_000, queries: [{ id: 'q-before', createdAt: at(edge - 1) }] }),
    })
    expect(outside.submits).toBe(1)
    await outside.result?.settle?.()
  })

  it("an entry without the offset: the re-run's list request gives the service's time", async () => {
    const journal = journalAt(dir)
    await leftover(journal)
    // 30 s after the upload began by our clock, before it by the service's (a minute ahead): not a candidate.
    const service: FakeService = { offset: 60_000, queries: [{ id: 'q-earlier', createdAt: at(STARTED + 30_000) }] }
    const rerun = await attempt(journal, { client: fakeClient(service) })
    expect(rerun.submits).toBe(1)
    await rerun.result?.settle?.()
  })

  it("the requests of a re-run carry the caller's signal (a cancel reaches them)", async () => {
    const journal = journalAt(dir)
    await leftover(journal)
    const signal = new AbortController().signal
    const service: FakeService = { signals: [], queries: [] }
    const rerun = await attempt(journal, { client: fakeClient(service), signal })
    expect(rerun.submits).toBe(1)
    // The list, then the probe.
    expect(service.signals).toEqual([signal, signal])
    await rerun.result?.settle?.()
  })
})

describe('an unfinished upload on the general submission (issue 27)', () => {
  it('the dedupId decides: submitted through the client, saying so; the list is not asked', async () => {
    const general: JournalParts = { ...parts, endpoint: 'general' }
    const journal = journalAt(dir)
    const key = await leftover(journal, {}, general)
    const service: FakeService = { queries: [{ id: 'q-maybe', createdAt: at(STARTED + 1) }] }
    const rerun = await attempt(journal, { parts: general, client: fakeClient(service) })
    expect(rerun.submits).toBe(1)
    expect(service.listed).toBeUndefined()
    expect(rerun.warnings).toBe(
      `An earlier upload of this PIE to ${parts.service} did not finish (journal ${journal.pathOf(key)}); its dedupId decides whether a query exists.`,
    )
    await rerun.result?.settle?.()
  })
})

describe('an entry that knows its query (issue 27)', () => {
  it("a live query is followed, not paid again; the read carries the caller's signal", async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal, { state: 'submitted', provingQueryId: 'q-earlier' })
    const signal = new AbortController().signal
    const service: FakeService = { status: 'IN_PROGRESS', signals: [] }
    const rerun = await attempt(journal, { client: fakeClient(service), signal, forceNewHint: 'pass --new' })
    expect(rerun.submits).toBe(0)
    expect(rerun.result).toMatchObject({ provingQueryId: 'q-earlier', resumed: true })
    expect(service.signals).toEqual([signal])
    expect(rerun.warnings).toBe(
      `Following query q-earlier, submitted by an earlier run of this PIE to ${parts.service} (journal ${journal.pathOf(key)}). Pass --new to submit it anyway, as a new paid query.`,
    )
    // A host without such a way (the action) names none: the library knows no flag.
    await rerun.result?.keep?.()
    const hostless = await attempt(journal, { client: fakeClient({ status: 'IN_PROGRESS', signals: [] }) })
    expect(hostless.warnings).toBe(
      `Following query q-earlier, submitted by an earlier run of this PIE to ${parts.service} (journal ${journal.pathOf(key)}).`,
    )
  })

  it('a query whose status cannot be read is followed (not known to have failed)', async () => {
    const journal = journalAt(dir)
    await leftover(journal, { state: 'submitted', provingQueryId: 'q-earlier' })
    const rerun = await attempt(journal, {
      client: fakeClient({ status: new ServiceError('Bad Gateway', { status: 502 }) }),
    })
    expect(rerun.submits).toBe(0)
    expect(rerun.result).toMatchObject({ provingQueryId: 'q-earlier', resumed: true })
  })

  it('a FAILED query: submitted anew, once, saying so', async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal, { state: 'submitted', provingQueryId: 'q-failed' })
    const rerun = await attempt(journal, { client: fakeClient({ status: 'FAILED' }) })
    expect(rerun.submits).toBe(1)
    expect(rerun.result?.provingQueryId).toBe('q-new-1')
    expect(rerun.result?.resumed).toBeUndefined()
    expect(rerun.warnings).toBe(
      `This PIE's earlier query q-failed FAILED (journal ${journal.pathOf(key)}) and cannot be retried (its error is not retriable (out of memory)); submitting it again, as a new query.`,
    )
    expect(await journal.read(key)).toMatchObject({ state: 'submitted', provingQueryId: 'q-new-1' })
  })

  it('a FAILED query whose error is retriable: retried and followed, nothing submitted, saying so', async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal, { state: 'submitted', provingQueryId: 'q-failed' })
    const service: FakeService = {
      status: 'FAILED',
      retry: { retried: true, queryId: 'q-failed', retryCount: 2, errorReason: 'prover crashed', byAnother: false },
    }
    const rerun = await attempt(journal, { client: fakeClient(service) })
    expect(rerun.submits).toBe(0)
    expect(service.retried).toEqual(['q-failed'])
    expect(rerun.result).toMatchObject({ provingQueryId: 'q-failed', resumed: true, retried: { retryCount: 2 } })
    expect(rerun.warnings).toBe(
      `Query q-failed failed with a retriable error (prover crashed); retried it (retry 2 of 3), and following it instead of paying for a new query (journal ${journal.pathOf(key)}).`,
    )
    // The entry still names the query: a later re-run finds it again.
    expect(await journal.read(key)).toMatchObject({ state: 'submitted', provingQueryId: 'q-failed' })
  })

  it('--new: submitted again whatever the journal says, saying so', async () => {
    const journal = journalAt(dir)
    const key = await leftover(journal, { state: 'submitted', provingQueryId: 'q-earlier' })
    const service: FakeService = { queries: [] }
    const rerun = await attempt(journal, { client: fakeClient(service), forceNew: true })
    expect(rerun.submits).toBe(1)
    expect(rerun.warnings).toBe(
      `This PIE was submitted to ${parts.service} before (journal ${journal.pathOf(key)}); submitting it again as a new query, as asked.`,
    )
  })

  it('a settled entry (kept only for the runs that waited) is no reason to follow: a later run submits anew, silently', async () => {
    const journal = journalAt(dir)
    await leftover(journal, {
      state: 'settled',
      provingQueryId: 'q-done',
      owner: { pid: process.pid, host: hostname(), since: STARTED },
    })
    const rerun = await attempt(journal, { client: fakeClient({ status: 'DONE' }) })
    expect(rerun.submits).toBe(1)
    expect(rerun.result?.resumed).toBeUndefined()
    expect(rerun.warnings).toBe('')
  })
})

describe('entries a re-run does not trust (issue 27)', () => {
  it('another version, another key, no start time, or not an object: ignored (the run submits as if none)', async () => {
    const journal = journalAt(dir)
    const key = journal.keyOf(parts)
    await journal.open()
    const good = { version: 1, key, ...parts, startedAt: STARTED, state: 'submitted', provingQueryId: 'q-1' }
    expect(await journal.read(key)).toBeUndefined()
    for (const text of [
      JSON.stringify({ ...good, version: 2 }),
      JSON.stringify({ ...good, key: 'another' }),
      JSON.stringify({ ...good, startedAt: String(STARTED) }),
      JSON.stringify({ version: 1, key }),
      'null',
    ]) {
      await writeFile(journal.pathOf(key), text)
      expect(await journal.read(key), text).toBeUndefined()
    }
    await writeFile(journal.pathOf(key), JSON.stringify(good))
    expect(await journal.read(key)).toMatchObject({ provingQueryId: 'q-1' })
    const rerun = await attempt(journal, { client: fakeClient() })
    expect(rerun.submits).toBe(0)
    // Removing what is not there is no error.
    await journal.remove(key)
    await expect(journal.remove(key)).resolves.toBeUndefined()
  })

  it('an entry is honoured for 7 days, to the millisecond', async () => {
    const journal = new SubmissionJournal(dir, () => now)
    let now = STARTED + 6 * 24 * 3_600_000
    const key = await leftover(journal, { state: 'submitted', provingQueryId: 'q-1' })
    expect(await journal.read(key)).toMatchObject({ provingQueryId: 'q-1' })
    now = STARTED + 7 * 24 * 3_600_000
    expect(await journal.read(key)).toMatchObject({ provingQueryId: 'q-1' })
    now += 1
    expect(await journal.read(key)).toBeUndefined()
  })

  it('keys are stable across versions (a re-run after an upgrade finds the entry)', () => {
    expect(new SubmissionJournal(dir).keyOf(parts)).toBe('2e3e253742655569f0b3b99c9bd0df25')
  })
})

describe('a journal that cannot be used (issue 27)', () => {
  it('a folder that cannot be created: a warning naming it and PROVING_JOURNAL_DIR, and the PIE is submitted, once', async () => {
    const file = join(dir, 'a-file')
    await writeFile(file, '')
    const journal = new SubmissionJournal(join(file, 'journal'))
    const run = await attempt(journal)
    expect(run.submits).toBe(1)
    expect(run.result?.provingQueryId).toBe('q-new-1')
    expect(run.warnings).toBe(
      `The submission journal folder ${journal.dir} cannot be used (ENOTDIR): without it, a re-run cannot tell whether this run created a query. Set PROVING_JOURNAL_DIR to a writable folder.`,
    )
  })

  it('a bug is not a folder problem: it is thrown, and nothing is submitted', async () => {
    for (const bug of [
      new TypeError('x is undefined'),
      Object.assign(new Error('EISDIR, from code'), { code: 'ERR_FS_EISDIR' }),
    ]) {
      class Broken extends SubmissionJournal {
        override async open(): Promise<void> {
          throw bug
        }
      }
      const run = await attempt(new Broken(dir))
      expect(run.error, bug.message).toBe(bug)
      expect(run.submits, bug.message).toBe(0)
    }
  })

  it('an entry that cannot be written before the upload: a warning naming it, submitted once, the lock released', async () => {
    class ReadOnly extends SubmissionJournal {
      override async write(): Promise<void> {
        throw Object.assign(new Error('permission denied'), { code: 'EACCES' })
      }
    }
    const journal = new ReadOnly(dir)
    const key = journal.keyOf(parts)
    const run = await attempt(journal)
    expect(run.submits).toBe(1)
    expect(run.warnings).toBe(
      `The submission journal entry ${journal.pathOf(key)} could not be written (EACCES); submitting without it. Set PROVING_JOURNAL_DIR to a writable folder.`,
    )
    expect(await readdir(dir)).toEqual([])
  })

  it('a bug while writing the entry is thrown, nothing submitted, the lock released', async () => {
    const bug = new TypeError('entry.owner is undefined')
    class Buggy extends SubmissionJournal {
      override async write(): Promise<void> {
        throw bug
      }
    }
    const run = await attempt(new Buggy(dir))
    expect(run.error).toBe(bug)
    expect(run.submits).toBe(0)
    expect(await readdir(dir)).toEqual([])
  })

  it('a write that fails leaves no temporary file behind', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    // Something in the way of the rename: a folder under the entry's name.
    await mkdir(journal.pathOf(key))
    await expect(
      journal.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitting' }),
    ).rejects.toThrow()
    expect(await readdir(dir)).toEqual([`${key}.json`])
  })
})

describe('a run that finds another live run of the same key (issue 27)', () => {
  /**
   * The lock as a live run of this process holds it, with its start time (without one, a live pid
   * is trusted only for UNVERIFIABLE_LOCK_MS, and STARTED is older than that).
   */
  const liveOwner = { pid: process.pid, host: hostname(), processStart: processStartOf(process.pid), since: STARTED }
  const holdLock = async (journal: SubmissionJournal, key: string) => {
    await journal.open()
    await writeFile(journal.lockPathOf(key), JSON.stringify(liveOwner))
  }

  it('--new: submitted at once, saying who else is submitting', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await holdLock(journal, key)
    const run = await attempt(journal, { forceNew: true })
    expect(run.submits).toBe(1)
    expect(run.warnings).toBe(
      `Another run (pid ${process.pid} on ${hostname()}, since ${at(STARTED)}) is submitting this PIE to ${parts.service}; submitting it again as a new query, as asked.`,
    )
    expect((await readdir(dir)).filter((name) => name.includes('.waiting.'))).toEqual([])
  })

  it('cancelled while waiting: ends cancelled, nothing sent, no waiting mark left behind', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await holdLock(journal, key)
    const controller = new AbortController()
    controller.abort()
    const run = await attempt(journal, { signal: controller.signal })
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(AbortedError)
    expect((run.error as AbortedError).shortMessage).toBe(
      "Interrupted while waiting for another run's submission of this PIE; nothing was sent.",
    )
    expect(await readdir(dir)).toEqual([`${key}.lock`])
  })

  it('the other run records its query just as it lets go: followed, nothing sent', async () => {
    class RecordsAsItEnds extends SubmissionJournal {
      reads = 0
      override async read(key: string) {
        const entry = await super.read(key)
        // Between the waiting run's look at the journal and its look at the lock, the owner
        // records its query and releases the lock.
        if (++this.reads === 1) {
          await this.write({
            version: 1,
            key,
            ...parts,
            startedAt: Date.now(),
            state: 'submitted',
            provingQueryId: 'q-other',
            owner: liveOwner,
          })
          await rm(this.lockPathOf(key))
        }
        return entry
      }
    }
    const journal = new RecordsAsItEnds(dir)
    await holdLock(journal, journal.keyOf(parts))
    const run = await attempt(journal)
    expect(run.submits).toBe(0)
    expect(run.result).toMatchObject({ provingQueryId: 'q-other', resumed: true })
    expect(run.warnings).toMatch(
      new RegExp(
        `Following query q-other, reported by the other run \\(pid ${process.pid} on .*\\) as it ended; nothing was sent again\\.$`,
      ),
    )
    // Once the id is reported, this run no longer waits: an owner settling later keeps nothing for it.
    await run.result?.settle?.()
    expect(await journal.hasWaiters(journal.keyOf(parts))).toBe(false)
  })

  it("an entry left by another process is not taken for the waited-for run's query (pid, host and start time must all match)", async () => {
    const strangers = [
      { ...liveOwner, pid: process.pid + 1 },
      { ...liveOwner, host: `not-${hostname()}` },
      { ...liveOwner, processStart: 'another start' },
    ]
    for (const [index, stranger] of strangers.entries()) {
      class OwnerEndsAfterOneLook extends SubmissionJournal {
        reads = 0
        override async read(key: string) {
          const entry = await super.read(key)
          if (++this.reads === 1) await rm(this.lockPathOf(key))
          return entry
        }
      }
      const journal = new OwnerEndsAfterOneLook(join(dir, `stranger-${index}`))
      const key = await leftover(journal, {
        state: 'submitted',
        provingQueryId: 'q-stranger',
        owner: stranger,
        startedAt: Date.now(),
      })
      await holdLock(journal, key)
      const run = await attempt(journal, { client: fakeClient({ status: 'IN_PROGRESS' }) })
      const who = JSON.stringify(stranger)
      expect(run.submits, who).toBe(0)
      expect(run.warnings, who).not.toMatch(/submitted by the other run|reported by the other run/)
      // The waiting run starts over and finds the entry as any re-run would.
      expect(run.warnings, who).toMatch(
        /ended without recording a query for this PIE[\s\S]*Following query q-stranger, submitted by an earlier run/,
      )
    }
  })

  it('a follower that leaves while another still waits keeps the settled entry for it; the last one out removes it', async () => {
    const journal = new SubmissionJournal(dir)
    const key = await leftover(journal, {
      state: 'settled',
      provingQueryId: 'q-owner',
      owner: liveOwner,
      startedAt: Date.now(),
    })
    await holdLock(journal, key)
    const first = await attempt(journal)
    expect(first.result).toMatchObject({ provingQueryId: 'q-owner', resumed: true })
    expect(first.warnings).toMatch(/Following query q-owner, submitted by the other run/)
    const second = await attempt(journal)
    expect(second.result).toMatchObject({ provingQueryId: 'q-owner', resumed: true })
    await rm(journal.lockPathOf(key))
    await first.result?.settle?.()
    expect(await journal.read(key)).toMatchObject({ state: 'settled', provingQueryId: 'q-owner' })
    await second.result?.settle?.()
    expect(await readdir(dir)).toEqual([])
  })

  it('the owner settling while its last waiter leaves: nothing is left behind', async () => {
    class LastWaiterLeaves extends SubmissionJournal {
      looks = 0
      override async hasWaiters(): Promise<boolean> {
        return ++this.looks === 1
      }
    }
    const journal = new LastWaiterLeaves(dir)
    const key = await leftover(journal, { state: 'submitted', provingQueryId: 'q-1', startedAt: Date.now() })
    const lock = await journal.lock(key)
    expect(lock.taken).toBe(true)
    if (lock.taken) await journal.settle(key, lock.release)
    expect(await readdir(dir)).toEqual([])
  })
})

describe('locks and owners (issue 27)', () => {
  /** Field 22 of /proc/<pid>/stat, read here independently of the module. */
  const startOf = (pid: number) => {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]
  }

  // Linux's /proc, where the suite runs (.ci/run, CI): a start time is how a reused pid is told apart.
  it('a live pid with its own start time is alive; with another start time, dead', async () => {
    const me = { pid: process.pid, host: hostname(), since: Date.now() }
    expect(await ownerIsAlive({ ...me, processStart: startOf(process.pid) })).toBe(true)
    expect(await ownerIsAlive({ ...me, processStart: '1' })).toBe(false)
    expect(await ownerIsAlive(me)).toBe(true)
  })

  it('a pid that lives under another user (EPERM) is alive; one on another machine is not judged until its lock is an hour old', async () => {
    const child = spawn(process.execPath, ['-e', '0'])
    const gone = child.pid!
    await new Promise((resolve) => child.on('exit', resolve))
    const now = Date.now()
    expect(await ownerIsAlive({ pid: gone, host: hostname(), since: now })).toBe(false)
    expect(await ownerIsAlive({ pid: gone, host: `not-${hostname()}`, since: now })).toBe(true)
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => {
      throw Object.assign(new Error('kill EPERM'), { code: 'EPERM' })
    })
    try {
      expect(await ownerIsAlive({ pid: gone, host: hostname(), since: now })).toBe(true)
    } finally {
      kill.mockRestore()
    }
  })

  it('an owner that cannot be checked (another host; a live pid without a start time, as on macOS) expires after UNVERIFIABLE_LOCK_MS', async () => {
    const now = Date.now()
    const young = now - UNVERIFIABLE_LOCK_MS + 60_000
    const old = now - UNVERIFIABLE_LOCK_MS - 1
    expect(await ownerStatus({ pid: 1, host: `not-${hostname()}`, since: young }, now)).toBe('alive')
    expect(await ownerStatus({ pid: 1, host: `not-${hostname()}`, since: old }, now)).toBe('expired')
    expect(await ownerStatus({ pid: process.pid, host: hostname(), since: old }, now)).toBe('expired')
    // With a start time that matches, a live owner never expires.
    expect(
      await ownerStatus(
        { pid: process.pid, host: hostname(), processStart: processStartOf(process.pid), since: old },
        now,
      ),
    ).toBe('alive')
  })

  it('a lock whose content names no owner is taken over, not waited on forever', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await journal.open()
    for (const text of [
      '',
      'null',
      '{}',
      '{"pid":1}',
      `{"host":"not-${hostname()}"}`,
      `{"pid":"1","host":"not-${hostname()}"}`,
    ]) {
      await writeFile(journal.lockPathOf(key), text)
      const lock = await journal.lock(key)
      expect(lock.taken, text).toBe(true)
      if (lock.taken) await lock.release()
      expect(existsSync(journal.lockPathOf(key)), text).toBe(false)
    }
  })

  it('a release never removes a lock another run took since', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    const lock = await journal.lock(key)
    expect(lock.taken).toBe(true)
    const other = JSON.stringify({ pid: 1, host: `not-${hostname()}`, since: Date.now() })
    await writeFile(journal.lockPathOf(key), other)
    if (lock.taken) await lock.release()
    expect(await readFile(journal.lockPathOf(key), 'utf8')).toBe(other)
  })

  it('a waiting mark is 0600, and goes when the run stops waiting', async () => {
    const journal = new SubmissionJournal(dir)
    await journal.open()
    const key = journal.keyOf(parts)
    const unmark = await journal.markWaiting(key)
    const [mark] = await readdir(dir)
    expect(mark).toMatch(new RegExp(`^${key}\\.waiting\\.`))
    expect((await stat(join(dir, mark!))).mode & 0o777).toBe(0o600)
    expect(await journal.hasWaiters(key)).toBe(true)
    await unmark()
    expect(await journal.hasWaiters(key)).toBe(false)
  })
})

describe('where journals live, on every platform (issue 27)', () => {
  const platform = Object.getOwnPropertyDescriptor(process, 'platform')!
  afterEach(() => Object.defineProperty(process, 'platform', platform))
  const on = (name: string) => Object.defineProperty(process, 'platform', { ...platform, value: name })

  it('Linux: XDG_CACHE_HOME, else ~/.cache; LOCALAPPDATA means nothing there', () => {
    on('linux')
    expect(defaultJournalDir({ XDG_CACHE_HOME: '/c', HOME: '/h', LOCALAPPDATA: '/l' })).toBe(
      '/c/proving-kit/submissions',
    )
    expect(defaultJournalDir({ HOME: '/h', LOCALAPPDATA: '/l' })).toBe('/h/.cache/proving-kit/submissions')
    expect(defaultJournalDir({})).toBe(join(homedir(), '.cache', 'proving-kit', 'submissions'))
  })

  it('macOS: ~/Library/Caches, whatever XDG says', () => {
    on('darwin')
    expect(defaultJournalDir({ XDG_CACHE_HOME: '/c', HOME: '/h' })).toBe('/h/Library/Caches/proving-kit/submissions')
    expect(defaultJournalDir({})).toBe(join(homedir(), 'Library', 'Caches', 'proving-kit', 'submissions'))
  })

  it("Windows: LOCALAPPDATA, else the home folder's cache", () => {
    on('win32')
    expect(defaultJournalDir({ LOCALAPPDATA: '/l', HOME: '/h' })).toBe('/l/proving-kit/submissions')
    expect(defaultJournalDir({ HOME: '/h' })).toBe('/h/.cache/proving-kit/submissions')
  })

  it('the action without a run id or attempt: one folder still', () => {
    expect(actionJournalDir({ RUNNER_TEMP: '/t' })).toBe('/t/proving-kit/journal/run-1')
  })
})

describe('an entry is forgotten only once the outcome is seen (issue 32, 1)', () => {
  it('keep (interrupted, timed out, not waited for) lets the lock go and keeps the id: the same command again follows it, saying so', async () => {
    const journal = new SubmissionJournal(dir)
    const first = await attempt(journal)
    const key = journal.keyOf(parts)
    const id = first.result!.provingQueryId
    await first.result!.keep!()
    expect(existsSync(journal.lockPathOf(key))).toBe(false)
    expect(await journal.read(key)).toMatchObject({ state: 'submitted', provingQueryId: id })
    const again = await attempt(journal, { client: fakeClient({ status: 'IN_PROGRESS' }) })
    expect(again.submits).toBe(0)
    expect(again.result).toMatchObject({ provingQueryId: id, resumed: true })
    expect(again.warnings).toMatch(
      new RegExp(`^Following query ${id}, submitted by an earlier run \\(pid ${process.pid} on `),
    )
    // The re-run saw the outcome: the entry goes, and a third run pays anew.
    await again.result!.settle!()
    expect(await readdir(dir)).toEqual([])
  })

  it('settle (the wait saw DONE or FAILED) forgets the entry', async () => {
    const journal = new SubmissionJournal(dir)
    const first = await attempt(journal)
    await first.result!.settle!()
    expect(await readdir(dir)).toEqual([])
  })
})

describe('locks and journal files that cannot be trusted (issue 32, 3)', () => {
  it('an entry or lock that is a symlink, a FIFO or a folder is refused naming it, at once (a FIFO never blocks the read)', async () => {
    const { execFileSync } = await import('node:child_process')
    const { symlink } = await import('node:fs/promises')
    for (const [kind, make] of [
      ['a symbolic link', (path: string) => symlink(join(dir, 'elsewhere'), path)],
      ['a named pipe (FIFO)', async (path: string) => void execFileSync('mkfifo', [path])],
      ['a folder', (path: string) => mkdir(path)],
    ] as const) {
      for (const which of ['entry', 'lock'] as const) {
        const folder = join(dir, `${which}-${kind.replace(/\W/g, '')}`)
        const journal = new SubmissionJournal(folder)
        await journal.open()
        const key = journal.keyOf(parts)
        const path = which === 'entry' ? journal.pathOf(key) : journal.lockPathOf(key)
        await make(path)
        const run = await attempt(journal)
        expect(run.submits, `${which}: ${kind}`).toBe(0)
        expect(run.error, `${which}: ${kind}`).toBeInstanceOf(InvalidInputError)
        expect((run.error as InvalidInputError).shortMessage).toBe(
          `The submission journal file ${path} is ${kind}, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
        )
      }
    }
  })

  it('a journal folder of another user (a symlink to their 0777 folder) is refused naming it', async () => {
    const { symlink, chown } = await import('node:fs/promises')
    const theirs = join(dir, 'theirs')
    await mkdir(theirs, { mode: 0o777 })
    await chmod(theirs, 0o777)
    const uid = process.getuid!()
    const other = uid === 0 ? 65534 : uid
    if (uid === 0) await chown(theirs, other, other)
    const linked = join(dir, 'linked')
    await symlink(theirs, linked)
    const journal = new SubmissionJournal(linked)
    const run = await attempt(journal)
    // As another user than root the folder cannot be given away: the check is then that ours passes.
    if (uid !== 0) return expect(run.submits).toBe(1)
    expect(run.submits).toBe(0)
    expect((run.error as InvalidInputError).shortMessage).toBe(
      `The submission journal folder ${linked} belongs to another user (uid ${other}, not ${uid}): set PROVING_JOURNAL_DIR to a folder of your own.`,
    )
    expect((run.error as InvalidInputError).metaMessages).toEqual([
      'Refused, since its owner could plant locks and entries; nothing was sent.',
    ])
    expect(await readdir(theirs)).toEqual([])
  })

  it('a wait for another run ends at the timeout, naming the lock and how to clear it; nothing sent', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await journal.open()
    await writeFile(journal.lockPathOf(key), JSON.stringify({ pid: 1, host: `not-${hostname()}`, since: Date.now() }))
    const started = Date.now()
    const run = await attempt(journal, { timeoutMs: 300 })
    expect(Date.now() - started).toBeLessThan(2_000)
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(WaitTimeoutError)
    expect((run.error as WaitTimeoutError).shortMessage).toMatch(
      /^Timed out after 0\.3 s waiting for another run \(pid 1 on not-.*\) to record its query for this PIE; nothing was sent\.$/,
    )
    expect((run.error as WaitTimeoutError).metaMessages).toEqual([
      `The other run holds the lock ${journal.lockPathOf(key)}.`,
      `Run again once that run has reported its query; if it is gone for good, remove its lock (entry ${key}) from the journal.`,
    ])
    expect((run.error as WaitTimeoutError).nextStep).toEqual({ kind: 'clear-journal', key })
    expect((await readdir(dir)).filter((name) => name.includes('.waiting.'))).toEqual([])
  })

  it('the signal ends a wait at once, not at the next look', async () => {
    // Global timers frozen: a poll that slept on them without the signal (as before) would never
    // wake to see the abort; the wait's sleep takes the signal, so the abort ends it by itself.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    try {
      class CountsLooks extends SubmissionJournal {
        looks = 0
        override async read(key: string) {
          this.looks++
          return super.read(key)
        }
      }
      const journal = new CountsLooks(dir)
      const key = journal.keyOf(parts)
      await journal.open()
      await writeFile(journal.lockPathOf(key), JSON.stringify({ pid: 1, host: `not-${hostname()}`, since: Date.now() }))
      const controller = new AbortController()
      const run = attempt(journal, { signal: controller.signal })
      // Aborted once the run has looked three times (slept twice): a sleep on the frozen timers
      // never gets there.
      while (journal.looks < 3) await new Promise((resolve) => setImmediate(resolve))
      controller.abort()
      const result = await run
      expect(result.error).toBeInstanceOf(AbortedError)
      expect(result.submits).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('a lock of another host older than UNVERIFIABLE_LOCK_MS is taken over, saying so; a younger one is waited for', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await journal.open()
    const since = Date.now() - UNVERIFIABLE_LOCK_MS - 1_000
    await writeFile(journal.lockPathOf(key), JSON.stringify({ pid: 1, host: 'ci-runner-7f3a', since }))
    const run = await attempt(journal)
    expect(run.submits).toBe(1)
    expect(run.warnings).toBe(
      `The lock ${journal.lockPathOf(key)} of pid 1 on ci-runner-7f3a, since ${at(since)} (another host, or no start time: it cannot be checked) is older than any upload takes (60 minutes): taken over.`,
    )
    await run.result?.settle?.()
  })

  it("list shows entries and locks; clear removes them, but not a live run's lock", async () => {
    const journal = new SubmissionJournal(dir)
    const first = await attempt(journal)
    await first.result!.keep!()
    const other = { ...parts, params: { ...parts.params, layout: 'recursive' } }
    const live = journal.keyOf(other)
    await writeFile(
      journal.lockPathOf(live),
      JSON.stringify({
        pid: process.pid,
        host: hostname(),
        processStart: processStartOf(process.pid),
        since: Date.now(),
      }),
    )
    const listed = await journal.list()
    const key = journal.keyOf(parts)
    expect(listed.map((item) => [item.key, item.entry?.provingQueryId, item.lock?.status])).toEqual(
      [
        [key, first.result!.provingQueryId, undefined],
        [live, undefined, 'alive'],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    )
    expect(await journal.clear(live)).toMatchObject({ removed: [], live: { pid: process.pid } })
    expect((await journal.clear(key)).removed).toEqual([journal.pathOf(key)])
    expect(await readdir(dir)).toEqual([`${live}.lock`])
  })
})

describe('an upload that ended before its answer, re-run with the fact check (issue 32, 1)', () => {
  it('the one query of the key since the upload began is followed, saying its facts decide; two are refused, naming both', async () => {
    const journal = journalAt(dir, Date.now())
    await leftover(journal, { startedAt: Date.now() - 1_000 })
    const one: FakeService = { queries: [{ id: 'q-lost-answer', createdAt: at(Date.now()) }] }
    const rerun = await attempt(journal, { client: fakeClient(one), factsChecked: true })
    expect(rerun.submits).toBe(0)
    expect(rerun.result).toMatchObject({ provingQueryId: 'q-lost-answer', resumed: true })
    expect(rerun.warnings).toMatch(
      /^Following query q-lost-answer, submitted by an earlier run: the only query of your key since its upload began .*; its facts are checked\.$/,
    )
    // Recorded: the next run follows it without listing.
    await rerun.result!.keep!()
    const third = await attempt(journal, { client: fakeClient({ status: 'IN_PROGRESS' }), factsChecked: true })
    expect(third.result).toMatchObject({ provingQueryId: 'q-lost-answer', resumed: true })
    await third.result!.settle!()

    await leftover(journal, { startedAt: Date.now() - 1_000 })
    const two: FakeService = {
      queries: [
        { id: 'q-a', createdAt: at(Date.now()) },
        { id: 'q-b', createdAt: at(Date.now()) },
      ],
    }
    const refused = await attempt(journal, { client: fakeClient(two), factsChecked: true })
    expect(refused.submits).toBe(0)
    expect(refused.error).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    expect((refused.error as Error).message).toMatch(
      /2 queries since the upload began that this journal did not record \(q-a, q-b\)/,
    )
  })
})
