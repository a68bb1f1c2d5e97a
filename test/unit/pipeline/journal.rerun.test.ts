import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { AbortedError } from '../../../src/core/errors.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import type { PieInspection } from '../../../src/pie/index.ts'
import {
  type JournalParts,
  SubmissionJournal,
  submitWithJournal,
  EarlierUploadOutcomeUnknownError,
} from '../../../src/pipeline/journal.ts'
import { KeyQueries } from '../../../src/pipeline/key-queries.ts'

/**
 * The re-run of a killed batch (issue 35): its own recorded queries are told apart from the
 * uploads that were in flight, the count of the others is true (every page, not the first 20),
 * and the refusal never advises --new (which would pay again for a query that exists).
 */

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-rerun-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

const STARTED = Date.parse('2026-01-10T00:00:00Z')
const at = (ms: number) => new Date(ms).toISOString()
const partsOf = (index: number): JournalParts => ({
  pieDigest: index.toString(16).padStart(64, '0'),
  service: 'https://proving.example',
  endpoint: 'l2-pie',
  params: { layout: 'auto' },
})

type Record = { id: string; createdAt: string | null }
/** A service whose list pages by limit and offset, as the emulator's does; counts the list requests. */
function pagingClient(records: Record[], options: { total?: boolean } = {}) {
  const asked: { limit: number; offset: number }[] = []
  const client = {
    http: { serviceOffsetMs: () => 0 },
    checkService: async () => {},
    listQueries: async ({ limit = 10, offset = 0 }: { limit?: number; offset?: number }) => {
      asked.push({ limit, offset })
      return {
        provingQueries: records.slice(offset, offset + limit),
        ...(options.total === false ? {} : { total: records.length }),
      }
    },
  } as unknown as ProvingClient
  return { client, asked }
}

function logger(): Logger & { warnings: string[] } {
  const warnings: string[] = []
  return { warnings, debug() {}, info() {}, warn: (message) => void warnings.push(message), error() {} }
}

/** A killed batch's journal: `recorded` finished uploads (their ids known), then one left `submitting`. */
async function killedBatch(recorded: number) {
  const journal = new SubmissionJournal(dir, () => STARTED + 60_000)
  await journal.open()
  for (let index = 1; index <= recorded; index++) {
    const parts = partsOf(index)
    await journal.write({
      version: 1,
      key: journal.keyOf(parts),
      ...parts,
      startedAt: STARTED,
      state: 'submitted',
      provingQueryId: `q-own-${index}`,
      serviceOffsetMs: 0,
    })
  }
  const unfinished = partsOf(0)
  await journal.write({
    version: 1,
    key: journal.keyOf(unfinished),
    ...unfinished,
    startedAt: STARTED,
    state: 'submitting',
    serviceOffsetMs: 0,
  })
  return { journal, unfinished }
}

async function rerun(journal: SubmissionJournal, parts: JournalParts, client: ProvingClient) {
  let submits = 0
  const log = logger()
  try {
    const result = await submitWithJournal({
      journal,
      parts,
      client,
      forceNew: false,
      logger: log,
      submit: async () => ({ provingQueryId: `q-new-${++submits}` }),
    })
    await result.settle?.()
    return { submits, warnings: log.warnings, error: undefined }
  } catch (error) {
    return { submits, warnings: log.warnings, error: error as EarlierUploadOutcomeUnknownError }
  }
}

describe('the re-run of a killed batch (issue 35)', () => {
  it("the batch's own 250 recorded queries (three pages) are not candidates: the unfinished upload created nothing, so it is submitted, once", async () => {
    const { journal, unfinished } = await killedBatch(250)
    const listed = Array.from({ length: 250 }, (_, index) => ({
      id: `q-own-${250 - index}`,
      createdAt: at(STARTED + 1_000 + (250 - index)),
    }))
    const { client, asked } = pagingClient(listed)
    const run = await rerun(journal, unfinished, client)
    expect(run.error).toBeUndefined()
    expect(run.submits).toBe(1)
    expect(run.warnings.join('\n')).toMatch(
      /lists no query since the upload began \(by its own clock\), so it is submitted now, once/,
    )
    // Every page at the largest size: 100, 100, 50.
    expect(asked).toEqual([
      { limit: 100, offset: 0 },
      { limit: 100, offset: 100 },
      { limit: 100, offset: 200 },
    ])
  })

  it("counts are true: 130 queries nobody recorded are 130, not one page's 20; the refusal never advises --new", async () => {
    const { journal, unfinished } = await killedBatch(3)
    const others = Array.from({ length: 130 }, (_, index) => ({
      id: `q-other-${index}`,
      createdAt: at(STARTED + 10_000 - index),
    }))
    const own = [1, 2, 3].map((index) => ({ id: `q-own-${index}`, createdAt: at(STARTED + 500) }))
    const { client } = pagingClient([...others, ...own, { id: 'q-old', createdAt: at(STARTED - 86_400_000) }])
    const run = await rerun(journal, unfinished, client)
    expect(run.submits).toBe(0)
    expect(run.error).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    // The whole message as hosts show it: the short line, then the explanation.
    const message = run.error!.message
    expect(message).toMatch(
      /Your key has 130 queries since the upload began that this journal did not record \(q-other-0, q-other-1, q-other-2, q-other-3, q-other-4\)/,
    )
    expect(message).not.toMatch(/rerun with --new|--new to submit/)
    // The entry stands: a later run refuses again rather than pay.
    expect((await journal.read(journal.keyOf(unfinished)))?.state).toBe('submitting')
  })

  it('a run that read its index of the key before the run it waited for created its query (then was killed) still finds that query: nothing is paid twice', async () => {
    const { journal, unfinished } = await killedBatch(0)
    const listed: Record[] = []
    const { client } = pagingClient(listed)
    // The waiting run's reuse lookup read the whole list: empty then.
    const queries = new KeyQueries(client)
    for await (const _ of queries.newestFirst()) void _
    expect(queries.complete).toBe(true)
    // The owner's upload reached the service, its answer never did.
    listed.push({ id: 'q-owner', createdAt: at(STARTED + 5_000) })
    let submits = 0
    const run = await submitWithJournal({
      journal,
      parts: unfinished,
      client,
      forceNew: false,
      logger: logger(),
      queries,
      submit: async () => ({ provingQueryId: `q-new-${++submits}` }),
    }).catch((error: unknown) => error)
    expect(submits).toBe(0)
    expect(run).toBeInstanceOf(EarlierUploadOutcomeUnknownError)
    expect((run as EarlierUploadOutcomeUnknownError).metaMessages?.[0]).toMatch(/q-owner/)
  })

  it('a list seen newest first stops at the first page with nothing as recent; one not in that order is read to its end', async () => {
    const { journal, unfinished } = await killedBatch(0)
    const old = Array.from({ length: 500 }, (_, index) => ({
      id: `q-old-${index}`,
      createdAt: at(STARTED - 10_000 - index),
    }))
    const newestFirst = pagingClient(old)
    expect((await rerun(journal, unfinished, newestFirst.client)).submits).toBe(1)
    expect(newestFirst.asked).toHaveLength(1)
    // Oldest first: the recent one is on the last page, and found there.
    const { journal: again, unfinished: same } = await killedBatch(0)
    const oldestFirst = pagingClient([...old].reverse().concat({ id: 'q-late', createdAt: at(STARTED + 5_000) }))
    const run = await rerun(again, same, oldestFirst.client)
    expect(run.submits).toBe(0)
    expect(run.error!.metaMessages?.[0]).toMatch(
      /1 query since the upload began that this journal did not record \(q-late\)/,
    )
    expect(oldestFirst.asked).toHaveLength(6)
  })

  it('a list too long to read (50 pages) is a lower bound: "at least", and nothing is sent', async () => {
    const { journal, unfinished } = await killedBatch(0)
    // No creation times: every record counts, and the order cannot be checked.
    const endless = Array.from({ length: 6_000 }, (_, index) => ({ id: `q-${index}`, createdAt: null }))
    const { client, asked } = pagingClient(endless, { total: false })
    const run = await rerun(journal, unfinished, client)
    expect(run.submits).toBe(0)
    expect(asked).toHaveLength(50)
    expect(run.error!.metaMessages?.[0]).toMatch(/Your key has at least 5000 queries since the upload began/)
  })
})

describe("matching a killed batch's candidates by their facts (issue 35)", () => {
  it('Ctrl-C while the rows wait for the candidates ends their shared waits too: no poll outlives the rows', async () => {
    const { journal, unfinished } = await killedBatch(0)
    const { client } = pagingClient([
      { id: 'q-a', createdAt: at(STARTED + 1_000) },
      { id: 'q-b', createdAt: at(STARTED + 2_000) },
    ])
    // Candidates that never end by themselves: each wait stops only on its own signal.
    const stopped: string[] = []
    const waits = new Map<string, AbortSignal>()
    Object.assign(client, {
      waitForQuery: (id: string, options: { signal?: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          waits.set(id, options.signal!)
          options.signal!.addEventListener('abort', () => {
            stopped.push(id)
            reject(options.signal!.reason)
          })
        }),
    })
    const controller = new AbortController()
    const log = logger()
    const running = submitWithJournal({
      journal,
      parts: unfinished,
      client,
      forceNew: false,
      logger: log,
      signal: controller.signal,
      // Only its presence matters here: the candidates never end, so nothing is compared.
      inspection: {} as PieInspection,
      submit: async () => ({ provingQueryId: 'q-new' }),
    }).then(
      () => undefined,
      (error: unknown) => error,
    )
    await vi.waitFor(() => expect(waits.size).toBe(2))
    expect(log.warnings.join('\n')).toMatch(/Waiting for them to end to compare the facts/)
    controller.abort(new Error('Ctrl-C'))
    expect(await running).toBeInstanceOf(AbortedError)
    expect(stopped.sort()).toEqual(['q-a', 'q-b'])
    expect((await journal.read(journal.keyOf(unfinished)))?.state).toBe('submitting')
  })
})
