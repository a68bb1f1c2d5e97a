import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import {
  CAIRO_VERSIONS,
  CAIRO_VMS,
  HINTS,
  JOB_SIZES,
  L2_LAYOUTS,
  LAYOUTS,
  MEMORY_VERIFICATIONS,
  NETWORKS,
  RESULTS,
  SHARP_PROVERS,
  STONE_VERSIONS,
} from '../../schemas/proving-constants.ts'
import { artifactUrls } from './artifacts.ts'
import { sameOwner } from '../auth.ts'
import { type EmulatorContext, incomingDir } from '../context.ts'
import {
  BUCKET_BAD_REQUEST,
  DEDUP_ID_EXISTS,
  INVALID_API_KEY,
  provingRefusal,
  BUCKET_INTERNAL_ERROR,
  BUCKET_NOT_FOUND,
  FORBIDDEN,
  INTERNAL_SERVER_ERROR,
  MAX_RETRIES_REACHED,
  PROVING_QUERY_NOT_FOUND,
  QUERY_NOT_IN_FAILED_STATUS,
  QUERY_NOT_RETRIABLE,
  UNAUTHORIZED,
} from '../errors.ts'
import { computePieFacts, standInFacts } from './facts.ts'
import {
  booleanField,
  enumField,
  optionalEnum,
  optionalInteger,
  optionalText,
  requiredFile,
  requiredText,
  requireJsonObjectFile,
} from './form-fields.ts'
import { discardForm, type Form, keepFile, readForm, type UploadedFile } from '../multipart.ts'
import {
  createQuery,
  findByDedupId,
  MAX_RETRIES,
  type NewQuery,
  queriesOfBucket,
  queryProgress,
  restartQuery,
} from './queries.ts'
import { holdsJobIndex, newestFirst, nextJobIndex, queryIndex } from './query-index.ts'
import { bucketRecordOf, recordD, recordL, recordProduction, recordR } from './records.ts'
import { HttpError, type Reply, type Route, type RouteContext } from '../router.ts'
import { own, type Owner, type StoredFacts, type StoredQuery } from '../state.ts'

/**
 * The proving service: the route table first, then one short
 * handler per endpoint in the same order. Where the spec fixes an order of checks (retry,
 * bucket close) the handler reads in that order.
 */
export function provingRoutes(emulator: EmulatorContext): Route[] {
  const state = () => emulator.store.state
  const now = () => emulator.clock.now()
  const save = () => emulator.store.save()

  const production = emulator.shape === 'production'
  // interface.md's /docs/ paths are not in production's published document: the production
  // shape does not serve them (a client meets the router's no-route 404).
  const docsRoutes: Route[] = production
    ? []
    : [
        { method: 'GET', pattern: '/docs/proving-queries', handler: listQueries },
        { method: 'GET', pattern: '/docs/proving-query/:id', handler: getQueryDetails },
      ]

  return [
    { method: 'GET', pattern: '/is-alive', handler: () => ({ status: 200, body: { alive: true } }) },
    { method: 'POST', pattern: '/v1/l2/proving-query/proof-generation-verification', handler: submitPieForL2 },
    { method: 'POST', pattern: '/v1/l2/proving-query/proof-verification', handler: submitProofForL2 },
    { method: 'POST', pattern: '/proving-query', handler: submitQuery },
    { method: 'GET', pattern: '/proving-query-by-dedup-id', handler: getQueryByDedupId },
    { method: 'GET', pattern: '/proving-query/:id', handler: getQuery },
    // production.md's documented list path, served in both shapes.
    { method: 'GET', pattern: '/proving-queries', handler: listQueries },
    ...docsRoutes,
    {
      method: 'POST',
      pattern: '/proving-queries/:id/retry',
      handler: retryQuery,
      internalErrorBody: INTERNAL_SERVER_ERROR,
    },
    { method: 'POST', pattern: '/buckets', handler: createBucket },
    { method: 'POST', pattern: '/buckets/close', handler: closeBucket, internalErrorBody: BUCKET_INTERNAL_ERROR },
    { method: 'GET', pattern: '/buckets/:id', handler: getBucket },
  ]

  // --- Submissions -------------------------------------------------------------------------

  /** POST /v1/l2/proving-query/proof-generation-verification?apiKey= */
  async function submitPieForL2(ctx: RouteContext): Promise<Reply> {
    const owner = emulator.keys.fromQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    return withForm(ctx, ['pieFile'], async (form) => {
      const pie = requiredFile(form, 'pieFile')
      if (form.fields.has('programHash'))
        throw new HttpError(400, provingRefusal('Give pieFile or programHash, not both; this endpoint takes pieFile.'))
      const mockFactHash = booleanField(form, 'mockFactHash')
      requiredText(form, 'prover')
      const layout = enumField(form, 'layout', L2_LAYOUTS)
      const facts = await pieFacts(pie)
      const query = createQuery(
        state(),
        {
          ...defaults(owner),
          endpoint: 'l2-pie',
          layout,
          mockFactHash,
          result: 'PROOF_VERIFICATION_ON_L2',
          sharpProver: 'stone',
          facts,
        },
        now(),
      )
      await keepUploads(query, form, { pieFile: 'pie.zip' })
      return { status: 201, body: { provingQueryId: query.id } }
    })
  }

  /** POST /v1/l2/proving-query/proof-verification?apiKey= */
  async function submitProofForL2(ctx: RouteContext): Promise<Reply> {
    const owner = emulator.keys.fromQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    return withForm(ctx, ['proofFile'], async (form) => {
      const proof = requiredFile(form, 'proofFile')
      const mockFactHash = booleanField(form, 'mockFactHash')
      enumField(form, 'stoneVersion', STONE_VERSIONS)
      enumField(form, 'memoryVerification', MEMORY_VERIFICATIONS)
      await requireJsonObjectFile(proof)
      const query = createQuery(
        state(),
        {
          ...defaults(owner),
          endpoint: 'l2-proof',
          mockFactHash,
          result: 'PROOF_VERIFICATION_ON_L2',
          sharpProver: 'stone',
          facts: { ...NO_FACTS, ...standInFacts(`proof:${proof.sha256}:${randomUUID()}`, null) },
        },
        now(),
      )
      await keepUploads(query, form, { proofFile: 'proof.json' })
      return { status: 201, body: { provingQueryId: query.id } }
    })
  }

  /**
   * POST /proving-query (extension): the general submission. A dedupId this key already used
   * is refused, as production does (400 PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS): the
   * client looks the query up by dedupId. Nothing is created twice.
   */
  async function submitQuery(ctx: RouteContext): Promise<Reply> {
    const owner = emulator.keys.fromHeaderOrQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    return withForm(ctx, ['pieFile', 'programFile', 'inputFile'], async (form) => {
      const input = generalInput(form, owner)
      const existing = input.dedupId === null ? undefined : findByDedupId(state(), owner, input.dedupId)
      if (existing) return { status: 400, body: DEDUP_ID_EXISTS }
      checkFiles(form, input)
      const pie = form.files.get('pieFile')
      const facts = pie ? await pieFacts(pie) : { ...NO_FACTS, ...standInFacts(randomUUID(), input.facts.programHash) }
      // From here to createQuery nothing awaits: another submission with this dedupId, or a
      // close of the bucket, may have landed while the PIE was inspected, not after.
      const raced = input.dedupId === null ? undefined : findByDedupId(state(), owner, input.dedupId)
      if (raced) return { status: 400, body: DEDUP_ID_EXISTS }
      const placement = checkBucket(input, owner)
      const query = createQuery(state(), { ...input, ...placement, facts }, now())
      await keepUploads(query, form, {
        pieFile: 'pie.zip',
        programFile: 'program.json',
        inputFile: input.cairoVersion === 'cairo1' ? 'input.txt' : 'input.json',
      })
      return { status: 201, body: { provingQueryId: query.id } }
    })
  }

  function generalInput(form: Form, owner: Owner): NewQuery {
    const declaredJobSize = enumField(form, 'declaredJobSize', JOB_SIZES)
    const sources = ['pieFile', 'programFile'].filter((name) => form.files.has(name))
    const programHash = optionalText(form, 'programHash', 80)
    if (programHash !== null) sources.push('programHash')
    if (sources.length === 0) {
      throw new HttpError(
        400,
        provingRefusal(
          'Give one of pieFile, programFile or programHash.',
          'PROGRAM_FILE_OR_PIE_FILE_OR_PROGRAM_HASH_IS_REQUIRED',
        ),
      )
    }
    if (sources.length !== 1) {
      throw new HttpError(
        400,
        provingRefusal(`Give exactly one of pieFile, programFile or programHash; got ${sources.join(' and ')}.`),
      )
    }
    if (programHash !== null && !/^0x[0-9a-fA-F]{1,64}$/.test(programHash)) {
      throw new HttpError(400, provingRefusal('programHash must be a 0x-prefixed hex string.'))
    }
    if (form.files.has('inputFile') && !form.files.has('programFile')) {
      throw new HttpError(400, provingRefusal('inputFile goes with programFile.'))
    }
    const bucketId = optionalText(form, 'bucketId', 128)
    const bucketJobIndex = optionalInteger(form, 'bucketJobIndex', 0, 2_147_483_647)
    if (bucketJobIndex !== null && bucketId === null)
      throw new HttpError(400, provingRefusal('bucketJobIndex needs a bucketId.'))
    const cairoVm = enumField(form, 'cairoVm', CAIRO_VMS, 'rust')
    const cairoVersion = enumField(form, 'cairoVersion', CAIRO_VERSIONS, 'cairo0')
    // The combinations production refuses, with its codes (production.md).
    if (cairoVersion === 'cairo1' && cairoVm === 'python') {
      throw new HttpError(
        400,
        provingRefusal('cairo1 does not run on the python VM.', 'CAIRO1_IS_NOT_SUPPORTED_FOR_PYTHON'),
      )
    }
    if (form.files.has('inputFile') && cairoVersion === 'cairo0' && cairoVm === 'rust') {
      throw new HttpError(
        400,
        provingRefusal(
          'An input file with cairo0 needs the python VM.',
          'INPUT_FILE_IS_NOT_SUPPORTED_FOR_CAIRO0_AND_RUST_VM',
        ),
      )
    }
    return {
      ...defaults(owner),
      endpoint: 'general',
      externalId: optionalText(form, 'externalId'),
      dedupId: optionalText(form, 'dedupId', 128),
      declaredJobSize,
      layout: enumField(form, 'layout', LAYOUTS, 'auto'),
      cairoVm,
      cairoVersion,
      hints: optionalEnum(form, 'hints', HINTS),
      result: enumField(form, 'result', RESULTS, 'PROOF_GENERATION'),
      mockFactHash: booleanField(form, 'mockFactHash', false),
      network: enumField(form, 'network', NETWORKS, 'TESTNET'),
      sharpProver: optionalEnum(form, 'sharpProver', SHARP_PROVERS),
      bucketId,
      bucketJobIndex,
      facts: { ...NO_FACTS, programHash: programHash?.toLowerCase() ?? null },
    }
  }

  /** The uploads' kinds, as production checks them: a zip PIE, a JSON program, JSON or text input. */
  function checkFiles(form: Form, input: NewQuery): void {
    const pie = form.files.get('pieFile')
    if (pie && !isZip(pie))
      throw new HttpError(400, provingRefusal('pieFile must be a .zip (application/zip).', 'PIE_FILE_SHOULD_BE_ZIP'))
    const program = form.files.get('programFile')
    if (program && !isJson(program))
      throw new HttpError(400, provingRefusal('programFile must be JSON.', 'PROGRAM_FILE_SHOULD_BE_JSON'))
    const inputFile = form.files.get('inputFile')
    if (!inputFile) return
    if (input.cairoVersion === 'cairo1' && !isText(inputFile)) {
      throw new HttpError(
        400,
        provingRefusal(
          'The input of a cairo1 program must be text (input.txt, text/plain).',
          'INPUT_FILE_FOR_CAIRO1_SHOULD_BE_TXT',
        ),
      )
    }
    if (input.cairoVersion !== 'cairo1' && !isJson(inputFile)) {
      throw new HttpError(
        400,
        provingRefusal(
          'The input of a cairo0 program must be JSON (input.json).',
          'INPUT_FILE_FOR_CAIRO0_SHOULD_BE_JSON',
        ),
      )
    }
  }

  /** A query may join an OPEN bucket of the same key; its index is the next free one unless given. */
  function checkBucket(input: NewQuery, owner: Owner): { bucketJobIndex: number | null; isProofMocked: boolean } {
    if (input.bucketId === null) return { bucketJobIndex: null, isProofMocked: false }
    const bucket = own(state().buckets, input.bucketId)
    if (!bucket || !sameOwner(bucket.owner, owner))
      throw new HttpError(400, provingRefusal(`bucketId: no bucket ${input.bucketId} for this API key.`))
    if (bucket.closedAt !== null)
      throw new HttpError(400, provingRefusal(`bucketId: bucket ${bucket.id} is closed; open a new bucket.`))
    // The bucket's list is ordered by job index: a lookup and its end, not a read of every query.
    const joined = queriesOfBucket(state(), bucket.id)
    if (input.bucketJobIndex !== null && holdsJobIndex(joined, input.bucketJobIndex)) {
      throw new HttpError(
        400,
        provingRefusal(`bucketJobIndex ${input.bucketJobIndex} is already used in bucket ${bucket.id}.`),
      )
    }
    // A bucket created with mockProof proves its queries with mocked proofs.
    return { bucketJobIndex: input.bucketJobIndex ?? nextJobIndex(joined), isProofMocked: bucket.mockProof }
  }

  /** Reads the form, runs `submit`, and removes the uploads unless `submit` kept them. */
  async function withForm(
    ctx: RouteContext,
    fileFields: readonly string[],
    submit: (form: Form) => Promise<Reply>,
  ): Promise<Reply> {
    const form = await readForm(ctx.req, {
      incomingDir: incomingDir(emulator),
      fileFields,
      maxFileBytes: emulator.maxUploadBytes,
    })
    try {
      return await submit(form)
    } finally {
      await discardForm(form)
    }
  }

  async function pieFacts(pie: UploadedFile): Promise<StoredFacts> {
    const facts = await computePieFacts(pie.path, { sha256: pie.sha256 })
    if ('invalid' in facts)
      throw new HttpError(400, provingRefusal(`pieFile is not a valid Cairo PIE: ${facts.invalid}`))
    return {
      programHash: facts.programHash,
      sharpFactHash: facts.sharpFactHash,
      integrityFactHash: facts.integrityFactHash,
      output: facts.output,
      nSteps: facts.nSteps,
    }
  }

  /**
   * Moves a submission's files under the query's folder and records them; the state is then
   * saved. The query lists them from the moment it exists (the same tick as createQuery): a read
   * between the two, such as the console's live list of a query DONE at once, never shows it
   * without its pie.zip.
   */
  async function keepUploads(query: StoredQuery, form: Form, names: Record<string, string>): Promise<void> {
    // The query was just created: written with the next save, whatever happens to its files.
    emulator.store.touch('queries', query.id)
    const kept = Object.entries(names).flatMap(([field, name]) => {
      const file = form.files.get(field)
      if (!file) return []
      const key = ({ pieFile: 'pie', proofFile: 'proof', programFile: 'program', inputFile: 'input' } as const)[
        field as 'pieFile'
      ]
      query.files[key] = { name, size: file.size, sha256: file.sha256 }
      return [{ field, name, file, key }]
    })
    let done = 0
    try {
      const folder = join(emulator.uploadsDir, query.id)
      await mkdir(folder, { recursive: true })
      for (const { field, name, file } of kept) {
        await keepFile(file, join(folder, name))
        form.files.delete(field)
        done++
      }
    } catch (error) {
      // Only what is on disk stays listed.
      for (const { key } of kept.slice(done)) delete query.files[key]
      throw error
    }
    save()
  }

  // --- Reading -----------------------------------------------------------------------------

  /** GET /proving-query-by-dedup-id?dedupId= (extension), header api-key. */
  function getQueryByDedupId(ctx: RouteContext): Reply {
    const owner = emulator.keys.fromHeaderOrQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    const dedupId = ctx.query.get('dedupId')
    if (!dedupId) return { status: 400, body: provingRefusal('dedupId is required.') }
    const query = findByDedupId(state(), owner, dedupId)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const progress = queryProgress(state(), query, now())
    return {
      status: 200,
      body: {
        provingQuery: production ? recordProduction(query, progress, { withClient: false }) : recordD(query, progress),
      },
    }
  }

  /** GET /proving-query/{id}: no authentication; record D and the artifact URLs. */
  function getQuery(ctx: RouteContext): Reply {
    const query = own(state().queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const progress = queryProgress(state(), query, now())
    const record = production ? recordProduction(query, progress, { withClient: true }) : recordD(query, progress)
    return { status: 200, body: { provingQuery: record, metadataUrls: artifactUrls(emulator, ctx, query, progress) } }
  }

  /**
   * GET /docs/proving-queries and production's GET /proving-queries: the caller's queries,
   * newest first, `limit`/`offset`/`search`/`clientId`/`network`.
   */
  function listQueries(ctx: RouteContext): Reply {
    const owner = emulator.keys.fromHeaderOrQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    const limit = pageParameter(ctx, 'limit', 10, 1, 100)
    const offset = pageParameter(ctx, 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
    const network = ctx.query.get('network')
    if (network && !(NETWORKS as readonly string[]).includes(network)) {
      return { status: 400, body: provingRefusal(`network must be one of ${NETWORKS.join(', ')}.`) }
    }
    const search = ctx.query.get('search')?.toLowerCase() ?? ''
    const clientId = ctx.query.get('clientId')
    const at = now()
    const matches = (query: StoredQuery) =>
      (!network || query.network === network) &&
      (!clientId || query.owner.clientId === clientId) &&
      (!search || query.id.toLowerCase().includes(search) || (query.externalId ?? '').toLowerCase().includes(search))
    const { page, total } = newestFirst(
      queryIndex(state()).byOwner.get(owner.keyId) ?? [],
      offset,
      limit,
      network || clientId || search ? matches : null,
    )
    const records = page.map((query) => {
      const progress = queryProgress(state(), query, at)
      return production ? recordProduction(query, progress, { withClient: true }) : recordL(query, progress)
    })
    return { status: 200, body: { provingQueries: records, total } }
  }

  /** GET /docs/proving-query/{id}: another key's query is answered like a missing one (404). */
  function getQueryDetails(ctx: RouteContext): Reply {
    const owner = emulator.keys.fromHeaderOrQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    const query = own(state().queries, ctx.params.id)
    if (!query || !sameOwner(query.owner, owner)) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const progress = queryProgress(state(), query, now())
    return {
      status: 200,
      body: { provingQuery: recordL(query, progress), metadataUrls: artifactUrls(emulator, ctx, query, progress) },
    }
  }

  // --- Retry -------------------------------------------------------------------------------

  /** POST /proving-queries/{id}/retry: 404 -> 403 -> 409 -> 400 -> 400 -> 200, in that order. */
  function retryQuery(ctx: RouteContext): Reply {
    const query = own(state().queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const caller = emulator.keys.identify(ctx.header('api-key') ?? ctx.query.get('apiKey'))
    if (!caller || !sameOwner(caller, query.owner)) return { status: 403, body: FORBIDDEN }
    const progress = queryProgress(state(), query, now())
    if (progress.status !== 'FAILED') return { status: 409, body: QUERY_NOT_IN_FAILED_STATUS }
    if (!progress.retriable) return { status: 400, body: QUERY_NOT_RETRIABLE }
    if (query.retryCount >= MAX_RETRIES) return { status: 400, body: MAX_RETRIES_REACHED }
    restartQuery(state(), query, now())
    emulator.store.touch('queries', query.id)
    save()
    return {
      status: 200,
      body: { provingQuery: recordR(query, queryProgress(state(), query, now())), message: 'Query retry initiated' },
    }
  }

  // --- Buckets -----------------------------------------------------------------------------

  /** POST /buckets (extension): opens a bucket for the caller's key. */
  async function createBucket(ctx: RouteContext): Promise<Reply> {
    const owner = emulator.keys.fromHeaderOrQuery(ctx)
    if (!owner) return { status: 401, body: INVALID_API_KEY }
    const body = await ctx.json()
    if (!body || typeof body !== 'object' || Array.isArray(body))
      return { status: 400, body: provingRefusal('The body must be a JSON object.') }
    const fields = body as Record<string, unknown>
    const problem = bucketBodyProblem(fields)
    if (problem) return { status: 400, body: provingRefusal(problem) }
    const bucket = {
      id: randomUUID(),
      owner,
      externalId: (fields.externalId as string | undefined) ?? null,
      // production.md: nodeWidth arrives as a string, aggregatorParams as an object.
      nodeWidth: fields.nodeWidth === undefined ? null : Number(fields.nodeWidth),
      aggregatorVersion: fields.aggregatorVersion as string,
      aggregatorParams:
        fields.aggregatorParams === undefined
          ? null
          : typeof fields.aggregatorParams === 'string'
            ? fields.aggregatorParams
            : JSON.stringify(fields.aggregatorParams),
      mockProof: (fields.mockProof as boolean | undefined) ?? false,
      createdAt: now(),
      closedAt: null,
    }
    state().buckets[bucket.id] = bucket
    state().counters.buckets++
    emulator.store.touch('buckets', bucket.id)
    save()
    return { status: 201, body: { provingBucket: bucketRecordOf(state(), bucket, now(), emulator.shape) } }
  }

  /** POST /buckets/close?bucketId=: 400 {} -> 401 -> 404 -> 401 (not the owner) -> 200. */
  function closeBucket(ctx: RouteContext): Reply {
    const bucketId = ctx.query.get('bucketId')
    if (!bucketId || !UUID.test(bucketId)) return { status: 400, body: BUCKET_BAD_REQUEST }
    const caller = emulator.keys.fromHeaderOrQuery(ctx)
    if (!caller) return { status: 401, body: UNAUTHORIZED }
    const bucket = own(state().buckets, bucketId)
    if (!bucket) return { status: 404, body: BUCKET_NOT_FOUND }
    if (!sameOwner(bucket.owner, caller)) return { status: 401, body: UNAUTHORIZED }
    // Closing is idempotent: a bucket already closed is returned as it is.
    if (bucket.closedAt === null) {
      bucket.closedAt = now()
      emulator.store.touch('buckets', bucket.id)
      save()
    }
    return { status: 200, body: { provingBucket: bucketRecordOf(state(), bucket, now(), emulator.shape) } }
  }

  /** GET /buckets/{id} (extension): the bucket and its queries (record D), by job index. */
  function getBucket(ctx: RouteContext): Reply {
    const bucket = own(state().buckets, ctx.params.id)
    if (!bucket) return { status: 404, body: BUCKET_NOT_FOUND }
    const at = now()
    const queries = queriesOfBucket(state(), bucket.id).map((query) => {
      const progress = queryProgress(state(), query, at)
      return production ? recordProduction(query, progress, { withClient: true }) : recordD(query, progress)
    })
    return { status: 200, body: { bucket: bucketRecordOf(state(), bucket, at, emulator.shape), queries } }
  }
}

const isZip = (file: UploadedFile) =>
  file.contentType === 'application/zip' ||
  file.contentType === 'application/x-zip-compressed' ||
  /\.zip$/i.test(file.fileName)
const isJson = (file: UploadedFile) => file.contentType === 'application/json' || /\.json$/i.test(file.fileName)
const isText = (file: UploadedFile) => file.contentType.startsWith('text/plain') || /\.txt$/i.test(file.fileName)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const NO_FACTS: StoredFacts = {
  programHash: null,
  sharpFactHash: null,
  integrityFactHash: null,
  output: null,
  nSteps: null,
}

/** The values a submission does not choose. */
function defaults(owner: Owner): Omit<NewQuery, 'endpoint' | 'mockFactHash' | 'result' | 'sharpProver' | 'facts'> {
  return {
    owner,
    externalId: null,
    dedupId: null,
    layout: 'auto',
    network: 'TESTNET',
    cairoVm: 'rust',
    cairoVersion: 'cairo0',
    declaredJobSize: null,
    bucketId: null,
    bucketJobIndex: null,
    isProofMocked: false,
  }
}

function pageParameter(ctx: RouteContext, name: string, fallback: number, min: number, max: number): number {
  const raw = ctx.query.get(name)
  if (raw === null || raw === '') return fallback
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new HttpError(
      400,
      provingRefusal(`${name} must be a whole number from ${min} to ${max}; got ${JSON.stringify(raw.slice(0, 40))}.`),
    )
  }
  return value
}

function bucketBodyProblem(fields: Record<string, unknown>): string | undefined {
  if (typeof fields.aggregatorVersion !== 'string' || !fields.aggregatorVersion.trim())
    return 'aggregatorVersion is required (a string).'
  if (fields.externalId !== undefined && typeof fields.externalId !== 'string') return 'externalId must be a string.'
  const params = fields.aggregatorParams
  if (
    params !== undefined &&
    typeof params !== 'string' &&
    (!params || typeof params !== 'object' || Array.isArray(params))
  ) {
    return 'aggregatorParams must be a JSON object of parameters (or a string).'
  }
  if (fields.mockProof !== undefined && typeof fields.mockProof !== 'boolean') return 'mockProof must be a boolean.'
  const width =
    typeof fields.nodeWidth === 'string' && /^\d{1,10}$/.test(fields.nodeWidth)
      ? Number(fields.nodeWidth)
      : fields.nodeWidth
  if (
    fields.nodeWidth !== undefined &&
    !(Number.isInteger(width) && (width as number) >= 1 && (width as number) <= 2_147_483_647)
  ) {
    return 'nodeWidth must be a whole number from 1 to 2147483647.'
  }
  return undefined
}
