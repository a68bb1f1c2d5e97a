import { createHash, randomBytes } from 'node:crypto'
import { subscribe, unsubscribe } from 'node:diagnostics_channel'
import { appendFile, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import busboy from 'busboy'
import { Agent } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InvalidInputError } from '../../../src/core/errors.ts'
import { closeDefaultDispatcher, HttpClient, type HttpClientConfig } from '../../../src/core/http.ts'
import { type MultipartBody, prepareMultipart } from '../../../src/core/multipart.ts'
import { READ_CHUNK_BYTES } from '../../../src/core/upload-buffers.ts'
import { sha256Bytes } from '../../../src/pie/shared/digest.ts'
import { closeProxy, listenOnLoopback, tunnelConnects } from '../../helpers/connect-proxy.ts'
import { recordBodies } from '../../helpers/recorded-bodies.ts'

/**
 * Uploads whose bytes the server checks: the read buffers of a multipart body are reused once
 * undici has provably finished with them (src/core/upload-buffers.ts), and an upload must arrive
 * byte for byte whatever the file's size, whoever's dispatcher sends it and whoever else watches
 * the chunks. The server reads slowly, so the socket's buffers fill, writes complete later than
 * they are made, and a buffer refilled too early would show in the digest.
 */

type Received = { files: Record<string, { sha256: string; size: number }>; fields: Record<string, string> }

let dir: string
let server: Server
let baseUrl: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pk-upload-buffers-'))
  server = createServer((req, res) => {
    const received: Received = { files: {}, fields: {} }
    const parser = busboy({ headers: req.headers })
    parser.on('field', (name, value) => {
      received.fields[name] = value
    })
    parser.on('file', (name, stream) => {
      const hash = createHash('sha256')
      let size = 0
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk)
        size += chunk.length
        // A slow reader: the client's writes back up behind it.
        stream.pause()
        setImmediate(() => stream.resume())
      })
      stream.on('end', () => {
        received.files[name] = { sha256: hash.digest('hex'), size }
      })
    })
    parser.on('close', () => {
      res.writeHead(201, { 'content-type': 'application/json' })
      res.end(JSON.stringify(received))
    })
    req.pipe(parser)
  })
  baseUrl = await listenOnLoopback(server)
})

afterAll(async () => {
  await closeDefaultDispatcher()
  await closeProxy(server)
  await rm(dir, { recursive: true, force: true })
})

async function fileOf(name: string, size: number): Promise<{ path: string; sha256: string }> {
  const content = randomBytes(size)
  const path = join(dir, name)
  await writeFile(path, content)
  return { path, sha256: sha256Bytes(content) }
}

/** Uploads `path` as pieFile with one field; returns what the server received and the body used. */
async function upload(
  path: string,
  config: Partial<HttpClientConfig> = {},
): Promise<{ received: Received; body: MultipartBody }> {
  const http = new HttpClient({ baseUrl, serviceName: 'upload server', ...config })
  const make = await prepareMultipart({
    pieFile: { path, fileName: 'pie.zip', contentType: 'application/zip' },
    layout: 'auto',
  })
  const { body, bodies } = recordBodies(make)
  const response = await http.request<Received>({ method: 'POST', path: '/upload', body })
  expect(bodies).toHaveLength(1)
  return { received: response.data, body: bodies[0]! }
}

const SIZES: [string, number][] = [
  ['empty', 0],
  ['1 byte', 1],
  ['one chunk less a byte', READ_CHUNK_BYTES - 1],
  ['exactly one chunk', READ_CHUNK_BYTES],
  ['one chunk and a byte', READ_CHUNK_BYTES + 1],
  ['3 chunks and a bit', 3 * READ_CHUNK_BYTES + 12_345],
  ['24 MiB and 7 bytes', 24 * READ_CHUNK_BYTES + 7],
]

describe('uploads through the library’s own agent (reused read buffers)', () => {
  for (const [label, size] of SIZES) {
    it(`${label} (${size} bytes) arrives byte for byte`, async () => {
      const file = await fileOf(`own-${size}.bin`, size)
      const { received, body } = await upload(file.path)
      expect(received.files.pieFile).toEqual({ sha256: file.sha256, size })
      expect(received.fields).toEqual({ layout: 'auto' })
      // Reads beyond the first two reuse the buffers already sent: two buffers in all.
      const reads = Math.ceil(size / READ_CHUNK_BYTES)
      expect(body.reads).toEqual({ allocated: Math.min(reads, 2), reused: Math.max(reads - 2, 0) })
    })
  }

  it('through a CONNECT tunnel (HTTP_PROXY): the bytes arrive, the buffers reused', async () => {
    const proxy = createServer()
    let tunnels = 0
    tunnelConnects(proxy, () => tunnels++)
    const proxyUrl = await listenOnLoopback(proxy)
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY }
    // The shared agent reads the variables when it is made: a new one for this test.
    await closeDefaultDispatcher()
    process.env.HTTP_PROXY = proxyUrl
    process.env.NO_PROXY = ''
    try {
      const size = 8 * READ_CHUNK_BYTES + 5
      const file = await fileOf('proxied.bin', size)
      const { received, body } = await upload(file.path)
      expect(tunnels).toBe(1)
      expect(received.files.pieFile).toEqual({ sha256: file.sha256, size })
      expect(body.reads).toEqual({ allocated: 2, reused: 7 })
    } finally {
      await closeDefaultDispatcher()
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
      await closeProxy(proxy)
    }
  })

  it('reports progress per chunk of the file, up to the whole file', async () => {
    const file = await fileOf('progress.bin', 5 * READ_CHUNK_BYTES + 3)
    const http = new HttpClient({ baseUrl, serviceName: 'upload server' })
    const seen: { sentBytes: number; totalBytes: number }[] = []
    const make = await prepareMultipart(
      { pieFile: { path: file.path, contentType: 'application/zip' } },
      { onProgress: (progress) => seen.push(progress) },
    )
    const response = await http.request<Received>({ method: 'POST', path: '/upload', body: make })
    expect(response.data.files.pieFile!.sha256).toBe(file.sha256)
    const total = seen[0]!.totalBytes
    expect(total).toBe(5 * READ_CHUNK_BYTES + 3)
    expect(seen.at(-1)).toEqual({ sentBytes: total, totalBytes: total })
    // One report per 1 MiB read: the file's six chunks.
    expect(seen).toHaveLength(6)
    for (let k = 1; k < seen.length; k++) expect(seen[k]!.sentBytes).toBeGreaterThan(seen[k - 1]!.sentBytes)
  })
})

describe('uploads where reuse cannot be shown (fresh buffers)', () => {
  it('a caller-supplied dispatcher gets the right bytes, every read in a buffer of its own', async () => {
    const file = await fileOf('caller.bin', 6 * READ_CHUNK_BYTES + 999)
    const dispatcher = new Agent({ connections: 2 })
    try {
      const { received, body } = await upload(file.path, { dispatcher })
      expect(received.files.pieFile).toEqual({ sha256: file.sha256, size: 6 * READ_CHUNK_BYTES + 999 })
      expect(body.reads).toEqual({ allocated: 7, reused: 0 })
    } finally {
      await dispatcher.close()
    }
  })

  it('a subscriber of undici:request:bodyChunkSent keeps chunks that stay intact', async () => {
    const size = 4 * READ_CHUNK_BYTES + 10
    const file = await fileOf('watched.bin', size)
    const chunks: Uint8Array[] = []
    const keep = (message: unknown) => {
      const chunk = (message as { chunk: Uint8Array }).chunk
      if (chunk.length >= READ_CHUNK_BYTES / 2 || chunks.length > 0) chunks.push(chunk)
    }
    subscribe('undici:request:bodyChunkSent', keep)
    try {
      const { received, body } = await upload(file.path)
      expect(received.files.pieFile).toEqual({ sha256: file.sha256, size })
      expect(body.reads.reused).toBe(0)
      // What the subscriber kept is still what was sent: the file's chunks, then the closing boundary.
      const kept = Buffer.concat(chunks)
      expect(sha256Bytes(kept.subarray(0, size))).toBe(file.sha256)
    } finally {
      unsubscribe('undici:request:bodyChunkSent', keep)
    }
  })
})

describe('a file that changes between preparing and sending', () => {
  it('has grown: refused rather than sent with a wrong length', async () => {
    const file = await fileOf('grows.bin', 2 * READ_CHUNK_BYTES)
    const make = await prepareMultipart({ pieFile: { path: file.path, contentType: 'application/zip' } })
    await appendFile(file.path, 'more')
    const http = new HttpClient({ baseUrl, serviceName: 'upload server', retry: { maxAttempts: 1 } })
    const failure = await http.request({ method: 'POST', path: '/upload', body: make }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(InvalidInputError)
    expect((failure as Error).message).toMatch(
      /grows\.bin changed while it was being uploaded: it had 2097152 bytes .* and it has grown/,
    )
  })

  it('has shrunk: refused', async () => {
    const file = await fileOf('shrinks.bin', 2 * READ_CHUNK_BYTES)
    const make = await prepareMultipart({ pieFile: { path: file.path, contentType: 'application/zip' } })
    await truncate(file.path, READ_CHUNK_BYTES + 5)
    const http = new HttpClient({ baseUrl, serviceName: 'upload server', retry: { maxAttempts: 1 } })
    const failure = await http.request({ method: 'POST', path: '/upload', body: make }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(InvalidInputError)
    expect((failure as Error).message).toMatch(/it ended after 1048581 bytes/)
  })
})

it('a body is read once: a second reader is refused (it would share the read buffers)', async () => {
  const file = await fileOf('once.bin', 10)
  const body = (await prepareMultipart({ f: { path: file.path, contentType: 'application/zip' } }))()
  for await (const _ of body.stream) {
    // read it all
  }
  expect(() => body.stream[Symbol.asyncIterator]()).toThrow(/read already/)
})
