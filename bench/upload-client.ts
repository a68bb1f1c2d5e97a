/**
 * One upload through the library, as a CLI or the action would do it (figure 2):
 * `ProvingClient.submitPie` (the L2 endpoint, multipart streamed from disk) in a process of its
 * own, so its peak RSS is the client's alone. Prints one JSON line: the query id, the time of the
 * submission itself and how much of it passed before the upload's headers went out (undici's
 * `undici:client:sendHeaders` for the POST: the loading, the checks and `GET /is-alive` before
 * the body), and the process's peak RSS (the fallback when GNU time is unavailable).
 *
 *   node bench/upload-client.ts <base-url> <file> [--caller-dispatcher]
 *
 * With --caller-dispatcher the client is given an undici Agent of its own making, as a caller
 * may: the library then reads into fresh buffers (src/core/upload-buffers.ts), the fallback path.
 */
import { subscribe } from 'node:diagnostics_channel'
import { existsSync } from 'node:fs'

// The compiled library (lib/, what users import) unless BENCH_PRODUCT=src says otherwise.
const fromLib = process.env.BENCH_PRODUCT !== 'src' && existsSync(new URL('../lib/clients/proving.js', import.meta.url))
const { ProvingClient } = (await import(
  fromLib ? '../lib/clients/proving.js' : '../src/clients/proving.ts'
)) as typeof import('../src/clients/proving.ts')
const { closeDefaultDispatcher } = (await import(
  fromLib ? '../lib/core/http.js' : '../src/core/http.ts'
)) as typeof import('../src/core/http.ts')

const [baseUrl, file, mode] = process.argv.slice(2)
if (!baseUrl || !file || (mode !== undefined && mode !== '--caller-dispatcher')) {
  process.stderr.write('usage: node bench/upload-client.ts <base-url> <file> [--caller-dispatcher]\n')
  process.exit(2)
}
const dispatcher = mode === '--caller-dispatcher' ? new (await import('undici')).Agent() : undefined
const client = new ProvingClient({ baseUrl, apiKey: 'bench-key', dispatcher })
let bodyStartMs: number | undefined
// Only watched: this channel hands over no chunk (unlike undici:request:bodyChunkSent).
subscribe('undici:client:sendHeaders', (message) => {
  if ((message as { request?: { method?: string } }).request?.method === 'POST')
    bodyStartMs ??= performance.now() - started
})
const started = performance.now()
const { provingQueryId } = await client.submitPie({
  pieZip: file,
  layout: 'auto',
  prover: 'svc_sharp',
  mockFactHash: false,
})
const submitMs = performance.now() - started
await closeDefaultDispatcher()
await dispatcher?.close()
process.stdout.write(
  `${JSON.stringify({ provingQueryId, submitMs, bodyStartMs, maxRssKiB: process.resourceUsage().maxRSS })}\n`,
)
