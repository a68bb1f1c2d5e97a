import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidInputError } from '../../src/core/errors.ts'
import { startEmulator } from '../../src/emulator/index.ts'
import { Router } from '../../src/emulator/router.ts'
import { webhookHostAllowed } from '../../src/emulator/tasks/webhooks.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, useEmulator } from '../helpers/emulator.ts'

/**
 * An emulator safe to run on a laptop (issue 13): web pages cannot drive its control API (no
 * cross-site form or text/plain POST, no other origin, no DNS-rebound Host), its webhooks only
 * reach this machine unless told otherwise, a bind beyond this machine needs keys, no key is
 * ever logged, and a damaged state file is refused with one line naming it.
 */

describe('the control API refuses web pages', () => {
  const emulator = useEmulator({ apiKeys: [KEY] })
  const raw = (method: string, path: string, headers: Record<string, string>, body?: string) =>
    request(`${emulator().url}${path}`, { method: method as 'POST', headers, body }).then(async (response) => ({
      status: response.statusCode,
      body: (await response.body.json().catch(() => undefined)) as { message?: string } | undefined,
    }))
  const faults = async () => (await emulator().control('GET', '/faults')).faults as unknown[]

  it('a cross-site text/plain POST to /_emulator/faults: 403, no fault set', async () => {
    const answer = await raw(
      'POST',
      '/_emulator/faults',
      { 'content-type': 'text/plain' },
      JSON.stringify({ path: '*', kind: 'drop', times: 1000 }),
    )
    expect(answer.status).toBe(403)
    expect(answer.body?.message).toMatch(/JSON bodies only/)
    expect(await faults()).toEqual([])
  })

  it('a form POST (application/x-www-form-urlencoded) to /_emulator/reset: 403', async () => {
    const answer = await raw('POST', '/_emulator/reset', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1')
    expect(answer.status).toBe(403)
  })

  it('another origin, even with a JSON body: 403', async () => {
    const answer = await raw(
      'POST',
      '/_emulator/faults',
      { 'content-type': 'application/json', origin: 'https://evil.example' },
      JSON.stringify({ path: '*', kind: 'drop' }),
    )
    expect(answer.status).toBe(403)
    expect(answer.body?.message).toMatch(/another origin/)
    expect((await raw('GET', '/_emulator/state', { origin: 'null' })).status).toBe(403)
    expect(await faults()).toEqual([])
  })

  it('a Host that is not this machine (DNS rebinding) cannot read /_emulator/state', async () => {
    const answer = await raw('GET', '/_emulator/state', { host: 'attacker.example' })
    expect(answer.status).toBe(403)
    expect(answer.body?.message).toMatch(/addressed to this machine/)
    expect((await raw('GET', '/_emulator/state', { host: `localhost:${emulator().port}` })).status).toBe(200)
  })

  it("this machine's own pages and tools still work (JSON from a loopback origin)", async () => {
    const answer = await raw(
      'POST',
      '/_emulator/faults',
      { 'content-type': 'application/json', origin: `http://127.0.0.1:${emulator().port}` },
      JSON.stringify({ path: '/is-alive', kind: 'status', status: 503 }),
    )
    expect(answer.status).toBe(201)
    await emulator().control('DELETE', '/faults')
  })

  it('a page on another port of this machine is another origin: 403, even with a JSON body', async () => {
    const port = emulator().port
    for (const origin of [
      `http://127.0.0.1:${port + 1}`,
      `http://localhost:${port + 1}`,
      `https://127.0.0.1:${port}`,
      'http://127.0.0.1',
    ]) {
      const answer = await raw(
        'POST',
        '/_emulator/faults',
        { 'content-type': 'application/json', origin },
        JSON.stringify({ path: '*', kind: 'drop' }),
      )
      expect(answer.status, origin).toBe(403)
      expect(answer.body?.message).toMatch(/another origin than its own \(http:\/\/127\.0\.0\.1:\d+\)/)
      expect((await raw('GET', '/_emulator/state', { origin })).status, origin).toBe(403)
    }
    // The emulator's own origin, however it is named (the Host header is its name).
    expect(
      (await raw('GET', '/_emulator/state', { origin: `http://localhost:${port}`, host: `localhost:${port}` })).status,
    ).toBe(200)
    expect(await faults()).toEqual([])
  })

  it('a state change without a body needs a JSON content type or the x-emulator-control header: a bodyless form or no-cors POST is refused', async () => {
    await emulator().control('POST', '/faults', { path: '/is-alive', kind: 'status', status: 503 })
    const bodyless: Record<string, string>[] = [
      {},
      { 'content-type': 'application/x-www-form-urlencoded' },
      { 'content-type': 'text/plain', origin: `http://127.0.0.1:${emulator().port}` },
    ]
    for (const headers of bodyless) {
      const answer = await raw('POST', '/_emulator/reset', headers)
      expect(answer.status, JSON.stringify(headers)).toBe(403)
      expect(answer.body?.message).toMatch(/x-emulator-control/)
      expect((await raw('DELETE', '/_emulator/faults', headers)).status).toBe(403)
    }
    expect(await faults()).toHaveLength(1)
    expect((await raw('DELETE', '/_emulator/faults', { 'x-emulator-control': '1' })).status).toBe(200)
    expect((await raw('POST', '/_emulator/reset', { 'content-type': 'application/json' })).status).toBe(200)
  })

  it('the services themselves are not affected (any Host, no Origin rules)', async () => {
    expect((await raw('GET', '/is-alive', { host: 'proving.example' })).status).toBe(200)
  })
})

describe('webhooks reach this machine only, unless widened', () => {
  it.each([
    ['http://127.0.0.1:9/hook', [], true],
    ['http://localhost:9/hook', [], true],
    ['http://[::1]:9/hook', [], true],
    ['http://10.0.0.5:8080/admin', [], false],
    ['http://169.254.169.254/latest/meta-data', [], false],
    ['https://hooks.example.com/dp', [], false],
    ['https://hooks.example.com/dp', ['hooks.example.com'], true],
    ['https://other.example.com/dp', ['hooks.example.com'], false],
    ['https://other.example.com/dp', ['*'], true],
  ] as [string, string[], boolean][])('%s with %j: %s', (url, hosts, allowed) => {
    expect(webhookHostAllowed(url, hosts)).toBe(allowed)
  })
})

describe('listening beyond this machine', () => {
  it('without keys: refused before listening, naming the host', async () => {
    const error = await startEmulator({ host: '0.0.0.0', port: 0 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as Error).message).toMatch(/reachable from other machines.*give the keys/)
  })
  it('the CLI says the same, exit 2', async () => {
    const run = await runCli(['emulator', '--host', '0.0.0.0', '--port', '0'])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/reachable from other machines/)
  })
})

describe('keys are never logged', () => {
  it('an error escaping dispatch logs the path with apiKey masked', async () => {
    const lines: string[] = []
    const logger = { debug() {}, info() {}, warn() {}, error: (line: string) => lines.push(line) }
    const router = new Router({ logger }).add([
      {
        method: 'POST',
        pattern: '/v1/l2/x',
        handler: async () => ({
          status: 200,
          file: { path: '/nonexistent/proving-kit-test', contentType: 'text/plain' },
        }),
      },
    ])
    const server = createServer(router.handle)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as AddressInfo).port
      // The answer may be a 500 or a dropped connection (headers were already out): either way
      // the log line is what is checked.
      await request(`http://127.0.0.1:${port}/v1/l2/x?apiKey=pk_SECRET_KEY_123456&a=1`, { method: 'POST' })
        .then((answer) => answer.body.dump())
        .catch(() => undefined)
      expect(lines.length).toBeGreaterThan(0)
      expect(lines.join('\n')).not.toContain('pk_SECRET_KEY_123456')
      expect(lines.join('\n')).toMatch(/apiKey=\*\*\*/)
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})

describe('a damaged state file is refused with one line naming it', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'emulator-state-'))
  })
  afterAll(() => rm(dir, { recursive: true, force: true }))

  it.each([
    ['empty', '', /is empty/],
    ['truncated', '{"version":1,"timing":{"receivedMs":0,', /not valid JSON/],
    ['valid JSON of the wrong shape', '{"version":1,"queries":[]}', /is not an emulator state: timing/],
    // A collection that is not an object: the log's replay into it failed naming no file.
    [
      'a collection that is a string',
      '{"version":1,"queries":"abc"}',
      /is not an emulator state: queries: expected an object, received string/,
    ],
    [
      'a nested collection that is a number',
      '{"version":1,"taskService":7}',
      /is not an emulator state: taskService: expected an object, received number/,
    ],
    [
      'a query without its run',
      JSON.stringify({
        version: 1,
        timing: { receivedMs: 0, stepMs: 0 },
        counters: { submissions: 1, retries: 0, buckets: 0 },
        queries: { q: { id: 'q' } },
        buckets: {},
        nextQueries: [],
        faults: [],
      }),
      /queries\.q\.owner/,
    ],
    ['another version', '{"version":7}', /state version 7/],
  ])('%s', async (name, text, reason) => {
    const stateDir = join(dir, name.replace(/\W+/g, '-'))
    await import('node:fs/promises').then((fs) => fs.mkdir(stateDir, { recursive: true }))
    await writeFile(join(stateDir, 'state.json'), text)
    const error = await startEmulator({ stateDir, port: 0 }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as Error).message).toMatch(reason)
    expect((error as Error).message).toContain(join(stateDir, 'state.json'))
    expect((error as Error).message).toMatch(/remove it/)
    const run = await runCli(['emulator', '--state-dir', stateDir, '--port', '0'])
    expect(run.code).toBe(2)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
  })
})
