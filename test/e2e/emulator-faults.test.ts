import { connect } from 'node:net'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { GATEWAY_404_TEXT, HTML_502_PAGE } from '../../src/emulator/faults.ts'
import { readStateDir } from '../../src/emulator/state.ts'
import { KEY, pieForm, startTestEmulator, submitFixturePie, useEmulator } from '../helpers/emulator.ts'

/**
 * The emulator's fault injection (docs/emulator.md, "Fault injection"), seen from raw HTTP: each
 * kind does exactly what it says, to the byte, and the control API refuses what it cannot do.
 * What clients make of these faults is in test/e2e/reliability-*.test.ts.
 */

/** A raw HTTP/1.1 exchange: everything the server sent until it closed (or `waitMs` passed). */
function raw(
  port: number,
  text: string,
  waitMs = 3_000,
): Promise<{ data: string; closedBy: 'server' | 'timeout' | 'reset'; firstByteMs: number; elapsedMs: number }> {
  return new Promise((resolve) => {
    const started = Date.now()
    let firstByteMs = -1
    let data = ''
    const socket = connect(port, '127.0.0.1', () => socket.write(text))
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ data, closedBy: 'timeout', firstByteMs, elapsedMs: Date.now() - started })
    }, waitMs)
    socket.on('data', (chunk) => {
      if (firstByteMs < 0) firstByteMs = Date.now() - started
      data += chunk.toString('latin1')
    })
    socket.on('error', () => {
      clearTimeout(timer)
      resolve({ data, closedBy: 'reset', firstByteMs, elapsedMs: Date.now() - started })
    })
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ data, closedBy: 'server', firstByteMs, elapsedMs: Date.now() - started })
    })
  })
}

const GET_ALIVE = 'GET /is-alive HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'

describe('fault kinds', () => {
  const emulator = useEmulator()

  it('status: the status, headers and JSON body given, `times` requests, then normal answers; logged with the fault', async () => {
    await emulator().control('POST', '/faults', {
      method: 'GET',
      path: '/is-alive',
      status: 429,
      headers: { 'Retry-After': 7 },
      body: { error: 'Rate limit exceeded' },
      times: 2,
    })
    for (let i = 0; i < 2; i++) {
      const answer = await emulator().call('GET', '/is-alive')
      expect(answer).toMatchObject({ status: 429, body: { error: 'Rate limit exceeded' } })
      expect(answer.headers['retry-after']).toBe('7')
    }
    expect((await emulator().call('GET', '/is-alive')).status).toBe(200)
    expect(
      emulator()
        .requests()
        .map((entry) => [entry.status, entry.fault]),
    ).toEqual([
      [429, 'status'],
      [429, 'status'],
      [200, undefined],
    ])
  })

  it('status with a string body: sent as raw text with the content type given', async () => {
    await emulator().control('POST', '/faults', {
      path: '/is-alive',
      status: 503,
      body: 'Service Unavailable',
      contentType: 'text/plain',
    })
    const answer = await emulator().call('GET', '/is-alive')
    expect(answer).toMatchObject({ status: 503, body: 'Service Unavailable' })
    expect(answer.headers['content-type']).toBe('text/plain')
  })

  it("html-502 and gateway-404: a proxy's HTML page and a gateway's plain text, not JSON", async () => {
    await emulator().control('POST', '/faults', { path: '/is-alive', kind: 'html-502' })
    await emulator().control('POST', '/faults', { path: '/is-alive', kind: 'gateway-404' })
    const html = await emulator().call('GET', '/is-alive')
    expect(html).toMatchObject({ status: 502, body: HTML_502_PAGE })
    expect(html.headers['content-type']).toBe('text/html')
    const gateway = await emulator().call('GET', '/is-alive')
    expect(gateway).toMatchObject({ status: 404, body: GATEWAY_404_TEXT })
    expect(GATEWAY_404_TEXT).toBe('404 page not found\n')
  })

  it('delay holds the headers; delay-body sends the headers at once and the body later', async () => {
    await emulator().control('POST', '/faults', { path: '/is-alive', kind: 'delay', delayMs: 400 })
    const delayed = await raw(emulator().port, GET_ALIVE)
    expect(delayed.firstByteMs).toBeGreaterThanOrEqual(350)
    expect(delayed.data).toMatch(/^HTTP\/1\.1 200/)

    await emulator().control('POST', '/faults', { path: '/is-alive', kind: 'delay-body', delayMs: 600 })
    const slowBody = await raw(emulator().port, GET_ALIVE)
    expect(slowBody.firstByteMs).toBeLessThan(300)
    expect(slowBody.elapsedMs).toBeGreaterThanOrEqual(550)
    expect(slowBody.data).toMatch(/content-length: 14\r\n[\s\S]*\r\n\r\n\{"alive":true\}$/)
  })

  it('drop resets the connection without an answer; drop-after-body reads the body first; neither processes the request', async () => {
    await emulator().control('POST', '/faults', { method: 'POST', path: '/buckets', kind: 'drop' })
    const body = JSON.stringify({ aggregatorVersion: 'v1' })
    const request = `POST /buckets HTTP/1.1\r\nhost: x\r\napi-key: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`
    const dropped = await raw(emulator().port, request)
    expect(dropped.data).toBe('')
    expect(dropped.closedBy).not.toBe('timeout')
    await emulator().control('POST', '/faults', { method: 'POST', path: '/buckets', kind: 'drop-after-body' })
    const afterBody = await raw(emulator().port, request)
    expect(afterBody.data).toBe('')
    expect(Object.keys(emulator().state.buckets)).toHaveLength(0)
    expect(
      emulator()
        .requests()
        .map((entry) => [entry.status, entry.fault]),
    ).toEqual([
      [0, 'drop'],
      [0, 'drop-after-body'],
    ])
  })

  it('drop-after processes the request, then loses the answer', async () => {
    await emulator().control('POST', '/faults', { method: 'POST', path: '/buckets', kind: 'drop-after' })
    await expect(
      emulator().call('POST', '/buckets', { headers: { 'api-key': KEY }, json: { aggregatorVersion: 'v1' } }),
    ).rejects.toThrow()
    expect(Object.keys(emulator().state.buckets)).toHaveLength(1)
  })

  it('truncate announces the full content-length and sends half the body', async () => {
    const id = await submitFixturePie(emulator())
    await emulator().control('POST', '/faults', { path: '/proving-query/:id', kind: 'truncate' })
    const cut = await raw(emulator().port, `GET /proving-query/${id} HTTP/1.1\r\nhost: x\r\n\r\n`)
    const [head, bodyText] = cut.data.split('\r\n\r\n')
    const announced = Number(/content-length: (\d+)/.exec(head!)![1])
    expect(bodyText!.length).toBe(Math.floor(announced / 2))
    expect(cut.closedBy).not.toBe('timeout')
  })

  it("error: the route's own 500 body (bucket close: {})", async () => {
    await emulator().control('POST', '/faults', { method: 'POST', path: '/buckets/close', kind: 'error' })
    expect(
      await emulator().call('POST', '/buckets/close', { query: { bucketId: 'x' }, headers: { 'api-key': KEY } }),
    ).toMatchObject({ status: 500, body: {} })
  })

  it('skip lets matching requests through first; "*" matches every route; a fault is removed by id', async () => {
    await emulator().control('POST', '/faults', { path: '/is-alive', status: 503, skip: 2 })
    const statuses = []
    for (let i = 0; i < 4; i++) statuses.push((await emulator().call('GET', '/is-alive')).status)
    expect(statuses).toEqual([200, 200, 503, 200])

    const { fault } = await emulator().control('POST', '/faults', { path: '*', status: 418, times: 100 })
    expect((await emulator().call('GET', '/docs/proving-queries', { headers: { 'api-key': KEY } })).status).toBe(418)
    expect((await emulator().call('GET', '/tasks')).status).toBe(418)
    // Control routes are never faulted.
    expect((await emulator().call('GET', '/_emulator/faults')).body.faults).toHaveLength(1)
    expect((await emulator().call('DELETE', `/_emulator/faults/${fault.id}`)).status).toBe(200)
    expect((await emulator().call('GET', '/tasks')).status).toBe(200)
    expect((await emulator().call('DELETE', `/_emulator/faults/${fault.id}`)).status).toBe(404)
  })

  it('refuses what it cannot do, with 400 and the reason', async () => {
    const refused = async (body: unknown) =>
      (await emulator().call('POST', '/_emulator/faults', { json: body })).body.message as string
    expect(await refused({ path: 'no-slash' })).toMatch(/path is required/)
    expect(await refused({ path: '/_emulator/state' })).toMatch(/must not be a control route/)
    expect(await refused({ path: '/x', kind: 'explode' })).toMatch(
      /kind must be one of error, status, html-502, gateway-404, delay, delay-body, drop, drop-after-body, drop-after, truncate/,
    )
    expect(await refused({ path: '/x', kind: 'drop', status: 500 })).toMatch(/status goes with kind status/)
    expect(await refused({ path: '/x', status: 200, headers: { 'bad header': 'x' } })).toMatch(
      /not a valid HTTP header/,
    )
    expect(await refused({ path: '/x', status: 200, headers: { 'x-a': 'line\r\nbreak' } })).toMatch(
      /not a valid HTTP header/,
    )
    expect(await refused({ path: '/x', delayMs: 700_000, kind: 'delay' })).toMatch(/delayMs must be from 0 to 600000/)
    expect(await refused({ path: '/x', times: 0 })).toMatch(/times must be a whole number/)
    expect(await refused({ path: '/x', skip: -1 })).toMatch(/skip must be a whole number/)
    expect(await refused({ path: '/x', status: 200, contentType: 'text/html', body: { a: 1 } })).toMatch(
      /contentType goes with a string body/,
    )
  })
})

describe('restart (POST /_emulator/restart)', () => {
  it('answers 202, refuses connections while down, then serves again on the same port', async () => {
    const emulator = await startTestEmulator()
    try {
      const answer = await emulator.call('POST', '/_emulator/restart', { json: { downMs: 500 } })
      expect(answer).toMatchObject({ status: 202, body: { restarting: true, downMs: 500, stateReloaded: false } })
      await new Promise((resolve) => setTimeout(resolve, 100))
      const down = await raw(emulator.port, GET_ALIVE, 1_000)
      expect(down.closedBy).toBe('reset')
      await new Promise((resolve) => setTimeout(resolve, 700))
      expect((await emulator.call('GET', '/is-alive')).status).toBe(200)
      expect((await emulator.call('POST', '/_emulator/restart', { json: { downMs: 60_001 } })).status).toBe(400)
    } finally {
      await emulator.close()
    }
  })

  it('with a stateDir, reloads the state from disk: queries survive, the request log too', async () => {
    const stateDir = await mkdtemp(join(tmpdir(), 'emulator-restart-'))
    const emulator = await startTestEmulator({ stateDir, timing: { receivedMs: 0, stepMs: 0 } })
    try {
      const id = await submitFixturePie(emulator)
      const onDisk = readStateDir(stateDir)!.state
      expect(Object.keys(onDisk.queries)).toEqual([id])
      expect((await emulator.call('POST', '/_emulator/restart', { json: {} })).body.stateReloaded).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 200))
      const after = await emulator.call('GET', `/docs/proving-query/${id}`, { headers: { 'api-key': KEY } })
      expect(after.body.provingQuery).toMatchObject({ id, status: 'DONE' })
      expect(emulator.requests().map((entry) => entry.status)).toEqual([201, 200])
      // Uploads kept too: the artifact is served after the restart.
      const form = await pieForm()
      expect(
        (
          await emulator.call('POST', '/v1/l2/proving-query/proof-generation-verification', {
            query: { apiKey: KEY },
            form,
          })
        ).status,
      ).toBe(201)
    } finally {
      await emulator.close()
      await rm(stateDir, { recursive: true, force: true })
    }
  })
})
