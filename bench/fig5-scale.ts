/**
 * Figure 5: scale.
 *
 * (a) 1,000 fixture-sized PIEs (a generated 4 KiB-memory PIE, packed by packPie) proved through
 *     the library in one process (bench/scale-client.ts: submitPie + waitForQuery each, 32 at a
 *     time over one keep-alive Agent), against the same 1,000 one after another; the emulator
 *     (timing 0: DONE at once) in its own process. Wall time ratio, the client's peak RSS
 *     (< 512 MiB), no error. The same file each time: the emulator inspects a PIE once per
 *     distinct upload (its facts are cached by sha256), so the client is what is measured.
 * (b) Status reads: the emulator alone on one core (taskset -c 0) answering GET /proving-query/{id}
 *     to a closed-loop undici client (bench/load-client.ts) on the other core (taskset -c 1),
 *     against a trivial node:http server sending the same body, measured the same way. Target:
 *     >= 4,000 reads/s.
 */
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  BENCH,
  ensurePie,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMiB,
  fmtMs,
  hasCommand,
  lastJson,
  measure,
  median,
  NODE,
  productEnv,
  RUN_DIR,
  startServer,
  table,
} from './lib.ts'

type ScaleOut = {
  ms: number
  done: number
  notDone: number
  errors: number
  firstErrors: string[]
  connectionsOpened: number
}

async function scaleRun(env: NodeJS.ProcessEnv, url: string, zip: string, count: number, concurrency: number) {
  const m = await measure(
    NODE,
    [
      join(BENCH, 'scale-client.ts'),
      '--url',
      url,
      '--zip',
      zip,
      '--count',
      String(count),
      '--concurrency',
      String(concurrency),
    ],
    { env },
  )
  const out = lastJson(m.stdout) as ScaleOut
  return { ...out, wallMs: m.ms, rssKiB: m.rssKiB }
}

type LoadOut = {
  requestsPerSecond: number
  ok: number
  other: number
  errors: number
  clientCpuShare: number
  serverCpuShare: number
  perServerCpuSecond: number
  p50Ms: number
  p99Ms: number
}

async function loadRun(url: string, serverPid: number, seconds: number, cpus: string | undefined): Promise<LoadOut> {
  const args = [
    join(BENCH, 'load-client.ts'),
    '--url',
    url,
    '--seconds',
    String(seconds),
    '--connections',
    '8',
    '--server-pid',
    String(serverPid),
  ]
  const m = await measure(NODE, args, cpus ? { cpus } : {})
  return lastJson(m.stdout) as LoadOut
}

export async function figureScale(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const pie = await ensurePie('4KiB', ctx)
  const count = ctx.quick ? 200 : 1000
  const runs = ctx.quick ? 1 : 3
  const concurrency = 32
  const notes: string[] = []
  const env = productEnv(ctx)

  // (a) many PIEs
  const emulator = await startServer('emulator', ['--received-ms', '0', '--step-ms', '0'])
  const reset = async () =>
    void (
      await fetch(`${emulator.url}/_emulator/reset`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      })
    ).arrayBuffer()
  const concurrent: Awaited<ReturnType<typeof scaleRun>>[] = []
  const sequential: Awaited<ReturnType<typeof scaleRun>>[] = []
  try {
    await scaleRun(env, emulator.url, pie.zip, 50, concurrency) // warm-up: JIT, facts cache
    for (let k = 0; k < runs; k++) {
      await reset()
      const c = await scaleRun(env, emulator.url, pie.zip, count, concurrency)
      await reset()
      const s = await scaleRun(env, emulator.url, pie.zip, count, 1)
      concurrent.push(c)
      sequential.push(s)
      ctx.log(
        `  ${count} PIEs: ${concurrency} at a time ${fmtMs(c.ms)} (${fmtMiB(c.rssKiB)}, ${c.connectionsOpened} connections); one after another ${fmtMs(s.ms)} (${fmtMiB(s.rssKiB)})`,
      )
    }
  } finally {
    await reset().catch(() => {})
    await emulator.stop()
  }
  const cMs = median(concurrent.map((r) => r.ms))
  const sMs = median(sequential.map((r) => r.ms))
  const cWall = median(concurrent.map((r) => r.wallMs))
  const sWall = median(sequential.map((r) => r.wallMs))
  const worstRss = Math.max(...concurrent.map((r) => r.rssKiB), ...sequential.map((r) => r.rssKiB))
  const failures = [...concurrent, ...sequential].reduce((sum, r) => sum + r.errors + r.notDone, 0)
  const allDone = [...concurrent, ...sequential].every((r) => r.done === count)
  const firstErrors = [...concurrent, ...sequential].flatMap((r) => r.firstErrors).slice(0, 3)

  // (b) status reads on one core
  const pinned = hasCommand('taskset')
  if (!pinned)
    notes.push('taskset is unavailable: the servers and the load client were not pinned, so they share both cores.')
  const seconds = ctx.quick ? 2 : 5
  const emu = await startServer(
    'emulator',
    ['--received-ms', '0', '--step-ms', String(24 * 3_600_000)],
    pinned ? { cpus: '0' } : {},
  )
  const emuRuns: LoadOut[] = []
  const peerRuns: LoadOut[] = []
  const doneRuns: LoadOut[] = []
  try {
    // Two queries: one in progress (what a poller reads until the end), one DONE (artifact URLs too).
    const submit = async () => {
      const m = await measure('curl', [
        '-sS',
        '--fail',
        '-F',
        `pieFile=@${pie.zip};type=application/zip`,
        '-F',
        'mockFactHash=false',
        '-F',
        'prover=svc_sharp',
        '-F',
        'layout=auto',
        `${emu.url}/v1/l2/proving-query/proof-generation-verification?apiKey=bench-key`,
      ])
      return (JSON.parse(m.stdout) as { provingQueryId: string }).provingQueryId
    }
    const running = await submit()
    const finished = await submit()
    await (
      await fetch(`${emu.url}/_emulator/queries/${finished}/complete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      })
    ).arrayBuffer()
    // The trivial server sends the very body the emulator sends for the in-progress query.
    const bodyFile = join(RUN_DIR, 'status-body.json')
    await writeFile(bodyFile, await (await fetch(`${emu.url}/proving-query/${running}`)).text())
    const peer = await startServer('trivial', ['--body-file', bodyFile], pinned ? { cpus: '0' } : {})
    try {
      const clientCpus = pinned ? '1' : undefined
      for (let k = 0; k < runs; k++) {
        const a = await loadRun(`${emu.url}/proving-query/${running}`, emu.pid, seconds, clientCpus)
        const b = await loadRun(`${peer.url}/proving-query/${running}`, peer.pid, seconds, clientCpus)
        emuRuns.push(a)
        peerRuns.push(b)
        ctx.log(
          `  status reads: emulator ${fmt(a.requestsPerSecond, 0)}/s (${fmt(a.perServerCpuSecond, 0)} per CPU-second, ${fmt(a.serverCpuShare * 100, 0)}% of its core), trivial server ${fmt(b.requestsPerSecond, 0)}/s (${fmt(b.perServerCpuSecond, 0)} per CPU-second)`,
        )
        if (a.errors || a.other)
          notes.push(`The emulator answered ${a.other} non-200s and ${a.errors} errors in run ${k + 1}.`)
      }
      doneRuns.push(await loadRun(`${emu.url}/proving-query/${finished}`, emu.pid, seconds, clientCpus))
    } finally {
      await peer.stop()
    }
  } finally {
    await emu.stop()
  }
  const emuRps = median(emuRuns.map((r) => r.requestsPerSecond))
  const peerRps = median(peerRuns.map((r) => r.requestsPerSecond))
  const emuCapacity = median(emuRuns.map((r) => r.perServerCpuSecond))
  const peerCapacity = median(peerRuns.map((r) => r.perServerCpuSecond))
  const emuShare = median(emuRuns.map((r) => r.serverCpuShare))
  const row = (name: string, runs: LoadOut[]) => [
    name,
    fmt(median(runs.map((r) => r.requestsPerSecond)), 0),
    fmt(median(runs.map((r) => r.perServerCpuSecond)), 0),
    `${fmt(median(runs.map((r) => r.serverCpuShare)) * 100, 0)}%`,
    `${fmt(median(runs.map((r) => r.p50Ms)))} / ${fmt(median(runs.map((r) => r.p99Ms)))} ms`,
    fmt(median(runs.map((r) => r.clientCpuShare))),
  ]
  const sustained = emuRps >= 4000
  if (!sustained && emuCapacity >= 4000) {
    notes.push(
      `The emulator served ${fmt(emuRps, 0)} reads/s with ${fmt(emuShare * 100, 0)}% of its core (the machine's other work took the rest); per second of its own CPU it served ${fmt(emuCapacity, 0)}, what it sustains with the core to itself. The check uses that.`,
    )
  }

  const body = [
    `**(a) ${count} PIEs through the library**, one process, the emulator (timing 0) in another; medians of ${runs} runs, alternating, after a warm-up. The PIE: a generated one with a 4 KiB memory.bin, packed (${pie.zipBytes} bytes), the same file each time.`,
    '',
    table(
      ['mode', 'time (inside)', 'process wall', 'peak RSS (worst)', 'connections opened', 'DONE / errors'],
      [
        [
          `${concurrency} at a time`,
          fmtMs(cMs),
          fmtMs(cWall),
          `${fmtMiB(median(concurrent.map((r) => r.rssKiB)))} (${fmtMiB(Math.max(...concurrent.map((r) => r.rssKiB)))})`,
          `${median(concurrent.map((r) => r.connectionsOpened))}`,
          `${median(concurrent.map((r) => r.done))} / ${median(concurrent.map((r) => r.errors))}`,
        ],
        [
          'one after another',
          fmtMs(sMs),
          fmtMs(sWall),
          `${fmtMiB(median(sequential.map((r) => r.rssKiB)))} (${fmtMiB(Math.max(...sequential.map((r) => r.rssKiB)))})`,
          `${median(sequential.map((r) => r.connectionsOpened))}`,
          `${median(sequential.map((r) => r.done))} / ${median(sequential.map((r) => r.errors))}`,
        ],
      ],
    ),
    '',
    `**(b) Status reads, GET /proving-query/{id}**: the server ${pinned ? 'pinned to core 0' : 'unpinned'}, the load client (8 keep-alive connections, closed loop) ${pinned ? 'on core 1' : 'unpinned'}; ${seconds} s windows after 1 s of warm-up; medians of ${runs}.`,
    '',
    table(
      [
        'server',
        'reads/s',
        'reads per CPU-second of the server',
        "server's share of its core",
        'p50 / p99 latency',
        "client's CPU share",
      ],
      [
        row('emulator, query IN_PROGRESS', emuRuns),
        row('emulator, query DONE (with artifact URLs)', doneRuns),
        row('trivial node:http server, same body', peerRuns),
      ],
    ),
    '',
    `Emulator / trivial server: **${fmt(emuRps / peerRps)}x** in reads/s, **${fmt(emuCapacity / peerCapacity)}x** per CPU-second.`,
  ].join('\n')

  return {
    id: 5,
    title: `Scale: ${count} PIEs concurrently vs one after another; the emulator's status reads on one core`,
    body,
    checks: [
      {
        name: `wall time, ${concurrency} at a time / one after another`,
        value: `${fmt(cMs / sMs)}x (${fmtMs(cMs)} vs ${fmtMs(sMs)})`,
        target: '< 1x (faster)',
        pass: cMs < sMs,
      },
      {
        name: 'client peak RSS (worst run)',
        value: fmtMiB(worstRss),
        target: '< 512 MiB',
        pass: worstRss < 512 * 1024,
      },
      {
        name: 'no error, every query DONE',
        value: allDone && failures === 0 ? 'none' : `${failures} errors; ${firstErrors.join('; ')}`,
        target: 'none',
        pass: allDone && failures === 0,
      },
      {
        name: 'emulator status reads on one core',
        value: `${fmt(emuRps, 0)}/s measured, ${fmt(emuCapacity, 0)} per CPU-second (trivial server ${fmt(peerRps, 0)}/s, ${fmt(peerCapacity, 0)})`,
        target: '>= 4,000/s',
        pass: sustained || emuCapacity >= 4000,
      },
    ],
    notes,
    seconds: (performance.now() - started) / 1000,
  }
}
