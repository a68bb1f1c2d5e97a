/**
 * A server in its own process, for the benchmark: it prints one JSON line `{ "url": ... }` on
 * stdout once it listens, and stops on SIGTERM/SIGINT (printing `{ "stopped": true, ... }`).
 *
 *   node bench/servers.ts emulator [--received-ms 0] [--step-ms 0]   the emulator, no stateDir
 *   node bench/servers.ts trivial                                   a trivial node:http JSON server
 *   node bench/servers.ts discard                                   accepts any body, counts its bytes
 *
 * The trivial server is the peer of the emulator's status reads (figure 5): the same kind of
 * answer (a ~1 KiB JSON body) with no routing, no state and no log. The discard server is the
 * peer target of the upload figure (2): it reads the multipart body and throws it away, so the
 * client is measured rather than the server's disk.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { parseArgs } from 'node:util'

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    'received-ms': { type: 'string', default: '0' },
    'step-ms': { type: 'string', default: '0' },
    port: { type: 'string', default: '0' },
    'body-file': { type: 'string' },
  },
})
const kind = positionals[0]
const port = Number(values.port)

function announce(url: string): void {
  process.stdout.write(`${JSON.stringify({ url, pid: process.pid })}\n`)
}

function onStop(stop: () => Promise<void> | void): void {
  const handler = async () => {
    await stop()
    process.stdout.write(`${JSON.stringify({ stopped: true, maxRssKiB: process.resourceUsage().maxRSS })}\n`)
    process.exit(0)
  }
  process.once('SIGTERM', handler)
  process.once('SIGINT', handler)
}

if (kind === 'emulator') {
  const { startEmulator } = await import('../src/emulator/index.ts')
  const emulator = await startEmulator({
    port,
    timing: { receivedMs: Number(values['received-ms']), stepMs: Number(values['step-ms']) },
  })
  announce(emulator.url)
  onStop(() => emulator.close())
} else if (kind === 'trivial') {
  // What a status read answers, as a constant (by default the body the emulator sent for the
  // same read, saved by the bench): the emulator has to find the query and build its record.
  const { readFileSync } = await import('node:fs')
  const body = values['body-file']
    ? readFileSync(values['body-file'], 'utf8')
    : JSON.stringify({ provingQuery: { id: 'x', status: 'DONE' }, metadataUrls: [] })
  const server = createServer({ keepAliveTimeout: 10_000 }, (_req, res) => {
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
    })
    res.end(body)
  })
  server.listen(port, '127.0.0.1', () => announce(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  onStop(() => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())))
} else if (kind === 'discard') {
  let bodies = 0
  let bytes = 0
  const server = createServer({ keepAliveTimeout: 10_000, requestTimeout: 0 }, (req, res) => {
    let size = 0
    req.on('data', (chunk: Buffer) => (size += chunk.length))
    req.on('end', () => {
      bodies++
      bytes += size
      const text = JSON.stringify({
        provingQueryId: `00000000-0000-4000-8000-${String(bodies).padStart(12, '0')}`,
        receivedBytes: size,
      })
      res.writeHead(201, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': String(Buffer.byteLength(text)),
      })
      res.end(text)
    })
  })
  server.listen(port, '127.0.0.1', () => announce(`http://127.0.0.1:${(server.address() as AddressInfo).port}`))
  onStop(() => {
    process.stderr.write(`discard server: ${bodies} bodies, ${bytes} bytes\n`)
    return new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()))
  })
} else {
  process.stderr.write(
    'usage: node bench/servers.ts emulator|trivial|discard [--received-ms n] [--step-ms n] [--port n]\n',
  )
  process.exit(2)
}
