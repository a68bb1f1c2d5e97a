import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { InvalidInputError, InvalidResponseError } from '../../src/core/errors.ts'
import { HttpClient } from '../../src/core/http.ts'
import { runCli } from '../helpers/cli.ts'
import { readAction, runAction } from '../helpers/run-action.ts'

/**
 * Downloads go through the one HTTP client, capped in size and never redirected to another
 * origin; plain http to another machine is refused unless allowed (issue 13). Two artifact
 * hosts on loopback: different ports are different origins.
 */

let a: Server
let b: Server
let aUrl: string
let bUrl: string
const big = Buffer.alloc(3 * 1024 * 1024, 7)

function listen(server: Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  )
}

beforeAll(async () => {
  b = createServer((_req, res) => res.end('from another origin'))
  bUrl = await listen(b)
  a = createServer((req, res) => {
    if (req.url === '/proof.json') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"proof":1}')
    if (req.url === '/moved') return res.writeHead(302, { location: '/proof.json' }).end()
    if (req.url === '/elsewhere') return res.writeHead(302, { location: `${bUrl}/proof.json` }).end()
    if (req.url === '/to-plain-http')
      return res.writeHead(307, { location: `${bUrl.replace('127.0.0.1', 'localhost')}/proof.json` }).end()
    if (req.url?.startsWith('/') && req.url.includes('quer'))
      return res.writeHead(307, { location: `${bUrl}/api/v1/queries` }).end()
    if (req.url === '/big') return res.writeHead(200, { 'content-length': String(big.length) }).end(big)
    if (req.url === '/big-chunked') {
      res.writeHead(200)
      for (let i = 0; i < 3; i++) res.write(big.subarray(i * 1024 * 1024, (i + 1) * 1024 * 1024))
      return res.end()
    }
    res.writeHead(404).end()
  })
  aUrl = await listen(a)
})
afterAll(async () => {
  await Promise.all([a, b].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))))
})

async function download(path: string, maxBytes = 1024 * 1024): Promise<{ text: string; error?: unknown }> {
  const http = new HttpClient({ baseUrl: aUrl, serviceName: 'artifact host' })
  let text = ''
  try {
    await http.download(`${aUrl}${path}`, {
      maxBytes,
      write: async (body) => {
        for await (const chunk of body) text += Buffer.from(chunk).toString('utf8')
      },
    })
    return { text }
  } catch (error) {
    return { text, error }
  }
}

describe('downloads', () => {
  it('a same-origin redirect is followed', async () => {
    expect(await download('/moved')).toEqual({ text: '{"proof":1}' })
  })
  it('a redirect to another origin is refused, never followed', async () => {
    const { error, text } = await download('/elsewhere')
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect((error as Error).message).toMatch(/another origin/)
    expect(text).toBe('')
  })
  it('the refusal names the redirect and where it led, and nothing from there is written', async () => {
    const { error, text } = await download('/to-plain-http')
    expect(error).toBeInstanceOf(InvalidResponseError)
    expect((error as Error).message).toBe(
      `Refused to follow the download from ${aUrl} to another origin, http://localhost:${new URL(bUrl).port} (a 307 redirect; downloads stay on the link's own origin).`,
    )
    expect(text).toBe('')
  })
  it("a service's redirect is never followed: one line naming the service by host and where it led (issue 31)", async () => {
    const client = new ProvingClient({ baseUrl: aUrl, apiKey: 'k-1234' })
    const error = await client.listQueries().catch((e) => e)
    expect(error.shortMessage).toBe(
      `The proving service at ${new URL(aUrl).host} answered list queries with a 307 redirect to ${bUrl} (refused, not followed: the answer must come from the URL given).`,
    )
    expect(error.retryable).toBe(false)
  })
  it('an announced size over the cap is refused unread', async () => {
    const { error, text } = await download('/big')
    expect((error as Error).message).toMatch(/announces 3145728 bytes, more than the 1 MiB allowed/)
    expect(text).toBe('')
  })
  it('a body that runs over the cap (no Content-Length) is cut and refused', async () => {
    const { error } = await download('/big-chunked')
    expect((error as Error).message).toMatch(/larger than the 1 MiB allowed/)
  })
})

describe('plain http to another machine', () => {
  it('is refused by every client unless allowed; loopback is fine', () => {
    expect(() => new ProvingClient({ baseUrl: 'http://proving.example.com', apiKey: 'k-1234' })).toThrow(
      InvalidInputError,
    )
    expect(
      () => new ProvingClient({ baseUrl: 'http://proving.example.com', apiKey: 'k-1234', allowInsecureHttp: true }),
    ).not.toThrow()
    expect(() => new ProvingClient({ baseUrl: 'http://localhost:8790', apiKey: 'k-1234' })).not.toThrow()
    expect(() => new ProvingClient({ baseUrl: 'http://[::1]:8790', apiKey: 'k-1234' })).not.toThrow()
  })
  it('the CLI: exit 2 naming the fix, nothing sent; --allow-insecure-http lets it through', async () => {
    const run = await runCli(['query', 'list'], {
      env: { PROVING_BASE_URL: 'http://proving.example.com', PROVING_API_KEY: 'k-1234' },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/plain http to another machine.*--allow-insecure-http/)
    const allowed = await runCli(['query', 'list', '--allow-insecure-http'], {
      env: { PROVING_BASE_URL: 'http://proving.invalid', PROVING_API_KEY: 'k-1234' },
    })
    expect(allowed.stderr).not.toMatch(/plain http/)
  })
})

describe('plain http in the sub-actions that talk to the task, storage-proof and account services', () => {
  // Each refuses a plain http URL on another machine before sending anything, and its advice
  // names an input the action really has (`allow-insecure-http`), as every other action does.
  const cases: [action: string, inputs: Record<string, string>][] = [
    ['task', { task: 'examples/task.json', 'tasks-url': 'http://tasks.example.com', 'api-key': 'k-1234' }],
    [
      'decommit',
      {
        'proving-query-id': 'q-1',
        'destination-chain-id': '0xaa36a7',
        'tasks-url': 'http://tasks.example.com',
        'api-key': 'k-1234',
      },
    ],
    [
      'storage-query',
      { query: 'examples/storage-query.json', 'storage-proof-url': 'http://sp.example.com', 'api-key': 'k-1234' },
    ],
    ['api-key', { 'private-key': `0x${'11'.repeat(32)}`, 'auth-url': 'http://auth.example.com' }],
  ]
  it.each(cases)(
    '%s: refused with advice naming its own allow-insecure-http input, no secret shown',
    async (action, inputs) => {
      expect(readAction(action).inputs).toHaveProperty('allow-insecure-http')
      const run = await runAction(action, { inputs })
      expect(run.code).toBe(1)
      expect(run.outputs['error-reason']).toMatch(/plain http to another machine.*the allow-insecure-http input/)
      // `::add-mask::` is how the runner learns the secret; nothing else may carry it.
      const shown = run.stdout
        .split('\n')
        .filter((line) => !line.startsWith('::add-mask::'))
        .join('\n')
      expect(shown).not.toContain('k-1234')
      expect(shown).not.toContain('11'.repeat(32))
    },
  )
})
