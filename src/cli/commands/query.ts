import { InvalidInputError, RemoteFailureError } from '../../core/errors.ts'
import { preparePie } from '../../pipeline/prepared-pie.ts'
import { serviceLine } from '../../core/service-text.ts'
import {
  allowInsecureHttp,
  defineCommand,
  MAX_RPS_OPTION,
  pageOptions,
  pageSummary,
  parseInteger,
  SERVICE_OPTIONS,
} from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { describeQuery, provingClientFrom, timeoutFrom, withHeartbeat } from '../services.ts'
import { ANY_PROOF, type ExpectedResult, expectResult } from '../../pipeline/gate.ts'
import { followQuery, retryAndFollow } from '../../pipeline/statement/index.ts'
import { type ProvingNetwork, RESULTS } from '../../schemas/proving-constants.ts'
import type { ProvingClient } from '../../clients/proving.ts'
import type { CommandContext } from '../context.ts'
import { checkFlagEnum, GATE_OPTIONS, MOCKED_FACT_NOT_ALLOWED } from '../shared/statement-flags.ts'
import { renderJudgement } from '../shared/statement-output.ts'

const TIMEOUT_OPTION = {
  timeout: {
    type: 'string',
    valueName: '<duration>',
    description: 'Give up waiting after this long: 90s, 30m, 2h.',
    default: '2h',
  },
  ...MAX_RPS_OPTION,
} as const

export const queryGet = defineCommand({
  path: ['query', 'get'],
  args: '<query-id>',
  summary: 'Show a query: status, step, program hash, facts, artifact URLs, and whether a FAILED one can be retried.',
  positionals: { min: 1, max: 1 },
  options: { ...SERVICE_OPTIONS },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: false })
    const id = context.positionals[0]!
    // With a key: the record with its status from whichever path the service serves. The public
    // record (no key needed) carries isRetriable and retryCount, and its status where production sends one.
    const [details, publicRecord] = await Promise.all([
      client.hasApiKey ? client.readQuery(id, { signal: context.signal }) : Promise.resolve(undefined),
      client.hasApiKey
        ? client.getQuery(id, { signal: context.signal }).catch(() => undefined)
        : client.getQuery(id, { signal: context.signal }),
    ])
    const record = publicRecord?.provingQuery as
      | (Record<string, unknown> & { isRetriable?: boolean | null; retryCount?: number | null })
      | undefined
    const status = details?.provingQuery.status ?? (typeof record?.status === 'string' ? record.status : undefined)
    const retry = retriability(status, record?.isRetriable, record?.retryCount, id)
    const result = details ?? {
      provingQuery: { ...record, status: status ?? null },
      metadataUrls: publicRecord?.metadataUrls ?? [],
    }
    const human = [
      // A null status (not shown without a key) is a row left out, like an absent one.
      describeQuery({
        ...result,
        provingQuery: { ...result.provingQuery, status: result.provingQuery.status ?? undefined },
      }),
      ...(status ? [] : ['status         not shown without an API key (set PROVING_API_KEY)']),
      `${'retriable'.padEnd(15)}${retry.text}`,
    ].join('\n')
    context.print(human, { ...result, retriable: retry.retriable, retryCount: record?.retryCount ?? null })
    return EXIT.ok
  },
})

/** Whether `proving query retry` can help, in words. */
export function retriability(
  status: string | undefined,
  isRetriable: boolean | null | undefined,
  retryCount: number | null | undefined,
  id: string,
) {
  const used = typeof retryCount === 'number' ? ` (${retryCount} of 3 retries used)` : ''
  if (status !== 'FAILED')
    return { retriable: null, text: status ? `not applicable: the query is ${status}, not FAILED` : 'unknown' }
  if (isRetriable === true) return { retriable: true, text: `yes${used}: proving query retry ${id} --wait` }
  if (isRetriable === false) {
    return {
      retriable: false,
      text:
        typeof retryCount === 'number' && retryCount >= 3
          ? `no: the 3 retries are used up`
          : `no: the error is not retriable${used}; fix the PIE or parameters and submit again`,
    }
  }
  return {
    retriable: null,
    text: `unknown: the service did not say${used}; \`proving query retry ${id}\` answers QUERY_NOT_RETRIABLE if it is not`,
  }
}

/** What `query wait` and `query retry --wait` check once the query ends (the gate of `prove --wait`, without a PIE). */
const GATE_DETAILS = [
  'The query is gated as `proving prove --wait` gates it (the local fact check only with --pie):',
  'exit 0 only when it is DONE, of the kind expected, and its record carries the facts that kind',
  'needs, well formed, with a mock state the service gives and a fact that is not mocked',
  '(isFactMocked true, null or absent is refused unless --allow-mocked-fact). FAILED or refused:',
  'exit 1, each refusal on stderr, naming the field.',
  "The kind expected is what was asked for, never the record's word for it: --expect-result, else",
  "what this machine's submission journal recorded for the query, else a proof (any",
  'PROOF_GENERATION or PROOF_VERIFICATION_ON_* kind, with its facts). A record whose result or',
  'step claims anything else (a trace) is refused, naming both.',
  'Resuming a `prove --wait`? Run the `query wait` it printed (with --expect-result), and the same --allow-mocked-fact.',
]

const EXPECT_RESULT_OPTION = {
  'expect-result': {
    type: 'string',
    valueName: '<result>',
    description: `The result kind the query was submitted for (${RESULTS.join(', ')}); default: a proof of any kind.`,
  },
} as const

/**
 * What the gate expects of a query this command did not submit: --expect-result, else what the
 * submission journal recorded asking for it, else a proof with its facts. Never the record.
 */
async function expectedFor(context: CommandContext, client: ProvingClient, id: string): Promise<ExpectedResult> {
  const flag = (context.values as { 'expect-result'?: string })['expect-result']
  if (flag !== undefined) return expectResult(checkFlagEnum(flag.trim(), 'expect-result', RESULTS))
  const { defaultJournalDir, recordedResult } = await import('../../pipeline/journal.ts')
  const recorded = await recordedResult(defaultJournalDir(context.io.env), id, new URL(client.http.baseUrl).origin)
  if (recorded === undefined) return ANY_PROOF
  context.progress(`Expecting ${recorded}: what the submission journal recorded for query ${id}.`)
  return expectResult(recorded)
}

export const queryWait = defineCommand({
  path: ['query', 'wait'],
  args: '<query-id>',
  summary: 'Wait for a query and gate it: exit 0 when DONE and passed, 1 when FAILED or refused.',
  details: GATE_DETAILS,
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...TIMEOUT_OPTION,
    ...EXPECT_RESULT_OPTION,
    pie: {
      type: 'string',
      valueName: '<pie>',
      description:
        'The PIE that was submitted (pie.zip or PIE directory): the facts the query reports are checked against it, as `prove --wait` checks them.',
    },
    'allow-mocked-fact': {
      ...GATE_OPTIONS['allow-mocked-fact'],
      description: 'Let a mocked fact, or one the service does not say is real (isFactMocked null), pass the gate.',
    },
  },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: true })
    const timeoutMs = timeoutFrom(context)
    const id = context.positionals[0]!
    // Before waiting: a PIE that cannot be read fails now, not after the query is done.
    const pie =
      context.values.pie === undefined
        ? undefined
        : await preparePie(context.values.pie, {
            inputName: '--pie',
            signal: context.signal,
            onProgress: context.progress,
          })
    try {
      const expected = await expectedFor(context, client, id)
      const gate = {
        allowMockedFact: context.values['allow-mocked-fact'] === true,
        verifyFacts: true,
        notAllowed: MOCKED_FACT_NOT_ALLOWED,
      }
      const judgement = await followQuery(
        client,
        { queryId: id, expected, gate, pie, timeoutMs },
        { logger: context.logger, signal: context.signal, aroundWait: (wait) => withHeartbeat(context, wait) },
      )
      return renderJudgement(context, judgement, { expected, announceFacts: pie !== undefined, pie: pie !== undefined })
    } finally {
      await pie?.cleanup()
    }
  },
})

export const queryRetry = defineCommand({
  path: ['query', 'retry'],
  args: '<query-id>',
  summary: 'Retry a FAILED query whose error is retriable (at most 3 times).',
  details: [
    'With --wait, the retried query is followed and gated as `proving query wait` gates it:',
    ...GATE_DETAILS.slice(1, -1),
  ],
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...TIMEOUT_OPTION,
    wait: {
      type: 'boolean',
      description: 'Wait for the retried query to finish, then gate it (exit 0 DONE and passed, 1 FAILED or refused).',
    },
    ...GATE_OPTIONS,
    ...EXPECT_RESULT_OPTION,
  },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: true })
    const id = context.positionals[0]!
    // Checked before the retry is sent: a bad flag costs nothing.
    const expected = await expectedFor(context, client, id)
    const wait = context.values.wait === true
    const gate = {
      allowMockedFact: context.values['allow-mocked-fact'] === true,
      verifyFacts: false,
      notAllowed: MOCKED_FACT_NOT_ALLOWED,
    }
    const { retried, judgement } = await retryAndFollow(
      client,
      { queryId: id, expected, gate, timeoutMs: timeoutFrom(context), wait },
      {
        logger: context.logger,
        signal: context.signal,
        aroundWait: (run) => withHeartbeat(context, run),
        onRetried: (response) => {
          if (wait) context.progress(`${response.message} (retry ${response.provingQuery.retryCount} of 3).`)
        },
      },
    )
    if (!judgement) {
      context.print(
        `${retried.message}: query ${id} is ${retried.provingQuery.status} again (retry ${retried.provingQuery.retryCount} of 3).`,
        retried,
      )
      return EXIT.ok
    }
    return renderJudgement(context, judgement, { expected, announceFacts: false, pie: false })
  },
})

export const queryList = defineCommand({
  path: ['query', 'list'],
  summary: 'List the queries submitted with this API key.',
  positionals: { min: 0, max: 0 },
  options: {
    ...SERVICE_OPTIONS,
    ...pageOptions('Queries', 100),
    search: { type: 'string', valueName: '<text>', description: 'Match the query id or external id.' },
    network: { type: 'string', valueName: '<MAINNET|TESTNET>', description: 'Only queries on this network.' },
    all: {
      type: 'boolean',
      description: 'Every page, not just one, 100 queries a request (--limit and --offset are for one page).',
    },
  },
  async run(context) {
    const client = provingClientFrom(context, { needsKey: true })
    const limit = parseInteger(context.values.limit, 'limit', 1, 100)
    const offset = parseInteger(context.values.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    const network = context.values.network
    if (network !== undefined && network !== 'MAINNET' && network !== 'TESTNET') {
      throw new InvalidInputError(`--network must be MAINNET or TESTNET; got ${JSON.stringify(network)}.`, {
        input: '--network',
      })
    }
    const filters = {
      search: context.values.search,
      network: network as ProvingNetwork | undefined,
      signal: context.signal,
    }
    let queries
    let total
    if (context.values.all) {
      queries = []
      // At the service's largest page (100), not --limit's: each page costs a request (issue 35).
      for await (const query of client.iterateQueries(filters)) queries.push(query)
      total = queries.length
    } else {
      const page = await client.listQueries({ ...filters, limit, offset })
      queries = page.provingQueries
      total = page.total
    }
    // A header row and columns as wide as their widest cell, as `auth keys list` prints them.
    const header = ['query', 'status', 'step', 'created']
    const rows = queries.map((query) => [query.id, query.status, query.step ?? '', query.createdAt ?? ''])
    const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)))
    const line = (cells: string[]) =>
      serviceLine(
        cells
          .map((cell, column) => cell.padEnd(widths[column]!))
          .join('  ')
          .trimEnd(),
      )
    const lines = rows.length ? [line(header), ...rows.map(line)] : []
    lines.push(
      context.values.all
        ? `${queries.length} ${queries.length === 1 ? 'query' : 'queries'}.`
        : pageSummary({ shown: queries.length, offset, limit, total: total ?? undefined }),
    )
    context.print(lines.join('\n'), { provingQueries: queries, total })
    return EXIT.ok
  },
})

export const queryDownload = defineCommand({
  path: ['query', 'download'],
  args: '<query-id>',
  summary: "Download a query's artifacts (proof.json, metadata.json, the PIE) and print their SHA-256.",
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    out: {
      type: 'string',
      valueName: '<dir>',
      description: 'Folder to write into (created if missing). Default: ./<query-id>.',
    },
    only: {
      type: 'string',
      multiple: true,
      valueName: '<name>',
      description: 'Only the artifact of this name (repeatable), e.g. proof.json.',
    },
    force: { type: 'boolean', description: 'Replace files that already exist (default: refuse, writing nothing).' },
    'max-size': {
      type: 'string',
      valueName: '<MiB>',
      description: 'Largest artifact accepted, in MiB (1 to 4096).',
      default: '256',
    },
  },
  details: [
    'Artifacts need no API key. Each is written whole or not at all; a redirect to another origin,',
    'an artifact over --max-size or a link that does not end in a plain file name is refused.',
  ],
  async run(context) {
    const client = provingClientFrom(context, { needsKey: false })
    const id = context.positionals[0]!
    const maxBytes = parseInteger(context.values['max-size'], 'max-size', 1, 4096) * 1024 * 1024
    const { metadataUrls, provingQuery } = await client.getQuery(id, { signal: context.signal })
    // The public record may not carry the status; with a key, the record that does.
    let status = typeof provingQuery.status === 'string' ? provingQuery.status : undefined
    if (metadataUrls.length === 0 && status === undefined && client.hasApiKey) {
      status = (await client.readQuery(id, { signal: context.signal })).provingQuery.status ?? undefined
    }
    if (metadataUrls.length === 0) {
      const empty = { queryId: id, status: status ?? null, outDir: null, files: [] }
      if (status === 'FAILED') {
        context.print(`Query ${id} FAILED: it has no artifacts (see: proving query get ${id}).`, empty)
        if (context.json) context.fail(new RemoteFailureError(`Query ${id} FAILED: it has no artifacts.`))
        return EXIT.remoteFailure
      }
      const human =
        status === 'DONE'
          ? `Query ${id} is DONE but lists no artifacts.`
          : `Query ${id} lists no artifacts${status ? ` yet: it is ${serviceLine(status, 80)}` : ''}; they are listed once it is DONE. Wait for it with: proving query wait ${id}`
      context.print(human, empty)
      return EXIT.ok
    }
    const { downloadArtifacts } = await import('../../pipeline/artifacts.ts')
    const outDir = context.values.out ?? id
    const files = await downloadArtifacts(metadataUrls, outDir, {
      only: context.values.only,
      overwrite: context.values.force === true,
      maxBytes,
      allowInsecureHttp: allowInsecureHttp(context),
      signal: context.signal,
      logger: context.logger,
    })
    const width = Math.max(...files.map((file) => file.name.length))
    const human = [
      `Downloaded ${files.length} artifact${files.length === 1 ? '' : 's'} of query ${id} into ${outDir}:`,
      ...files.map(
        (file) => `  ${file.name.padEnd(width)}  ${String(file.bytes).padStart(10)} bytes  sha256 ${file.sha256}`,
      ),
    ].join('\n')
    context.print(human, { queryId: id, status: status ?? null, outDir, files })
    return EXIT.ok
  },
})
