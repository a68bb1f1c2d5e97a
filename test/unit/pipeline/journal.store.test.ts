import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { InvalidInputError } from '../../../src/core/errors.ts'
import {
  actionJournalDir,
  defaultJournalDir,
  type JournalEntry,
  type JournalParts,
  recordedResult,
  SubmissionJournal,
} from '../../../src/pipeline/journal.ts'

/**
 * The journal's entries on disk, as a re-run reads them: where the folder is, what key an entry
 * has (every parameter that changes what is paid for, and nothing else), which entries count
 * (this version, this key, the last 7 days; a torn one as an upload that may have begun), and
 * what the folder's listing, clearing and settling leave.
 */

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-store-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const NOW = Date.parse('2026-01-10T00:00:00Z')
const DAY = 24 * 3_600_000
const parts: JournalParts = {
  pieDigest: 'a'.repeat(64),
  service: 'https://proving.example',
  endpoint: 'l2-pie',
  params: { layout: 'auto', prover: 'svc_sharp' },
}
const journalIn = (folder = dir, now = NOW) => new SubmissionJournal(folder, () => now)
function entryOf(
  journal: SubmissionJournal,
  fields: Partial<JournalEntry> = {},
  of: JournalParts = parts,
): JournalEntry {
  return {
    version: 1,
    key: journal.keyOf(of),
    ...of,
    startedAt: NOW - 1_000,
    state: 'submitted',
    provingQueryId: 'q-1',
    ...fields,
  }
}

describe('where the journal lives', () => {
  it("the CLI's: PROVING_JOURNAL_DIR, else the user's cache folder (an empty setting is none)", () => {
    expect(defaultJournalDir({ PROVING_JOURNAL_DIR: '/somewhere/journal', XDG_CACHE_HOME: '/cache' })).toBe(
      '/somewhere/journal',
    )
    if (process.platform === 'linux') {
      expect(defaultJournalDir({ PROVING_JOURNAL_DIR: '', XDG_CACHE_HOME: '/cache' })).toBe(
        join('/cache', 'proving-kit', 'submissions'),
      )
    }
  })

  it("the action's: one folder per workflow run and attempt under RUNNER_TEMP; none without it", () => {
    expect(actionJournalDir({ RUNNER_TEMP: '/runner/tmp', GITHUB_RUN_ID: '42', GITHUB_RUN_ATTEMPT: '3' })).toBe(
      join('/runner/tmp', 'proving-kit', 'journal', '42-3'),
    )
    expect(actionJournalDir({ RUNNER_TEMP: '/runner/tmp' })).toBe(
      join('/runner/tmp', 'proving-kit', 'journal', 'run-1'),
    )
    expect(actionJournalDir({ RUNNER_TEMP: '', GITHUB_RUN_ID: '42' })).toBeUndefined()
    expect(actionJournalDir({})).toBeUndefined()
  })
})

describe("an entry's key: what is proved and paid for, nothing else", () => {
  const journal = new SubmissionJournal('/unused')
  it('32 hex digits, the same whatever the order of the parameters, an absent one the same as null', () => {
    const key = journal.keyOf(parts)
    expect(key).toMatch(/^[0-9a-f]{32}$/)
    expect(journal.keyOf({ ...parts, params: { prover: 'svc_sharp', layout: 'auto' } })).toBe(key)
    expect(journal.keyOf({ ...parts, params: { ...parts.params, result: undefined } })).toBe(
      journal.keyOf({ ...parts, params: { ...parts.params, result: null } }),
    )
    expect(journal.pathOf(key)).toBe(join('/unused', `${key}.json`))
    expect(journal.lockPathOf(key)).toBe(join('/unused', `${key}.lock`))
  })

  it('another PIE, service, endpoint or parameter value is another key', () => {
    const keys = new Set([
      journal.keyOf(parts),
      journal.keyOf({ ...parts, pieDigest: 'b'.repeat(64) }),
      journal.keyOf({ ...parts, service: 'https://other.example' }),
      journal.keyOf({ ...parts, endpoint: 'general' }),
      journal.keyOf({ ...parts, params: { ...parts.params, layout: 'recursive' } }),
      journal.keyOf({ ...parts, params: { ...parts.params, result: null } }),
    ])
    expect(keys.size).toBe(6)
  })
})

describe('the folder and its files', () => {
  it('made 0700; one left open by an older version is tightened; an entry is written 0600, whole, with no temporary file left', async () => {
    const folder = join(dir, 'made', 'here')
    const journal = journalIn(folder)
    await journal.open()
    expect((await stat(folder)).mode & 0o777).toBe(0o700)
    await chmod(folder, 0o755)
    await journal.open()
    expect((await stat(folder)).mode & 0o777).toBe(0o700)
    const entry = entryOf(journal)
    await journal.write(entry)
    expect(await readdir(folder)).toEqual([`${entry.key}.json`])
    expect((await stat(journal.pathOf(entry.key))).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(journal.pathOf(entry.key), 'utf8'))).toEqual(entry)
    await journal.remove(entry.key)
    expect(await readdir(folder)).toEqual([])
  })

  it('a folder of another user is refused, naming both users and the setting', async () => {
    const folder = join(dir, 'theirs')
    await mkdir(folder)
    await chmod(folder, 0o777)
    // Another user's folder as this process sees it: the folder's owner is not who runs (chown
    // would need root; the uid this run compares with is faked instead).
    const owner = (await stat(folder)).uid
    const getuid = vi.spyOn(process, 'getuid').mockReturnValue(owner + 4242)
    try {
      const error = await journalIn(folder)
        .open()
        .catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(InvalidInputError)
      expect((error as InvalidInputError).input).toBe('PROVING_JOURNAL_DIR')
      expect((error as InvalidInputError).shortMessage).toBe(
        `The submission journal folder ${folder} belongs to another user (uid ${owner}, not ${owner + 4242}): set PROVING_JOURNAL_DIR to a folder of your own.`,
      )
      expect((error as InvalidInputError).metaMessages).toEqual([
        'Refused, since its owner could plant locks and entries; nothing was sent.',
      ])
    } finally {
      getuid.mockRestore()
    }
    // Left as it was.
    expect((await stat(folder)).mode & 0o777).toBe(0o777)
  })

  it('a write that fails leaves no temporary file behind', async () => {
    const journal = journalIn()
    const entry = entryOf(journal)
    // The entry's name taken by a folder: the rename fails.
    await mkdir(journal.pathOf(entry.key))
    await writeFile(join(journal.pathOf(entry.key), 'x'), '')
    await expect(journal.write(entry)).rejects.toThrow()
    expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([])
  })
})

describe('which entries a run reads', () => {
  it('this version, this key, a start time, the last 7 days; none at all when missing', async () => {
    const journal = journalIn()
    const key = journal.keyOf(parts)
    expect(await journal.read(key)).toBeUndefined()
    const write = (fields: Record<string, unknown>) =>
      writeFile(journal.pathOf(key), JSON.stringify({ ...entryOf(journal), ...fields }))
    await write({})
    expect(await journal.read(key)).toEqual(entryOf(journal))
    await write({ startedAt: NOW - 7 * DAY })
    expect((await journal.read(key))?.startedAt).toBe(NOW - 7 * DAY)
    for (const stale of [
      { startedAt: NOW - 7 * DAY - 1 },
      { version: 2 },
      { key: 'f'.repeat(32) },
      { startedAt: String(NOW) },
    ]) {
      await write(stale)
      expect(await journal.read(key), JSON.stringify(stale)).toBeUndefined()
    }
    await writeFile(journal.pathOf(key), 'null')
    expect(await journal.read(key)).toBeUndefined()
  })

  it('a torn entry (killed mid-write) reads as an upload that may have begun', async () => {
    const journal = journalIn()
    const key = journal.keyOf(parts)
    await writeFile(journal.pathOf(key), '{"version": 1, "key": ')
    expect(await journal.read(key)).toEqual({
      version: 1,
      key,
      startedAt: 0,
      state: 'submitting',
      pieDigest: '',
      service: '',
      endpoint: 'l2-pie',
      params: {},
    })
  })

  it('an entry that is not a regular file is refused, naming it; peek reads it as none', async () => {
    const journal = journalIn()
    const key = journal.keyOf(parts)
    await writeFile(join(dir, 'elsewhere'), JSON.stringify(entryOf(journal)))
    await symlink(join(dir, 'elsewhere'), journal.pathOf(key))
    await expect(journal.read(key)).rejects.toThrow(
      `The submission journal file ${journal.pathOf(key)} is a symbolic link, not a regular file`,
    )
    expect(await journal.peek(key)).toEqual({ entry: undefined, liveOwner: undefined })
  })

  it("peek: a settled entry is none; the lock's owner named only while it runs", async () => {
    const journal = journalIn()
    const key = journal.keyOf(parts)
    await journal.write(entryOf(journal, { state: 'settled' }))
    expect((await journal.peek(key)).entry).toBeUndefined()
    await journal.write(entryOf(journal, { state: 'submitting', provingQueryId: undefined }))
    expect((await journal.peek(key)).entry?.state).toBe('submitting')
    const alive = { pid: process.pid, host: hostname(), since: NOW }
    await writeFile(journal.lockPathOf(key), JSON.stringify(alive))
    expect((await journal.peek(key)).liveOwner).toEqual(alive)
    await writeFile(journal.lockPathOf(key), JSON.stringify({ ...alive, pid: 2 ** 22 + 1 }))
    expect((await journal.peek(key)).liveOwner).toBeUndefined()
    await writeFile(journal.lockPathOf(key), 'torn')
    expect((await journal.peek(key)).liveOwner).toBeUndefined()
  })

  it("the recorded query ids: every entry's of the folder (more than one batch of reads), none of other files", async () => {
    const journal = journalIn()
    const ids: string[] = []
    for (let index = 0; index < 70; index++) {
      const each = { ...parts, pieDigest: index.toString(16).padStart(64, '0') }
      const id = `q-${index}`
      ids.push(id)
      await journal.write(entryOf(journal, { provingQueryId: id }, each))
    }
    await journal.write(
      entryOf(journal, { provingQueryId: undefined, state: 'submitting' }, { ...parts, pieDigest: 'c'.repeat(64) }),
    )
    await writeFile(join(dir, 'notes.json'), JSON.stringify({ provingQueryId: 'q-notes' }))
    expect([...(await journal.recordedQueryIds())].sort()).toEqual(ids.sort())
    expect(await journalIn(join(dir, 'absent')).recordedQueryIds()).toEqual(new Set())
  })
})

describe('proving journal list and clear', () => {
  it('lists every key of the folder once, sorted, with its entry, lock and why one cannot be used', async () => {
    const journal = journalIn()
    expect(await journalIn(join(dir, 'absent')).list()).toEqual([])
    const fresh = entryOf(journal)
    const oldParts = { ...parts, pieDigest: 'b'.repeat(64) }
    const old = entryOf(journal, { startedAt: NOW - 8 * DAY }, oldParts)
    await journal.write(fresh)
    await journal.write(old)
    const alive = { pid: process.pid, host: hostname(), since: NOW }
    await writeFile(journal.lockPathOf(fresh.key), JSON.stringify(alive))
    const lockOnly = 'c'.repeat(32)
    await writeFile(journal.lockPathOf(lockOnly), 'not json')
    const linked = 'd'.repeat(32)
    await symlink('/nowhere', journal.pathOf(linked))
    const torn = 'e'.repeat(32)
    await writeFile(journal.pathOf(torn), '{')
    // Not the journal's: other names, upper case, a waiting mark.
    await writeFile(join(dir, `${'F'.repeat(32)}.json`), '{}')
    await writeFile(join(dir, 'readme.json'), '{}')
    // Names that only contain a key: a temporary file of a write, one with a prefix.
    await writeFile(join(dir, `${fresh.key}.json.1.x.tmp`), '{}')
    await writeFile(join(dir, `0${'9'.repeat(32)}.json`), '{}')
    await writeFile(join(dir, `${fresh.key}.waiting.1.x`), '')
    const listed = await journal.list()
    const byKey = new Map(listed.map((item) => [item.key, item]))
    expect(listed.map((item) => item.key)).toEqual([fresh.key, old.key, lockOnly, linked, torn].sort())
    expect(byKey.get(fresh.key)).toEqual({
      key: fresh.key,
      path: journal.pathOf(fresh.key),
      entry: fresh,
      expired: false,
      lock: { owner: alive, status: 'alive' },
    })
    expect(byKey.get(old.key)).toEqual({ key: old.key, path: journal.pathOf(old.key), entry: old, expired: true })
    expect(byKey.get(lockOnly)).toEqual({ key: lockOnly, path: journal.pathOf(lockOnly), lock: { status: 'dead' } })
    expect(byKey.get(linked)?.problem).toBe(
      `The submission journal file ${journal.pathOf(linked)} is a symbolic link, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
    )
    expect(byKey.get(torn)?.problem).toMatch(/^unreadable \(.+\)$/)
  })

  it("a lock that is not a regular file is named as the problem (an entry's own problem first)", async () => {
    const journal = journalIn()
    const key = journal.keyOf(parts)
    await journal.write(entryOf(journal))
    await mkdir(journal.lockPathOf(key))
    const [item] = await journal.list()
    expect(item?.problem).toBe(
      `The submission journal file ${journal.lockPathOf(key)} is a folder, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
    )
    // Both unusable: the entry's problem is the one named.
    await journal.remove(key)
    await mkdir(journal.pathOf(key))
    const [both] = await journal.list()
    expect(both?.problem).toBe(
      `The submission journal file ${journal.pathOf(key)} is a folder, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
    )
    // An entry without a numeric start time is shown, not taken for expired.
    await rm(journal.pathOf(key), { recursive: true })
    await writeFile(journal.pathOf(key), JSON.stringify({ ...entryOf(journal), startedAt: 'long ago' }))
    await rm(journal.lockPathOf(key), { recursive: true })
    const [timeless] = await journal.list()
    expect(timeless).toMatchObject({ expired: false, entry: { startedAt: 'long ago' } })
  })

  it("clear removes the key's entry, lock and waiting marks, nothing of another key; a live run's lock of this machine is left alone", async () => {
    const journal = journalIn()
    const key = journal.keyOf(parts)
    const other = journal.keyOf({ ...parts, pieDigest: 'b'.repeat(64) })
    await journal.write(entryOf(journal))
    await journal.write(entryOf(journal, {}, { ...parts, pieDigest: 'b'.repeat(64) }))
    const alive = { pid: process.pid, host: hostname(), since: NOW }
    await writeFile(journal.lockPathOf(key), JSON.stringify(alive))
    expect(await journal.clear(key)).toEqual({ removed: [], live: alive })
    await writeFile(journal.lockPathOf(key), JSON.stringify({ ...alive, host: 'another-machine' }))
    await writeFile(join(dir, `${key}.waiting.1.x`), '')
    await mkdir(join(dir, `${key}.waiting.2.y`))
    const { removed } = await journal.clear(key)
    expect(removed.sort()).toEqual(
      [
        journal.pathOf(key),
        journal.lockPathOf(key),
        join(dir, `${key}.waiting.1.x`),
        join(dir, `${key}.waiting.2.y`),
      ].sort(),
    )
    expect(await readdir(dir)).toEqual([`${other}.json`])
    expect(await journalIn(join(dir, 'absent')).clear(key)).toEqual({ removed: [] })
  })
})

describe("the owner's closing", () => {
  it('nobody waiting: the lock goes and the entry is forgotten', async () => {
    const journal = journalIn()
    await journal.open()
    const key = journal.keyOf(parts)
    await journal.write(entryOf(journal))
    const lock = await journal.lock(key)
    if (!lock.taken) throw new Error('lock not taken')
    await journal.settle(key, lock.release)
    expect(await readdir(dir)).toEqual([])
  })

  it('a run waiting: the entry is kept as settled, signed by this run, for it; with no id, forgotten', async () => {
    const journal = journalIn()
    await journal.open()
    const key = journal.keyOf(parts)
    await journal.write(entryOf(journal, { state: 'submitted', provingQueryId: 'q-7' }))
    const unmark = await journal.markWaiting(key)
    const lock = await journal.lock(key)
    if (!lock.taken) throw new Error('lock not taken')
    await journal.settle(key, lock.release)
    expect(await journal.read(key)).toMatchObject({
      state: 'settled',
      provingQueryId: 'q-7',
      owner: { pid: process.pid, host: hostname() },
    })
    expect(await readdir(dir)).not.toContain(`${key}.lock`)
    await journal.write(entryOf(journal, { state: 'submitting', provingQueryId: undefined }))
    await journal.settle(key, async () => {})
    expect(await journal.read(key)).toBeUndefined()
    await unmark()
  })

  it('a release that fails is swallowed: the id was reported', async () => {
    const journal = journalIn()
    await expect(
      journal.settle(journal.keyOf(parts), async () => {
        throw new Error('gone')
      }),
    ).resolves.toBeUndefined()
  })
})

describe('recordedResult: what an entry asked of a query, for query wait', () => {
  async function recorded(entries: Record<string, unknown>[], query = 'q-1', service = parts.service, now = NOW) {
    const journal = journalIn()
    await journal.open()
    for (const [index, fields] of entries.entries()) {
      const each = { ...parts, pieDigest: index.toString(16).padStart(64, '0') }
      await journal.write({ ...entryOf(journal, {}, each), ...fields } as JournalEntry)
    }
    return recordedResult(dir, query, service, now)
  }

  it("the L2 endpoint's kind, or the general submission's result (PROOF_GENERATION when none was sent)", async () => {
    expect(await recorded([{}])).toBe('PROOF_VERIFICATION_ON_L2')
    expect(await recorded([{ endpoint: 'general', params: { result: 'FACT_VERIFICATION' } }])).toBe('FACT_VERIFICATION')
    expect(await recorded([{ endpoint: 'general', params: {} }])).toBe('PROOF_GENERATION')
    expect(await recorded([{ endpoint: 'general', params: { result: 3 } }])).toBe('PROOF_GENERATION')
    expect(await recorded([{ endpoint: 'general' }].map((fields) => ({ ...fields, params: undefined })))).toBe(
      'PROOF_GENERATION',
    )
  })

  it('only an entry of this query, of this service, of this version, of the last 7 days', async () => {
    expect(await recorded([{}], 'q-2')).toBeUndefined()
    expect(await recorded([{}], 'q-1', 'https://other.example')).toBeUndefined()
    expect(await recorded([{ version: 2 }])).toBeUndefined()
    expect(await recorded([{ startedAt: NOW - 7 * DAY - 1 }])).toBeUndefined()
    expect(await recorded([{ startedAt: NOW - 7 * DAY }])).toBe('PROOF_VERIFICATION_ON_L2')
    expect(await recorded([{ startedAt: undefined }])).toBeUndefined()
    // Among others: a torn entry, another query's, then this one.
    await writeFile(join(dir, `${'0'.repeat(32)}.json`), '{')
    await writeFile(join(dir, `${'f'.repeat(32)}.json`), 'null')
    expect(
      await recorded([{ provingQueryId: 'q-9' }, { endpoint: 'general', params: { result: 'FACT_VERIFICATION' } }]),
    ).toBe('FACT_VERIFICATION')
    expect(await recordedResult(join(dir, 'absent'), 'q-1', parts.service, NOW)).toBeUndefined()
  })

  it("only the journal's entry files: not a temporary file of a write, a copy, a prefixed name", async () => {
    const journal = journalIn()
    await journal.open()
    const entry = entryOf(journal, { provingQueryId: 'q-5' })
    for (const name of [`${entry.key}.json.1.x.tmp`, `${entry.key}.json.bak`, `x${entry.key}.json`, 'notes.json']) {
      await writeFile(join(dir, name), JSON.stringify(entry))
    }
    expect(await recordedResult(dir, 'q-5', parts.service, NOW)).toBeUndefined()
    await journal.write(entry)
    expect(await recordedResult(dir, 'q-5', parts.service, NOW)).toBe('PROOF_VERIFICATION_ON_L2')
  })
})
