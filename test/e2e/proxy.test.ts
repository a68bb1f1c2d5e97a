import { createServer, type Server } from 'node:http'
import { request } from 'undici'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { spawnCli } from '../helpers/cli.ts'
import { closeProxy, listenOnLoopback, tunnelConnects } from '../helpers/connect-proxy.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/**
 * HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured (issue 13): a real `proving` process, a
 * proxy of our own on loopback (CONNECT tunnels and absolute-form requests), the emulator behind
 * it. The proxy records what went through it.
 */

let emulator: TestEmulator
let proxy: Server
let proxyUrl: string
let seen: string[] = []

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY] })
  proxy = createServer(async (req, res) => {
    // A forward proxy gets the absolute URL in the request line.
    seen.push(`${req.method} ${req.url}`)
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const headers = { ...req.headers }
    delete headers['proxy-connection']
    delete headers.connection
    delete headers['keep-alive']
    const answer = await request(req.url!, {
      method: req.method as 'GET',
      headers: headers as Record<string, string>,
      body: chunks.length ? Buffer.concat(chunks) : undefined,
    })
    const body = Buffer.from(await answer.body.arrayBuffer())
    res.writeHead(answer.statusCode, { 'content-type': String(answer.headers['content-type'] ?? 'application/json') })
    res.end(body)
  })
  // Tunnels, as corporate proxies do (undici's proxy agent tunnels http targets too).
  tunnelConnects(proxy, (target) => seen.push(`CONNECT ${target}`))
  proxyUrl = await listenOnLoopback(proxy)
})
afterAll(async () => {
  await closeProxy(proxy)
  await emulator.close()
})
beforeEach(() => {
  seen = []
})

describe('the CLI through a proxy', () => {
  it('HTTP_PROXY: every request goes through the proxy', async () => {
    const run = await spawnCli(['query', 'list', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, HTTP_PROXY: proxyUrl },
    }).done
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout)).toHaveProperty('provingQueries')
    expect(seen.length).toBeGreaterThan(0)
    const target = new URL(emulator.url).host
    expect(seen.every((line) => line.includes(target))).toBe(true)
  })

  it('lower-case http_proxy too', async () => {
    const run = await spawnCli(['query', 'list', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, http_proxy: proxyUrl },
    }).done
    expect(run.code, run.stderr).toBe(0)
    expect(seen.length).toBeGreaterThan(0)
  })

  it('NO_PROXY naming the host: straight to the service', async () => {
    const run = await spawnCli(['query', 'list', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, HTTP_PROXY: proxyUrl, NO_PROXY: '127.0.0.1' },
    }).done
    expect(run.code, run.stderr).toBe(0)
    expect(seen).toEqual([])
  })

  it('HTTPS_PROXY alone does not apply to an http URL', async () => {
    const run = await spawnCli(['query', 'list', '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, HTTPS_PROXY: proxyUrl },
    }).done
    expect(run.code, run.stderr).toBe(0)
    expect(seen).toEqual([])
  })
})
