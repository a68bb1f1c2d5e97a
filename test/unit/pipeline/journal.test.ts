import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { actionJournalDir, defaultJournalDir, type JournalParts, SubmissionJournal } from '../../../src/pipeline/journal.ts'

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
