/**
 * The root action given several PIEs (`pie` with one path or glob per line), as the statement
 * pipeline proves them: at most `concurrency` are packed, validated and uploaded at once, each
 * through the same decisions as a single one (the wrong program refused before paying, reuse,
 * the journal, a re-run's candidates); with `wait` each query is followed, its facts checked
 * and gated, on chain too with `verify-onchain`. Outputs: `results` (a JSON array, one object
 * per PIE), `status` (DONE when all passed, else FAILED) and `error-reason`; the summary has a
 * row per PIE. The step fails when any PIE fails.
 */
import type { ProvingClient } from '../../clients/proving.ts'
import { ProvingKitError } from '../../core/errors.ts'
import { forSummaryCell } from '../../core/service-text.ts'
import { type OutputFacts, outputFacts } from '../../pipeline/gate.ts'
import {
  decisionLine,
  inBucket,
  labelOf,
  proveStatements,
  type StatementEvent,
  type StatementHooks,
  type StatementOutcome,
  type StatementRequest,
  type Submitted,
} from '../../pipeline/statement/index.ts'
import type { ActionIO, InputValues } from '../types.ts'
import type { MAIN_INPUTS } from './inputs.ts'
import { loggerFor } from './io.ts'
import type { QueryStep } from './query-step.ts'

export type BatchRow = OutputFacts & {
  pie: string
  queryId: string | null
  status: string
  facts: 'match' | 'differ' | 'none' | 'not checked'
  passed: boolean
  error: string | null
  /** 'query': a DONE query that already proved this PIE was followed; 'chain': its fact was registered already. Nothing was submitted. */
  reused: 'query' | 'chain' | false
  /** With `verify-onchain`: whether its fact is registered on every chain asked for; null when not checked. */
  onchainVerified: boolean | null
}

/** Proves the request's statements (src/pipeline/statement) and shows them: a line each, `results`, the summary's table. */
export async function proveBatch(
  io: ActionIO,
  step: QueryStep,
  client: ProvingClient,
  inputs: InputValues<typeof MAIN_INPUTS>,
  request: StatementRequest,
  signal: AbortSignal,
  /** Sees every event of the pipeline too (the journal's carry across attempts). */
  observe?: (event: StatementEvent) => void,
): Promise<void> {
  const count = request.subjects.length
  const wait = request.policy.wait && !inBucket(request.endpoint)
  io.info(`Proving ${count} PIEs, at most ${inputs.concurrency} uploads at a time${wait ? ', waiting for each' : ''}.`)
  const label = (index: number) => labelOf(request.subjects[index]!)
  const onEvent = (event: StatementEvent) => {
    observe?.(event)
    // What each PIE's steps decided, named by its PIE: the ids a person needs when a run is stopped.
    if (event.type === 'prepared')
      io.debug(`${label(event.index)}: Validated ${label(event.index)} (sha256 ${event.pie.sha256}).`)
    const decided = event.type === 'decided' ? decisionLine(event.decision) : undefined
    if (decided) io.debug(`${label(event.index)}: ${decided}`)
    if (event.type === 'submitted' && event.submitted.queryId)
      io.info(`${label(event.index)}: ${announcement(event.submitted)}`)
    if (event.type !== 'ended') return
    const row = rowOf(event.outcome)
    const reused = row.reused ? ` (reused${row.reused === 'chain' ? ' from chain' : ''})` : ''
    const query = row.queryId ? `query ${row.queryId}${reused} ` : ''
    io.info(
      `[${event.index + 1}/${count}] ${row.pie}: ${query}${row.status}${row.facts === 'match' ? ', facts match' : ''}${row.error ? `: ${row.error}` : ''}`,
    )
  }
  const hooks: StatementHooks = {
    onEvent,
    onOnchainProgress: (index, line) => io.info(`${label(index)}: ${line}`),
    aroundWait: (index, queryId, wait) => {
      io.debug(`${label(index)}: Waiting for query ${queryId}.`)
      return wait(() => {})
    },
  }
  const outcomes = await proveStatements(request, { client, logger: loggerFor(io), signal, hooks })
  const rows = outcomes.map(rowOf)
  const failed = rows.filter((row) => !row.passed)
  const onchainRequested = request.policy.onchain !== undefined
  step.outputs.set({
    results: JSON.stringify(rows),
    status: failed.length ? 'FAILED' : wait ? 'DONE' : 'SUBMITTED',
    'facts-verified': String(
      wait && inputs['verify-facts'] && rows.every((row) => row.facts === 'match' || row.facts === 'none'),
    ),
    // Not asked for: left empty, as every output that does not apply is.
    'onchain-verified': onchainRequested ? String(rows.every((row) => row.onchainVerified === true)) : undefined,
  })
  step.extraRows.push(
    ['PIEs', String(rows.length)],
    ['Passed', `${rows.length - failed.length} of ${rows.length}`],
    ['Concurrency', String(inputs.concurrency)],
  )
  step.sections.push(batchMarkdown(rows))
  if (failed.length === 0) {
    await step.report({
      outcome: wait ? 'passed' : 'submitted',
      headline: wait ? `All ${rows.length} PIEs were proved and passed the gate.` : `Submitted ${rows.length} PIEs.`,
    })
    return
  }
  await step.report({
    outcome: 'failed',
    headline: `${failed.length} of ${rows.length} PIEs failed.`,
    problems: failed.map((row) => `${row.pie}: ${row.error ?? row.status}`),
    failure: `${failed.length} of ${rows.length} PIEs failed; the first: ${failed[0]!.pie}: ${failed[0]!.error ?? failed[0]!.status}`,
  })
}

/** A PIE's query, the moment it is known: submitted, followed or reused, never announced as another's. */
function announcement(submitted: Submitted): string {
  const id = submitted.queryId
  if (submitted.how === 'reused') return `Reused query ${id}, which already proves this PIE; nothing was submitted.`
  if (submitted.how === 'submitted') return `Submitted: query ${id}`
  return `Following query ${id}, ${submitted.deduplicated ? 'submitted by an earlier attempt of this job' : 'submitted by an earlier run of this PIE'}; nothing was sent again.`
}

/** One statement as its row of `results` and of the summary's table. */
function rowOf(outcome: StatementOutcome): BatchRow {
  const row: BatchRow = {
    pie: labelOf(outcome.subject),
    queryId: outcome.submitted?.queryId || null,
    status: 'ERROR',
    facts: 'not checked',
    programHash: null,
    sharpFactHash: null,
    integrityFactHash: null,
    passed: outcome.passed,
    error: null,
    reused: outcome.decision?.kind === 'reuse-chain' ? 'chain' : outcome.submitted?.how === 'reused' ? 'query' : false,
    onchainVerified: null,
  }
  if (outcome.error !== undefined) {
    row.status = outcome.ending === 'interrupted' ? 'CANCELLED' : 'ERROR'
    row.error = outcome.error instanceof ProvingKitError ? outcome.error.shortMessage : (outcome.error as Error).message
    return row
  }
  if (outcome.ending === 'not-submitted') {
    row.status = 'NOT SUBMITTED'
    row.error = outcome.refusals.map((refusal) => refusal.message).join(' ')
    return row
  }
  if (outcome.decision?.kind === 'reuse-chain') {
    row.status = 'DONE'
    row.onchainVerified = true
    return row
  }
  const judgement = outcome.judgement
  if (!judgement) {
    row.status = 'SUBMITTED'
    return row
  }
  const record = judgement.result.provingQuery
  row.status = record.status
  Object.assign(row, outputFacts(record))
  row.facts = judgement.facts
  row.error = judgement.refusals.map((refusal) => refusal.message).join(' ') || null
  row.onchainVerified = judgement.onchain.checked ? judgement.onchain.registered : null
  return row
}

function batchMarkdown(rows: BatchRow[]): string {
  return [
    '| # | PIE | query | status | facts | gate |',
    '|---|---|---|---|---|---|',
    ...rows.map((row, index) => {
      const cells = [
        forSummaryCell(row.pie, 'code'),
        forSummaryCell(row.queryId ?? '', 'code'),
        forSummaryCell(row.status),
        row.facts,
      ]
      return `| ${index + 1} | ${cells.join(' | ')} | ${row.passed ? '✅' : `❌ ${forSummaryCell(row.error ?? '')}`} |`
    }),
  ].join('\n')
}
