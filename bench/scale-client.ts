/**
 * Many PIEs proved through the library in one process (figure 5): each job is
 * `ProvingClient.submitPie` then `waitForQuery` to DONE, `--concurrency` jobs at a time through
 * one ProvingClient over one keep-alive undici Agent (at most `--concurrency` connections,
 * reused). `--concurrency 1` is the same work one after another. Prints one JSON line.
 *
 *   node bench/scale-client.ts --url <emulator> --zip <pie.zip> --count 1000 --concurrency 32
 */
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { Agent, buildConnector } from 'undici'

// The compiled library (lib/, what users import) unless BENCH_PRODUCT=src says otherwise.
const fromLib = process.env.BENCH_PRODUCT !== 'src' && existsSync(new URL('../lib/clients/proving.js', import.meta.url))
const { ProvingClient } = (await import(
  fromLib ? '../lib/clients/proving.js' : '../src/clients/proving.ts'
)) as typeof import('../src/clients/proving.ts')

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    zip: { type: 'string' },
    count: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '32' },
  },
})
if (!values.url || !values.zip) {
  process.stderr.write(
    'usage: node bench/scale-client.ts --url <url> --zip <pie.zip> [--count 1000] [--concurrency 32]\n',
  )
  process.exit(2)
}
const count = Number(values.count)
const concurrency = Number(values.concurrency)

// Counts the TCP connections opened: reuse means about one per concurrent job, not one per request.
let connectionsOpened = 0
const connect = buildConnector({})
const agent = new Agent({
  connections: concurrency,
  keepAliveTimeout: 10_000,
  connect: (options, callback) => {
    connectionsOpened++
    return connect(options, callback)
  },
})
const client = new ProvingClient({ baseUrl: values.url, apiKey: 'bench-key', dispatcher: agent })

let next = 0
let done = 0
let notDone = 0
const errors: string[] = []
async function worker(): Promise<void> {
  for (let job = next++; job < count; job = next++) {
    try {
      const { provingQueryId } = await client.submitPie({ pieZip: values.zip! })
      const result = await client.waitForQuery(provingQueryId, { timeoutMs: 300_000 })
      if (result.provingQuery.status === 'DONE') done++
      else notDone++
    } catch (error) {
      errors.push(String(error).split('\n')[0]!)
    }
  }
}

const started = performance.now()
await Promise.all(Array.from({ length: Math.min(concurrency, count) }, () => worker()))
const ms = performance.now() - started
await agent.close()
process.stdout.write(
  `${JSON.stringify({
    ms,
    count,
    concurrency,
    done,
    notDone,
    errors: errors.length,
    firstErrors: errors.slice(0, 3),
    connectionsOpened,
    maxRssKiB: process.resourceUsage().maxRSS,
  })}\n`,
)
