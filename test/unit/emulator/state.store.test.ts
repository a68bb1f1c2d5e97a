import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { DEFAULT_TIMING } from '../../../src/emulator/proving/lifecycle.ts'
import { createQuery, findByDedupId, queriesOfBucket } from '../../../src/emulator/proving/queries.ts'
import {
  CHANGES_FILE,
  readStateDir,
  STATE_FILE,
  StateStore,
  type StoredBucket,
  type StoredQuery,
} from '../../../src/emulator/state.ts'

/**
 * The emulator's `--state-dir`: a change is appended (what it touched), not a rewrite of the
 * whole state, and what is on disk reads back as the state in memory whatever the sequence of
 * changes, foldings and crashes.
 */

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function stateDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'state-store-'))
  dirs.push(dir)
  return dir
}

const owner = (n: number) => ({ keyId: `key${n}`, projectId: `project-key${n}`, clientId: `client-key${n}` })
const facts = { programHash: '0x1', sharpFactHash: '0x2', integrityFactHash: '0x3', output: ['0x4'], nSteps: 100 }

function addQuery(store: StateStore, n: number, extra: Partial<StoredQuery> = {}): StoredQuery {
  const query = createQuery(
    store.state,
    {
      owner: owner(n % 3),
      endpoint: 'general',
      externalId: `ext-${n}`,
      dedupId: `dedup-${n}`,
      layout: 'recursive',
      mockFactHash: false,
      result: 'PROOF_GENERATION',
      network: null,
      cairoVm: 'rust',
      cairoVersion: 'cairo0',
      sharpProver: null,
      hints: null,
      bucketId: extra.bucketId ?? null,
      bucketJobIndex: extra.bucketJobIndex ?? null,
      isProofMocked: false,
      facts,
      declaredJobSize: null,
    },
    1_000 + n,
    `query-${n}`,
  )
  store.touch('queries', query.id)
  return query
}

function addBucket(store: StateStore, n: number): StoredBucket {
  const bucket: StoredBucket = {
    id: `bucket-${n}`,
    owner: owner(n % 3),
    externalId: null,
    nodeWidth: null,
    aggregatorVersion: 'v1',
    aggregatorParams: null,
    mockProof: false,
    createdAt: 5_000 + n,
    closedAt: null,
  }
  store.state.buckets[bucket.id] = bucket
  store.state.counters.buckets++
  store.touch('buckets', bucket.id)
  return bucket
}

/** The nth record (modulo their count), so that changes land on records that exist. */
function pick<T>(records: Record<string, T>, n: number): T | undefined {
  const values = Object.values(records)
  return values.length === 0 ? undefined : values[n % values.length]
}

const onDisk = (dir: string) => readStateDir(dir)?.state
const inMemory = (store: StateStore) => JSON.parse(JSON.stringify(store.state))

describe('StateStore with a stateDir', () => {
  it('appends what a change touched: a save after 2,000 queries writes as much as after 20', () => {
    const dir = stateDir()
    const store = StateStore.open(dir, DEFAULT_TIMING, false)
    const appended = (change: () => void) => {
      const before = statSync(join(dir, CHANGES_FILE)).size
      change()
      store.save()
      return statSync(join(dir, CHANGES_FILE)).size - before
    }
    for (let n = 0; n < 20; n++) addQuery(store, n)
    store.save()
    const early = appended(() => addQuery(store, 20))
    for (let n = 21; n < 2_000; n++) {
      addQuery(store, n)
      store.save()
    }
    const late = appended(() => addQuery(store, 2_000))
    // The same record and the rest's counter line: a few bytes apart (longer ids and counts),
    // never the 2,000 queries a rewrite would write.
    expect(late).toBeLessThan(early + 64)
    expect(late).toBeLessThan(4_096)
    // A save that changed nothing writes nothing.
    expect(appended(() => {})).toBe(0)
    // And the log was folded into state.json as it outgrew it, so the files stay about the state's size.
    const files = statSync(join(dir, STATE_FILE)).size + statSync(join(dir, CHANGES_FILE)).size
    expect(files).toBeLessThan(3 * JSON.stringify(store.state).length + 8 * 1024 * 1024)
    expect(onDisk(dir)).toEqual(inMemory(store))
  })

  it('reads back the state in memory after any sequence of changes, foldings, restarts and a cut line', () => {
    type Op =
      | { kind: 'query' }
      | { kind: 'bucket' }
      | { kind: 'join'; bucket: number }
      | { kind: 'close'; bucket: number }
      | { kind: 'finish'; query: number }
      | { kind: 'timing'; stepMs: number }
      | { kind: 'fault' }
      | { kind: 'task' }
      | { kind: 'save' }
      | { kind: 'reload' }
      | { kind: 'close-store' }
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant({ kind: 'query' as const }),
      fc.constant({ kind: 'bucket' as const }),
      fc.nat().map((bucket) => ({ kind: 'join' as const, bucket })),
      fc.nat().map((bucket) => ({ kind: 'close' as const, bucket })),
      fc.nat().map((query) => ({ kind: 'finish' as const, query })),
      fc.nat(10_000).map((stepMs) => ({ kind: 'timing' as const, stepMs })),
      fc.constant({ kind: 'fault' as const }),
      fc.constant({ kind: 'task' as const }),
      fc.constant({ kind: 'save' as const }),
      fc.constant({ kind: 'reload' as const }),
      fc.constant({ kind: 'close-store' as const }),
    )
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.boolean(), (ops, cutLastLine) => {
        const dir = stateDir()
        let store = StateStore.open(dir, DEFAULT_TIMING, false)
        let queries = 0
        let buckets = 0
        for (const step of ops) {
          switch (step.kind) {
            case 'query':
              addQuery(store, queries++)
              break
            case 'bucket':
              addBucket(store, buckets++)
              break
            case 'join': {
              const bucket = pick(store.state.buckets, step.bucket)
              if (bucket && bucket.closedAt === null)
                addQuery(store, queries++, {
                  bucketId: bucket.id,
                  bucketJobIndex: queriesOfBucket(store.state, bucket.id).length,
                })
              break
            }
            case 'close': {
              const bucket = pick(store.state.buckets, step.bucket)
              if (bucket) {
                bucket.closedAt = 9_000
                store.touch('buckets', bucket.id)
              }
              break
            }
            case 'finish': {
              const query = pick(store.state.queries, step.query)
              if (query) {
                query.run.forced = { at: 8_000, outcome: 'done' }
                store.touch('queries', query.id)
              }
              break
            }
            case 'timing':
              store.state.timing = { ...store.state.timing, stepMs: step.stepMs }
              break
            case 'fault':
              store.state.faults.push({
                id: `f${store.state.faults.length}`,
                method: null,
                path: '*',
                kind: 'drop',
                status: null,
                body: null,
                delayMs: 0,
                skip: 0,
                remaining: 1,
              })
              break
            case 'task': {
              const withTasks = store.state as typeof store.state & {
                taskService?: { tasks: Record<string, unknown>; sequence: number }
              }
              withTasks.taskService ??= { tasks: {}, sequence: 0 }
              const uuid = `task-${++withTasks.taskService.sequence}`
              withTasks.taskService.tasks[uuid] = { uuid, sequence: withTasks.taskService.sequence }
              store.touch('tasks', uuid)
              break
            }
            case 'save':
              store.save()
              break
            case 'reload':
              store.save()
              store.reload()
              break
            case 'close-store':
              store.close()
              store = StateStore.open(dir, DEFAULT_TIMING, false)
              break
          }
        }
        store.save()
        const expected = inMemory(store)
        if (cutLastLine) {
          // A crash in the middle of the next append: half a line at the end of the log.
          appendFileSync(join(dir, CHANGES_FILE), '{"g":1,"c":"queries","id":"half')
        }
        expect(onDisk(dir)).toEqual(expected)
        // And an emulator started there answers from the same state, indexes included.
        const reopened = StateStore.open(dir, DEFAULT_TIMING, false)
        expect(inMemory(reopened)).toEqual(expected)
        for (const query of Object.values(reopened.state.queries)) {
          expect(findByDedupId(reopened.state, query.owner, query.dedupId!)?.id).toBe(query.id)
        }
      }),
      { numRuns: 60, seed: Number(process.env.FC_SEED ?? 20261127) },
    )
  })

  it('in verify mode, a change that was not touched is an error at the save, not a loss at a restart', () => {
    const dir = stateDir()
    const store = StateStore.open(dir, DEFAULT_TIMING, true)
    const query = addQuery(store, 1)
    store.save()
    query.run.forced = { at: 2_000, outcome: 'done' } // forgot store.touch('queries', query.id)
    expect(() => store.save()).toThrow(/differs from the state in memory: a change was not touched/)
  })

  it('keeps a change whose append failed (a full disk), even past a line the failure cut short', () => {
    const dir = stateDir()
    const store = StateStore.open(dir, DEFAULT_TIMING, true)
    addQuery(store, 1)
    store.save()
    // The log cannot be written to: the save fails (the route answers 500) ...
    rmSync(join(dir, CHANGES_FILE))
    mkdirSync(join(dir, CHANGES_FILE))
    addQuery(store, 2)
    store.state.counters.retries = 5
    expect(() => store.save()).toThrow()
    // ... having written half a line before it failed; then there is room again.
    rmSync(join(dir, CHANGES_FILE), { recursive: true })
    writeFileSync(
      join(dir, CHANGES_FILE),
      `${JSON.stringify({ g: 1, c: 'queries', id: 'query-1', v: null }).slice(0, 20)}`,
    )
    store.save()
    expect(Object.keys(onDisk(dir)!.queries)).toEqual(['query-1', 'query-2'])
    expect(onDisk(dir)!.counters.retries).toBe(5)
    // And the changes after it are appended and read back as usual.
    addQuery(store, 3)
    store.save()
    expect(Object.keys(StateStore.open(dir, DEFAULT_TIMING, false).state.queries)).toEqual([
      'query-1',
      'query-2',
      'query-3',
    ])
  })

  it('ignores log lines of an older state.json (a crash between the fold and the new log)', () => {
    const dir = stateDir()
    const store = StateStore.open(dir, DEFAULT_TIMING, false)
    addQuery(store, 1)
    store.close()
    const generation = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8')).changeLog as number
    // A line of the generation before: already folded into state.json, it must not be applied again.
    writeFileSync(
      join(dir, CHANGES_FILE),
      `${JSON.stringify({ g: generation - 1, c: 'queries', id: 'query-1', v: null })}\n`,
    )
    expect(Object.keys(onDisk(dir)!.queries)).toEqual(['query-1'])
  })

  it('reads a state.json written before the log existed (no changeLog field)', () => {
    const dir = stateDir()
    const store = StateStore.open(dir, DEFAULT_TIMING, false)
    addQuery(store, 7)
    store.close()
    const old = JSON.parse(readFileSync(join(dir, STATE_FILE), 'utf8'))
    delete old.changeLog
    writeFileSync(join(dir, STATE_FILE), JSON.stringify(old))
    rmSync(join(dir, CHANGES_FILE))
    expect(Object.keys(StateStore.open(dir, DEFAULT_TIMING, false).state.queries)).toEqual(['query-7'])
  })
})
