import { existsSync } from 'node:fs'
import { spawn } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { AbortedError } from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import {
  actionJournalDir,
  defaultJournalDir,
  type JournalEntry,
  type JournalParts,
  SubmissionJournal,
  submitWithJournal,
} from '../../../src/pipeline/journal.ts'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-unit-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const parts: JournalParts = { pieDigest: 'ab'.repeat(32), service: 'https://proving.example', endpoint: 'l2-pie', params: { layout: 'auto', prover: 'svc_sharp', mockFactHash: false } }

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
    expect(actionJournalDir({ RUNNER_TEMP: '/t', GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '2' })).toBe('/t/proving-kit/journal/42-2')
    expect(actionJournalDir({})).toBeUndefined()
  })
})

/** A logger that keeps the warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} }
}
/** What submitWithJournal asks of a client when nothing is left over: the probe and the service's clock offset. */
const quietClient = { http: { serviceOffsetMs: () => undefined }, checkService: async () => {} } as unknown as ProvingClient

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
        journal.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitted', provingQueryId: `q-${index}` }),
      )
      await Promise.all(writes)
      expect((await journal.read(key))?.provingQueryId).toMatch(/^q-\d$/)
    }
    expect(await readdir(dir)).toEqual([`${key}.json`])
  })

  it('cancelled while checking whether the earlier query FAILED: the run ends cancelled, neither following nor submitting', async () => {
    const journal = new SubmissionJournal(dir)
    const key = journal.keyOf(parts)
    await journal.write({ version: 1, key, ...parts, startedAt: Date.now(), state: 'submitted', provingQueryId: 'q-earlier' })
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
      submitWithJournal({ journal, parts, client: cancelling, forceNew: false, logger, submit: async () => ({ provingQueryId: `q-${++submitted}` }) }),
    ).rejects.toBeInstanceOf(AbortedError)
    expect(submitted).toBe(0)
    expect(logger.warnings.join('\n')).not.toMatch(/following it/)
  })

  it('a journal write that fails after the query was created never hides it: the id is returned, with a warning', async () => {
    class FailingAfterSubmit extends SubmissionJournal {
      override async write(entry: JournalEntry): Promise<void> {
        if (entry.state === 'submitted') throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
        return super.write(entry)
      }
    }
    const logger = recordingLogger()
    const submitted = await submitWithJournal({
      journal: new FailingAfterSubmit(dir),
      parts,
      client: quietClient,
      forceNew: false,
      logger,
      submit: async () => ({ provingQueryId: 'q-created' }),
    })
    expect(submitted.provingQueryId).toBe('q-created')
    expect(logger.warnings.join('\n')).toMatch(/Query q-created was created, but the journal could not record it \(ENOSPC\)/)
    await submitted.settle?.()
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
    const firstRun = submitWithJournal({ journal, parts, client: quietClient, forceNew: false, logger: recordingLogger(), submit: first.submit })
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

  it('the first settling between the second\'s look at the lock and its waiting mark: the second still follows its query, never submits silently', async () => {
    // The interleaving is driven by hand: the second run's lock attempt finds the first's live
    // lock, and before it returns the first finishes, reports its id and settles (releases the
    // lock, looks for waiters, keeps or forgets the entry).
    const first = held()
    const firstRun = submitWithJournal({ journal: new SubmissionJournal(dir), parts, client: quietClient, forceNew: false, logger: recordingLogger(), submit: first.submit })
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
    expect(logger.warnings.join('\n')).toMatch(/waiting for its query instead of paying twice[\s\S]*Following query q-first/)
    await second.settle?.()
    expect(await readdir(dir)).toEqual([])
  })

  it('when the first fails surely (nothing created), the second submits, once', async () => {
    const journal = new SubmissionJournal(dir)
    const first = held()
    // Its failure is read below, after the second run ended.
    const firstRun = submitWithJournal({ journal, parts, client: quietClient, forceNew: false, logger: recordingLogger(), submit: first.submit }).then(
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
    expect(logger.warnings.join('\n')).toMatch(/The other run \(pid \d+ .*\) ended without recording a query for this PIE/)
    await second.settle?.()
    expect(await readdir(dir)).toEqual([])
  })
})
