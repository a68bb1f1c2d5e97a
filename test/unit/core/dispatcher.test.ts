import { execFile } from 'node:child_process'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import { Agent, EnvHttpProxyAgent } from 'undici'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { defaultDispatcher, undiciRequest } from '../../../src/core/dispatcher.ts'
import { closeDefaultDispatcher, HttpClient } from '../../../src/core/http.ts'
import { NODE, REPO_ROOT } from '../../helpers/cli.ts'
import { closeProxy, listenOnLoopback, tunnelConnects } from '../../helpers/connect-proxy.ts'

/**
 * core/dispatcher.ts: the shared agent (with the proxy variables), and undici's request sent on
 * the event loop's next turn so that one right after another reuses its connection.
 */

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string; port: number }

let server: Server
let baseUrl: string
const seen: Seen[] = []
let connections = 0

beforeAll(async () => {
  server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk: string) => (body += chunk))
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, port: req.socket.remotePort! })
      const text = JSON.stringify({ ok: true, method: req.method })
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) })
      res.end(text)
    })
  })
  server.on('connection', () => connections++)
  baseUrl = await listenOnLoopback(server)
})

afterAll(async () => {
  await closeDefaultDispatcher()
  await closeProxy(server)
})

describe('core/dispatcher', () => {
  it("the shared agent is undici's EnvHttpProxyAgent", () => {
    expect(defaultDispatcher()).toBeInstanceOf(EnvHttpProxyAgent)
  })

  it('sends the method, the path with its query, the headers and the body, through the shared agent or a caller’s', async () => {
    const agent = new Agent()
    try {
      for (const dispatcher of [defaultDispatcher(), agent]) {
        seen.length = 0
        const response = await undiciRequest(new URL(`${baseUrl}/v1/x?apiKey=k&b=2`), {
          method: 'POST',
          headers: { 'content-type': 'text/plain', 'x-test': 'yes' },
          body: 'hello',
          dispatcher,
        })
        expect(response.statusCode).toBe(200)
        expect(await response.body.json()).toEqual({ ok: true, method: 'POST' })
        expect(seen).toMatchObject([
          { method: 'POST', url: '/v1/x?apiKey=k&b=2', body: 'hello', headers: { 'x-test': 'yes' } },
        ])
      }
      // No method: GET, as undici's own request.
      const response = await undiciRequest(new URL(`${baseUrl}/is-alive`), { dispatcher: agent })
      expect(await response.body.json()).toEqual({ ok: true, method: 'GET' })
    } finally {
      await agent.close()
    }
  })

  it('through a proxy (HTTP_PROXY) read as the agent is first made: the tunnel opens and the answer comes back', async () => {
    // The proxy variables are read once per process: the proxy is tried in a fresh one.
    const proxy = createServer()
    const tunnels: string[] = []
    tunnelConnects(proxy, (target) => tunnels.push(target))
    const proxyUrl = await listenOnLoopback(proxy)
    try {
      const script = `
        const { defaultDispatcher, undiciRequest } = await import('./src/core/dispatcher.ts')
        const response = await undiciRequest(new URL(${JSON.stringify(`${baseUrl}/through?proxy=1`)}), { dispatcher: defaultDispatcher() })
        const body = await response.body.json()
        await defaultDispatcher().close()
        process.stdout.write(JSON.stringify({ status: response.statusCode, body }))
      `
      // The lower-case variables win over the upper-case ones: none of the caller's.
      const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(https?|no)_proxy$/i.test(name)))
      env.HTTP_PROXY = proxyUrl
      const { stdout } = await promisify(execFile)(NODE, ['--input-type=module', '-e', script], {
        cwd: REPO_ROOT,
        env,
        encoding: 'utf8',
      })
      expect(JSON.parse(stdout)).toEqual({ status: 200, body: { ok: true, method: 'GET' } })
      expect(tunnels).toEqual([new URL(baseUrl).host])
    } finally {
      await closeProxy(proxy)
    }
  })

  it('a request sent right after the answer to another is read goes over the same connection', async () => {
    await closeDefaultDispatcher()
    const http = new HttpClient({ baseUrl, serviceName: 'test server' })
    seen.length = 0
    const before = connections
    // As a submission does: GET /is-alive, then at once the POST (and a GET after it).
    await http.request({ method: 'GET', path: '/is-alive' })
    await http.request({ method: 'POST', path: '/submit', json: { a: 1 } })
    await http.request({ method: 'GET', path: '/is-alive' })
    expect(seen.map((request) => request.method)).toEqual(['GET', 'POST', 'GET'])
    expect(new Set(seen.map((request) => request.port)).size).toBe(1)
    expect(connections - before).toBe(1)
  })
})
