import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { AbortedError } from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { inspectPie, type PieInspection } from '../../../src/pie/index.ts'
import {
  EarlierUploadOutcomeUnknownError,
  type JournalEntry,
  type JournalParts,
  SubmissionJournal,
  submitWithJournal,
} from '../../../src/pipeline/journal.ts'
import { KeyQueries } from '../../../src/pipeline/key-queries.ts'
import { EXAMPLE_PIE } from '../../helpers/example-pie.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

/**
 * An upload an earlier run left unfinished (killed before the service's answer): which of the
 * key's queries since it began are its candidates (by the service's clock, the journal's own
 * left out), the one whose facts are this PIE's followed, none of them proving it submitted once,
 * and anything else a refusal that names them; never a second payment for a query that exists.
 */

let dir: string
let inspection: PieInspection
beforeAll(async () => {
  inspection = await inspectPie(EXAMPLE_PIE, { sha256: false })
})
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-recover-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const STARTED = Date.parse('2026-01-10T00:00:00Z')
const at = (ms: number) => new Date(ms).toISOString()
const partsOf = (index: number, endpoint: JournalParts['endpoint'] = 'l2-pie'): JournalParts => ({
  pieDigest: index.toString(16).padStart(64, '0'),
  service: 'https://proving.example',
  endpoint,
  params: { layout: 'auto' },
})

type Listed = { id: string; createdAt?: string | null }
type Final = { status: string; sharpFactHash?: string; integrityFactHash?: string } | Error
type Service = {
  listed?: Listed[] | Error
  /** The client's measured offset (the service's clock minus ours). */
  offset?: number | undefined
  /** Each candidate's final record (DONE with facts, FAILED), or the failure that ends its wait. */
  finals?: Record<string, Final>
  /** Waits that end only when the test says so. */
  held?: Map<string, (final: Final) => void>
  waited?: { id: string; timeoutMs: number | undefined; signal: AbortSignal }[]
  lists?: number
}
function clientOf(service: Service): ProvingClient {
  service.waited ??= []
  return {
    // A clock of its own: the list's requests take their turns of the budget without waiting in wall time.
    http: { serviceOffsetMs: () => service.offset, clock: new FakeClock() },
    checkService: async () => {},
    listQueries: async ({ limit = 10, offset = 0 }: { limit?: number; offset?: number }) => {
      service.lists = (service.lists ?? 0) + 1
      if (service.listed instanceof Error) throw service.listed
      const records = service.listed ?? []
      return { provingQueries: records.slice(offset, offset + limit), total: records.length }
    },
    waitForQuery: (id: string, options: { timeoutMs?: number; signal: AbortSignal }) => {
      service.waited!.push({ id, timeoutMs: options.timeoutMs, signal: options.signal })
      const settle = (final: Final) =>
        final instanceof Error ? Promise.reject(final) : Promise.resolve({ provingQuery: { id, ...final } })
      if (service.held) {
        return new Promise((resolve, reject) => {
          service.held!.set(id, (final) => settle(final).then(resolve, reject))
          options.signal.addEventListener('abort', () => reject(options.signal.reason))
        })
      }
      return settle(service.finals?.[id] ?? { status: 'IN_PROGRESS' })
    },
  } as unknown as ProvingClient
}

function logger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} }
}

/** The entry a run killed mid-upload at STARTED left. */
async function unfinished(fields: Partial<JournalEntry> = {}, parts = partsOf(0)) {
  const journal = new SubmissionJournal(dir, () => STARTED + 60_000)
  await journal.open()
  const key = journal.keyOf(parts)
  await journal.write({
    version: 1,
    key,
    ...parts,
    startedAt: STARTED,
    state: 'submitting',
    serviceOffsetMs: 0,
    ...fields,
  })
  return { journal, parts, key, where: `(journal ${journal.pathOf(key)})` }
}

type Options = Partial<Parameters<typeof submitWithJournal>[0]>
async function rerun(journal: SubmissionJournal, parts: JournalParts, client: ProvingClient, options: Options = {}) {
  let submits = 0
  const log = (options.logger as ReturnType<typeof logger> | undefined) ?? logger()
  try {
    const result = await submitWithJournal({
      journal,
      parts,
      client,
      forceNew: false,
      ...options,
      logger: log,
      submit: async () => ({ provingQueryId: `q-new-${++submits}` }),
    })
    // The run ends without the outcome (nothing here waits for it): its lock goes, its entry stays.
    await result.keep?.()
    return { result, submits, warnings: log.warnings, error: undefined }
  } catch (error) {
    return { result: undefined, submits, warnings: log.warnings, error: error as EarlierUploadOutcomeUnknownError }
  }
}

const proving = (): Final => ({
  status: 'DONE',
  sharpFactHash: inspection.sharpFactHash,
  integrityFactHash: inspection.integrityFactHash,
})
const otherFacts: Final = { status: 'DONE', sharpFactHash: `0x${'1'.repeat(64)}` }

describe("the candidates of an unfinished upload: the key's queries since it began, by the service's clock", () => {
  async function candidatesOf(listed: Listed[], fields: Partial<JournalEntry>, offset?: number) {
    const { journal, parts } = await unfinished(fields)
    const run = await rerun(journal, parts, clientOf({ listed, offset }))
    if (run.error === undefined) return { submits: run.submits, ids: [] as string[] }
    return {
      submits: run.submits,
      ids: run.error.nextStep?.kind === 'follow-candidates' ? [...run.error.nextStep.ids] : ['(other refusal)'],
    }
  }

  it('with the offset measured when the upload began: 2 s of margin before it, not a millisecond more', async () => {
    const offset = 30_000
    const listed = [
      { id: 'q-edge', createdAt: at(STARTED + offset - 2_000) },
      { id: 'q-before', createdAt: at(STARTED + offset - 2_001) },
    ]
    expect(await candidatesOf(listed, { serviceOffsetMs: offset })).toEqual({ submits: 0, ids: ['q-edge'] })
  })

  it("the entry's offset, not the one the client measures now (the service's clock may have moved since)", async () => {
    const listed = [{ id: 'q-a', createdAt: at(STARTED - 10_000) }]
    // By the entry's offset (-20 s) the query came after the upload began; by the client's (0) before.
    expect(await candidatesOf(listed, { serviceOffsetMs: -20_000 }, 0)).toEqual({ submits: 0, ids: ['q-a'] })
    expect(await candidatesOf(listed, { serviceOffsetMs: 0 }, -20_000)).toEqual({ submits: 1, ids: [] })
  })

  it("an entry without an offset takes the client's; with neither, five minutes of skew count", async () => {
    const listed = [{ id: 'q-a', createdAt: at(STARTED + 8_000) }]
    expect(await candidatesOf(listed, { serviceOffsetMs: undefined }, 10_001)).toEqual({ submits: 1, ids: [] })
    expect(await candidatesOf(listed, { serviceOffsetMs: undefined }, 9_000)).toEqual({ submits: 0, ids: ['q-a'] })
    const skewed = [
      { id: 'q-edge', createdAt: at(STARTED - 300_000) },
      { id: 'q-before', createdAt: at(STARTED - 300_001) },
    ]
    expect(await candidatesOf(skewed, { serviceOffsetMs: undefined })).toEqual({ submits: 0, ids: ['q-edge'] })
  })

  it("a record without a creation time, or with one that is not a date, may be the upload's: a candidate", async () => {
    const listed = [{ id: 'q-none' }, { id: 'q-null', createdAt: null }, { id: 'q-garbled', createdAt: 'yesterday' }]
    expect(await candidatesOf(listed, {})).toEqual({ submits: 0, ids: ['q-none', 'q-null', 'q-garbled'] })
  })

  it("the journal's recorded queries and the run's own are not candidates", async () => {
    const { journal, parts } = await unfinished()
    const other = partsOf(1)
    await journal.write({
      version: 1,
      key: journal.keyOf(other),
      ...other,
      startedAt: STARTED,
      state: 'submitted',
      provingQueryId: 'q-recorded',
    })
    const listed = ['q-recorded', 'q-own', 'q-stranger'].map((id) => ({ id, createdAt: at(STARTED + 1_000) }))
    const client = clientOf({ listed })
    const queries = new KeyQueries(client)
    queries.created.add('q-own')
    const run = await rerun(journal, parts, client, { queries })
    expect(run.submits).toBe(0)
    expect(run.error?.nextStep).toEqual({ kind: 'follow-candidates', ids: ['q-stranger'], key: journal.keyOf(parts) })
  })

  it('newest first, the list is read until a whole page is older than the upload: a recent query among older ones (another order) is still found', async () => {
    // 99 older records, then a recent one: the order is broken, the list is read to its end.
    const listed = [
      ...Array.from({ length: 99 }, (_, index) => ({ id: `q-old-${index}`, createdAt: at(STARTED - 60_000 - index) })),
      { id: 'q-late', createdAt: at(STARTED + 5_000) },
      ...Array.from({ length: 150 }, (_, index) => ({
        id: `q-older-${index}`,
        createdAt: at(STARTED - 120_000 - index),
      })),
    ]
    expect(await candidatesOf(listed, {})).toEqual({ submits: 0, ids: ['q-late'] })
  })

  it('the order is checked, not assumed: a record without a time, or one newer than the one before it, has the list read to its end', async () => {
    const page = (from: number) =>
      Array.from({ length: 100 }, (_, index) => ({
        id: `q-old-${from + index}`,
        createdAt: at(STARTED - 60_000 - from - index),
      }))
    const late = { id: 'q-late', createdAt: at(STARTED + 5_000) }
    expect(await candidatesOf([{ id: 'q-timeless', createdAt: null }, ...page(0), late], {})).toEqual({
      submits: 0,
      ids: ['q-timeless', 'q-late'],
    })
    // Two older records, the second newer than the first: then a page of older ones, and the late one.
    const swapped = [
      { id: 'q-a', createdAt: at(STARTED - 120_000) },
      { id: 'q-b', createdAt: at(STARTED - 60_000) },
      ...page(100),
      late,
    ]
    expect(await candidatesOf(swapped, {})).toEqual({ submits: 0, ids: ['q-late'] })
  })

  it('records of the same time are in order: a page of them older than the upload ends the list', async () => {
    const same = Array.from({ length: 100 }, (_, index) => ({ id: `q-old-${index}`, createdAt: at(STARTED - 60_000) }))
    const service: Service = { listed: [...same, { id: 'q-late', createdAt: at(STARTED + 5_000) }] }
    const { journal, parts } = await unfinished()
    expect((await rerun(journal, parts, clientOf(service))).submits).toBe(1)
    expect(service.lists).toBe(1)
  })

  it('a list too long to read with none of it recent is still a refusal: at least 0 queries, none named', async () => {
    const old = Array.from({ length: 5_001 }, (_, index) => ({
      id: `q-${index}`,
      createdAt: at(STARTED - 60_000 - 5_001 + index),
    }))
    const { journal, parts } = await unfinished()
    const run = await rerun(journal, parts, clientOf({ listed: old }))
    expect(run.submits).toBe(0)
    expect(run.error!.metaMessages![0]).toMatch(
      /^Your key has at least 0 queries since the upload began that this journal did not record; one may be this PIE's/,
    )
    expect(run.error!.nextStep).toMatchObject({ kind: 'follow-candidates', ids: [] })
  })

  it('a recent query past a page of older ones in a list newest first is not read: the list stops there', async () => {
    const service: Service = {
      listed: [
        { id: 'q-recent', createdAt: at(STARTED + 5_000) },
        ...Array.from({ length: 100 }, (_, index) => ({
          id: `q-old-${index}`,
          createdAt: at(STARTED - 60_000 - index),
        })),
        ...Array.from({ length: 150 }, (_, index) => ({
          id: `q-older-${index}`,
          createdAt: at(STARTED - 120_000 - index),
        })),
      ],
    }
    const { journal, parts } = await unfinished()
    const run = await rerun(journal, parts, clientOf(service))
    expect(run.error!.metaMessages![0]).toMatch(
      /^Your key has 1 query since the upload began that this journal did not record \(q-recent\)/,
    )
    // 101 records: two pages of 100, not the third.
    expect(service.lists).toBe(2)
  })
})

describe('the refusal: the candidates named, the entry kept, nothing sent', () => {
  it('names the first five of many, with the key to follow them by', async () => {
    const listed = Array.from({ length: 7 }, (_, index) => ({
      id: `q-${index}`,
      createdAt: at(STARTED + 10_000 - index),
    }))
    const { journal, parts, key, where } = await unfinished()
    const run = await rerun(journal, parts, clientOf({ listed }))
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    expect(run.error!.shortMessage).toBe(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and a query since may be its own: nothing was sent.`,
    )
    expect(run.error!.metaMessages).toEqual([
      "Your key has 7 queries since the upload began that this journal did not record (q-0, q-1, q-2, q-3, q-4); one may be this PIE's.",
      "Nothing is sent while the entry stands: submitting again would pay twice if one of them is this PIE's.",
      'Follow them; remove the entry only once you know that none of them is.',
    ])
    expect(run.error!.nextStep).toEqual({ kind: 'follow-candidates', ids: ['q-0', 'q-1', 'q-2', 'q-3', 'q-4'], key })
    expect((await journal.read(key))?.state).toBe('submitting')
  })

  it('a list that cannot be read is a refusal saying to look among the queries; a cancellation is passed on as one', async () => {
    const { journal, parts, where } = await unfinished()
    const failure = new Error('socket closed')
    const run = await rerun(journal, parts, clientOf({ listed: failure }))
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    expect(run.error!.shortMessage).toBe(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}, and your queries could not be listed to check it.`,
    )
    expect(run.error!.metaMessages).toEqual([
      'Nothing was sent. Look among your queries; submit the PIE again as a new query only if none came of it.',
    ])
    expect(run.error!.nextStep).toEqual({ kind: 'look-for-query', thenSubmitAnew: true })
    expect(run.error!.cause).toBe(failure)
    const cancelled = await rerun(journal, parts, clientOf({ listed: new AbortedError('cancelled') }))
    expect(cancelled.error).toBeInstanceOf(AbortedError)
    expect(cancelled.error).not.toBeInstanceOf(EarlierUploadOutcomeUnknownError)
  })

  it('the general submission: its dedupId decides, the list is not read and the PIE is submitted through the client', async () => {
    const service: Service = { listed: [{ id: 'q-a', createdAt: at(STARTED + 1_000) }] }
    const { journal, parts, where } = await unfinished({}, partsOf(0, 'general'))
    const run = await rerun(journal, parts, clientOf(service))
    expect(run.submits).toBe(1)
    expect(service.lists).toBeUndefined()
    expect(run.warnings).toContain(
      `An earlier upload of this PIE to ${parts.service} did not finish ${where}; its dedupId decides whether a query exists.`,
    )
  })

  it('the one candidate of a caller that checks facts is followed, saying how to submit anyway', async () => {
    const { journal, parts, key, where } = await unfinished()
    const run = await rerun(journal, parts, clientOf({ listed: [{ id: 'q-only', createdAt: at(STARTED + 1_000) }] }), {
      factsChecked: true,
      forceNewHint: 'pass --new',
    })
    expect(run.submits).toBe(0)
    expect(run.result).toMatchObject({ provingQueryId: 'q-only', resumed: true })
    expect(run.warnings).toContain(
      `Following query q-only, submitted by an earlier run: the only query of your key since its upload began ${where}; its facts are checked. Pass --new to submit anyway.`,
    )
    expect(await journal.read(key)).toMatchObject({ state: 'submitted', provingQueryId: 'q-only' })
  })

  it('two candidates are not followed on a fact check to come: refused, naming both', async () => {
    const { journal, parts } = await unfinished()
    const listed = [
      { id: 'q-a', createdAt: at(STARTED + 2_000) },
      { id: 'q-b', createdAt: at(STARTED + 1_000) },
    ]
    const run = await rerun(journal, parts, clientOf({ listed }), { factsChecked: true })
    expect(run.submits).toBe(0)
    expect(run.error!.metaMessages![0]).toMatch(
      /^Your key has 2 queries since the upload began that this journal did not record \(q-a, q-b\)/,
    )
  })
})

describe('the candidates matched by their facts', () => {
  it("the one whose facts are this PIE's is followed, whatever the others are; each waited for with the run's timeout", async () => {
    const listed = ['q-other', 'q-failed', 'q-mine'].map((id, index) => ({
      id,
      createdAt: at(STARTED + 3_000 - index),
    }))
    const service: Service = {
      listed,
      finals: { 'q-other': otherFacts, 'q-failed': { status: 'FAILED' }, 'q-mine': proving() },
    }
    const { journal, parts, key, where } = await unfinished()
    const run = await rerun(journal, parts, clientOf(service), { inspection, timeoutMs: 45_000 })
    expect(run.submits).toBe(0)
    expect(run.result).toMatchObject({ provingQueryId: 'q-mine', resumed: true })
    expect(run.warnings).toEqual([
      `An earlier upload of this PIE did not finish ${where}, and 3 queries came since. Waiting for them to end to compare the facts; nothing is sent meanwhile.`,
      `Following query q-mine, submitted by an earlier run whose upload of this PIE ended before its answer ${where}: its facts are this PIE's.`,
    ])
    expect(service.waited!.map(({ id, timeoutMs }) => [id, timeoutMs])).toEqual([
      ['q-other', 45_000],
      ['q-failed', 45_000],
      ['q-mine', 45_000],
    ])
    expect(await journal.read(key)).toMatchObject({ state: 'submitted', provingQueryId: 'q-mine' })
  })

  it("a FAILED query with this PIE's facts proves nothing: none proving it, the PIE is submitted once", async () => {
    const listed = [{ id: 'q-failed', createdAt: at(STARTED + 1_000) }]
    const service: Service = { listed, finals: { 'q-failed': { ...(proving() as object), status: 'FAILED' } } }
    const { journal, parts, where } = await unfinished()
    const run = await rerun(journal, parts, clientOf(service), { inspection })
    expect(run.submits).toBe(1)
    expect(run.warnings).toEqual([
      `An earlier upload of this PIE did not finish ${where}, and 1 query came since. Waiting for it to end to compare the facts; nothing is sent meanwhile.`,
      `None of the 1 query since the earlier upload began ${where} proves this PIE (other facts, or FAILED): it is submitted now, once.`,
    ])
  })

  it('every candidate ended with other facts: submitted once, saying how many', async () => {
    const listed = [
      { id: 'q-a', createdAt: at(STARTED + 2_000) },
      { id: 'q-b', createdAt: at(STARTED + 1_000) },
    ]
    const service: Service = { listed, finals: { 'q-a': otherFacts, 'q-b': { status: 'DONE' } } }
    const { journal, parts, where } = await unfinished()
    const run = await rerun(journal, parts, clientOf(service), { inspection })
    expect(run.submits).toBe(1)
    expect(run.warnings.at(-1)).toBe(
      `None of the 2 queries since the earlier upload began ${where} proves this PIE (other facts, or FAILED): it is submitted now, once.`,
    )
  })

  it('a candidate that could not be followed to its end leaves it unknown: refused, unless another proves this PIE', async () => {
    const listed = [
      { id: 'q-lost', createdAt: at(STARTED + 2_000) },
      { id: 'q-a', createdAt: at(STARTED + 1_000) },
    ]
    const { journal, parts } = await unfinished()
    const run = await rerun(
      journal,
      parts,
      clientOf({ listed, finals: { 'q-lost': new Error('timed out'), 'q-a': otherFacts } }),
      { inspection },
    )
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    expect(run.error!.nextStep).toMatchObject({ kind: 'follow-candidates', ids: ['q-lost', 'q-a'] })
    const again = await unfinished()
    const found = await rerun(
      again.journal,
      again.parts,
      clientOf({ listed, finals: { 'q-lost': new Error('timed out'), 'q-a': proving() } }),
      { inspection },
    )
    expect(found.result?.provingQueryId).toBe('q-a')
  })

  it('more than 200 candidates are not waited for: refused, naming them', async () => {
    const many = (count: number) =>
      Array.from({ length: count }, (_, index) => ({ id: `q-${index}`, createdAt: at(STARTED + 10_000 - index) }))
    const service: Service = { listed: many(201) }
    const { journal, parts } = await unfinished()
    const run = await rerun(journal, parts, clientOf(service), { inspection })
    expect(service.waited).toEqual([])
    expect(run.error!.metaMessages![0]).toMatch(/^Your key has 201 queries since the upload began/)
    const bounded: Service = { listed: many(200), finals: { 'q-199': proving() } }
    const again = await unfinished()
    expect((await rerun(again.journal, again.parts, clientOf(bounded), { inspection })).result?.provingQueryId).toBe(
      'q-199',
    )
    expect(bounded.waited).toHaveLength(200)
  })

  it('a list too long to read is not matched: refused as a lower bound', async () => {
    const service: Service = {
      listed: Array.from({ length: 5_001 }, (_, index) => ({ id: `q-${index}`, createdAt: null })),
    }
    const { journal, parts } = await unfinished()
    const run = await rerun(journal, parts, clientOf(service), { inspection })
    expect(service.waited).toEqual([])
    expect(run.error!.metaMessages![0]).toMatch(/^Your key has at least 5000 queries since the upload began/)
  })

  it('cancelled while waiting: the cancellation, not a submission', async () => {
    const service: Service = { listed: [{ id: 'q-a', createdAt: at(STARTED + 1_000) }], held: new Map() }
    const { journal, parts, key } = await unfinished()
    const controller = new AbortController()
    const running = rerun(journal, parts, clientOf(service), { inspection, signal: controller.signal })
    await vi.waitFor(() => expect(service.held!.size).toBe(1))
    const reason = new Error('Ctrl-C')
    controller.abort(reason)
    const run = await running
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(AbortedError)
    expect((run.error as unknown as AbortedError).shortMessage).toBe(
      'Stopped waiting for the queries of an earlier upload: cancelled.',
    )
    expect(run.error!.cause).toBe(reason)
    expect((await journal.read(key))?.state).toBe('submitting')
  })
})

describe('a candidate is waited for once per client, whichever rows ask', () => {
  it('two rows of a killed batch share one wait per candidate, and each follows the one proving its PIE', async () => {
    const service: Service = {
      listed: [
        { id: 'q-a', createdAt: at(STARTED + 2_000) },
        { id: 'q-b', createdAt: at(STARTED + 1_000) },
      ],
      held: new Map(),
    }
    const client = clientOf(service)
    const first = await unfinished({}, partsOf(1))
    const second = await unfinished({}, partsOf(2))
    const logs = [logger(), logger()]
    const runs = [
      rerun(first.journal, first.parts, client, { inspection, logger: logs[0] }),
      rerun(second.journal, second.parts, client, { inspection, logger: logs[1] }),
    ]
    // Both rows are waiting (each said so), on the same two waits.
    await vi.waitFor(() =>
      expect(logs.map((log) => log.warnings.some((line) => line.startsWith('An earlier upload')))).toEqual([
        true,
        true,
      ]),
    )
    await vi.waitFor(() => expect(service.held!.size).toBe(2))
    service.held!.get('q-a')!(otherFacts)
    service.held!.get('q-b')!(proving())
    const [one, two] = await Promise.all(runs)
    expect([one?.result?.provingQueryId, two?.result?.provingQueryId]).toEqual(['q-b', 'q-b'])
    expect(service.waited!.map(({ id }) => id)).toEqual(['q-a', 'q-b'])
    // A later row of the same client reads q-a's ended record, without waiting again; q-b is
    // recorded now (the rows' entries), so not a candidate: nothing proves the PIE, submitted once.
    const third = await unfinished({}, partsOf(3))
    const later = await rerun(third.journal, third.parts, client, { inspection })
    expect(later.submits).toBe(1)
    expect(later.warnings.at(-1)).toMatch(/^None of the 1 query since the earlier upload began/)
    expect(service.waited).toHaveLength(2)
  })

  it('a wait that failed is asked again by the next row (its failure is not kept)', async () => {
    const service: Service = {
      listed: [{ id: 'q-a', createdAt: at(STARTED + 1_000) }],
      finals: { 'q-a': new Error('timed out') },
    }
    const client = clientOf(service)
    const first = await unfinished({}, partsOf(1))
    expect((await rerun(first.journal, first.parts, client, { inspection })).error).toBeInstanceOf(
      EarlierUploadOutcomeUnknownError,
    )
    service.finals!['q-a'] = proving()
    const second = await unfinished({}, partsOf(2))
    expect((await rerun(second.journal, second.parts, client, { inspection })).result?.provingQueryId).toBe('q-a')
    expect(service.waited).toHaveLength(2)
  })

  it('one row cancelled leaves the shared wait to the row still waiting; the last one to stop ends it', async () => {
    const service: Service = { listed: [{ id: 'q-a', createdAt: at(STARTED + 1_000) }], held: new Map() }
    const client = clientOf(service)
    const first = await unfinished({}, partsOf(1))
    const second = await unfinished({}, partsOf(2))
    const cancel = new AbortController()
    const logs = [logger(), logger()]
    const cancelled = rerun(first.journal, first.parts, client, { inspection, signal: cancel.signal, logger: logs[0] })
    const staying = rerun(second.journal, second.parts, client, { inspection, logger: logs[1] })
    // Both rows are waiting (each said so) before the first stops.
    await vi.waitFor(() =>
      expect(logs.map((log) => log.warnings.some((line) => line.startsWith('An earlier upload')))).toEqual([
        true,
        true,
      ]),
    )
    await vi.waitFor(() => expect(service.held!.size).toBe(1))
    const { signal } = service.waited![0]!
    cancel.abort(new Error('Ctrl-C'))
    expect((await cancelled).error).toBeInstanceOf(AbortedError)
    expect(signal.aborted).toBe(false)
    service.held!.get('q-a')!(proving())
    expect((await staying).result?.provingQueryId).toBe('q-a')
    expect(service.waited).toHaveLength(1)
    // A wait whose only row stops is ended, and asked afresh by the next.
    const lone = new AbortController()
    const third = await unfinished({}, partsOf(3))
    const other: Service = { listed: [{ id: 'q-c', createdAt: at(STARTED + 1_000) }], held: new Map() }
    const otherClient = clientOf(other)
    const running = rerun(third.journal, third.parts, otherClient, { inspection, signal: lone.signal })
    await vi.waitFor(() => expect(other.held!.size).toBe(1))
    lone.abort(new Error('Ctrl-C'))
    await running
    expect(other.waited![0]!.signal.aborted).toBe(true)
    other.held = undefined
    other.finals = { 'q-c': proving() }
    const fourth = await unfinished({}, partsOf(4))
    expect((await rerun(fourth.journal, fourth.parts, otherClient, { inspection })).result?.provingQueryId).toBe('q-c')
    expect(other.waited).toHaveLength(2)
  })
})
