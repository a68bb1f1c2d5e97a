/**
 * Figure 12: the emulator at 1,000 to 100,000 queries (issue 35).
 *
 * An emulator in this process (real clock, timing 0) is filled with N queries spread over 10 API
 * keys and 200 buckets (stored as its submissions store them, without N uploads), then measured
 * over real HTTP at each N: a general submission with a dedupId (the dedupId is looked up twice
 * per submission), a record read, a list page (limit 100, newest first, at the start and deep in
 * the list), a bucket with its queries, and the console's snapshot, with the longest event-loop
 * stall while snapshots are read. With `--state-dir`, the time per submission too (each change
 * appended to the log, not the whole state rewritten).
 *
 * The peer, in the same run and on the same state: the scans each of those did before the
 * indexes (a find over every query for a dedupId, a filter of every query for a list page or a
 * bucket, a sort of every query for the snapshot), timed in-process. The figure's claim is the
 * growth: from 1,000 to 100,000 queries an indexed operation stays flat, a scan grows 100x.
 */
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { type FigureContext, type FigureResult, fmt, median, ROOT, RUN_DIR, table } from './lib.ts'

const KEYS = Array.from({ length: 10 }, (_, n) => `bench-scale-key-${n}`)
const BUCKETS = 200

type Row = {
  n: number
  submitMs: number
  submitDiskMs: number
  readMs: number
  listFirstMs: number
  listDeepMs: number
  bucketMs: number
  snapshotMs: number
  stallMs: number
  scanDedupMs: number
  scanListMs: number
  scanBucketMs: number
  scanSortMs: number
  heapMiB: number
}

export async function figureEmulatorScale(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const sizes = ctx.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
  const rows: Row[] = []
  const pie = await readFile(join(ROOT, 'examples/fib/pie.zip'))
  for (const n of sizes) {
    ctx.log(`  ${n} queries ...`)
    rows.push(await measureAt(n, pie, ctx.quick))
  }
  const first = rows[0]!
  const last = rows.at(-1)!
  const growth = (pick: (row: Row) => number) => pick(last) / Math.max(pick(first), 1e-6)
  const x = last.n / first.n
  const body = `${table(
    [
      'queries',
      'submit (memory)',
      'submit (--state-dir)',
      'read',
      'list page 1',
      'list page deep',
      'bucket',
      'console snapshot',
      'longest stall',
      'heap',
    ],
    rows.map((row) => [
      row.n.toLocaleString('en'),
      ms(row.submitMs),
      ms(row.submitDiskMs),
      ms(row.readMs),
      ms(row.listFirstMs),
      ms(row.listDeepMs),
      ms(row.bucketMs),
      ms(row.snapshotMs),
      ms(row.stallMs),
      `${row.heapMiB.toFixed(0)} MiB`,
    ]),
  )}

The peer: the scans the same requests made before the indexes, timed on the same state.

${table(
  ['queries', 'dedupId: find over all', 'list page: filter all', 'bucket: filter + sort all', 'snapshot: sort all'],
  rows.map((row) => [
    row.n.toLocaleString('en'),
    ms(row.scanDedupMs),
    ms(row.scanListMs),
    ms(row.scanBucketMs),
    ms(row.scanSortMs),
  ]),
)}

Growth from ${first.n.toLocaleString('en')} to ${last.n.toLocaleString('en')} queries (${x}x): submission ${fmt(growth((r) => r.submitMs))}x, with --state-dir ${fmt(growth((r) => r.submitDiskMs))}x, read ${fmt(growth((r) => r.readMs))}x, list page ${fmt(growth((r) => r.listDeepMs))}x, bucket ${fmt(growth((r) => r.bucketMs))}x, snapshot ${fmt(growth((r) => r.snapshotMs))}x; the scans they replace ${fmt(growth((r) => r.scanDedupMs))}x (dedupId), ${fmt(growth((r) => r.scanListMs))}x (list), ${fmt(growth((r) => r.scanSortMs))}x (snapshot sort).
Medians of each operation's repeated calls over HTTP on loopback (the client in the same process).`
  const flat = (value: number) => value < 3
  return {
    id: 12,
    title: 'The emulator at scale: 1,000 to 100,000 queries, indexed vs the scans they replace',
    body,
    checks: [
      {
        name: `submission cost growth, ${x}x queries`,
        value: `${fmt(growth((r) => r.submitMs))}x`,
        target: '< 3x (O(1))',
        pass: flat(growth((r) => r.submitMs)),
      },
      {
        name: `submission with --state-dir, growth`,
        value: `${fmt(growth((r) => r.submitDiskMs))}x`,
        target: '< 3x (appended)',
        pass: flat(growth((r) => r.submitDiskMs)),
      },
      {
        name: `list page growth`,
        value: `${fmt(growth((r) => r.listDeepMs))}x`,
        target: '< 3x (O(page))',
        pass: flat(growth((r) => r.listDeepMs)),
      },
      {
        name: `console snapshot at ${last.n.toLocaleString('en')} queries, ${BUCKETS} buckets`,
        value: ms(last.snapshotMs),
        target: '<= 50 ms',
        pass: last.snapshotMs <= 50,
      },
      {
        name: 'longest event-loop stall while snapshots are read',
        value: ms(last.stallMs),
        target: '<= 100 ms',
        pass: last.stallMs <= 100,
      },
      {
        name: 'dedupId lookup vs the scan it replaces',
        value: `${fmt(last.scanDedupMs / Math.max(last.submitMs, 1e-6))}x the whole submission`,
        target: 'reported',
        pass: null,
      },
    ],
    notes: [],
    seconds: (performance.now() - started) / 1000,
  }
}

const ms = (value: number) =>
  value < 1 ? `${(value * 1000).toFixed(0)} µs` : `${value.toFixed(value < 10 ? 2 : 0)} ms`

async function measureAt(n: number, pie: Buffer, quick: boolean): Promise<Row> {
  const { startEmulator } = await import('../src/emulator/index.ts')
  const { ownerOf } = await import('../src/emulator/auth.ts')
  const { createQuery, queryProgress } = await import('../src/emulator/proving/queries.ts')
  const repeats = quick ? 20 : 100

  async function filled(stateDir?: string) {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 }, ...(stateDir ? { stateDir } : {}) })
    const state = emulator.state
    const owners = KEYS.map(ownerOf)
    const buckets: string[] = []
    for (let b = 0; b < BUCKETS; b++) {
      const id = `00000000-0000-4000-8000-${String(b).padStart(12, '0')}`
      state.buckets[id] = {
        id,
        owner: owners[b % owners.length]!,
        externalId: null,
        nodeWidth: null,
        aggregatorVersion: 'v1',
        aggregatorParams: null,
        mockProof: false,
        createdAt: Date.now(),
        closedAt: null,
      }
      buckets.push(id)
    }
    const ids: string[] = []
    for (let i = 0; i < n; i++) {
      const bucketId = i % 2 === 0 ? buckets[i % BUCKETS]! : null
      const query = createQuery(
        state,
        {
          owner: owners[bucketId === null ? i % owners.length : (i % BUCKETS) % owners.length]!,
          endpoint: 'general',
          externalId: `ext-${i}`,
          dedupId: `dedup-${i}`,
          layout: 'recursive',
          mockFactHash: false,
          result: 'PROOF_GENERATION',
          network: null,
          cairoVm: 'rust',
          cairoVersion: 'cairo0',
          sharpProver: null,
          hints: null,
          bucketId,
          bucketJobIndex: bucketId === null ? null : Math.floor(i / BUCKETS),
          isProofMocked: false,
          facts: {
            programHash: '0x1',
            sharpFactHash: `0x${(i + 1).toString(16)}`,
            integrityFactHash: `0x${(i + 7).toString(16)}`,
            output: [],
            nSteps: 100,
          },
          declaredJobSize: null,
        },
        Date.now(),
      )
      ids.push(query.id)
    }
    return { emulator, state, buckets, ids }
  }

  async function submissions(url: string, count: number, tag: string): Promise<number> {
    const times: number[] = []
    for (let i = 0; i < count; i++) {
      const form = new FormData()
      form.set('pieFile', new Blob([pie], { type: 'application/zip' }), 'pie.zip')
      form.set('cairoVersion', 'cairo0')
      form.set('declaredJobSize', 'L')
      form.set('dedupId', `${tag}-${i}`)
      const t0 = performance.now()
      const answer = await fetch(`${url}/proving-query`, {
        method: 'POST',
        headers: { 'api-key': KEYS[0]! },
        body: form,
      })
      const text = await answer.text()
      times.push(performance.now() - t0)
      if (answer.status !== 201) throw new Error(`submission: ${answer.status} ${text.slice(0, 200)}`)
    }
    return median(times.slice(Math.min(5, count - 1)))
  }

  async function timed(
    url: string,
    path: string,
    count: number,
    headers: Record<string, string> = {},
  ): Promise<number> {
    const times: number[] = []
    for (let i = 0; i < count; i++) {
      const t0 = performance.now()
      const answer = await fetch(`${url}${path.replace('{i}', String(i))}`, { headers })
      await answer.arrayBuffer()
      times.push(performance.now() - t0)
      if (answer.status !== 200) throw new Error(`${path}: ${answer.status}`)
    }
    return median(times)
  }

  const inMemory = await filled()
  const { emulator, state, buckets, ids } = inMemory
  try {
    const url = emulator.url
    const key = { 'api-key': KEYS[0]! }
    const submitMs = await submissions(url, repeats, `bench-${n}`)
    const readMs = await timed(url, `/proving-query/${ids[Math.floor(n / 2)]}`, repeats)
    const listFirstMs = await timed(url, '/docs/proving-queries?limit=100&offset=0', repeats, key)
    const listDeepMs = await timed(
      url,
      `/docs/proving-queries?limit=100&offset=${Math.floor(n / KEYS.length / 2)}`,
      repeats,
      key,
    )
    const bucketMs = await timed(url, `/buckets/${buckets[0]}`, repeats)
    const stall = monitorEventLoopDelay({ resolution: 1 })
    stall.enable()
    const snapshotMs = await timed(url, '/_emulator/console/snapshot', quick ? 5 : 20)
    stall.disable()
    const stallMs = stall.max / 1e6

    // The peer: what the same requests scanned before the indexes, on this state.
    const all = () => Object.values(state.queries)
    const owner = ownerOf(KEYS[0]!)
    const scanDedupMs = inProcess(repeats, () =>
      all().find((query) => query.dedupId === `dedup-${n - 1}` && query.owner.keyId === owner.keyId),
    )
    const scanListMs = inProcess(repeats, () =>
      all()
        .reverse()
        .filter((query) => query.owner.keyId === owner.keyId)
        .slice(0, 100)
        .map((query) => queryProgress(state, query, Date.now())),
    )
    const scanBucketMs = inProcess(repeats, () =>
      all()
        .filter((query) => query.bucketId === buckets[0])
        .sort((a, b) => (a.bucketJobIndex ?? 0) - (b.bucketJobIndex ?? 0)),
    )
    const scanSortMs = inProcess(quick ? 5 : 20, () =>
      all()
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, 200),
    )
    const heapMiB = process.memoryUsage().heapUsed / 1024 ** 2
    await emulator.close()

    // The same submissions with every change written to a --state-dir.
    await mkdir(RUN_DIR, { recursive: true })
    const dir = await mkdtemp(join(RUN_DIR, 'emulator-scale-'))
    // Filled, then closed: the close folds the state into state.json (it was stored without the
    // routes' writes); an emulator started on the folder reads it back, as after a restart.
    await (await filled(dir)).emulator.close()
    const onDisk = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 }, stateDir: dir })
    let submitDiskMs: number
    try {
      submitDiskMs = await submissions(onDisk.url, Math.min(repeats, 50), `disk-${n}`)
    } finally {
      await onDisk.close()
      await rm(dir, { recursive: true, force: true })
    }
    return {
      n,
      submitMs,
      submitDiskMs,
      readMs,
      listFirstMs,
      listDeepMs,
      bucketMs,
      snapshotMs,
      stallMs,
      scanDedupMs,
      scanListMs,
      scanBucketMs,
      scanSortMs,
      heapMiB,
    }
  } catch (error) {
    await emulator.close().catch(() => {})
    throw error
  }
}

function inProcess(count: number, work: () => unknown): number {
  const times: number[] = []
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    work()
    times.push(performance.now() - t0)
  }
  return median(times)
}
