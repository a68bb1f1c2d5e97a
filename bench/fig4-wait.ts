/**
 * Figure 4: waiting for a query. ProvingClient.waitForQuery against the `sleep 5` loop a CI step
 * would script, on queries the emulator completes after a chosen delay; for each: detection
 * latency (the query's completedAt to the moment the tool knows) and status requests made
 * (counted in the emulator's request log).
 *
 * - 10 s, real time: the real waitForQuery in this process, and the real shell loop
 *   (bench/peer-wait.sh: curl | jq, sleep 5) in its own process, side by side on two queries
 *   submitted together. Five repetitions run at once, with completion delays spread around
 *   10 s (7.8 ... 11.8 s): where a completion falls in the loop's 5 s cycle is what decides the
 *   loop's latency, so a single aligned delay would measure luck.
 * - 10 min and 2 h, simulated: the emulator on a simulated clock and the client on
 *   clientClockFor(clock) (its sleeps advance simulated time); the loop's policy (poll, then
 *   advance 5 s) on the same clock with the same request. Same spread of delays around each.
 *
 * Targets: at 10 s, lower latency than the loop; at 10 min and 2 h, at most half the loop's
 * requests and latency within the poll interval in force at completion (capped at 30 s).
 */
import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { request } from 'undici'
import { ProvingClient } from '../src/clients/proving.ts'
import { closeDefaultDispatcher } from '../src/core/http.ts'
import { DEFAULT_POLL_SCHEDULE } from '../src/core/poll.ts'
import { clientClockFor, type RunningEmulator, simulatedClock, startEmulator } from '../src/emulator/index.ts'
import { BENCH, ensurePie, type FigureContext, type FigureResult, fmt, fmtMs, median, table } from './lib.ts'

const KEY = 'bench-key'
/** Offsets of the completion delays around the nominal one: five phases of a 5 s cycle, none aligned. */
const OFFSETS_MS = [-2200, -1200, -200, 800, 1800]

type Sample = { delayMs: number; latencyMs: number; requests: number; intervalMs?: number }

async function setTiming(emulator: RunningEmulator, totalMs: number): Promise<void> {
  // An L2 PIE query: RECEIVED, then three steps.
  const receivedMs = Math.min(1000, totalMs / 4)
  const stepMs = (totalMs - receivedMs) / 3
  const response = await request(`${emulator.url}/_emulator/timing`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ receivedMs, stepMs }),
  })
  await response.body.dump()
  if (response.statusCode !== 200) throw new Error(`PUT /_emulator/timing answered ${response.statusCode}`)
}

function pollsOf(emulator: RunningEmulator, id: string): number {
  return emulator.requests().filter((entry) => entry.method === 'GET' && entry.path === `/docs/proving-query/${id}`)
    .length
}

/** The interval waitForQuery's schedule uses at this elapsed time, at the top of its jitter. */
function intervalAt(elapsedMs: number): number {
  const s = DEFAULT_POLL_SCHEDULE
  const base = Math.min(s.maxIntervalMs, Math.max(s.minIntervalMs, elapsedMs / s.growthDivisor))
  return Math.min(s.maxIntervalMs, base * (1 + s.jitter))
}

async function realTime(zip: string, nominalMs: number, offsets: number[], ctx: FigureContext) {
  const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
  const client = new ProvingClient({ baseUrl: emulator.url, apiKey: KEY })
  try {
    const ours: Sample[] = []
    const loop: Sample[] = []
    const tasks: Promise<void>[] = []
    // The repetitions run at once, staggered a little so their requests do not all coincide.
    for (const offset of offsets) {
      if (tasks.length) await new Promise((resolve) => setTimeout(resolve, 150))
      const delayMs = nominalMs + offset
      await setTiming(emulator, delayMs)
      const a = (await client.submitPie({ pieZip: zip })).provingQueryId
      const b = (await client.submitPie({ pieZip: zip })).provingQueryId
      const startedA = Date.now()
      tasks.push(
        client.waitForQuery(a, { timeoutMs: 120_000 }).then((result) => {
          const detected = Date.now()
          if (result.provingQuery.status !== 'DONE') throw new Error(`query ${a} ended ${result.provingQuery.status}`)
          const completed = Date.parse(result.provingQuery.completedAt!)
          ours.push({
            delayMs,
            latencyMs: detected - completed,
            requests: pollsOf(emulator, a),
            intervalMs: intervalAt(completed - startedA),
          })
        }),
      )
      tasks.push(
        runLoop(emulator.url, b).then(async (out) => {
          const detail = await client.getQueryDetails(b)
          const completed = Date.parse(detail.provingQuery.completedAt!)
          loop.push({ delayMs, latencyMs: out.detectedAtMs - completed, requests: pollsOf(emulator, b) })
        }),
      )
    }
    await Promise.all(tasks)
    ctx.log(
      `  10 s: waitForQuery latencies ${ours.map((s) => fmtMs(s.latencyMs)).join(', ')}; sleep-5 loop ${loop.map((s) => fmtMs(s.latencyMs)).join(', ')}`,
    )
    return { ours, loop }
  } finally {
    await closeDefaultDispatcher()
    await emulator.close()
  }
}

function runLoop(url: string, id: string): Promise<{ status: string; requests: number; detectedAtMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [join(BENCH, 'peer-wait.sh'), url, KEY, id], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`peer-wait.sh exited with ${code}`))
      resolve(JSON.parse(out.trim().split('\n').pop()!))
    })
  })
}

async function simulated(zip: string, nominalMs: number, offsets: number[]) {
  const clock = simulatedClock(Date.parse('2030-01-01T00:00:00Z'))
  const emulator = await startEmulator({ clock, timing: { receivedMs: 0, stepMs: 0 } })
  const client = new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, clock: clientClockFor(clock) })
  const ours: Sample[] = []
  const loop: Sample[] = []
  try {
    // One at a time: the clock is shared, and each wait moves it.
    for (const offset of offsets) {
      const delayMs = nominalMs + offset
      await setTiming(emulator, delayMs)
      const a = (await client.submitPie({ pieZip: zip })).provingQueryId
      const startedA = clock.now()
      const result = await client.waitForQuery(a, { timeoutMs: nominalMs * 3 })
      if (result.provingQuery.status !== 'DONE') throw new Error(`query ${a} ended ${result.provingQuery.status}`)
      const completedA = Date.parse(result.provingQuery.completedAt!)
      ours.push({
        delayMs,
        latencyMs: clock.now() - completedA,
        requests: pollsOf(emulator, a),
        intervalMs: intervalAt(completedA - startedA),
      })

      // The loop's policy on the same clock: read the status (the same request), else sleep 5 s.
      const b = (await client.submitPie({ pieZip: zip })).provingQueryId
      let status = ''
      let completedB = 0
      for (;;) {
        const response = await request(`${emulator.url}/docs/proving-query/${b}`, { headers: { 'api-key': KEY } })
        const body = (await response.body.json()) as { provingQuery: { status: string; completedAt: string | null } }
        status = body.provingQuery.status
        if (status === 'DONE' || status === 'FAILED') {
          completedB = Date.parse(body.provingQuery.completedAt!)
          break
        }
        clock.advance(5000)
      }
      loop.push({ delayMs, latencyMs: clock.now() - completedB, requests: pollsOf(emulator, b) })
    }
    return { ours, loop }
  } finally {
    await closeDefaultDispatcher()
    await emulator.close()
  }
}

export async function figureWait(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const pie = await ensurePie('4KiB', ctx)
  const offsets = ctx.quick ? OFFSETS_MS.slice(0, 2) : OFFSETS_MS
  const cases = [
    { label: '10 s (real time)', nominalMs: 10_000, run: () => realTime(pie.zip, 10_000, offsets, ctx) },
    { label: '10 min (simulated)', nominalMs: 600_000, run: () => simulated(pie.zip, 600_000, offsets) },
    { label: '2 h (simulated)', nominalMs: 7_200_000, run: () => simulated(pie.zip, 7_200_000, offsets) },
  ]
  const rows: string[][] = []
  const checks: FigureResult['checks'] = []
  for (const c of cases) {
    const { ours, loop } = await c.run()
    const oLat = median(ours.map((s) => s.latencyMs))
    const lLat = median(loop.map((s) => s.latencyMs))
    const oReq = median(ours.map((s) => s.requests))
    const lReq = median(loop.map((s) => s.requests))
    const worst = Math.max(...ours.map((s) => s.latencyMs - s.intervalMs!))
    const maxLatency = Math.max(...ours.map((s) => s.latencyMs))
    rows.push([
      c.label,
      `${fmtMs(oLat)} (max ${fmtMs(maxLatency)})`,
      `${fmtMs(lLat)} (max ${fmtMs(Math.max(...loop.map((s) => s.latencyMs)))})`,
      `${fmt(oReq, 0)}`,
      `${fmt(lReq, 0)}`,
      `${fmt(oReq / lReq)}x`,
      fmtMs(median(ours.map((s) => s.intervalMs!))),
    ])
    ctx.log(`  ${c.label}: latency ${fmtMs(oLat)} vs ${fmtMs(lLat)}; requests ${oReq} vs ${lReq}`)
    if (c.nominalMs === 10_000) {
      checks.push({
        name: '10 s: detection latency vs the loop (medians)',
        value: `${fmtMs(oLat)} vs ${fmtMs(lLat)}`,
        target: 'lower',
        pass: oLat < lLat,
      })
    } else {
      checks.push({
        name: `${c.label}: requests vs the loop`,
        value: `${fmt(oReq / lReq)}x (${oReq} vs ${lReq})`,
        target: '<= 0.5x',
        pass: oReq <= lReq / 2,
      })
      checks.push({
        name: `${c.label}: latency within the poll interval (worst of ${ours.length})`,
        value: fmtMs(maxLatency),
        target: '<= interval in force (<= 30 s)',
        pass: worst <= 0 && maxLatency <= DEFAULT_POLL_SCHEDULE.maxIntervalMs,
      })
    }
  }
  const body = [
    `Completion delays: the nominal one ${offsets.map((o) => `${o >= 0 ? '+' : '-'}${fmt(Math.abs(o) / 1000, 1)} s`).join(', ')} (one query per delay and tool); medians over them. Latency: the query's completedAt to the tool's noticing; requests: status reads in the emulator's log. Poll interval: what waitForQuery's schedule (clamp(elapsed / 8, 1 s, 30 s), +10% jitter at most) allows at completion.`,
    '',
    table(
      [
        'delay',
        'waitForQuery latency',
        '`sleep 5` loop latency',
        'waitForQuery requests',
        'loop requests',
        'requests ratio',
        'poll interval at completion',
      ],
      rows,
    ),
  ].join('\n')
  return {
    id: 4,
    title: 'Waiting: waitForQuery vs a `curl | jq` + `sleep 5` loop',
    body,
    checks,
    notes: [],
    seconds: (performance.now() - started) / 1000,
  }
}
