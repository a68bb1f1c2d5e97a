/**
 * A closed-loop HTTP load client for status reads (figure 5): `--connections` keep-alive
 * connections of one undici Pool, each sending the next GET as soon as the previous answer is
 * read. Warms up, then counts the answers of the measured window; prints one JSON line.
 *
 *   node bench/load-client.ts --url http://127.0.0.1:8790/proving-query/<id> --seconds 5
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Pool } from 'undici'

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '8' },
    'server-pid': { type: 'string' },
  },
})
if (!values.url) {
  process.stderr.write('usage: node bench/load-client.ts --url <url> [--seconds 5] [--warmup 1] [--connections 8]\n')
  process.exit(2)
}
const url = new URL(values.url)
const connections = Number(values.connections)
const pool = new Pool(url.origin, { connections, pipelining: 1, keepAliveTimeout: 30_000 })
const path = `${url.pathname}${url.search}`

// The server's CPU time (user + system, all its threads) from /proc, in seconds: how much of a
// core the server used in the window, hence how many reads it serves per second of CPU, which
// is what it sustains with a core to itself, whatever else runs on the machine.
const serverPid = values['server-pid']
const ticksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    return 100
  }
})()
function serverCpuSeconds(): number {
  if (!serverPid) return Number.NaN
  try {
    const stat = readFileSync(`/proc/${serverPid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    // Fields 14 and 15 of proc(5), utime and stime, are the 12th and 13th after the name.
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond
  } catch {
    return Number.NaN
  }
}

let phase: 'warmup' | 'measure' | 'done' = 'warmup'
let ok = 0
let other = 0
let errors = 0
const latencies: number[] = []

async function worker(): Promise<void> {
  while (phase !== 'done') {
    const started = performance.now()
    try {
      const { statusCode, body } = await pool.request({ method: 'GET', path })
      await body.dump({ limit: Number.MAX_SAFE_INTEGER })
      if (phase !== 'measure') continue
      if (statusCode === 200) ok++
      else other++
      if (latencies.length < 200_000) latencies.push(performance.now() - started)
    } catch (error) {
      if (phase === 'measure') errors++
      if (errors > 100) throw error
    }
  }
}

const workers = Array.from({ length: connections }, () => worker())
await new Promise((resolve) => setTimeout(resolve, Number(values.warmup) * 1000))
phase = 'measure'
const cpuBefore = process.cpuUsage()
const serverBefore = serverCpuSeconds()
const started = performance.now()
await new Promise((resolve) => setTimeout(resolve, Number(values.seconds) * 1000))
phase = 'done'
const seconds = (performance.now() - started) / 1000
const cpu = process.cpuUsage(cpuBefore)
const serverCpu = serverCpuSeconds() - serverBefore
await Promise.all(workers)
await pool.close()
latencies.sort((a, b) => a - b)
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0
process.stdout.write(
  `${JSON.stringify({
    requestsPerSecond: ok / seconds,
    ok,
    other,
    errors,
    seconds,
    clientCpuShare: (cpu.user + cpu.system) / 1e6 / seconds,
    serverCpuShare: serverCpu / seconds,
    /** Reads per second of the server's CPU: what it sustains on a core of its own. */
    perServerCpuSecond: ok / serverCpu,
    p50Ms: pct(0.5),
    p99Ms: pct(0.99),
  })}\n`,
)
