import { describe, expect, it } from 'vitest'
import type { ProvingClient } from '../../../src/clients/proving.ts'
import { RequestBudget, requestBudgetFor } from '../../../src/core/budget.ts'
import { withBound } from '../../../src/core/deadline.ts'
import { AbortedError, NetworkError, RequestTimeoutError } from '../../../src/core/errors.ts'
import { DEADLINE_CODE } from '../../../src/core/http/failures.ts'
import { systemClock } from '../../../src/core/runtime.ts'
import { byCreation, KeyQueries, MAX_INDEXED_QUERIES, QUERY_PAGE_SIZE } from '../../../src/pipeline/key-queries.ts'
import type { QueryRecordL } from '../../../src/schemas/proving.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'

/**
 * The run's one index of the key's queries: read newest first, page by page only as far as a
 * reader goes, shared by every reader of the run (one request per page however many read), a
 * record once however the list shifts under it, never one of the run's own submissions, and a
 * list that cannot be read said once to every reader.
 */

const record = (id: string, createdAt?: string | null): QueryRecordL =>
  ({ id, status: 'DONE', createdAt }) as QueryRecordL
const ids = (count: number, from = 0) => Array.from({ length: count }, (_, index) => record(`q-${from + index}`))

type Page = { limit: number; offset: number }
/**
 * A service listing `records` newest first by limit and offset; `total` as the emulator gives it
 * unless told not to. `before` runs before each answer (to change the list, or fail).
 */
function service(
  records: QueryRecordL[],
  options: { total?: boolean; before?: (page: Page) => void | Promise<void> } = {},
) {
  const asked: Page[] = []
  const client = {
    listQueries: async ({ limit = 10, offset = 0 }: { limit?: number; offset?: number }) => {
      asked.push({ limit, offset })
      await options.before?.({ limit, offset })
      return {
        provingQueries: records.slice(offset, offset + limit),
        ...(options.total === false ? {} : { total: records.length }),
      }
    },
  } as unknown as ProvingClient
  return { client, asked }
}

/** Turns without waiting: these tests are about the pages, not the rate. */
const freeBudget = () => new RequestBudget(systemClock, 1_000_000)
const index = (client: ProvingClient) => new KeyQueries(client, { budget: freeBudget() })

async function all(queries: KeyQueries, signal?: AbortSignal): Promise<string[]> {
  const read: string[] = []
  for await (const each of queries.newestFirst(signal)) read.push(each.id)
  return read
}

describe('KeyQueries', () => {
  it('reads as far as the reader goes: the first record costs one page, the whole list every page once', async () => {
    const { client, asked } = service(ids(250))
    const queries = index(client)
    for await (const first of queries.newestFirst()) {
      expect(first.id).toBe('q-0')
      break
    }
    expect(asked).toEqual([{ limit: QUERY_PAGE_SIZE, offset: 0 }])
    expect(queries.read).toEqual({ queries: 100, requests: 1 })
    expect(queries.complete).toBe(false)
    // A later reader starts from the newest again, from what was read, then reads on.
    expect(await all(queries)).toEqual(ids(250).map((each) => each.id))
    expect(asked).toEqual([0, 100, 200].map((offset) => ({ limit: QUERY_PAGE_SIZE, offset })))
    expect(queries.read).toEqual({ queries: 250, requests: 3 })
    expect(queries.complete).toBe(true)
    // Read to its end: a third reader asks nothing.
    expect(await all(queries)).toHaveLength(250)
    expect(asked).toHaveLength(3)
  })

  it("the list's end: its total when it gives one, else a short page, else an empty one", async () => {
    // A total of exactly two pages: no third request for an empty page.
    const exact = service(ids(200))
    expect(await all(index(exact.client))).toHaveLength(200)
    expect(exact.asked).toHaveLength(2)
    // No total: a short page is the last.
    const short = service(ids(150), { total: false })
    expect(await all(index(short.client))).toHaveLength(150)
    expect(short.asked).toHaveLength(2)
    // No total and full pages: the empty page after them ends it.
    const full = service(ids(200), { total: false })
    const queries = index(full.client)
    expect(await all(queries)).toHaveLength(200)
    expect(full.asked).toHaveLength(3)
    expect(queries.complete).toBe(true)
    // A total left null (the service's schema allows it): the pages say where the list ends.
    const nulled = service(ids(150))
    Object.assign(nulled.client, {
      listQueries: async ({ offset = 0 }: { offset?: number }) => ({
        provingQueries: ids(150).slice(offset, offset + 100),
        total: null,
      }),
    })
    expect(await all(index(nulled.client))).toHaveLength(150)
    // A total the pages never reach (the list shrank): an empty page ends it too.
    const shrunk = { listQueries: async () => ({ provingQueries: [], total: 40 }) } as unknown as ProvingClient
    const none = index(shrunk)
    expect(await all(none)).toEqual([])
    expect(none.complete).toBe(true)
  })

  it('a query created while the list is read moves the older ones down: each is read once, none missed', async () => {
    const records = ids(150)
    const { client } = service(records, {
      // Between the first page and the second, two new queries are listed first.
      before: ({ offset }) => {
        if (offset === 100) records.unshift(record('q-new-1'), record('q-new-2'))
      },
    })
    const read = await all(index(client))
    expect(read).toEqual(ids(150).map((each) => each.id))
    expect(new Set(read).size).toBe(read.length)
  })

  it("never lists the run's own submissions", async () => {
    const { client } = service([record('q-mine'), ...ids(3)])
    const queries = index(client)
    queries.created.add('q-mine')
    expect(await all(queries)).toEqual(['q-0', 'q-1', 'q-2'])
  })

  it('readers at once share each page: one request per page, every reader sees every record', async () => {
    const { client, asked } = service(ids(230))
    const queries = index(client)
    const readers = await Promise.all(Array.from({ length: 5 }, () => all(queries)))
    for (const read of readers) expect(read).toEqual(ids(230).map((each) => each.id))
    expect(asked).toEqual([0, 100, 200].map((offset) => ({ limit: QUERY_PAGE_SIZE, offset })))
  })

  it(`reads the newest ${MAX_INDEXED_QUERIES} at most, and says the list goes on`, async () => {
    const { client, asked } = service(ids(MAX_INDEXED_QUERIES + 1))
    const queries = index(client)
    expect(await all(queries)).toHaveLength(MAX_INDEXED_QUERIES)
    expect(asked).toHaveLength(MAX_INDEXED_QUERIES / QUERY_PAGE_SIZE)
    expect(queries.complete).toBe(false)
    // Exactly the bound, and no more: the whole list.
    const bounded = service(ids(MAX_INDEXED_QUERIES))
    const whole = index(bounded.client)
    expect(await all(whole)).toHaveLength(MAX_INDEXED_QUERIES)
    expect(whole.complete).toBe(true)
  })

  it('a list that cannot be read fails every reader of the run with the same error, asked once', async () => {
    const failure = new NetworkError('connect ECONNREFUSED')
    const { client, asked } = service(ids(10), {
      before: () => {
        throw failure
      },
    })
    const queries = index(client)
    await expect(all(queries)).rejects.toBe(failure)
    await expect(all(queries)).rejects.toBe(failure)
    expect(asked).toHaveLength(1)
    expect(queries.complete).toBe(false)
  })

  it('a reader that is cancelled leaves the list to the next one: it is asked again', async () => {
    const controller = new AbortController()
    let first = true
    const { client, asked } = service(ids(10), {
      before: () => {
        if (!first) return
        first = false
        controller.abort(new Error('Ctrl-C'))
        // What a request cut by its signal may throw: not the list's own failure.
        throw new NetworkError('socket closed')
      },
    })
    const queries = index(client)
    await expect(all(queries, controller.signal)).rejects.toBeInstanceOf(NetworkError)
    expect(await all(queries)).toHaveLength(10)
    expect(asked).toHaveLength(2)
  })

  it('a cancelled signal stops the reader before a request is sent', async () => {
    const { client, asked } = service(ids(10))
    const controller = new AbortController()
    const reason = new Error('Ctrl-C')
    controller.abort(reason)
    const error = await all(index(client), controller.signal).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AbortedError)
    expect((error as AbortedError).shortMessage).toMatch(/cancelled/)
    expect((error as AbortedError).cause).toBe(reason)
    expect(asked).toEqual([])
  })

  it("the run's deadline comes before the list's turn of the client's budget: a timeout, nothing sent", async () => {
    // A simulated clock far from the system's, whose budget gave this instant's turn to another
    // read: the next turn is 100 ms away (ten a second), past the deadline.
    const clock = new FakeClock(Date.parse('2100-01-01T00:00:00.000Z'))
    expect(await requestBudgetFor(clock).take(clock.now())).toBe(true)
    const { client, asked } = service(ids(10))
    Object.assign(client, { http: { clock } })
    const error = await withBound(clock.now() + 50, () => all(new KeyQueries(client))).catch(
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(RequestTimeoutError)
    expect((error as RequestTimeoutError).code).toBe(DEADLINE_CODE)
    expect((error as RequestTimeoutError).shortMessage).toMatch(
      /deadline came before the list of queries could be read/,
    )
    expect(asked).toEqual([])
  })
})

describe('byCreation', () => {
  it('newest first by creation; a record without a readable time after the dated ones, each in its place', () => {
    const records = [
      record('old', '2026-01-01T00:00:00.000Z'),
      record('undated', undefined),
      record('new', '2026-03-01T00:00:00.000Z'),
      record('garbled', 'yesterday'),
      record('tie-a', '2026-02-01T00:00:00.000Z'),
      record('tie-b', '2026-02-01T00:00:00.000Z'),
      record('null', null),
    ]
    expect(byCreation(records).map((each) => each.id)).toEqual([
      'new',
      'tie-a',
      'tie-b',
      'old',
      'undated',
      'garbled',
      'null',
    ])
    // A copy: the page itself keeps the service's order.
    expect(records[0]!.id).toBe('old')
  })
})
