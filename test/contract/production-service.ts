import { randomUUID } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import busboy from 'busboy'
import {
  type Facts,
  productionBucket,
  productionQuery,
  productionTaskItem,
  productionTaskStatus,
  type Variant,
} from './bodies.ts'

/**
 * A stand-in for the production services on loopback, written from production.md: only the
 * paths production publishes (no /docs/ routes: those get a framework's "Cannot GET" 404),
 * the key accepted as header or `apiKey` query parameter, `{ message: CODE }` refusals, a used
 * dedupId refused, and every read answered in the chosen body variant. A query moves
 * RECEIVED -> IN_PROGRESS -> DONE on successive reads, so waits end without depending on time.
 */

export type SeenRequest = {
  method: string
  path: string
  query: URLSearchParams
  hasKey: boolean
  fields: Record<string, string>
  files: Record<string, { fileName: string; contentType: string }>
  json: unknown
}

export type ProductionService = {
  url: string
  variant: Variant
  /** The facts DONE queries report (the PIE's, so local fact checks pass). */
  facts: Facts | null
  seen: SeenRequest[]
  close(): Promise<void>
}

const STATES = ['RECEIVED', 'IN_PROGRESS', 'DONE'] as const

export async function startProductionService(options: { facts: Facts | null }): Promise<ProductionService> {
  const reads = new Map<string, number>()
  const dedupIds = new Map<string, string>()
  const service: ProductionService = {
    url: '',
    variant: 'full',
    facts: options.facts,
    seen: [],
    close: async () => {},
  }

  const statusOf = (id: string, advance: boolean): string => {
    const count = reads.get(id) ?? 0
    if (advance) reads.set(id, count + 1)
    return STATES[Math.min(count, STATES.length - 1)]!
  }
  const query = (id: string, status: string, withClient = true) =>
    productionQuery(service.variant, { id, status, facts: service.facts }, { withClient })
  const metadataUrls = (id: string) => [
    `https://artifacts.example.org/${id}/proof.json`,
    `https://artifacts.example.org/${id}/pie.cairo0.zip`,
    `https://artifacts.example.org/${id}/metadata.json`,
  ]

  async function handle(req: IncomingMessage, _res: ServerResponse, seen: SeenRequest): Promise<[number, unknown]> {
    const { method, path } = seen
    const parts = path.split('/').filter(Boolean)
    if (path.startsWith('/docs/'))
      return [404, { message: `Cannot ${method} ${path}`, error: 'Not Found', statusCode: 404 }]
    if (method === 'GET' && path === '/is-alive') return [200, { alive: true }]

    // --- Proving service: submissions --------------------------------------------------------
    if (
      method === 'POST' &&
      (path === '/v1/l2/proving-query/proof-generation-verification' ||
        path === '/v1/l2/proving-query/proof-verification')
    ) {
      if (!seen.query.get('apiKey')) return [401, { message: 'INVALID_API_KEY' }]
      return [201, { provingQueryId: randomUUID() }]
    }
    if (method === 'POST' && path === '/proving-query') {
      if (!seen.hasKey) return [401, { message: 'INVALID_API_KEY' }]
      const dedupId = seen.fields.dedupId
      if (dedupId && dedupIds.has(dedupId)) return [400, { message: 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS' }]
      if (seen.fields.cairoVersion === 'cairo1' && seen.fields.cairoVm === 'python')
        return [400, { message: 'CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON' }]
      const id = randomUUID()
      if (dedupId) dedupIds.set(dedupId, id)
      return [201, { provingQueryId: id }]
    }

    // --- Proving service: reads ----------------------------------------------------------------
    if (method === 'GET' && parts[0] === 'proving-query' && parts.length === 2) {
      const id = decodeURIComponent(parts[1]!)
      return [200, { provingQuery: query(id, statusOf(id, true)), metadataUrls: metadataUrls(id) }]
    }
    if (method === 'GET' && path === '/proving-query-by-dedup-id') {
      if (!seen.hasKey) return [401, { message: 'INVALID_API_KEY' }]
      const id = dedupIds.get(seen.query.get('dedupId') ?? '')
      // production.md: the lookup answers without `client`.
      return id
        ? [200, { provingQuery: query(id, statusOf(id, false), false) }]
        : [404, { message: 'PROVING_QUERY_NOT_FOUND' }]
    }
    if (method === 'GET' && path === '/proving-queries') {
      if (!seen.hasKey) return [401, { message: 'INVALID_API_KEY' }]
      const limit = Number(seen.query.get('limit') ?? 10)
      const offset = Number(seen.query.get('offset') ?? 0)
      const all = [
        '4c1f9e2a-0000-4000-8000-000000000001',
        '4c1f9e2a-0000-4000-8000-000000000002',
        '4c1f9e2a-0000-4000-8000-000000000003',
      ]
      const page = all.slice(offset, offset + limit).map((id) => query(id, 'DONE'))
      return [
        200,
        service.variant === 'minimal' ? { provingQueries: page } : { provingQueries: page, total: all.length },
      ]
    }
    if (method === 'POST' && parts[0] === 'proving-queries' && parts[2] === 'retry') {
      if (!seen.hasKey) return [401, { message: 'INVALID_API_KEY' }]
      const id = decodeURIComponent(parts[1]!)
      reads.set(id, 0)
      return [200, { provingQuery: query(id, 'RECEIVED', false), message: 'Query retry initiated' }]
    }

    // --- Proving service: buckets ---------------------------------------------------------------
    if (method === 'POST' && path === '/buckets') {
      if (!seen.hasKey) return [401, { message: 'INVALID_API_KEY' }]
      return [201, { provingBucket: productionBucket(service.variant, { id: randomUUID(), status: 'OPEN' }) }]
    }
    if (method === 'POST' && path === '/buckets/close') {
      if (!seen.hasKey) return [401, { error: 'UNAUTHORIZED' }]
      return [
        200,
        {
          provingBucket: productionBucket(service.variant, {
            id: seen.query.get('bucketId') ?? '',
            status: 'IN_PROGRESS',
          }),
        },
      ]
    }
    if (method === 'GET' && parts[0] === 'buckets' && parts.length === 2) {
      const id = decodeURIComponent(parts[1]!)
      return [
        200,
        { bucket: productionBucket(service.variant, { id, status: 'DONE' }), queries: [query(randomUUID(), 'DONE')] },
      ]
    }

    // --- Task service ---------------------------------------------------------------------------
    if (method === 'POST' && path === '/tasks') {
      if (!req.headers['x-api-key']) return [401, { error: 'Missing X-API-KEY header' }]
      return [200, { message: 'Task has been queued', uuid: randomUUID() }]
    }
    if (method === 'GET' && path === '/tasks') {
      const tasks = [
        productionTaskItem(service.variant, 't-1', 'ProvingStarted'),
        productionTaskItem(service.variant, 't-2', 'TaskDecommitmentCompleted'),
      ]
      return [200, { tasks, pagination: { page: 1, perPage: 10, total: 2, totalPages: 1 } }]
    }
    if (method === 'GET' && parts[0] === 'tasks' && parts[2] === 'status') {
      const uuid = decodeURIComponent(parts[1]!)
      const status = statusOf(`task:${uuid}`, true) === 'DONE' ? 'TaskDecommitmentCompleted' : 'ProvingStarted'
      return [200, productionTaskStatus(service.variant, uuid, status)]
    }
    if (method === 'GET' && parts[0] === 'tasks' && parts[2] === 'mmrs') {
      const uuid = decodeURIComponent(parts[1]!)
      return [
        200,
        {
          mmrs: [{ chain_id: '11155111', hashing_function: 'poseidon', id: '0x1', root: '0x2', size: '0x3' }],
          taskId: uuid,
        },
      ]
    }

    // --- Storage-proof service ------------------------------------------------------------------
    if (method === 'POST' && path === '/batch-query') {
      if (!seen.hasKey) return [401, { error: 'Unauthorized' }]
      return [200, { internalId: randomUUID() }]
    }
    if (method === 'GET' && path === '/batch-query-status') {
      if (!seen.hasKey) return [401, { error: 'Unauthorized' }]
      const id = seen.query.get('batchQueryId') ?? ''
      return [200, { queryStatus: statusOf(`batch:${id}`, true) === 'DONE' ? 'DONE' : 'IN_PROGRESS' }]
    }

    return [404, { message: `Cannot ${method} ${path}`, error: 'Not Found', statusCode: 404 }]
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost')
    const seen: SeenRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: url.searchParams,
      hasKey: Boolean(req.headers['api-key'] || url.searchParams.get('apiKey')),
      fields: {},
      files: {},
      json: undefined,
    }
    service.seen.push(seen)
    readBody(req, seen)
      .then(() => handle(req, res, seen))
      .then(([status, body]) => {
        res.writeHead(status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(body))
      })
      .catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: String(error) }))
      })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  service.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  service.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return service
}

/** Reads a multipart form (fields and file names), a JSON body, or drains anything else. */
async function readBody(req: IncomingMessage, seen: SeenRequest): Promise<void> {
  const type = req.headers['content-type'] ?? ''
  if (type.startsWith('multipart/form-data')) {
    await new Promise<void>((resolve, reject) => {
      const parser = busboy({ headers: req.headers })
      parser.on('field', (name: string, value: string) => {
        seen.fields[name] = value
      })
      parser.on('file', (name, stream, info) => {
        seen.files[name] = { fileName: info.filename ?? '', contentType: info.mimeType }
        stream.resume()
      })
      parser.on('close', resolve)
      parser.on('error', reject)
      req.pipe(parser)
    })
    return
  }
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  if (text && type.includes('json')) seen.json = JSON.parse(text)
}
