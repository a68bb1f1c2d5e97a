import { readFile, mkdtemp, rm, writeFile, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { Agent, FormData, request } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Logger } from '../../src/core/runtime.ts'
import { validatePie } from '../../src/pie/index.ts'
import { PieBudgetError } from '../../src/pie/validate/budgets.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { unzipPie } from '../helpers/run-action.ts'

/**
 * Property-based tests (fast-check):
 *
 * - every route of the emulator (the services' and the control API's, bar the restart) gets
 *   random methods, paths, query strings, headers and bodies (JSON of any shape, text, random
 *   bytes, broken multipart). Each answer is JSON, and below 500 unless an injected fault made it;
 *   the server never crashes: afterwards /is-alive answers, and nothing was logged at error level
 *   but the injected faults' own 500s.
 * - validatePie on random bytes, mutated zips and mutated PIE directories: never throws, never
 *   hangs, and an invalid PIE always comes with problems.
 *
 * Runs are bounded (a fixed seed, a few hundred cases each) so the file stays well under 30 s.
 */

/** PROVING_FC_SEED / PROVING_FC_RUNS explore further than the fixed, bounded CI run. */
const SEED = Number(process.env.PROVING_FC_SEED ?? 20260707)
const RUNS = Number(process.env.PROVING_FC_RUNS ?? 600)

const errors: string[] = []
const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message) => void errors.push(message) }

let emulator: TestEmulator
let agent: Agent
let queryId: string
let routes: { method: string; pattern: string; control: boolean }[]

beforeAll(async () => {
  emulator = await startTestEmulator({ logger })
  agent = new Agent({ connections: 16, keepAliveTimeout: 4_000, headersTimeout: 10_000, bodyTimeout: 10_000 })
  queryId = await submitFixturePie(emulator)
  // The restart would take the server down mid-run on purpose: it has its own tests.
  routes = emulator.routes().filter((route) => route.pattern !== '/_emulator/restart')
})
afterAll(async () => {
  await emulator?.close()
  await agent?.close()
})

// --- Generators ------------------------------------------------------------------------------

/** A path segment: real ids sometimes, else anything (percent-encoded, or raw and malformed). */
const segment = fc.oneof(
  fc.constant('').map(() => queryId),
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom('%', '%E0%A4%A', '..', '%2F', '%00', 'constructor', '__proto__', 'a'.repeat(300)),
)

const headerValue = fc.string({ maxLength: 60, unit: fc.constantFrom(...'abcXYZ019 -_=;:/.,"*?'.split('')) })
const headerSets = fc.record(
  {
    'content-type': fc.constantFrom(
      'application/json',
      'application/json; charset=latin1',
      'text/plain',
      'multipart/form-data; boundary=xyz',
      'multipart/form-data',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
    ),
    'api-key': fc.oneof(fc.constant(KEY), headerValue),
    'x-api-key': fc.oneof(fc.constant(KEY), headerValue),
    authorization: fc.oneof(
      headerValue.map((value) => `Bearer ${value}`),
      headerValue,
    ),
    cookie: headerValue,
    'content-encoding': fc.constantFrom('gzip', 'br', 'identity'),
    'retry-after': headerValue,
    host: fc.constantFrom('127.0.0.1', 'example.com:80', 'bad host', '[::1]:99999'),
  },
  { requiredKeys: [] },
)

const json = fc.jsonValue({ maxDepth: 6 })
const body = fc.oneof(
  json.map((value) => JSON.stringify(value)),
  fc.string({ maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.nat({ max: 60 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  fc
    .tuple(fc.string({ maxLength: 20 }), fc.uint8Array({ maxLength: 200 }))
    .map(([name, bytes]) =>
      Buffer.concat([
        Buffer.from(
          `--xyz\r\ncontent-disposition: form-data; name="${name}"; filename="pie.zip"\r\ncontent-type: application/zip\r\n\r\n`,
        ),
        Buffer.from(bytes),
        Buffer.from('\r\n--xyz--\r\n'),
      ]),
    ),
  fc.constant(undefined),
)

const query = fc.dictionary(
  fc.constantFrom(
    'apiKey',
    'bucketId',
    'dedupId',
    'limit',
    'offset',
    'network',
    'search',
    'wallet',
    'projectId',
    'dp_tasks_page',
    'dp_tasks_per_page',
    'dp_tasks_status',
    'x',
  ),
  fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String), fc.constant('-1'), fc.constant('1e309')),
  { maxKeys: 4 },
)

type Sent = { method: string; path: string; headers: Record<string, string>; body: string | Buffer | undefined }

function sample(): fc.Arbitrary<Sent> {
  return fc
    .record({
      route: fc.constantFrom(...routes),
      method: fc.oneof(fc.constant(undefined), fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH')),
      params: fc.array(segment, { minLength: 3, maxLength: 3 }),
      extra: fc.oneof(fc.constant(''), fc.constant('/extra'), fc.constant('/')),
      query,
      headers: headerSets,
      body,
    })
    .map(({ route, method, params, extra, query: parameters, headers, body: content }) => {
      let index = 0
      const path = route.pattern.replace(/:\w+/g, () => params[index++]!) + extra
      const search = new URLSearchParams(parameters).toString()
      const chosen = method ?? route.method
      return {
        method: chosen,
        path: search ? `${path}?${search}` : path,
        headers: headers as Record<string, string>,
        body: chosen === 'GET' ? undefined : content,
      }
    })
}

/** The console's page, script and styles (its data, the snapshot, is JSON like the rest). */
function isConsolePage(path: string): boolean {
  // As the router reads a path: the URL parser resolves `.` and `..` (`/buckets/../` is `/`), and
  // empty segments are ignored (`//` and `/app.css/` are the same routes).
  const resolved = new URL(`http://emulator.invalid${path}`).pathname
  const pathname = `/${resolved.split('/').filter(Boolean).join('/')}`
  return pathname === '/' || pathname === '/_emulator/console/app.js' || pathname === '/_emulator/console/app.css'
}

async function send(sent: Sent) {
  const response = await request(`${emulator.url}${sent.path}`, {
    method: sent.method as 'GET',
    headers: sent.headers,
    body: sent.body,
    dispatcher: agent,
  })
  const text = await response.body.text()
  return { status: response.statusCode, contentType: String(response.headers['content-type'] ?? ''), text }
}

describe('the emulator never crashes on random requests', () => {
  it('answers every random request with JSON, below 500 unless a fault was injected', async () => {
    let sent = 0
    await fc.assert(
      fc.asyncProperty(sample(), async (request) => {
        sent++
        const answer = await send(request)
        // A fault the random bodies happened to install is a fault like any other: clear it.
        if (request.path.startsWith('/_emulator/faults')) await emulator.control('DELETE', '/faults')
        // Faults never apply to control routes, which are not logged either.
        const injected = request.path.startsWith('/_emulator') ? undefined : emulator.requests().at(-1)?.fault
        if (!injected)
          expect(answer.status, `${request.method} ${request.path} -> ${answer.status} ${answer.text}`).toBeLessThan(
            500,
          )
        const isFile =
          (request.path.startsWith('/_emulator/artifacts/') || isConsolePage(request.path)) && answer.status === 200
        if (!isFile && answer.status !== 204 && !injected) {
          expect(answer.contentType, `${request.method} ${request.path}`).toMatch(/application\/json/)
          expect(() => JSON.parse(answer.text), answer.text).not.toThrow()
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    )
    expect(sent).toBe(RUNS)
    expect((await emulator.call('GET', '/is-alive')).body).toEqual({ alive: true })
    // Nothing answered 500 but the injected faults; nothing logged at error level but their throws.
    const fiveHundreds = emulator.requests().filter((entry) => entry.status >= 500 && !entry.fault)
    expect(fiveHundreds).toEqual([])
    expect(errors.filter((line) => !line.includes('fault injected through /_emulator/faults'))).toEqual([])
  }, 60_000)
})

describe('the emulator never crashes on corrupted uploads', () => {
  it('POST the L2 PIE endpoint with mutated pie.zip files: 201 or a 400 naming the problem, never 500', async () => {
    const zip = await readFile(FIXTURE_PIE)
    const flips = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 6 })
    await fc.assert(
      fc.asyncProperty(flips, fc.nat(), async (changes, cut) => {
        const bytes = Buffer.from(zip)
        for (const [offset, mask] of changes) bytes[offset % bytes.length]! ^= mask
        const upload = cut % 5 === 0 ? bytes.subarray(0, cut % bytes.length) : bytes
        const form = new FormData()
        for (const [name, value] of Object.entries({ mockFactHash: 'false', prover: 'svc_sharp', layout: 'auto' }))
          form.append(name, value)
        form.append('pieFile', new Blob([upload]), 'pie.zip')
        const answer = await emulator.call('POST', '/v1/l2/proving-query/proof-generation-verification', {
          query: { apiKey: KEY },
          form,
        })
        expect([201, 400], JSON.stringify(answer.body)).toContain(answer.status)
        if (answer.status === 400) expect(answer.body.details).toMatch(/pieFile/)
      }),
      { numRuns: 150, seed: SEED + 4 },
    )
    expect((await emulator.call('GET', '/is-alive')).status).toBe(200)
    expect(errors.filter((line) => !line.includes('fault injected through /_emulator/faults'))).toEqual([])
  }, 60_000)
})

// --- The PIE parser ---------------------------------------------------------------------------

const HANG_MS = 10_000

/**
 * validatePie must settle well before HANG_MS, with problems, never a crash. The one error it may
 * throw is the documented refusal of a file past the parser's budgets (PieBudgetError, an
 * InvalidInputError with a one-line message: test/e2e/hostile-pie.test.ts), read as one problem.
 */
async function validateBounded(input: string) {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`validatePie(${input}) did not settle in ${HANG_MS} ms`)), HANG_MS)
  })
  try {
    return await Promise.race([
      validatePie(input).catch((error: unknown) => {
        if (!(error instanceof PieBudgetError) || error.message.includes('\n')) throw error
        return { valid: false as const, problems: [error.message] }
      }),
      hang,
    ])
  } finally {
    clearTimeout(timer)
  }
}

describe('validatePie on corrupted input returns problems: never throws, never hangs', () => {
  let work: string
  let zip: Buffer
  let files: Map<string, Buffer>
  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'pie-property-'))
    zip = await readFile(FIXTURE_PIE)
    const dir = await unzipPie(FIXTURE_PIE, join(work, 'original'))
    files = new Map()
    for (const name of await readdir(dir)) files.set(name, await readFile(join(dir, name)))
  })
  afterAll(async () => {
    await rm(work, { recursive: true, force: true })
  })

  let counter = 0
  const scratch = () => join(work, `case-${counter++}`)

  function expectSettled(result: { valid: boolean; problems: string[] }) {
    expect(typeof result.valid).toBe('boolean')
    if (!result.valid) expect(result.problems.length).toBeGreaterThan(0)
    for (const problem of result.problems) expect(typeof problem).toBe('string')
  }

  const mutation = fc.oneof(
    // Flip bytes at random offsets.
    fc
      .array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 })
      .map((flips) => (bytes: Buffer) => {
        const out = Buffer.from(bytes)
        for (const [offset, mask] of flips) out[offset % out.length]! ^= mask
        return out
      }),
    // Cut it short.
    fc.nat().map((cut) => (bytes: Buffer) => bytes.subarray(0, cut % bytes.length)),
    // Insert or overwrite a run of random bytes.
    fc
      .tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean())
      .map(([offset, junk, insert]) => (bytes: Buffer) => {
        const at = offset % bytes.length
        return insert
          ? Buffer.concat([bytes.subarray(0, at), Buffer.from(junk), bytes.subarray(at)])
          : Buffer.concat([
              bytes.subarray(0, at),
              Buffer.from(junk),
              bytes.subarray(Math.min(bytes.length, at + junk.length)),
            ])
      }),
  )

  it('random bytes as a pie.zip', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.uint8Array({ maxLength: 2_000 }),
          fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.concat([Buffer.from('PK\x03\x04'), bytes])),
        ),
        async (bytes) => {
          const path = `${scratch()}.zip`
          await writeFile(path, bytes)
          const result = await validateBounded(path)
          expectSettled(result)
          expect(result.valid).toBe(false)
        },
      ),
      { numRuns: 150, seed: SEED + 1 },
    )
  }, 60_000)

  it('mutated copies of a valid pie.zip', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
        const path = `${scratch()}.zip`
        await writeFile(
          path,
          mutations.reduce((bytes, mutate) => mutate(bytes), zip),
        )
        expectSettled(await validateBounded(path))
      }),
      { numRuns: 250, seed: SEED + 2 },
    )
  }, 60_000)

  it('mutated PIE directories: a file mutated, emptied, missing or replaced by JSON of another shape', async () => {
    const names = [...files.keys()]
    const change = fc.record({
      name: fc.constantFrom(...names),
      how: fc.oneof(
        mutation.map((mutate) => ({ kind: 'mutate' as const, mutate })),
        fc.constant({ kind: 'empty' as const }),
        fc.constant({ kind: 'remove' as const }),
        fc.jsonValue({ maxDepth: 4 }).map((value) => ({ kind: 'json' as const, value })),
      ),
    })
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 3 }), async (changes) => {
        const dir = scratch()
        const contents = new Map(files)
        for (const { name, how } of changes) {
          const current = contents.get(name)
          if (how.kind === 'remove') contents.delete(name)
          else if (how.kind === 'empty') contents.set(name, Buffer.alloc(0))
          else if (how.kind === 'json') contents.set(name, Buffer.from(JSON.stringify(how.value) ?? 'null'))
          else if (current?.length) contents.set(name, how.mutate(current))
        }
        const { mkdir } = await import('node:fs/promises')
        await mkdir(dir)
        for (const [name, bytes] of contents) await writeFile(join(dir, name), bytes)
        expectSettled(await validateBounded(dir))
      }),
      { numRuns: 200, seed: SEED + 3 },
    )
  }, 60_000)
})
