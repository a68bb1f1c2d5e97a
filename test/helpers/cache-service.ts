/**
 * A local stand-in for the runner's Actions cache, the part @actions/cache talks to: the cache
 * service v2 (a Twirp API under ACTIONS_RESULTS_URL, authorised by ACTIONS_RUNTIME_TOKEN) and
 * the blob storage it hands out signed URLs for, on 127.0.0.1, port 0.
 *
 * What it keeps of the real service (GitHub's docs on cache key matching, the toolkit's source,
 * the messages users report):
 * - `CreateCacheEntry {key, version}` reserves an entry and answers a signed upload URL; an entry
 *   is written once: the same key, version and scope again is `409 already_exists` ("cache entry
 *   with the same key, version, and scope already exists"). A read-only token is refused with
 *   `ok: false` and "cache write denied: token has no writable scopes".
 * - The upload is Azure's Put Blob (`x-ms-blob-type: BlockBlob`, 201), which the package sends
 *   with the Azure blob client, at an Azurite-style address (`/devstoreaccount1/<container>/<blob>`,
 *   the SDK's shape for an IP host); `FinalizeCacheEntryUpload {key, version, size_bytes}` makes the
 *   entry visible once its blob holds that many bytes.
 * - `GetCacheEntryDownloadURL {key, restore_keys, version}` searches the token's branch first,
 *   then the default branch: in each, the exact key, then the key as a prefix, then each restore
 *   key as a prefix; a prefix match takes the newest entry. The version must be equal. A miss is
 *   `ok: false`. The download URL is signed for reading only (the package reads it with a plain
 *   GET here; on the runner its host is `*.blob.core.windows.net` and the Azure client reads it).
 * - JSON bodies in the proto field names, 64-bit integers as strings, errors as Twirp's
 *   `{code, msg}` with their HTTP status; a token it did not issue is `401 unauthenticated`.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

const SERVICE = '/twirp/github.actions.results.api.v1.CacheService/'
const ACCOUNT = 'devstoreaccount1'
const CONTAINER = 'actions-cache'
const URL_LIFETIME_MS = 10 * 60_000

export type CacheScope = { ref: string; readOnly?: boolean | undefined }

/** One entry as the service holds it. */
export type StoredEntry = {
  id: number
  key: string
  version: string
  scope: string
  /** The order entries were created in: the newest has the largest. */
  createdAt: number
  finalized: boolean
  blob?: Buffer | undefined
}

export type ServedRequest = { method: string; path: string; status: number }

/** A Twirp error the next call of a method answers with, as a failing service would. */
export type InjectedError = { status: number; code: string; msg: string }

export type CacheServiceStandIn = {
  /** ACTIONS_RESULTS_URL (with its trailing slash, as the runner sets it). */
  url: string
  /** A runtime token for a job of this branch (`refs/heads/...`, `refs/pull/N/merge`). */
  tokenFor(scope: CacheScope): string
  /** The environment a node action gets from the runner to reach this cache. */
  env(token: string): Record<string, string>
  entries(): StoredEntry[]
  requests: ServedRequest[]
  failNext(
    method: 'GetCacheEntryDownloadURL' | 'CreateCacheEntry' | 'FinalizeCacheEntryUpload',
    error: InjectedError,
  ): void
  close(): Promise<void>
}

export async function startCacheService(options: { defaultBranch?: string } = {}): Promise<CacheServiceStandIn> {
  const defaultRef = `refs/heads/${options.defaultBranch ?? 'main'}`
  const tokens = new Map<string, CacheScope>()
  const stored: StoredEntry[] = []
  const signatures = new Map<number, { write: string; read: string }>()
  const requests: ServedRequest[] = []
  const failures = new Map<string, InjectedError[]>()
  let nextId = 1
  // Creation order, never the wall clock: two entries made within a millisecond keep their order.
  let created = 0

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) twirpError(response, { status: 500, code: 'internal', msg: String(error) })
      else response.destroy()
    })
  })

  function record(request: IncomingMessage, status: number): void {
    requests.push({ method: request.method ?? '', path: new URL(request.url ?? '/', 'http://x').pathname, status })
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1')
    const body = await readBody(request)
    response.on('finish', () => record(request, response.statusCode))
    if (url.pathname.startsWith(SERVICE) && request.method === 'POST')
      return twirp(url.pathname.slice(SERVICE.length), request, body, response)
    if (url.pathname.startsWith(`/${ACCOUNT}/${CONTAINER}/`)) return blob(url, request, body, response)
    response.writeHead(404).end()
  }

  function twirp(method: string, request: IncomingMessage, body: Buffer, response: ServerResponse) {
    const auth = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')
    const scope = auth ? tokens.get(auth[1]!) : undefined
    if (!scope)
      return twirpError(response, {
        status: 401,
        code: 'unauthenticated',
        msg: 'the runtime token is missing or not valid',
      })
    if (!String(request.headers['content-type']).startsWith('application/json')) {
      return twirpError(response, {
        status: 415,
        code: 'bad_route',
        msg: 'this stand-in serves the JSON protocol only',
      })
    }
    const injected = failures.get(method)?.shift()
    if (injected) return twirpError(response, injected)
    let message: Record<string, unknown>
    try {
      message = JSON.parse(body.toString('utf8')) as Record<string, unknown>
    } catch {
      return twirpError(response, { status: 400, code: 'malformed', msg: 'the body is not JSON' })
    }
    const key = typeof message.key === 'string' ? message.key : ''
    const version = typeof message.version === 'string' ? message.version : ''
    if (!key || key.length > 512 || key.includes(','))
      return twirpError(response, {
        status: 400,
        code: 'invalid_argument',
        msg: 'key is required, at most 512 characters, no commas',
      })
    if (!/^[0-9a-f]{64}$/.test(version))
      return twirpError(response, { status: 400, code: 'invalid_argument', msg: 'version is required' })
    if (method === 'CreateCacheEntry') return create(scope, key, version, response)
    if (method === 'FinalizeCacheEntryUpload') return finalize(scope, key, version, message.size_bytes, response)
    if (method === 'GetCacheEntryDownloadURL') return lookup(scope, key, message.restore_keys, version, response)
    twirpError(response, { status: 404, code: 'bad_route', msg: `no method ${method}` })
  }

  function create(scope: CacheScope, key: string, version: string, response: ServerResponse) {
    if (scope.readOnly)
      return json(response, {
        ok: false,
        signed_upload_url: '',
        message: 'cache write denied: token has no writable scopes',
      })
    if (stored.some((entry) => entry.key === key && entry.version === version && entry.scope === scope.ref)) {
      return twirpError(response, {
        status: 409,
        code: 'already_exists',
        msg: 'cache entry with the same key, version, and scope already exists',
      })
    }
    const entry: StoredEntry = { id: nextId++, key, version, scope: scope.ref, createdAt: ++created, finalized: false }
    stored.push(entry)
    signatures.set(entry.id, { write: randomBytes(16).toString('hex'), read: randomBytes(16).toString('hex') })
    json(response, { ok: true, signed_upload_url: blobUrl(entry, 'cw'), message: '' })
  }

  function finalize(scope: CacheScope, key: string, version: string, size: unknown, response: ServerResponse) {
    const entry = stored.find(
      (each) => each.key === key && each.version === version && each.scope === scope.ref && !each.finalized,
    )
    if (!entry)
      return twirpError(response, {
        status: 404,
        code: 'not_found',
        msg: 'no cache entry is reserved under this key and version',
      })
    if (!entry.blob || String(entry.blob.length) !== String(size)) {
      return json(response, {
        ok: false,
        entry_id: '0',
        message: `the uploaded blob holds ${entry.blob?.length ?? 0} bytes, not ${String(size)}`,
      })
    }
    entry.finalized = true
    json(response, { ok: true, entry_id: String(entry.id), message: '' })
  }

  function lookup(scope: CacheScope, key: string, restoreKeys: unknown, version: string, response: ServerResponse) {
    const prefixes = Array.isArray(restoreKeys)
      ? restoreKeys.filter((each): each is string => typeof each === 'string')
      : []
    if (prefixes.length + 1 > 10)
      return twirpError(response, { status: 400, code: 'invalid_argument', msg: 'at most 10 keys' })
    const newest = (found: StoredEntry[]) => found.sort((a, b) => b.createdAt - a.createdAt)[0]
    for (const ref of scope.ref === defaultRef ? [defaultRef] : [scope.ref, defaultRef]) {
      const visible = stored.filter((entry) => entry.finalized && entry.scope === ref && entry.version === version)
      const hit =
        visible.find((entry) => entry.key === key) ??
        newest(visible.filter((entry) => entry.key.startsWith(key))) ??
        prefixes.map((prefix) => newest(visible.filter((entry) => entry.key.startsWith(prefix)))).find(Boolean)
      if (hit) return json(response, { ok: true, signed_download_url: blobUrl(hit, 'r'), matched_key: hit.key })
    }
    json(response, { ok: false, signed_download_url: '', matched_key: '' })
  }

  function blob(url: URL, request: IncomingMessage, body: Buffer, response: ServerResponse) {
    const id = Number(url.pathname.split('/').at(-1))
    const entry = stored.find((each) => each.id === id)
    const signature = signatures.get(id)
    const permissions = url.searchParams.get('sp') ?? ''
    const expired = Number(new Date(url.searchParams.get('se') ?? 0)) < Date.now()
    const writing = request.method === 'PUT'
    const signed =
      signature !== undefined && url.searchParams.get('sig') === (writing ? signature.write : signature.read)
    if (!entry || !signed || expired || !permissions.includes(writing ? 'w' : 'r')) {
      return storageError(
        response,
        403,
        'AuthenticationFailed',
        'Server failed to authenticate the request. Make sure the value of the signature is formed correctly.',
      )
    }
    if (writing) {
      if (request.headers['x-ms-blob-type'] !== 'BlockBlob' || url.searchParams.has('comp')) {
        // Put Block and Put Block List (archives over 128 MiB) are not served: nothing here is that large.
        return storageError(
          response,
          400,
          'MissingRequiredHeader',
          'An HTTP header that is mandatory for this request is not specified (x-ms-blob-type: BlockBlob, one Put Blob).',
        )
      }
      if (entry.finalized)
        return storageError(
          response,
          409,
          'BlobImmutableDueToPolicy',
          'This operation is not permitted as the blob is immutable.',
        )
      entry.blob = body
      response.writeHead(201, {
        etag: `"0x${entry.id.toString(16).padStart(15, '0')}"`,
        'last-modified': new Date().toUTCString(),
        'x-ms-request-id': randomBytes(8).toString('hex'),
        'x-ms-version': String(request.headers['x-ms-version'] ?? '2025-01-05'),
        'x-ms-request-server-encrypted': 'true',
        'content-length': '0',
      })
      response.end()
      return
    }
    if (request.method !== 'GET' || !entry.finalized || !entry.blob)
      return storageError(response, 404, 'BlobNotFound', 'The specified blob does not exist.')
    response.writeHead(200, {
      'content-type': 'application/octet-stream',
      'content-length': String(entry.blob.length),
      'x-ms-blob-type': 'BlockBlob',
    })
    response.end(entry.blob)
  }

  function blobUrl(entry: StoredEntry, permissions: 'cw' | 'r'): string {
    const signature = signatures.get(entry.id)!
    const query = new URLSearchParams({
      sv: '2025-01-05',
      se: new Date(Date.now() + URL_LIFETIME_MS).toISOString(),
      sr: 'b',
      sp: permissions,
      sig: permissions === 'r' ? signature.read : signature.write,
    })
    return `${base}${ACCOUNT}/${CONTAINER}/${entry.id}?${query}`
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  return {
    url: base,
    tokenFor(scope) {
      const token = `stand-in.${randomBytes(24).toString('base64url')}`
      tokens.set(token, scope)
      return token
    },
    env: (token) => ({ ACTIONS_RESULTS_URL: base, ACTIONS_RUNTIME_TOKEN: token, ACTIONS_CACHE_SERVICE_V2: 'True' }),
    entries: () => stored.map((entry) => ({ ...entry })),
    requests,
    failNext(method, error) {
      failures.set(method, [...(failures.get(method) ?? []), error])
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => resolve(Buffer.concat(chunks)))
    request.on('error', reject)
  })
}

function json(response: ServerResponse, body: unknown): void {
  const text = JSON.stringify(body)
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}

function twirpError(response: ServerResponse, error: InjectedError): void {
  const text = JSON.stringify({ code: error.code, msg: error.msg })
  response.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  response.end(text)
}

function storageError(response: ServerResponse, status: number, code: string, message: string): void {
  const text = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`
  response.writeHead(status, {
    'content-type': 'application/xml',
    'x-ms-error-code': code,
    'content-length': Buffer.byteLength(text),
  })
  response.end(text)
}
