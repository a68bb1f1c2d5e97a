import { readFile } from 'node:fs/promises'
import { GateError, InvalidInputError } from '../../core/errors.ts'
import {
  type CommandContext,
  defineCommand,
  type OptionSpecs,
  parseInteger,
  SERVICE_OPTIONS,
  waitOptions,
} from '../context.ts'
import { formatDuration } from '../../core/poll.ts'
import { serviceLine } from '../../core/service-text.ts'
import { EXIT } from '../exit-codes.ts'
import { provingClientFrom, timeoutFrom } from '../services.ts'
import type { ExpectedQueries } from '../../pipeline/bucket.ts'
import type { BucketRecord } from '../../schemas/proving.ts'

function describeBucket(bucket: BucketRecord): string {
  return [
    ['bucket', bucket.id],
    ['status', bucket.status ?? '(not reported)'],
    ['type', bucket.bucketType],
    ['chain', bucket.chain],
    ['leaves', bucket.leaves == null ? null : String(bucket.leaves)],
    ['node width', bucket.nodeWidth == null ? null : String(bucket.nodeWidth)],
    ['mock proof', bucket.mockProof == null ? null : String(bucket.mockProof)],
    ['external id', bucket.externalId],
    ['created', bucket.createdAt],
  ]
    .filter(([, value]) => value !== null && value !== undefined)
    .map(([label, value]) => `${label!.padEnd(13)}${serviceLine(String(value))}`)
    .join('\n')
}

const BUCKET_CREATE_OPTIONS = {
  ...SERVICE_OPTIONS,
  'aggregator-version': { type: 'string', valueName: '<version>', description: 'Aggregator version.', default: 'v1' },
  quiet: {
    type: 'boolean',
    short: 'q',
    description: 'Print only the bucket id (for BUCKET=$(proving bucket create -q)).',
  },
  'external-id': { type: 'string', valueName: '<id>', description: 'Your own identifier for the bucket.' },
  'node-width': { type: 'string', valueName: '<n>', description: 'Width of the aggregation tree nodes.' },
  'aggregator-params': {
    type: 'string',
    valueName: '<file.json>',
    description: 'A JSON file holding the aggregator parameters as an object ({"use_kzg_da": true, ...}).',
  },
  param: {
    type: 'string',
    multiple: true,
    valueName: '<key=value>',
    description: 'One aggregator parameter (repeatable; true/false/numbers are JSON, the rest text).',
  },
  'mock-proof': { type: 'boolean', description: 'Mock the aggregated proof (testing).' },
} as const satisfies OptionSpecs

export const bucketCreate = defineCommand({
  path: ['bucket', 'create'],
  summary: 'Open a bucket that groups queries for aggregated on-chain verification (service extension).',
  positionals: { min: 0, max: 0 },
  options: BUCKET_CREATE_OPTIONS,
  async run(context) {
    const aggregatorVersion = context.values['aggregator-version']?.trim()
    if (!aggregatorVersion) {
      throw new InvalidInputError('--aggregator-version is required: name the aggregator version to use.', {
        input: '--aggregator-version',
      })
    }
    const nodeWidthText = context.values['node-width']
    const client = provingClientFrom(context, { needsKey: true })
    const bucket = await client.createBucket({
      aggregatorVersion,
      externalId: context.values['external-id'],
      nodeWidth: nodeWidthText === undefined ? undefined : parseInteger(nodeWidthText, 'node-width', 1, 2_147_483_647),
      aggregatorParams: await aggregatorParamsFrom(context),
      mockProof: context.values['mock-proof'] === true ? true : undefined,
      signal: context.signal,
    })
    if (context.values.quiet && !context.json) context.io.stdout(`${bucket.id}\n`)
    else context.print(describeBucket(bucket), { provingBucket: bucket })
    return EXIT.ok
  },
})

export const bucketClose = defineCommand({
  path: ['bucket', 'close'],
  args: '<bucket-id>',
  summary:
    'Close a bucket: finalize its queries and start aggregated verification (idempotent); --wait gates on every query.',
  details: [
    'With --wait: waits for the bucket to end, then gates on every query in it (in this bucket by its own',
    "record, not the listing's word; DONE, a proof whatever its record says, its program hash and a",
    'well-formed fact reported, fact not mocked and its mock state known unless --allow-mocked-fact, program',
    'hash when --expected-program-hash; no more queries than leaves, no query listed twice); with --pie',
    "(repeatable, globs allowed) each query's facts must fit one of the PIEs,",
    'and every PIE must have its query. --expect-query (repeatable) or --expect-count: the queries the jobs',
    'submitted; a missing or unexpected query is refused, naming it. Prints a per-query table',
    '(with --json: { provingBucket, status, ok, queries, refusals }); exit 0 when all holds, 1 otherwise.',
  ],
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...waitOptions('Wait for the bucket to end, then gate on every query in it.'),
    pie: {
      type: 'string',
      multiple: true,
      valueName: '<pie>',
      description: 'With --wait: a PIE proved into the bucket, to check facts against (repeatable; globs).',
    },
    'allow-mocked-fact': {
      type: 'boolean',
      description: 'With --wait: let queries with a mocked fact, or an unknown mock state, pass.',
    },
    'expected-program-hash': {
      type: 'string',
      valueName: '<0x...>',
      description: 'With --wait: the program hash every query must have.',
    },
    'expect-query': {
      type: 'string',
      multiple: true,
      valueName: '<query-id>',
      description: 'With --wait: a query the bucket must hold (repeatable); one missing, or one not named, is refused.',
    },
    'expect-count': {
      type: 'string',
      valueName: '<n>',
      description: 'With --wait: how many queries the bucket must hold (instead of naming them).',
    },
  },
  async run(context) {
    const pieArgs = context.values.pie ?? []
    if (!context.values.wait) {
      for (const flag of [
        'pie',
        'allow-mocked-fact',
        'expected-program-hash',
        'expect-query',
        'expect-count',
      ] as const) {
        if (context.values[flag] !== undefined)
          throw new InvalidInputError(`--${flag} is for the gate of --wait: add --wait.`, { input: `--${flag}` })
      }
    }
    const timeoutMs = timeoutFrom(context)
    const expected = expectedQueriesFrom(context.values['expect-query'], context.values['expect-count'])
    const pies = pieArgs.length ? await inspectGivenPies(context, pieArgs) : undefined
    const client = provingClientFrom(context, { needsKey: true })
    const id = context.positionals[0]!
    const bucket = await client.closeBucket(id, { signal: context.signal })
    if (!context.values.wait) {
      context.print(describeBucket(bucket), { provingBucket: bucket })
      return EXIT.ok
    }
    context.progress(`Closed bucket ${bucket.id} (${queryCount(bucket.leaves)}); waiting for it to end.`)
    const { bucketTable, judgeBucket, waitForBucket } = await import('../../pipeline/bucket.ts')
    // One timeout for the wait and the reads of the queries after it.
    const deadline = client.http.clock.now() + timeoutMs
    const details = await waitForBucket(client, bucket.id, {
      timeoutMs,
      signal: context.signal,
      onProgress: (progress) =>
        context.progress(
          `[${formatDuration(progress.elapsedMs).padStart(6)}] bucket ${progress.bucketId}  ${progress.status}  ${queryCount(progress.leaves)}`,
        ),
    })
    const verdict = await judgeBucket(client, details, {
      allowMockedFact: context.values['allow-mocked-fact'] === true,
      expectedProgramHash: context.values['expected-program-hash']?.trim() || undefined,
      expected,
      pies,
      signal: context.signal,
      deadline,
    })
    const human = [
      describeBucket(details.bucket),
      '',
      bucketTable(verdict.rows, 'text'),
      '',
      verdict.ok
        ? verdict.rows.length === 1
          ? `Gate passed: the bucket's one query is DONE${pies ? ' and its facts match the PIEs' : ''}.`
          : `Gate passed: all ${verdict.rows.length} queries are DONE${pies ? ' and their facts match the PIEs' : ''}.`
        : `Gate refused:\n${verdict.refusals.map((line) => `  - ${line}`).join('\n')}`,
    ].join('\n')
    context.print(human, {
      provingBucket: details.bucket,
      status: verdict.status,
      ok: verdict.ok,
      queries: verdict.rows,
      refusals: verdict.refusals,
    })
    if (!verdict.ok && context.json) {
      context.fail(
        new GateError(
          `The gate refused bucket ${details.bucket.id}: ${verdict.refusals.length} reason${verdict.refusals.length === 1 ? '' : 's'}.`,
          { metaMessages: verdict.refusals },
        ),
      )
    }
    return verdict.ok ? EXIT.ok : EXIT.remoteFailure
  },
})

/**
 * --expect-query (each a query id, once) or --expect-count (a whole number from 1), not both;
 * every problem an InvalidInputError naming its flag, before anything is closed.
 */
function expectedQueriesFrom(ids: string[] | undefined, count: string | undefined): ExpectedQueries | undefined {
  if (ids?.length && count !== undefined) {
    throw new InvalidInputError('Give --expect-query or --expect-count, not both: the ids already say how many.', {
      input: '--expect-count',
    })
  }
  if (count !== undefined) return { count: parseInteger(count, 'expect-count', 1, 1_000_000) }
  if (!ids?.length) return undefined
  const trimmed = ids.map((id) => id.trim())
  // Every problem at once, as `expected-queries` lists them: a list fixed one id per run is a slow fix.
  const problems: string[] = []
  const bad = trimmed.filter((id) => !/^[^\s/?#]{1,256}$/.test(id))
  if (bad.length) {
    const shown = bad
      .slice(0, 5)
      .map((id) => JSON.stringify(id.slice(0, 80)))
      .join(', ')
    const more = bad.length > 5 ? ` and ${bad.length - 5} more` : ''
    const [isNot, each] = bad.length === 1 ? ['is not a query id', 'it'] : ['are not query ids', 'each']
    problems.push(
      `--expect-query ${shown}${more} ${isNot} (no spaces, "/", "?" or "#"); copy ${each} as the service returned it`,
    )
  }
  const twice = [...new Set(trimmed.filter((id, index) => trimmed.indexOf(id) !== index))]
  if (twice.length)
    problems.push(
      `--expect-query ${twice.slice(0, 5).join(', ')}${twice.length > 5 ? ` and ${twice.length - 5} more` : ''} ${twice.length === 1 ? 'is' : 'are'} given twice: name each query once`,
    )
  if (problems.length) throw new InvalidInputError(`${problems.join('; ')}.`, { input: '--expect-query' })
  return { ids: trimmed }
}

/** Packs/validates/inspects the PIEs given to the gate, before anything is closed. */
async function inspectGivenPies(context: CommandContext, args: string[]) {
  const { expandPieArguments } = await import('../../pipeline/pie-list.ts')
  const { preparePieForUpload } = await import('../prepare-upload.ts')
  const pies = []
  for (const path of await expandPieArguments(args, '--pie')) {
    const prepared = await preparePieForUpload(context, path, { inspect: true, quiet: true })
    await prepared.cleanup()
    pies.push({ path, inspection: prepared.inspection! })
  }
  return pies
}

export const bucketGet = defineCommand({
  path: ['bucket', 'get'],
  args: '<bucket-id>',
  summary: 'Show a bucket and its queries (service extension).',
  positionals: { min: 1, max: 1 },
  options: { ...SERVICE_OPTIONS },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: false })
    const details = await client.getBucket(context.positionals[0]!, { signal: context.signal })
    const lines = [describeBucket(details.bucket), `queries        ${details.queries.length}`]
    for (const query of details.queries) lines.push(`  #${query.bucketJobIndex ?? '?'} ${query.id}`)
    context.print(lines.join('\n'), details)
    return EXIT.ok
  },
})

/** --aggregator-params <file.json> and any --param key=value, merged (a --param wins). */
async function aggregatorParamsFrom(
  context: CommandContext<typeof BUCKET_CREATE_OPTIONS>,
): Promise<Record<string, unknown> | undefined> {
  const file = context.values['aggregator-params']
  const pairs = context.values.param ?? []
  if (file === undefined && pairs.length === 0) return undefined
  let params: Record<string, unknown> = {}
  if (file !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(await readFile(file, 'utf8'))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw new InvalidInputError(
        code
          ? `--aggregator-params: cannot read ${file} (${code}); check the path.`
          : `--aggregator-params: ${file} is not JSON; write the parameters as a JSON object.`,
        { input: '--aggregator-params', cause: error },
      )
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new InvalidInputError(
        `--aggregator-params: ${file} must hold a JSON object of parameters, such as {"use_kzg_da": true}.`,
        {
          input: '--aggregator-params',
        },
      )
    }
    params = parsed as Record<string, unknown>
  }
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    const key = at > 0 ? pair.slice(0, at).trim() : ''
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
      throw new InvalidInputError(
        `--param must be key=value with a parameter name as key (use_kzg_da=true); got ${JSON.stringify(pair.slice(0, 80))}.`,
        {
          input: '--param',
        },
      )
    }
    params[key] = paramValue(pair.slice(at + 1))
  }
  return params
}

function paramValue(text: string): unknown {
  if (text === 'true' || text === 'false' || text === 'null' || /^-?\d+(\.\d+)?$/.test(text)) return JSON.parse(text)
  return text
}

/** "1 query", "3 queries", "? queries" (a count the service did not send). */
function queryCount(count: number | null | undefined): string {
  return count === 1 ? '1 query' : `${count ?? '?'} queries`
}
