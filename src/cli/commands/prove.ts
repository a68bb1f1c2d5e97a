import type { UploadProgress } from '../../clients/proving.ts'
import { checkLayout } from '../../clients/proving/forms.ts'
import { AbortedError, GateError, InvalidInputError, ProvingKitError, RemoteFailureError } from '../../core/errors.ts'
import { redact } from '../../core/redact.ts'
import { checkEnum } from '../../core/checks.ts'
import { serviceLine } from '../../core/service-text.ts'
import type { ProvingClient, QueryResult } from '../../clients/proving.ts'
import { L2_LAYOUTS, LAYOUTS, MEMORY_VERIFICATIONS, STONE_VERSIONS } from '../../schemas/proving-constants.ts'
import { type CommandContext, defineCommand, parseInteger, SERVICE_OPTIONS, waitOptions } from '../context.ts'
import { EXIT, exitCodeFor, worstExitCode } from '../exit-codes.ts'
import { describeQuery, provingClientFrom, timeoutFrom, uploadReporter, withHeartbeat } from '../services.ts'
import { checkFactsAfterWait, computeFactsAhead, type PreparedPie, preparePieForUpload } from '../pie-steps.ts'
import { withLocalEmulator } from '../local-emulator.ts'
import { expandPieArguments } from '../../pipeline/pie-list.ts'
import { limiter } from '../../pipeline/limit.ts'
import { stat } from 'node:fs/promises'
import { defaultJournalDir, type JournalParts, SubmissionJournal, submitWithJournal } from '../../pipeline/journal.ts'
import type { StreamedSubmitOptions } from '../../pipeline/submit-streamed.ts'
import { evaluateGate, type ExpectedResult, expectResult, expectsProof, type GateRefusal, singleKind } from '../../pipeline/gate.ts'
import { describeReuse, findReusableQuery, generalReuseRequest, l2ReuseRequest, REUSE_MODES, type ReuseMode } from '../../pipeline/reuse.ts'
import {
  GENERAL_FIELD_OPTIONS,
  type GeneralFields,
  hasGeneralFields,
  readGeneralFields,
} from '../submission.ts'

export const WAIT_OPTIONS = {
  ...waitOptions('Wait for the query to finish, then gate it (exit 0 DONE and passed, 1 FAILED or refused).'),
  quiet: {
    type: 'boolean',
    short: 'q',
    description: 'Print only the query id (for QUERY=$(proving ...)), no progress; with --wait the exit code says how it ended.',
  },
  emulator: {
    type: 'boolean',
    description: 'Run against a built-in emulator started for this command and stopped with it (no address or key needed).',
  },
} as const

/** The gate's allowance, for the commands whose wait gates (prove, submit, verify-proof, query wait, query retry). */
export const GATE_OPTIONS = {
  'allow-mocked-fact': {
    type: 'boolean',
    description: 'With --wait: let a mocked fact, or one the service does not say is real (isFactMocked null), pass (--mock-fact-hash implies it).',
  },
} as const

/** Why the gate did not let a mocked fact pass, in the CLI's words. */
const NOT_ALLOWED = '--allow-mocked-fact was not given'

/** `--reuse` of the commands that submit a PIE (prove, submit). */
export const REUSE_OPTION = {
  reuse: {
    type: 'string',
    valueName: '<auto|never>',
    description:
      'auto (default; PROVING_REUSE sets another): before uploading, follow the newest DONE query of this key that proves the same PIE (same result kind, settings and facts, compared here), gated as if new; never: always submit a new, paid query.',
  },
} as const

/** `--reuse`, else PROVING_REUSE, else auto. */
export function reuseModeFrom(context: CommandContext<typeof REUSE_OPTION>): ReuseMode {
  const flag = context.values.reuse
  if (flag !== undefined) return checkFlagEnum(flag, 'reuse', REUSE_MODES)
  const env = context.io.env.PROVING_REUSE
  if (env === undefined || env === '') return 'auto'
  if ((REUSE_MODES as readonly string[]).includes(env)) return env as ReuseMode
  throw new InvalidInputError(`PROVING_REUSE must be auto or never; got ${JSON.stringify(env.slice(0, 40))}. Unset it for the default (auto).`, { input: 'PROVING_REUSE' })
}

const DEFAULT_CONCURRENCY = 4
const MAX_CONCURRENCY = 64

export const prove = defineCommand({
  path: ['prove'],
  args: '<pie>...',
  summary: 'Prove Cairo PIEs (pie.zip files, PIE directories or globs): L2 proof generation and verification.',
  details: [
    'A PIE directory is packed first; every PIE is validated before anything is uploaded.',
    'With --wait, the facts the service reports are checked against the ones computed locally, and the',
    'result is gated as the action gates it: a DONE proof without its facts, with a malformed hash, or whose',
    'fact is mocked or of unknown mock state (unless --allow-mocked-fact) exits 1. The gate expects what was',
    'asked (PROOF_VERIFICATION_ON_L2, or --result), never the record\'s word: a record whose result or step',
    'says another kind (a trace) is refused, naming both.',
    'Any general-submission flag (--bucket-id, --result, --external-id, ...) sends the PIE with the',
    'general submission (POST /proving-query) instead; in a bucket the query ends when the bucket does',
    '(`proving bucket close <id> --wait`).',
    `Several PIEs are a batch: at most --concurrency (default ${DEFAULT_CONCURRENCY}) are packed and uploaded at once,`,
    'one progress line per PIE on stderr, a table (or with --json an array) on stdout, and the exit code',
    'of the worst outcome (130 interrupted > 2 bad input > 3 service > 4 timeout > 1 failed > 0).',
    'The same PIE named twice (another spelling of its path, a copy) is sent once; its rows share the query.',
    'A run of a PIE already being submitted by another live run waits for that run\'s query and follows it.',
    'With --reuse auto (the default), a DONE query of this key that already proves the PIE (the same result',
    'kind, settings and facts, read from the newest 500 queries) is followed instead of paying again, and',
    'gated as if new; a mocked one only with --mock-fact-hash. --reuse never (or --new) always submits.',
  ],
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    ...GATE_OPTIONS,
    ...REUSE_OPTION,
    layout: {
      type: 'string',
      valueName: '<layout>',
      description: `Cairo layout: ${L2_LAYOUTS.join(', ')}; with a general-submission flag, also ${LAYOUTS.filter((name) => !(L2_LAYOUTS as readonly string[]).includes(name)).join(', ')}.`,
      default: 'auto',
    },
    prover: { type: 'string', valueName: '<name>', description: 'Prover instance (L2 endpoint).', default: 'svc_sharp' },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash: no real on-chain verification (testing).' },
    new: {
      type: 'boolean',
      description: 'Submit even when the local journal says this PIE was already submitted with these parameters (a second, paid query); no earlier query is reused.',
    },
    concurrency: {
      type: 'string',
      valueName: '<n>',
      description: `With several PIEs: how many are packed and uploaded at once, 1 to ${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY}).`,
    },
    ...GENERAL_FIELD_OPTIONS,
  },
  async run(context) {
    const prover = context.values.prover.trim()
    if (!prover) throw new InvalidInputError('--prover must not be empty; omit it to use svc_sharp.', { input: '--prover' })
    const reuse = reuseModeFrom(context)
    const timeoutMs = timeoutFrom(context)
    const concurrencyText = context.values.concurrency
    const concurrency = concurrencyText === undefined ? DEFAULT_CONCURRENCY : parseInteger(concurrencyText, 'concurrency', 1, MAX_CONCURRENCY)
    let general: GeneralFields | undefined
    if (hasGeneralFields(context)) {
      // Into a bucket, a query is proved and then verified with the bucket's aggregate.
      const inBucket = context.values['bucket-id'] !== undefined
      general = readGeneralFields(context, { result: inBucket ? 'PROOF_GENERATION' : 'PROOF_VERIFICATION_ON_L2' })
    }
    // The endpoint's own list, before anything is packed or uploaded: the service refuses another.
    const layout = checkLayout(context.values.layout, general ? 'general' : 'l2', '--layout')
    if (general?.bucketId !== undefined && context.values.wait) {
      throw new InvalidInputError(
        `--wait with --bucket-id would wait forever: a query in a bucket ends when the bucket is closed. Submit without --wait, then \`proving bucket close ${general.bucketId} --wait\`.`,
        { input: '--wait' },
      )
    }
    const paths = await expandPieArguments(context.positionals)
    if (paths.length > 1 && general?.bucketJobIndex !== undefined) {
      throw new InvalidInputError('--bucket-job-index names one position: with several PIEs, omit it (each gets the next free index).', {
        input: '--bucket-job-index',
      })
    }
    if (paths.length > 1 && general?.dedupId !== undefined) {
      throw new InvalidInputError('--dedup-id identifies one query: with several PIEs, omit it (each PIE gets its own, derived from its digest).', {
        input: '--dedup-id',
      })
    }
    const mockFactHash = context.values['mock-fact-hash'] === true
    return withLocalEmulator(context, async (service) => {
      const client = provingClientFrom(context, { needsKey: true, ...service })
      const allowMockedFact = mockFactHash || context.values['allow-mocked-fact'] === true
      const options: ProveOptions = { layout, prover, mockFactHash, allowMockedFact, general, timeoutMs, wait: context.values.wait === true, reuse }
      if (paths.length === 1) return proveOne(context, client, paths[0]!, options)
      return proveBatch(context, client, paths, { ...options, concurrency })
    })
  },
})

type ProveOptions = {
  layout: string
  prover: string
  mockFactHash: boolean
  /** The gate lets a mocked or unknown mock state pass (--allow-mocked-fact, or --mock-fact-hash asked for one). */
  allowMockedFact: boolean
  general: GeneralFields | undefined
  timeoutMs: number
  wait: boolean
  reuse: ReuseMode
}

/** One PIE, as `proving prove` always printed it. */
async function proveOne(context: CommandContext, client: ProvingClient, path: string, options: ProveOptions): Promise<number> {
  if (!options.general && (await isDirectory(path)) && context.io.env.PROVING_STREAM_UPLOAD !== '0') return proveDirectoryStreamed(context, client, path, options)
  const pie = await preparePieForUpload(context, path, { inspect: options.general !== undefined })
  try {
    const submitted = await submitPie(context, client, pie, options, uploadReporter(context, pie.packed ? 'the packed pie.zip' : path))
    const seen: SeenOutcome = {}
    try {
      return await followSubmission(context, client, submitted, { pie, wait: options.wait, timeoutMs: options.timeoutMs, expected: askedOf(options), allowMockedFact: options.allowMockedFact, seen })
    } finally {
      await closeSubmission(submitted, seen.status === 'DONE')
    }
  } finally {
    await pie.cleanup()
  }
}

/**
 * What `prove` asks for, so what its gate expects: the general submission's `--result` (its
 * default in or out of a bucket), else the L2 endpoint's kind. Never the record's word for it.
 */
function askedOf(options: ProveOptions): ExpectedResult {
  return expectResult(requestedResult(options))
}

type Submitted = {
  provingQueryId: string
  deduplicated?: boolean | undefined
  /** Submitted by an earlier (or another live) run: followed, nothing sent. */
  resumed?: boolean | undefined
  /** A DONE query that already proved this PIE, followed instead of submitting (`--reuse auto`). */
  reused?: { createdAt: string | null } | undefined
  settle?: (() => Promise<void>) | undefined
  keep?: (() => Promise<void>) | undefined
}

/** What a wait saw: filled by `followSubmission` once the query ended and the gate ran. */
type SeenOutcome = { status?: string | undefined }

/**
 * Ends a submission's hold on the journal: its entry is forgotten once the statement's outcome is
 * settled (the wait saw the query DONE and the gate ran), and kept otherwise (interrupted, timed
 * out, a dropped connection, no --wait), so the same command again follows that query instead of
 * paying for another. A FAILED query keeps its entry too: the same command again finds it FAILED
 * and says so before it submits anew (or retries it).
 */
async function closeSubmission(submitted: Submitted, settled: boolean): Promise<void> {
  await (settled ? submitted.settle : submitted.keep)?.()
}

/** The result kind the submission asks for: what the gate judges a query against. */
function requestedResult(options: ProveOptions): string {
  return options.general?.result ?? 'PROOF_VERIFICATION_ON_L2'
}

/**
 * `--reuse auto`: the newest DONE query of this key that proves this PIE as the submission
 * would (pipeline/reuse.ts), or undefined (then the PIE is submitted), each said on stderr.
 */
async function lookForReuse(context: CommandContext, client: ProvingClient, pie: PreparedPie, options: ProveOptions): Promise<Submitted | undefined> {
  if (options.reuse !== 'auto' || !pie.inspection) return undefined
  // --new asks for a new, paid query: nothing earlier stands in for it.
  if ((context.values as { new?: boolean }).new === true) return undefined
  const allowance = { mockFactHash: options.mockFactHash, allowMockedFact: options.allowMockedFact }
  const request = options.general
    ? generalReuseRequest({ ...options.general, result: requestedResult(options), layout: options.layout }, allowance)
    : l2ReuseRequest({ ...allowance, layout: options.layout, prover: options.prover })
  return reuseFor(context, client, pie, request)
}

/** The lookup and its line, shared by `prove` and `submit`. */
export async function reuseFor(
  context: CommandContext,
  client: ProvingClient,
  pie: PreparedPie,
  request: Parameters<typeof findReusableQuery>[2],
): Promise<Submitted | undefined> {
  if (!pie.inspection) return undefined
  const found = await findReusableQuery(client, pie.inspection, request, { signal: context.signal, logger: context.logger })
  if (!found.reused) {
    context.progress(`No earlier query reused: ${found.reason}.`)
    return undefined
  }
  context.progress(describeReuse(found))
  return { provingQueryId: found.record.id, reused: { createdAt: found.record.createdAt ?? null } }
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true
}

/**
 * A PIE directory to the L2 endpoint in one pass: packed, validated and uploaded at once (the
 * upload fed from the zip as it is written, its end held back until the PIE is known valid and
 * the journal written: pipeline/submit-streamed.ts). PROVING_STREAM_UPLOAD=0 packs first, then
 * uploads, as for a pie.zip.
 */
async function proveDirectoryStreamed(context: CommandContext, client: ProvingClient, path: string, options: ProveOptions): Promise<number> {
  const { streamPie } = await import('../../pipeline/prove.ts')
  const { submitPieStreamed } = await import('../../pipeline/submit-streamed.ts')
  const stream = streamPie(path, { inputName: '<pie>', signal: context.signal, onProgress: context.progress })
  try {
    const { pie, submitted } = await submitPieStreamed(stream, {
      client,
      layout: options.layout,
      prover: options.prover,
      mockFactHash: options.mockFactHash,
      signal: context.signal,
      logger: context.logger,
      journal: commandJournal(context, client, options),
      reuse: (prepared) => lookForReuse(context, client, prepared, options),
    })
    const seen: SeenOutcome = {}
    try {
      return await followSubmission(context, client, submitted, { pie, wait: options.wait, timeoutMs: options.timeoutMs, expected: askedOf(options), allowMockedFact: options.allowMockedFact, seen })
    } finally {
      await closeSubmission(submitted, seen.status === 'DONE')
    }
  } finally {
    await (await stream.prepared.catch(() => undefined))?.cleanup()
  }
}

/**
 * The local journal of this command's submissions (src/pipeline/journal.ts), or none for the
 * emulator started for this command: it forgets everything when the command ends.
 */
function commandJournal(context: CommandContext, client: ProvingClient, options: ProveOptions): StreamedSubmitOptions['journal'] {
  if (context.values.emulator === true) return undefined
  return {
    journal: new SubmissionJournal(defaultJournalDir(context.io.env)),
    forceNew: (context.values as { new?: boolean }).new === true,
    submitAnew: 'pass --new',
    parts: (pie) => journalParts(client, pie, options),
    timeoutMs: options.timeoutMs,
    factsChecked: options.wait,
  }
}

/** What the journal keys a submission by: the zip's digest, the service and the parameters. */
function journalParts(client: ProvingClient, pie: PreparedPie, options: ProveOptions): JournalParts {
  return {
    pieDigest: pie.sha256,
    service: new URL(client.http.baseUrl).origin,
    endpoint: options.general ? 'general' : 'l2-pie',
    params: { layout: options.layout, prover: options.prover, mockFactHash: options.mockFactHash, ...(options.general ?? {}) },
  }
}

/**
 * Submits through the local journal (src/pipeline/journal.ts): a re-run after a kill mid-upload
 * follows the query it created, or refuses to pay twice without --new. The emulator started
 * for this command is not journaled: it forgets everything when the command ends.
 */
async function submitPie(
  context: CommandContext,
  client: ProvingClient,
  pie: PreparedPie,
  options: ProveOptions,
  onUploadProgress?: (progress: UploadProgress) => void,
): Promise<Submitted> {
  const reused = await lookForReuse(context, client, pie, options)
  if (reused) return reused
  const submitNow = (): Promise<Submitted> => {
    if (!options.general) {
      return client.submitPie({
        onUploadProgress,
        pieZip: pie.zipPath,
        layout: options.layout,
        prover: options.prover,
        mockFactHash: options.mockFactHash,
        signal: context.signal,
      })
    }
    const declaredJobSize = options.general.declaredJobSize ?? pie.inspection?.jobSize ?? 'XS'
    return client.submitQuery({
      onUploadProgress,
      ...options.general,
      declaredJobSize,
      layout: options.layout,
      mockFactHash: options.mockFactHash,
      pieZip: pie.zipPath,
      signal: context.signal,
    })
  }
  const journaled = commandJournal(context, client, options)
  if (!journaled) return submitNow()
  return submitWithJournal({
    journal: journaled.journal,
    parts: journaled.parts(pie),
    client,
    forceNew: journaled.forceNew,
    submitAnew: journaled.submitAnew,
    inspection: pie.inspection,
    logger: context.logger,
    signal: context.signal,
    timeoutMs: options.timeoutMs,
    factsChecked: options.wait,
    submit: submitNow,
  })
}

/**
 * After a submission: the id (and how to follow it), or with `wait` the final record, the fact
 * check where a fact exists, and the exit code. Shared by `prove` and `submit`.
 */
export async function followSubmission(
  context: CommandContext,
  client: ProvingClient,
  submitted: Submitted,
  options: {
    pie: PreparedPie | undefined
    wait: boolean
    timeoutMs: number
    expected: ExpectedResult
    allowMockedFact: boolean
    /** Filled once the query ended and the gate ran: its status. */
    seen?: SeenOutcome | undefined
  },
): Promise<number> {
  const { provingQueryId } = submitted
  // A query this run did not submit is never announced as "Submitted": one reused because it
  // already proves this PIE, an earlier run's (the journal said whose), or the one the service
  // already has under this dedup id.
  const announced = submitted.reused
    ? `Reused query ${provingQueryId}${submitted.reused.createdAt ? `, created ${submitted.reused.createdAt}` : ''} (nothing was submitted)`
    : submitted.resumed
      ? `Following: query ${provingQueryId} (submitted by an earlier run; nothing was sent again)`
      : submitted.deduplicated
        ? `Following: query ${provingQueryId} (already submitted with this dedup id; nothing was sent again)`
        : `Submitted: query ${provingQueryId}`
  // `reused` in the JSON says whether the query was paid for by this run.
  const reusedField = { reused: submitted.reused ? 'query' : false }
  if (!options.wait) {
    const emulated = context.values.emulator === true
    if ((context.values as { quiet?: boolean }).quiet && !context.json) {
      context.io.stdout(`${provingQueryId}\n`)
      return EXIT.ok
    }
    // A query in a bucket ends when the bucket does: `query wait` would not end before it is closed.
    const bucketId = (context.values as { 'bucket-id'?: string })['bucket-id']?.trim()
    const follow = emulated
      ? 'The emulator stops with this command: add --wait to follow the query.'
      : bucketId
        ? `It ends when bucket ${bucketId} does: once every query is in, run proving bucket close ${bucketId} --wait`
        : `Follow it with: ${queryWaitCommand(provingQueryId, options.expected)}`
    context.print(`${announced}\n${follow}`, {
      provingQueryId,
      ...(submitted.deduplicated === undefined ? {} : { deduplicated: submitted.deduplicated }),
      ...(submitted.resumed ? { resumed: true } : {}),
      ...reusedField,
    })
    return EXIT.ok
  }
  context.progress(announced)
  // The local program hash (seconds for a long program) is computed while the query runs.
  if (options.pie) computeFactsAhead(options.pie, context.signal)
  const result = await waitReportingId(context, provingQueryId, () =>
    withHeartbeat(context, (onProgress) =>
      client.waitForQuery(provingQueryId, {
        timeoutMs: options.timeoutMs,
        signal: context.signal,
        onProgress,
        afterSubmission: true,
        expectedResult: singleKind(options.expected),
      }),
    ),
  )
  const done = result.provingQuery.status === 'DONE'
  // Whether a fact is due is what was asked for, never what the record says it is.
  const proves = expectsProof(options.expected)
  const kind = options.expected.label
  let factCheck
  if (done && options.pie && proves) {
    factCheck = await checkFactsAfterWait(context, result, options.pie)
  } else if (done) {
    context.progress(
      !proves
        ? `No fact to check: a ${kind} query generates a trace, not a proof.`
        : 'Facts not checked: there is no PIE to compute them from (a program or program hash was submitted).',
    )
  }
  const factNote = done && !proves ? { localFactCheck: { ok: null, reason: `${kind} has no fact` } } : {}
  // The gate, as the action applies it: a DONE proof without its facts, or with a mock state the
  // service does not give, is refused like facts that differ.
  const refusals = done
    ? evaluateGate(result.provingQuery, factCheck?.check, { allowMockedFact: options.allowMockedFact, expected: options.expected, notAllowed: NOT_ALLOWED }).filter(
        // Differing facts were reported line by line above.
        (refusal) => refusal.kind !== 'fact-mismatch',
      )
    : []
  reportGate(context, result, refusals, factCheck?.ok === false)
  const gate = done ? { gate: { ok: refusals.length === 0 && factCheck?.ok !== false, refusals } } : {}
  printWaited(context, result, factCheck ? { ...result, localFactCheck: factCheck.summary, ...gate, ...reusedField } : { ...result, ...factNote, ...gate, ...reusedField })
  if (options.seen) options.seen.status = result.provingQuery.status
  if (!done) return EXIT.remoteFailure
  return (factCheck && !factCheck.ok) || refusals.length ? EXIT.remoteFailure : EXIT.ok
}

// --- Batches ---------------------------------------------------------------------------------

/** What happened to one PIE of a batch: the JSON array's element and the table's row. */
export type BatchOutcome = {
  pie: string
  provingQueryId: string | null
  status: string | null
  step: string | null
  /** 'match', 'differ', 'not checked' (no --wait, not DONE), or 'none' (a trace has no fact). */
  facts: 'match' | 'differ' | 'not checked' | 'none'
  exitCode: number
  error: string | null
  deduplicated?: boolean | undefined
  /** 'query': a DONE query that already proved this PIE was followed, nothing was submitted. */
  reused: 'query' | false
  provingQuery?: QueryResult['provingQuery'] | undefined
  metadataUrls?: string[] | undefined
}

async function proveBatch(
  context: CommandContext,
  client: ProvingClient,
  paths: string[],
  options: ProveOptions & { concurrency: number },
): Promise<number> {
  const width = String(paths.length).length
  const limit = limiter(options.concurrency)
  const started = Date.now()
  context.progress(`Proving ${paths.length} PIEs, at most ${options.concurrency} uploads at a time${options.wait ? ', waiting for each' : ''}.`)
  // One submission per PIE digest: the same PIE named twice (another spelling of its path, a
  // copy a glob matched) is sent once, and every row naming it reports that query and its wait.
  const submissions = new Map<string, Promise<Submitted>>()
  const waits = new Map<string, Promise<QueryResult>>()
  // Each submission, and whether its outcome was seen (waited to DONE or FAILED and gated).
  const closings = new Map<Submitted, boolean>()
  const outcomes = await Promise.all(
    paths.map(async (path, index): Promise<BatchOutcome> => {
      const outcome: BatchOutcome = { pie: path, provingQueryId: null, status: null, step: null, facts: 'not checked', exitCode: EXIT.ok, error: null, reused: false }
      let pie: PreparedPie | undefined
      try {
        // The bound covers what costs bandwidth and CPU: packing, validating, uploading.
        const submission = await limit(async () => {
          context.signal.throwIfAborted()
          pie = await preparePieForUpload(context, path, { inspect: options.wait || options.general !== undefined, quiet: true })
          const earlier = submissions.get(pie.sha256)
          if (earlier) return { submitted: earlier, first: false }
          const submitted = submitPie(context, client, pie, options)
          submissions.set(pie.sha256, submitted)
          // The slot is held until the upload ends (a failure is the row's, read below).
          await submitted.catch(() => {})
          return { submitted, first: true }
        })
        const submitted = await submission.submitted
        outcome.provingQueryId = submitted.provingQueryId
        if (!closings.has(submitted)) closings.set(submitted, false)
        if (!submission.first) context.progress(`${path}: the same PIE as another in this batch (SHA-256 ${pie!.sha256.slice(0, 12)}…): query ${submitted.provingQueryId}, sent once.`)
        if (submitted.deduplicated !== undefined) outcome.deduplicated = submitted.deduplicated
        if (submitted.reused) outcome.reused = 'query'
        if (options.wait) {
          let waiting = waits.get(submitted.provingQueryId)
          if (!waiting) {
            waiting = client.waitForQuery(submitted.provingQueryId, { timeoutMs: options.timeoutMs, signal: context.signal, afterSubmission: true })
            waits.set(submitted.provingQueryId, waiting)
          }
          const result = await waiting
          const record = result.provingQuery
          Object.assign(outcome, { status: record.status, step: record.step, provingQuery: record, metadataUrls: result.metadataUrls })
          const asked = askedOf(options)
          if (record.status !== 'DONE') {
            outcome.exitCode = EXIT.remoteFailure
            outcome.error = record.errorReason ?? 'FAILED without a reason'
          } else {
            let check
            if (!expectsProof(asked)) {
              outcome.facts = 'none'
            } else {
              const { checkFacts } = await import('../../pipeline/prove.ts')
              check = await checkFacts(record, pie!)
              outcome.facts = check.ok ? 'match' : 'differ'
            }
            const refusals = evaluateGate(record, check, { allowMockedFact: options.allowMockedFact, expected: asked, notAllowed: NOT_ALLOWED })
            if (refusals.length) {
              outcome.exitCode = EXIT.remoteFailure
              outcome.error = refusals
                .map((refusal) => (refusal.kind === 'fact-mismatch' ? check!.mismatches.map((mismatch) => `${mismatch.field} differs`).join(', ') : refusal.message))
                .join(' ')
            }
          }
          closings.set(submitted, record.status === 'DONE')
        } else {
          outcome.status = 'SUBMITTED'
        }
      } catch (error) {
        outcome.exitCode = exitCodeFor(error)
        outcome.status ??= error instanceof AbortedError || context.signal.aborted ? 'INTERRUPTED' : 'ERROR'
        outcome.error = error instanceof ProvingKitError ? error.shortMessage : (error as Error).message
      } finally {
        await pie?.cleanup()
      }
      const label = `[${String(index + 1).padStart(width)}/${paths.length}]`
      const what = outcome.provingQueryId ? `query ${outcome.provingQueryId}${outcome.reused ? ' (reused)' : ''} ` : ''
      const facts = outcome.facts === 'match' ? ', facts match' : outcome.facts === 'none' ? ', no fact (trace)' : ''
      context.progress(`${label} ${path}: ${what}${outcome.status}${facts}${outcome.error ? `: ${outcome.error}` : ''}`)
      return outcome
    }),
  )
  const code = worstExitCode(outcomes.map((outcome) => outcome.exitCode))
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  context.print(batchTable(outcomes, seconds), outcomes)
  // Every row that shared a query has reported it: only now may its journal entry go, and only
  // where the outcome was seen; an interrupted or unwaited one stays for the same command again.
  // All at once: the journal lists its folder once for the entries settling together, not once each.
  await Promise.all([...closings].map(([submitted, settled]) => closeSubmission(submitted, settled)))
  return code
}

/** The batch's table: one row per PIE, then the counts. */
export function batchTable(outcomes: BatchOutcome[], seconds: string): string {
  const rows = outcomes.map((outcome, index) => [
    String(index + 1),
    outcome.pie,
    outcome.provingQueryId ?? '-',
    outcome.status ?? '-',
    outcome.facts,
    outcome.error ?? '',
  ])
  const header = ['#', 'PIE', 'query', 'status', 'facts', 'error']
  // A loop, not a spread into Math.max: one argument per row overflows the stack at ~150,000 rows.
  const widths = header.map((title, column) => rows.reduce((widest, row) => Math.max(widest, row[column]!.length), title.length))
  const line = (cells: string[]) => serviceLine(cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ').trimEnd())
  const ok = outcomes.filter((outcome) => outcome.exitCode === EXIT.ok).length
  return [line(header), ...rows.map(line), `${ok} of ${outcomes.length} succeeded in ${seconds} s.`].join('\n')
}

// --- verify-proof ------------------------------------------------------------------------------

export const verifyProof = defineCommand({
  path: ['verify-proof'],
  args: '<proof.json>',
  summary: 'Submit an existing proof file for verification on L2.',
  details: [
    'With --wait, the result is gated as `prove --wait` gates it, less the local fact check (no PIE):',
    'exit 0 only when the query is DONE, a PROOF_VERIFICATION_ON_L2 proof whatever its record says,',
    'with its facts, well formed, and a fact that is not mocked',
    'and whose mock state the service gives; a mocked fact or an unknown mock state passes with',
    '--allow-mocked-fact (--mock-fact-hash implies it). FAILED or refused: exit 1, each refusal',
    'on stderr, naming the field.',
  ],
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    wait: { type: 'boolean', description: 'Wait for the query to finish, then gate it (exit 0 DONE and passed, 1 FAILED or refused).' },
    ...GATE_OPTIONS,
    'stone-version': { type: 'string', valueName: '<stone5|stone6>', description: 'Prover version of the proof (shared-prover proofs need stone6).' },
    'memory-verification': {
      type: 'string',
      valueName: '<strict|relaxed|cairo1>',
      description: 'Memory verification: strict (preferred for Cairo 0), relaxed (some bootloaders), cairo1.',
    },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash (testing).' },
  },
  async run(context) {
    for (const flag of ['stone-version', 'memory-verification'] as const) {
      if (!context.values[flag]) {
        throw new InvalidInputError(`--${flag} is required: see \`proving verify-proof --help\` for the allowed values.`, {
          input: `--${flag}`,
        })
      }
    }
    const stoneVersion = checkFlagEnum(context.values['stone-version'], 'stone-version', STONE_VERSIONS)
    const memoryVerification = checkFlagEnum(context.values['memory-verification'], 'memory-verification', MEMORY_VERIFICATIONS)
    const timeoutMs = timeoutFrom(context)
    // The L2 verification endpoint's kind: what the gate expects, whatever the record says.
    const expected = expectResult('PROOF_VERIFICATION_ON_L2')
    return withLocalEmulator(context, async (service) => {
      const client = provingClientFrom(context, { needsKey: true, ...service })
      const { provingQueryId } = await client.submitProofVerification({
        proof: context.positionals[0]!,
        stoneVersion,
        memoryVerification,
        mockFactHash: context.values['mock-fact-hash'] === true,
        signal: context.signal,
      })
      if (!context.values.wait) {
        if (context.values.quiet && !context.json) context.io.stdout(`${provingQueryId}\n`)
        else context.print(`Submitted: query ${provingQueryId}`, { provingQueryId })
        return EXIT.ok
      }
      context.progress(`Submitted: query ${provingQueryId}`)
      const result = await waitReportingId(context, provingQueryId, () =>
        withHeartbeat(context, (onProgress) =>
          client.waitForQuery(provingQueryId, { timeoutMs, signal: context.signal, onProgress, afterSubmission: true, expectedResult: singleKind(expected) }),
        ),
      )
      const allowMockedFact = context.values['mock-fact-hash'] === true || context.values['allow-mocked-fact'] === true
      return gateWaitedQuery(context, result, { allowMockedFact, expected })
    })
  },
})

/**
 * The `query wait` that resumes this gate: it expects what was asked for (`--expect-result`), so
 * a query resumed after a timeout or a cancellation is not held to less than "a proof of any
 * kind" (a PROOF_GENERATION record where a verification on L2 was asked, a trace refused).
 */
export function queryWaitCommand(id: string, expected: ExpectedResult): string {
  const kind = singleKind(expected)
  return `proving query wait ${id}${kind ? ` --expect-result ${kind}` : ''}`
}

/**
 * A waited query with no PIE to compare (`verify-proof --wait`, `query wait`, `query retry
 * --wait`), gated as `prove --wait` gates it: the record, each refusal on stderr, and the exit
 * code: 0 only for a DONE record the gate passes (a missing, null or malformed fact, a mocked
 * fact or an unknown mock state without `allowMockedFact`, are refusals), else 1.
 */
export async function gateWaitedQuery(context: CommandContext, result: QueryResult, options: { allowMockedFact: boolean; expected: ExpectedResult }): Promise<number> {
  const done = result.provingQuery.status === 'DONE'
  const refusals = done ? evaluateGate(result.provingQuery, undefined, { allowMockedFact: options.allowMockedFact, expected: options.expected, notAllowed: NOT_ALLOWED }) : []
  reportGate(context, result, refusals, false)
  printWaited(context, result, done ? { ...result, gate: { ok: refusals.length === 0, refusals } } : result)
  return done && refusals.length === 0 ? EXIT.ok : EXIT.remoteFailure
}

/** A waited query's record on stdout; with -q only its id (the exit code says how it ended). */
function printWaited(context: CommandContext, result: QueryResult, json: unknown): void {
  if ((context.values as { quiet?: boolean }).quiet && !context.json) context.io.stdout(`${result.provingQuery.id}\n`)
  else context.print(describeQuery(result), json)
}

/**
 * Why a waited query does not pass: each refusal a line on stderr, or with --json one
 * `{ "error": … }` object on stderr (a FAILED query, a refused gate, facts that differ), as for
 * any failure. Differing facts were reported line by line already.
 */
function reportGate(context: CommandContext, result: QueryResult, refusals: readonly GateRefusal[], factsDiffer: boolean): void {
  const query = result.provingQuery
  if (!context.json) {
    for (const refusal of refusals) context.io.stderr(`proving: gate refused: ${redact(refusal.message, context.redactor)}\n`)
    return
  }
  if (query.status !== 'DONE') {
    context.fail(new RemoteFailureError(`Query ${query.id} ${query.status}${query.errorReason ? `: ${serviceLine(query.errorReason)}` : ' without a reason'}.`, { record: query }))
  } else if (refusals.length || factsDiffer) {
    const notes = [...(factsDiffer ? ['The facts the service reports differ from the ones computed from the PIE.'] : []), ...refusals.map((refusal) => refusal.message)]
    context.fail(new GateError(`The gate refused query ${query.id}: ${notes.length} reason${notes.length === 1 ? '' : 's'}.`, { metaMessages: notes }))
  }
}

/** On interruption or timeout, the query id is what a person needs to pick up the wait again. */
async function waitReportingId<T>(context: CommandContext, queryId: string, wait: () => Promise<T>): Promise<T> {
  try {
    return await wait()
  } catch (error) {
    if (context.json && error instanceof AbortedError) {
      context.io.stdout(`${JSON.stringify({ provingQueryId: queryId, interrupted: true })}\n`)
    }
    throw error
  }
}

/** A flag's value, one of `allowed`; an absent flag is refused like an empty one. */
export function checkFlagEnum<T extends string>(value: string | undefined, flag: string, allowed: readonly T[]): T {
  try {
    return checkEnum(value ?? '', `--${flag}`, allowed)
  } catch (error) {
    throw new InvalidInputError((error as Error).message.split('\n')[0]!, { input: `--${flag}` })
  }
}
