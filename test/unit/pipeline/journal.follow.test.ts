import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { AbortedError, WaitTimeoutError } from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { type JournalEntry, type JournalParts, SubmissionJournal } from '../../../src/pipeline/journal.ts'
import { waitForOwner } from '../../../src/pipeline/journal/follow.ts'
import { currentOwner, describeOwner, type JournalOwner } from '../../../src/pipeline/journal/lock.ts'
import type { JournalOptions } from '../../../src/pipeline/journal/options.ts'

/**
 * Waiting for a live run of the same PIE and parameters: its query followed as soon as it
 * records it (never an older leftover's, never an id still being uploaded), the wait ended when
 * that run ends without one (the caller looks again), at the timeout and on Ctrl-C, the waiting
 * mark always removed, and the last follower out forgetting the settled entry.
 */

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-follow-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const parts: JournalParts = {
  pieDigest: 'a'.repeat(64),
  service: 'https://proving.example',
  endpoint: 'l2-pie',
  params: { layout: 'auto' },
}

function logger(onWarn?: (line: string) => void): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return {
    warnings,
    debug() {},
    info() {},
    warn: (line) => {
      warnings.push(line)
      onWarn?.(line)
    },
    error() {},
  }
}

async function setup(options: { timeoutMs?: number; signal?: AbortSignal; onWarn?: (line: string) => void } = {}) {
  const journal = new SubmissionJournal(dir)
  await journal.open()
  const key = journal.keyOf(parts)
  const owner: JournalOwner = await currentOwner()
  await writeFile(journal.lockPathOf(key), JSON.stringify(owner))
  const log = logger(options.onWarn)
  const unmark = await journal.markWaiting(key)
  let unmarked = 0
  const run: JournalOptions = {
    journal,
    parts,
    client: {} as ProvingClient,
    forceNew: false,
    logger: log,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    submit: async () => {
      throw new Error('a follower never submits')
    },
  }
  const entry = (fields: Partial<JournalEntry>): JournalEntry => ({
    version: 1,
    key,
    ...parts,
    startedAt: Date.now(),
    state: 'submitted',
    provingQueryId: 'q-1',
    owner,
    ...fields,
  })
  return {
    journal,
    key,
    owner,
    log,
    entry,
    marks: async () => (await readdir(dir)).filter((name) => name.includes('.waiting.')),
    unmarked: () => unmarked,
    follow: () =>
      waitForOwner(key, owner, run, async () => {
        unmarked++
        await unmark()
      }),
  }
}

describe('following the query of a live run of the same key', () => {
  it('its recorded id is followed at once, saying whose; nothing is sent', async () => {
    const { journal, key, owner, log, entry, follow } = await setup()
    await journal.write(entry({}))
    const followed = await follow()
    expect(followed).toMatchObject({ provingQueryId: 'q-1', resumed: true })
    const who = describeOwner(owner)
    expect(log.warnings).toEqual([
      `Another run (${who}) is submitting this PIE to ${parts.service} with these parameters (lock ${journal.lockPathOf(key)}); waiting for its query instead of paying twice.`,
      `Following query q-1, submitted by the other run (${who}); nothing was sent again.`,
    ])
  })

  it('an id recorded while it waits is followed then, with no timeout or within one', async () => {
    for (const timeoutMs of [undefined, 60_000]) {
      let ready: (() => void) | undefined
      const waiting = new Promise<void>((resolve) => (ready = resolve))
      const { journal, entry, follow } = await setup({
        timeoutMs,
        onWarn: (line) => line.startsWith('Another run') && ready?.(),
      })
      await journal.write(entry({ state: 'submitting', provingQueryId: undefined }))
      const following = follow()
      await waiting
      await journal.write(entry({ provingQueryId: 'q-later' }))
      expect((await following)?.provingQueryId, `timeout ${timeoutMs}`).toBe('q-later')
      await journal.remove(journal.keyOf(parts))
    }
  })

  it('not an id still being uploaded, nor one an older run of another process left: those end with the lock', async () => {
    for (const fields of [
      { state: 'submitting' as const },
      { owner: { pid: 1, host: hostname(), since: 0 } },
      { owner: undefined },
      { provingQueryId: undefined },
    ]) {
      const { journal, key, log, entry, follow, marks, unmarked } = await setup()
      await journal.write(entry(fields))
      let followed: unknown = 'pending'
      const following = follow().then((result) => (followed = result))
      await vi.waitFor(() => expect(log.warnings).toHaveLength(1))
      expect(followed, JSON.stringify(fields)).toBe('pending')
      await rm(journal.lockPathOf(key))
      expect(await following).toBeUndefined()
      expect(log.warnings[1]).toMatch(
        new RegExp(
          `^The other run \\(.+\\) ended without recording a query for this PIE \\(journal ${journal.pathOf(key).replace(/[.]/g, '\\.')}\\); reading the journal again before submitting\\.$`,
        ),
      )
      expect(unmarked()).toBe(1)
      expect(await marks()).toEqual([])
      await rm(journal.pathOf(key), { force: true })
    }
  })

  it("the owner's id recorded as it let go of the lock is followed, as reported at its end", async () => {
    const { journal, key, entry, log, follow } = await setup()
    await journal.write(entry({ state: 'settled', provingQueryId: 'q-end' }))
    await rm(journal.lockPathOf(key))
    // The first look (a settled entry, the lock gone): followed, as reported at the end.
    const followed = await follow()
    expect(followed?.provingQueryId).toBe('q-end')
    expect(log.warnings[1]).toMatch(/^Following query q-end, (submitted|reported) by the other run/)
  })

  it("the lock taken over by another run (another start time) is the owner's end", async () => {
    const { journal, key, owner, follow, unmarked } = await setup()
    await writeFile(journal.lockPathOf(key), JSON.stringify({ ...owner, since: owner.since + 1 }))
    expect(await follow()).toBeUndefined()
    expect(unmarked()).toBe(1)
    // A lock that cannot be read as an owner: not the owner's either.
    const again = await setup()
    await writeFile(again.journal.lockPathOf(again.key), 'torn')
    expect(await again.follow()).toBeUndefined()
  })

  it("an owner that died holding the lock is the owner's end too", async () => {
    const { journal, key, owner } = await setup()
    const dead = { ...owner, pid: 2 ** 22 + 7 }
    await writeFile(journal.lockPathOf(key), JSON.stringify(dead))
    expect(
      await waitForOwner(
        key,
        dead,
        {
          journal,
          parts,
          client: {} as ProvingClient,
          forceNew: false,
          logger: logger(),
          submit: async () => ({ provingQueryId: 'x' }),
        },
        async () => {},
      ),
    ).toBeUndefined()
  })
})

describe('the wait ends at the timeout and on Ctrl-C, its mark removed', () => {
  it('at the timeout: nothing sent, saying how to go on', async () => {
    const { journal, key, follow, marks, unmarked } = await setup({ timeoutMs: 250 })
    const error = await follow().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect((error as WaitTimeoutError).shortMessage).toMatch(
      /^Timed out after 0\.3 s waiting for another run \(.+\) to record its query for this PIE; nothing was sent\.$/,
    )
    expect((error as WaitTimeoutError).metaMessages).toEqual([
      `The other run holds the lock ${journal.lockPathOf(key)}.`,
      `Run again once that run has reported its query; if it is gone for good, remove its lock (entry ${key}) from the journal.`,
    ])
    expect((error as WaitTimeoutError).nextStep).toEqual({ kind: 'clear-journal', key })
    expect(unmarked()).toBe(1)
    expect(await marks()).toEqual([])
  })

  it('a whole number of seconds is said so', async () => {
    const { follow } = await setup({ timeoutMs: 0 })
    const error = await follow().catch((caught: unknown) => caught)
    expect((error as WaitTimeoutError).shortMessage).toMatch(/^Timed out after 0 s waiting/)
  })

  it('Ctrl-C before or during the wait: interrupted, nothing sent', async () => {
    const before = new AbortController()
    before.abort(new Error('Ctrl-C'))
    const first = await setup({ signal: before.signal })
    const error = await first.follow().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AbortedError)
    expect((error as AbortedError).shortMessage).toBe(
      "Interrupted while waiting for another run's submission of this PIE; nothing was sent.",
    )
    expect(first.unmarked()).toBe(1)
    await rm(dir, { recursive: true, force: true })
    dir = await mkdtemp(join(tmpdir(), 'journal-follow-'))
    const during = new AbortController()
    const second = await setup({
      signal: during.signal,
      onWarn: (line) => line.startsWith('Another run') && setImmediate(() => during.abort(new Error('Ctrl-C'))),
    })
    const stopped = await second.follow().catch((caught: unknown) => caught)
    expect(stopped).toBeInstanceOf(AbortedError)
    expect((stopped as AbortedError).shortMessage).toMatch(/^Interrupted while waiting/)
    expect(await second.marks()).toEqual([])
  })
})

describe("the follower's closing", () => {
  it('the last follower out removes the settled entry; one still waiting keeps it; keep only removes the mark', async () => {
    const { journal, key, entry, follow, marks } = await setup()
    await journal.write(entry({ state: 'settled' }))
    await rm(journal.lockPathOf(key))
    const other = await journal.markWaiting(key)
    const followed = await follow()
    await followed?.settle?.()
    // Another follower still waits: kept for it.
    expect((await journal.read(key))?.state).toBe('settled')
    await other()
    const last = await setup()
    await rm(journal.lockPathOf(key))
    const lastFollowed = await last.follow()
    expect(lastFollowed?.provingQueryId).toBe('q-1')
    await lastFollowed?.settle?.()
    expect(await journal.read(key)).toBeUndefined()
    expect(await marks()).toEqual([])
    expect(await readdir(dir)).toEqual([])
  })

  it('an entry not settled (the owner still runs) is left to the owner; keep removes only the mark', async () => {
    const { journal, key, entry, follow, marks } = await setup()
    await journal.write(entry({}))
    const followed = await follow()
    await followed?.keep?.()
    expect(await marks()).toEqual([])
    await followed?.settle?.()
    expect((await journal.read(key))?.state).toBe('submitted')
  })

  it('a settled entry whose lock another run holds is left to it', async () => {
    const { journal, key, entry, follow } = await setup()
    await journal.write(entry({ state: 'settled' }))
    const followed = await follow()
    // The lock (written by setup, a live owner) stays: the follower cannot take it.
    await followed?.settle?.()
    expect((await journal.read(key))?.state).toBe('settled')
  })
})
