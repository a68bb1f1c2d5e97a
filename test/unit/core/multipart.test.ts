import { createHash, randomBytes } from 'node:crypto'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buffer } from 'node:stream/consumers'
import busboy from 'busboy'
import nock from 'nock'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { closeDefaultDispatcher, HttpClient } from '../../../src/core/http.ts'
import { prepareMultipart } from '../../../src/core/multipart.ts'
import { sha256Bytes } from '../../../src/pie/shared/digest.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { recordBodies } from '../../helpers/recorded-bodies.ts'

type Parsed = {
  fields: Record<string, string>
  files: Record<string, { filename: string; mimeType: string; data: Buffer }>
}

/** Parses a multipart body the way a server would (busboy). */
async function parseMultipart(contentType: string, body: Buffer): Promise<Parsed> {
  const parsed: Parsed = { fields: {}, files: {} }
  await new Promise<void>((resolve, reject) => {
    const parser = busboy({ headers: { 'content-type': contentType } })
    parser.on('field', (name, value) => {
      parsed.fields[name] = value
    })
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = []
      stream.on('data', (chunk: Buffer) => chunks.push(chunk))
      stream.on('end', () => {
        parsed.files[name] = { filename: info.filename ?? '', mimeType: info.mimeType, data: Buffer.concat(chunks) }
      })
    })
    parser.on('close', resolve)
    parser.on('error', reject)
    parser.end(body)
  })
  return parsed
}

let dir: string
let binary: string
let content: Buffer

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pk-multipart-'))
  binary = join(dir, 'some file.zip')
  // Binary, larger than one read chunk (1 MiB), with bytes that are not valid UTF-8.
  content = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0x80]), randomBytes(1024 * 1024 + 12_345)])
  await writeFile(binary, content)
})

afterAll(async () => {
  await closeDefaultDispatcher()
  await rm(dir, { recursive: true, force: true })
})

afterEach(() => {
  nock.cleanAll()
  nock.enableNetConnect()
})

describe('prepareMultipart', () => {
  it('encodes string fields and a file with its name and type; content-length is exact', async () => {
    const make = await prepareMultipart({
      pieFile: { path: binary, fileName: 'pie.zip', contentType: 'application/zip' },
      mockFactHash: 'false',
      layout: 'auto',
    })
    const body = make()
    const bytes = await buffer(body.stream)
    expect(bytes.length).toBe(body.contentLength)
    expect(body.headers['content-length']).toBe(String(bytes.length))
    expect(body.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/)
    const parsed = await parseMultipart(body.headers['content-type']!, bytes)
    expect(parsed.fields).toEqual({ mockFactHash: 'false', layout: 'auto' })
    expect(parsed.files.pieFile!.filename).toBe('pie.zip')
    expect(parsed.files.pieFile!.mimeType).toBe('application/zip')
    expect(parsed.files.pieFile!.data.equals(content)).toBe(true)
  })

  it("reports progress in the files' bytes, of their sizes, not in the multipart body's", async () => {
    const seen: { sentBytes: number; totalBytes: number }[] = []
    const body = (
      await prepareMultipart(
        { pieFile: { path: binary, fileName: 'pie.zip', contentType: 'application/zip' }, layout: 'auto' },
        { onProgress: (progress) => seen.push(progress) },
      )
    )()
    const bytes = await buffer(body.stream)
    expect(body.contentLength).toBeGreaterThan(content.length)
    expect(bytes.length).toBe(body.contentLength)
    expect(new Set(seen.map((progress) => progress.totalBytes))).toEqual(new Set([content.length]))
    expect(seen.at(-1)).toEqual({ sentBytes: content.length, totalBytes: content.length })
    expect(seen.map((progress) => progress.sentBytes)).toEqual(
      [...seen.map((progress) => progress.sentBytes)].sort((a, b) => a - b),
    )
    // A body of fields alone counts its own bytes.
    const fieldsOnly: number[] = []
    const plain = (
      await prepareMultipart(
        { programHash: '0x12' },
        { onProgress: ({ sentBytes, totalBytes }) => fieldsOnly.push(totalBytes - sentBytes) },
      )
    )()
    await buffer(plain.stream)
    expect(fieldsOnly.at(-1)).toBe(0)
  })

  it('names the file after its path when no name is given', async () => {
    const body = (await prepareMultipart({ f: { path: binary, contentType: 'application/octet-stream' } }))()
    const parsed = await parseMultipart(body.headers['content-type']!, await buffer(body.stream))
    expect(parsed.files.f!.filename).toBe('some file.zip')
  })

  it('each call opens the file anew, so a refused request can be sent again', async () => {
    const make = await prepareMultipart({ f: { path: binary, contentType: 'application/zip' }, a: '1' })
    for (let call = 0; call < 2; call++) {
      const body = make()
      const bytes = await buffer(body.stream)
      expect(bytes.length).toBe(body.contentLength)
      const parsed = await parseMultipart(body.headers['content-type']!, bytes)
      expect(parsed.files.f!.data.equals(content)).toBe(true)
    }
  })

  it('fails on a missing file when preparing, before anything is sent', async () => {
    await expect(
      prepareMultipart({ f: { path: join(dir, 'missing.zip'), contentType: 'application/zip' } }),
    ).rejects.toMatchObject({
      code: 'ENOENT',
    })
  })

  it('goes through HttpClient with the declared length; a 429 resends the whole body', async () => {
    nock.disableNetConnect()
    const received: { length: string | null; body: Buffer; type: string }[] = []
    const record = async (request: Request) => {
      received.push({
        length: request.headers.get('content-length'),
        body: Buffer.from(await request.arrayBuffer()),
        type: request.headers.get('content-type')!,
      })
    }
    nock('https://svc.test')
      .post('/upload')
      .reply(async (request: Request) => {
        await record(request)
        return [429, { error: 'Rate limit exceeded' }]
      })
      .post('/upload')
      .reply(async (request: Request) => {
        await record(request)
        return [201, { ok: true }]
      })
    const clock = new FakeClock()
    const http = new HttpClient({ baseUrl: 'https://svc.test', serviceName: 'svc', clock, random: () => 0 })
    const body = await prepareMultipart({
      f: { path: binary, fileName: 'pie.zip', contentType: 'application/zip' },
      x: 'y',
    })
    const response = await http.request({ method: 'POST', path: '/upload', body })
    expect(response.attempts).toBe(2)
    expect(received).toHaveLength(2)
    for (const { length, body: bytes, type } of received) {
      expect(Number(length)).toBe(bytes.length)
      const parsed = await parseMultipart(type, bytes)
      expect(parsed.files.f!.data.equals(content)).toBe(true)
      expect(parsed.fields.x).toBe('y')
    }
  })

  it('under nock, passing through to a real server, the bytes arrive intact: no read buffer is reused', async () => {
    // nock 14+ intercepts sockets (@mswjs/interceptors): it acknowledges each write at once and
    // keeps the chunk until the request is let through, then writes it to the real connection.
    // A buffer refilled after the acknowledgement would reach the server overwritten.
    const big = randomBytes(20 * 1024 * 1024 + 777)
    const path = join(dir, 'passthrough.bin')
    await writeFile(path, big)
    nock('https://elsewhere.test').get('/').reply(200)
    const server = createServer((req, res) => {
      const hash = createHash('sha256')
      let size = 0
      const parser = busboy({ headers: req.headers })
      parser.on('file', (_name, stream) => {
        stream.on('data', (chunk: Buffer) => {
          hash.update(chunk)
          size += chunk.length
        })
      })
      parser.on('close', () => {
        res.writeHead(201, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ sha256: hash.digest('hex'), size }))
      })
      req.pipe(parser)
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const http = new HttpClient({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        serviceName: 'svc',
      })
      const make = await prepareMultipart({ f: { path, fileName: 'pie.zip', contentType: 'application/zip' } })
      const { body, bodies } = recordBodies(make)
      const response = await http.request<{ sha256: string; size: number }>({ method: 'POST', path: '/upload', body })
      expect(response.data).toEqual({ sha256: sha256Bytes(big), size: big.length })
      expect(bodies[0]!.reads).toEqual({ allocated: 21, reused: 0 })
    } finally {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
    }
  })
})
