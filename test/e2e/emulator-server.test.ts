import { readdir } from 'node:fs/promises'
import { connect } from 'node:net'
import { join } from 'node:path'
import { request } from 'undici'
import { describe, expect, it } from 'vitest'
import { startEmulator } from '../../src/emulator/index.ts'
import { KEY, pieForm, submitFixturePie, useEmulator } from '../helpers/emulator.ts'

describe('emulator server and router', () => {
  const emulator = useEmulator()

  it('answers GET /is-alive as soon as it listens', async () => {
    const started = await startEmulator()
    try {
      const response = await request(`${started.url}/is-alive`)
      expect(response.statusCode).toBe(200)
      expect(await response.body.json()).toEqual({ alive: true })
      expect(started.port).toBeGreaterThan(0)
      expect(started.url).toBe(`http://127.0.0.1:${started.port}`)
    } finally {
      await started.close()
    }
  })

  it('answers 404 JSON for an unknown path and 405 for a wrong method', async () => {
    const missing = await emulator().call('GET', '/no/such/path')
    expect(missing.status).toBe(404)
    expect(missing.body).toMatchObject({ error: 'NOT_FOUND' })
    expect(String(missing.headers['content-type'])).toMatch(/application\/json/)

    const wrongMethod = await emulator().call('DELETE', '/is-alive')
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.body).toMatchObject({ error: 'METHOD_NOT_ALLOWED' })
    expect(wrongMethod.headers.allow).toBe('GET')
  })

  it('refuses a JSON body over 1 MiB, nested too deep, or not JSON, with 400 and a JSON body', async () => {
    const headers = { 'api-key': KEY, 'content-type': 'application/json' }
    const big = JSON.stringify({ aggregatorVersion: 'v1', padding: 'x'.repeat(1024 * 1024 + 10) })
    const tooBig = await emulator().call('POST', '/buckets', { headers, body: big })
    expect(tooBig.status).toBe(400)
    expect(tooBig.body).toMatchObject({ error: 'BAD_REQUEST' })
    expect(tooBig.body.message).toMatch(/larger than 1048576 bytes/)

    const deep = `{"aggregatorVersion":"v1","x":${'['.repeat(200)}${']'.repeat(200)}}`
    const tooDeep = await emulator().call('POST', '/buckets', { headers, body: deep })
    expect(tooDeep.status).toBe(400)
    expect(tooDeep.body.message).toMatch(/nested deeper/)

    const broken = await emulator().call('POST', '/buckets', { headers, body: '{"aggregatorVersion": ' })
    expect(broken.status).toBe(400)
    expect(broken.body.message).toMatch(/not valid JSON/)

    // Brackets inside strings do not count as nesting.
    const stringy = await emulator().call('POST', '/buckets', {
      headers,
      body: JSON.stringify({ aggregatorVersion: 'v1', externalId: '['.repeat(500) }),
    })
    expect(stringy.status).toBe(201)
  })

  it('turns a handler exception into the route 500 body and keeps serving', async () => {
    await emulator().control('POST', '/faults', { path: '/proving-query/:id', kind: 'error' })
    const failed = await emulator().call('GET', '/proving-query/abc')
    expect(failed).toMatchObject({ status: 500, body: { error: 'INTERNAL_SERVER_ERROR' } })
    const next = await emulator().call('GET', '/proving-query/abc')
    expect(next.status).toBe(404)
    expect((await emulator().call('GET', '/is-alive')).status).toBe(200)
  })

  it('keeps idle connections open longer than the 4 s clients keep them', async () => {
    const answer = await emulator().call('GET', '/is-alive')
    expect(answer.headers['keep-alive']).toMatch(/timeout=(\d+)/)
    const seconds = Number(/timeout=(\d+)/.exec(String(answer.headers['keep-alive']))![1])
    expect(seconds).toBeGreaterThan(5)
  })

  it('survives a malformed HTTP request', async () => {
    const socket = connect(emulator().port, '127.0.0.1')
    const reply = await new Promise<string>((resolve) => {
      let text = ''
      socket.on('data', (chunk) => (text += chunk.toString()))
      socket.on('close', () => resolve(text))
      socket.write('THIS IS NOT HTTP\r\n\r\n')
    })
    expect(reply).toMatch(/^HTTP\/1.1 400/)
    expect((await emulator().call('GET', '/is-alive')).status).toBe(200)
  })

  it('reads a path that starts with // as a path, never as a host: 404, not a 500 or another route', async () => {
    const answer = (target: string) =>
      new Promise<string>((resolve) => {
        const socket = connect(emulator().port, '127.0.0.1')
        let text = ''
        socket.on('data', (chunk) => (text += chunk.toString()))
        socket.on('close', () => resolve(text))
        socket.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)
      })
    // Read as a URL, this was host `x` and path /is-alive.
    const reply = await answer('//x/is-alive')
    expect(reply).toMatch(/^HTTP\/1.1 404/)
    expect(reply).toContain('"error":"NOT_FOUND"')
    expect(
      emulator()
        .requests()
        .map((entry) => entry.path),
    ).toEqual(['//x/is-alive'])
    // Empty segments are ignored, as in every path: `//` is `/`, the console.
    expect(await answer('//')).toMatch(/^HTTP\/1.1 200[\s\S]*content-type: text\/html/)
  })

  it('removes a partial upload when the client goes away mid-body', async () => {
    const socket = connect(emulator().port, '127.0.0.1')
    await new Promise((resolve) => socket.once('connect', resolve))
    const boundary = 'xxBOUNDARYxx'
    socket.write(
      [
        `POST /v1/l2/proving-query/proof-generation-verification?apiKey=${KEY} HTTP/1.1`,
        'host: 127.0.0.1',
        `content-type: multipart/form-data; boundary=${boundary}`,
        'content-length: 10000000',
        '',
        `--${boundary}`,
        'content-disposition: form-data; name="pieFile"; filename="pie.zip"',
        'content-type: application/zip',
        '',
        'PK'.padEnd(64 * 1024, 'x'),
      ].join('\r\n'),
    )
    const incoming = join(emulator().uploadsDir, '.incoming')
    await waitFor(async () => (await readdir(incoming).catch(() => [])).length === 1)
    socket.destroy()
    await waitFor(async () => (await readdir(incoming)).length === 0)
    expect(Object.keys(emulator().state.queries)).toHaveLength(0)
    expect((await emulator().call('GET', '/is-alive')).status).toBe(200)
  })

  it('injects status faults, dropped answers and counts them in the request log', async () => {
    await emulator().control('POST', '/faults', {
      method: 'GET',
      path: '/is-alive',
      status: 503,
      body: { error: 'MAINTENANCE' },
      times: 2,
    })
    expect((await emulator().call('GET', '/is-alive')).status).toBe(503)
    expect((await emulator().call('GET', '/is-alive')).status).toBe(503)
    expect((await emulator().call('GET', '/is-alive')).status).toBe(200)

    // drop-after: the query is created, but the answer is lost.
    await emulator().control('POST', '/faults', {
      method: 'POST',
      path: '/v1/l2/proving-query/proof-generation-verification',
      kind: 'drop-after',
    })
    await expect(
      emulator().call('POST', '/v1/l2/proving-query/proof-generation-verification', {
        query: { apiKey: KEY },
        form: await pieForm(),
      }),
    ).rejects.toThrow()
    const state = await emulator().control('GET', '/state')
    expect(state.queries).toHaveLength(1)

    const { requests } = await emulator().control('GET', '/requests')
    expect(requests.map((entry: { status: number }) => entry.status)).toEqual([503, 503, 200, 0])
    // Control calls are not logged; the apiKey is masked.
    expect(requests.every((entry: { path: string }) => !entry.path.startsWith('/_emulator'))).toBe(true)
    expect(requests[3].path).toBe('/v1/l2/proving-query/proof-generation-verification?apiKey=***')
  })

  it('never writes an API key into the request log or the state', async () => {
    await submitFixturePie(emulator(), KEY)
    await emulator().call('GET', '/docs/proving-queries', { headers: { 'api-key': KEY } })
    const log = JSON.stringify(await emulator().control('GET', '/requests'))
    const state = JSON.stringify(await emulator().control('GET', '/state'))
    expect(log).not.toContain(KEY)
    expect(state).not.toContain(KEY)
    expect(JSON.stringify(emulator().state)).not.toContain(KEY)
  })
})

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
