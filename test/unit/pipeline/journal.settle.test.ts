import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { SubmissionJournal, type JournalParts } from '../../../src/pipeline/journal.ts'

// Counts the folder listings the journal makes (the cost issue 35 measured: one per entry).
const listings = vi.hoisted(() => ({ count: 0 }))
vi.mock('node:fs/promises', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...original,
    readdir: (async (...args: Parameters<typeof original.readdir>) => {
      listings.count++
      return original.readdir(...args)
    }) as typeof original.readdir,
  }
})

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-settle-'))
  listings.count = 0
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const parts = (index: number): JournalParts => ({
  pieDigest: index.toString(16).padStart(64, '0'),
  service: 'https://proving.example',
  endpoint: 'l2-pie',
  params: { layout: 'auto' },
})

describe('a batch settling its entries together (issue 35)', () => {
  it('500 entries settled at once, each through its own SubmissionJournal of the folder, list it a few times, not once each; a waited-for one is kept for its waiter, the rest go', async () => {
    const journal = new SubmissionJournal(dir)
    await journal.open()
    const n = 500
    const settles: (() => Promise<void>)[] = []
    const keys: string[] = []
    for (let index = 0; index < n; index++) {
      const key = journal.keyOf(parts(index))
      keys.push(key)
      // One SubmissionJournal per PIE, as `proving prove` makes them: the folder is what they share.
      const own = new SubmissionJournal(dir)
      const lock = await own.lock(key)
      if (!lock.taken) throw new Error('lock not taken')
      await own.write({
        version: 1,
        key,
        ...parts(index),
        startedAt: Date.now(),
        state: 'submitted',
        provingQueryId: `q-${index}`,
      })
      settles.push(() => own.settle(key, lock.release))
    }
    // Another run waits for entry 7: its mark is on disk before the settles begin.
    await writeFile(join(dir, `${keys[7]}.waiting.4242.mark`), '')
    listings.count = 0
    await Promise.all(settles.map((settle) => settle()))
    // Calls made while a listing runs share the next one: how many depends on the disk's pace,
    // but far fewer than one per entry (500 before issue 35).
    expect(listings.count).toBeGreaterThan(0)
    expect(listings.count).toBeLessThan(n / 10)
    const left = await readdir(dir)
    expect(left.sort()).toEqual([`${keys[7]}.json`, `${keys[7]}.waiting.4242.mark`].sort())
    expect(JSON.parse(await readFile(join(dir, `${keys[7]}.json`), 'utf8'))).toMatchObject({
      state: 'settled',
      provingQueryId: 'q-7',
    })
  })

  it('a mark written before hasWaiters is called is always seen, even while another listing runs', async () => {
    const journal = new SubmissionJournal(dir)
    await journal.open()
    const early = journal.hasWaiters('k1')
    await writeFile(join(dir, 'k1.waiting.1.a'), '')
    // Asked after the mark: it must not reuse a listing that may have begun before it.
    const late = journal.hasWaiters('k1')
    await early
    expect(await late).toBe(true)
    expect(await journal.hasWaiters('k2')).toBe(false)
  })
})
