/**
 * How the CLI shows what the statement pipeline did: one statement as lines on stderr and the
 * record on stdout, several as one line each and a table (or with --json an array), and the
 * exit code. Nothing here decides: every verdict comes from src/pipeline/statement.
 */
import type { ProvingClient, QueryResult } from '../../clients/proving.ts'
import { AbortedError, GateError, ProvingKitError, RemoteFailureError } from '../../core/errors.ts'
import { redact } from '../../core/redact.ts'
import { serviceLine } from '../../core/service-text.ts'
import { type ExpectedResult, expectsProof, type GateRefusal, showValue, singleKind } from '../../pipeline/gate.ts'
import {
  type Decision,
  decisionLine,
  expectedOf,
  type Judgement,
  labelOf,
  proveStatements,
  type StatementEvent,
  type StatementOutcome,
  type StatementRequest,
  type Submitted,
  wrongProgramDetail,
} from '../../pipeline/statement/index.ts'
import type { CommandContext } from '../context.ts'
import { EXIT, exitCodeFor, worstExitCode } from '../exit-codes.ts'
import { describeQuery, uploadReporter, withHeartbeat } from '../services.ts'

/** Proves the request's statements and shows them: one as `prove` always printed it, several as a batch. */
export async function runStatements(
  context: CommandContext,
  client: ProvingClient,
  request: StatementRequest,
): Promise<number> {
  if (request.subjects.length === 1) return proveOne(context, client, request)
  return proveBatch(context, client, request)
}

// --- One statement -------------------------------------------------------------------------------

async function proveOne(context: CommandContext, client: ProvingClient, request: StatementRequest): Promise<number> {
  const subject = request.subjects[0]!
  const wait = request.policy.wait
  let report = subject.kind === 'program' ? uploadReporter(context, labelOf(subject)) : undefined
  const onEvent = (event: StatementEvent) => {
    if (event.type === 'prepared')
      report = uploadReporter(context, event.pie.packed ? 'the packed pie.zip' : labelOf(subject))
    if (event.type === 'decided') reportDecision(context, event.decision)
    if (event.type === 'submitted' && wait) context.progress(announcement(event.submitted))
  }
  const [outcome] = await proveStatements(request, {
    client,
    logger: context.logger,
    signal: context.signal,
    hooks: {
      onEvent,
      onPrepareProgress: (_, line) => context.progress(line),
      onUploadProgress: (_, progress) => report?.(progress),
      aroundWait: (_, __, run) => withHeartbeat(context, run),
    },
  })
  const ended = outcome!
  if (ended.error !== undefined) {
    // On interruption, the query id is what a person needs to pick up the wait again.
    if (ended.submitted && context.json && ended.error instanceof AbortedError) {
      context.io.stdout(`${JSON.stringify({ provingQueryId: ended.submitted.queryId, interrupted: true })}\n`)
    }
    throw ended.error
  }
  if (ended.ending === 'not-submitted') {
    const inspection = ended.pie?.inspection
    const expected = request.policy.gate.expectedProgramHash
    const detail = inspection && expected !== undefined ? [wrongProgramDetail(inspection, expected)] : undefined
    throw new GateError(ended.refusals[0]!.message, { metaMessages: detail })
  }
  const submitted = ended.submitted!
  const reusedField: { reused: 'query' | false } = { reused: submitted.how === 'reused' ? 'query' : false }
  if (!ended.judgement) return printSubmitted(context, request, submitted, reusedField)
  return renderJudgement(context, ended.judgement, {
    expected: expectedOf(request.endpoint),
    announceFacts: true,
    pie: ended.pie !== undefined,
    json: reusedField,
  })
}

/** A query this run did not submit is never announced as "Submitted". */
function announcement(submitted: Submitted): string {
  const id = submitted.queryId
  if (submitted.how === 'reused')
    return `Reused query ${id}${submitted.createdAt ? `, created ${submitted.createdAt}` : ''} (nothing was submitted)`
  if (submitted.deduplicated)
    return `Following: query ${id} (already submitted with this dedup id; nothing was sent again)`
  if (submitted.how !== 'submitted')
    return `Following: query ${id} (submitted by an earlier run; nothing was sent again)`
  return `Submitted: query ${id}`
}

function reportDecision(context: CommandContext, decision: Decision): void {
  const line = decisionLine(decision)
  if (line) context.progress(line)
}

/** Without --wait: the id and how to follow it (with -q the id alone). */
function printSubmitted(
  context: CommandContext,
  request: StatementRequest,
  submitted: Submitted,
  reusedField: { reused: string | false },
): number {
  const id = submitted.queryId
  if ((context.values as { quiet?: boolean }).quiet && !context.json) {
    context.io.stdout(`${id}\n`)
    return EXIT.ok
  }
  const endpoint = request.endpoint
  const bucketId = endpoint.kind === 'general' ? endpoint.fields.bucketId : undefined
  const follow =
    context.values.emulator === true
      ? 'The emulator stops with this command: add --wait to follow the query.'
      : bucketId
        ? `It ends when bucket ${bucketId} does: once every query is in, run proving bucket close ${bucketId} --wait`
        : `Follow it with: ${queryWaitCommand(id, expectedOf(request.endpoint))}`
  context.print(`${announcement(submitted)}\n${follow}`, {
    provingQueryId: id,
    ...(submitted.deduplicated === undefined ? {} : { deduplicated: submitted.deduplicated }),
    ...(submitted.how === 'followed' || submitted.how === 'retried'
      ? submitted.deduplicated
        ? {}
        : { resumed: true }
      : {}),
    ...reusedField,
  })
  return EXIT.ok
}

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
 * A judged query on stdout (with -q its id alone), each refusal on stderr (with --json one
 * `{ "error": … }` object), the facts line by line where they were compared, and the exit code:
 * 0 only for a DONE record the gate passed, else 1.
 */
export function renderJudgement(
  context: CommandContext,
  judgement: Judgement,
  options: {
    expected: ExpectedResult
    announceFacts: boolean
    pie: boolean
    json?: Record<string, unknown> | undefined
  },
): number {
  const result = judgement.result
  const done = result.provingQuery.status === 'DONE'
  const factCheck = judgement.factCheck
  const proves = expectsProof(options.expected)
  if (factCheck) reportFacts(context, factCheck)
  else if (done && options.announceFacts) {
    context.progress(
      !proves
        ? `No fact to check: a ${options.expected.label} query generates a trace, not a proof.`
        : options.pie
          ? 'Facts not checked: the fact check is off.'
          : 'Facts not checked: there is no PIE to compute them from (a program or program hash was submitted).',
    )
  }
  const factNote =
    done && !proves && options.announceFacts
      ? { localFactCheck: { ok: null, reason: `${options.expected.label} has no fact` } }
      : {}
  // Differing facts were reported line by line above.
  const refusals = done ? judgement.refusals.filter((refusal) => refusal.kind !== 'fact-mismatch') : []
  reportGate(context, result, refusals, factCheck?.ok === false)
  const gate = done ? { gate: { ok: refusals.length === 0 && factCheck?.ok !== false, refusals } } : {}
  const json = {
    ...result,
    ...(factCheck ? { localFactCheck: factCheck } : factNote),
    ...gate,
    ...(options.json ?? {}),
  }
  if ((context.values as { quiet?: boolean }).quiet && !context.json) context.io.stdout(`${result.provingQuery.id}\n`)
  else context.print(describeQuery(result), json)
  if (!done) return EXIT.remoteFailure
  return (factCheck && !factCheck.ok) || refusals.length ? EXIT.remoteFailure : EXIT.ok
}

function reportFacts(context: CommandContext, check: NonNullable<Judgement['factCheck']>): void {
  if (check.ok) {
    const program = check.checked.includes('programHash') ? `program hash matches (${check.programHashVariant}), ` : ''
    context.progress(
      `Facts checked locally: ${program}${check.checked.filter((field) => field !== 'programHash').join(', ')} equal.`,
    )
    return
  }
  if (check.mismatches.length === 0)
    context.io.stderr(
      'proving: the service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent).\n',
    )
  for (const mismatch of check.mismatches) {
    context.io.stderr(
      `proving: ${mismatch.field} differs: the service says ${showValue(mismatch.actual)}, the PIE gives ${mismatch.expected}.\n`,
    )
  }
}

/**
 * Why a waited query does not pass: each refusal a line on stderr, or with --json one
 * `{ "error": … }` object on stderr (a FAILED query, a refused gate, facts that differ).
 */
function reportGate(
  context: CommandContext,
  result: QueryResult,
  refusals: readonly GateRefusal[],
  factsDiffer: boolean,
): void {
  const query = result.provingQuery
  if (!context.json) {
    for (const refusal of refusals)
      context.io.stderr(`proving: gate refused: ${redact(refusal.message, context.redactor)}\n`)
    return
  }
  if (query.status !== 'DONE') {
    context.fail(
      new RemoteFailureError(
        `Query ${query.id} ${query.status}${query.errorReason ? `: ${serviceLine(query.errorReason)}` : ' without a reason'}.`,
        { record: query },
      ),
    )
  } else if (refusals.length || factsDiffer) {
    const notes = [
      ...(factsDiffer ? ['The facts the service reports differ from the ones computed from the PIE.'] : []),
      ...refusals.map((refusal) => refusal.message),
    ]
    context.fail(
      new GateError(`The gate refused query ${query.id}: ${notes.length} reason${notes.length === 1 ? '' : 's'}.`, {
        metaMessages: notes,
      }),
    )
  }
}

// --- Several statements ----------------------------------------------------------------------------

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

async function proveBatch(context: CommandContext, client: ProvingClient, request: StatementRequest): Promise<number> {
  const count = request.subjects.length
  const width = String(count).length
  const started = Date.now()
  context.progress(
    `Proving ${count} PIEs, at most ${request.policy.concurrency} uploads at a time${request.policy.wait ? ', waiting for each' : ''}.`,
  )
  const onEvent = (event: StatementEvent) => {
    if (event.type === 'submitted' && event.sameAs !== undefined) {
      const label = labelOf(request.subjects[event.index]!)
      context.progress(
        `${label}: the same PIE as another in this batch (${labelOf(request.subjects[event.sameAs]!)}): query ${event.submitted.queryId}, sent once.`,
      )
    }
    if (event.type === 'ended') {
      const row = batchRow(event.outcome)
      const what = row.provingQueryId ? `query ${row.provingQueryId}${row.reused ? ' (reused)' : ''} ` : ''
      const facts = row.facts === 'match' ? ', facts match' : row.facts === 'none' ? ', no fact (trace)' : ''
      context.progress(
        `[${String(event.index + 1).padStart(width)}/${count}] ${row.pie}: ${what}${row.status}${facts}${row.error ? `: ${row.error}` : ''}`,
      )
    }
  }
  const outcomes = await proveStatements(request, {
    client,
    logger: context.logger,
    signal: context.signal,
    hooks: { onEvent },
  })
  const rows = outcomes.map(batchRow)
  const seconds = ((Date.now() - started) / 1000).toFixed(1)
  context.print(batchTable(rows, seconds), rows)
  return worstExitCode(rows.map((row) => row.exitCode))
}

/** One statement of a batch as its row. */
export function batchRow(outcome: StatementOutcome): BatchOutcome {
  const row: BatchOutcome = {
    pie: labelOf(outcome.subject),
    provingQueryId: outcome.submitted?.queryId || null,
    status: null,
    step: null,
    facts: 'not checked',
    exitCode: EXIT.ok,
    error: null,
    reused: outcome.submitted?.how === 'reused' ? 'query' : false,
  }
  if (outcome.submitted?.deduplicated !== undefined) row.deduplicated = outcome.submitted.deduplicated
  if (outcome.error !== undefined) {
    row.exitCode = exitCodeFor(outcome.error)
    row.status = outcome.ending === 'interrupted' ? 'INTERRUPTED' : 'ERROR'
    row.error = outcome.error instanceof ProvingKitError ? outcome.error.shortMessage : (outcome.error as Error).message
    return row
  }
  if (outcome.ending === 'not-submitted') {
    Object.assign(row, {
      status: 'NOT SUBMITTED',
      exitCode: EXIT.remoteFailure,
      error: outcome.refusals.map((refusal) => refusal.message).join(' '),
    })
    return row
  }
  const judgement = outcome.judgement
  if (!judgement) {
    row.status = 'SUBMITTED'
    return row
  }
  const record = judgement.result.provingQuery
  Object.assign(row, {
    status: record.status,
    step: record.step,
    provingQuery: record,
    metadataUrls: judgement.result.metadataUrls,
    facts: judgement.facts,
  })
  if (record.status !== 'DONE') {
    row.exitCode = EXIT.remoteFailure
    row.error = record.errorReason ?? 'FAILED without a reason'
  } else if (judgement.refusals.length) {
    row.exitCode = EXIT.remoteFailure
    row.error = judgement.refusals
      .map((refusal) =>
        refusal.kind === 'fact-mismatch'
          ? judgement.factCheck!.mismatches.map((mismatch) => `${mismatch.field} differs`).join(', ')
          : refusal.message,
      )
      .join(' ')
  }
  return row
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
  const widths = header.map((title, column) =>
    rows.reduce((widest, row) => Math.max(widest, row[column]!.length), title.length),
  )
  const line = (cells: string[]) =>
    serviceLine(
      cells
        .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
  const ok = outcomes.filter((outcome) => outcome.exitCode === EXIT.ok).length
  return [line(header), ...rows.map(line), `${ok} of ${outcomes.length} succeeded in ${seconds} s.`].join('\n')
}
