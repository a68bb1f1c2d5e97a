/**
 * The root action given several PIEs (`pie` with one path or glob per line): at most
 * `concurrency` are packed, validated and uploaded at once; with `wait` each query is followed,
 * its facts checked and gated like a single one. Outputs: `results` (a JSON array, one object
 * per PIE), `status` (DONE when all passed, else FAILED) and `error-reason`; the summary has a
 * row per PIE. The step fails when any PIE fails.
 */
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import type { ProvingClient } from '../../clients/proving.ts'
import { ProvingKitError } from '../../core/errors.ts'
import { forSummaryCell } from '../../core/service-text.ts'
import { evaluateGate, expectResult, expectsProof, type OutputFacts, outputFacts } from '../../pipeline/gate.ts'
import type { PreparedPie } from '../../pipeline/prove.ts'
import { defaultResult, deriveActionDedupId, generalFields, usesGeneralSubmission } from './general.ts'
import { loggerFor } from './io.ts'
import type { MAIN_INPUTS } from './inputs.ts'
import type { QueryStep } from './query-step.ts'
import type { ActionIO, InputValues } from '../types.ts'

export type BatchRow = OutputFacts & {
  pie: string
  queryId: string | null
  status: string
  facts: 'match' | 'differ' | 'none' | 'not checked'
  passed: boolean
  error: string | null
  /** 'query': a DONE query that already proved this PIE was followed (`reuse: auto`), nothing was submitted. */
  reused: 'query' | false
}

export async function proveBatch(
  io: ActionIO,
  step: QueryStep,
  client: ProvingClient,
  inputs: InputValues<typeof MAIN_INPUTS>,
  paths: string[],
  signal: AbortSignal,
): Promise<void> {
  const { preparePie, checkFacts } = await import('../../pipeline/prove.ts')
  const { limiter } = await import('../../pipeline/limit.ts')
  const general = usesGeneralSubmission(inputs)
  const fields = generalFields(inputs)
  const limit = limiter(inputs.concurrency)
  const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
  const shown = (path: string) => relative(workspace, path) || path
  const reusedIds = new Set<string>()
  const submitOne = async (pie: PreparedPie, path: string): Promise<string> => {
    // `reuse: auto`: a DONE query that already proves this PIE (pipeline/reuse.ts), gated below as if new.
    if (inputs.reuse === 'auto' && pie.inspection) {
      const { describeReuse, findReusableQuery, generalReuseRequest, l2ReuseRequest } = await import('../../pipeline/reuse.ts')
      const allowance = { mockFactHash: inputs['mock-fact-hash'], allowMockedFact: inputs['allow-mocked-fact'], expectedProgramHash: inputs['expected-program-hash'] }
      const request = general
        ? generalReuseRequest({ ...fields, result: fields.result ?? defaultResult(inputs), layout: inputs.layout, dedupId: inputs['dedup-id'] }, allowance)
        : l2ReuseRequest({ ...allowance, layout: inputs.layout, prover: inputs.prover })
      const found = await findReusableQuery(client, pie.inspection, request, { signal, logger: loggerFor(io) })
      if (found.reused) {
        io.info(`${shown(path)}: ${describeReuse(found)}`)
        reusedIds.add(found.record.id)
        return found.record.id
      }
    }
    if (!general) {
      const answer = await client.submitPie({ pieZip: pie.zipPath, layout: inputs.layout, prover: inputs.prover, mockFactHash: inputs['mock-fact-hash'], signal })
      return answer.provingQueryId
    }
    const declaredJobSize = inputs['declared-job-size'] ?? pie.inspection?.jobSize ?? 'XS'
    const dedupId = deriveActionDedupId(io.env, `pie:${pie.sha256}`, { ...fields, declaredJobSize, layout: inputs.layout, mockFactHash: inputs['mock-fact-hash'] })
    const answer = await client.submitQuery({ ...fields, declaredJobSize, layout: inputs.layout, mockFactHash: inputs['mock-fact-hash'], dedupId, pieZip: pie.zipPath, signal })
    return answer.provingQueryId
  }
  io.info(`Proving ${paths.length} PIEs, at most ${inputs.concurrency} uploads at a time${inputs.wait && !inputs['bucket-id'] ? ', waiting for each' : ''}.`)
  const wait = inputs.wait && !inputs['bucket-id']
  // One submission per PIE digest: the same PIE matched twice (two patterns, a copy) is sent
  // once, and every row naming it reports that query and shares its wait.
  const submissions = new Map<string, Promise<string>>()
  const waits = new Map<string, ReturnType<ProvingClient['waitForQuery']>>()
  // What each query was asked for (the general submission's `result`, or the L2 endpoint's kind).
  const asked = expectResult(general ? (fields.result ?? 'PROOF_GENERATION') : 'PROOF_VERIFICATION_ON_L2')
  const rows = await Promise.all(
    paths.map(async (path, index): Promise<BatchRow> => {
      const row: BatchRow = {
        pie: shown(path),
        queryId: null,
        status: 'ERROR',
        facts: 'not checked',
        programHash: null,
        sharpFactHash: null,
        integrityFactHash: null,
        passed: false,
        error: null,
        reused: false,
      }
      let pie: PreparedPie | undefined
      try {
        const submission = await limit(async () => {
          signal.throwIfAborted()
          pie = await preparePie(path, {
            inputName: 'pie',
            signal,
            packDir: join(io.env.RUNNER_TEMP || tmpdir(), 'proving-kit', randomUUID()),
            inspect: inputs['verify-facts'] || general || inputs.reuse === 'auto',
          })
          const earlier = submissions.get(pie.sha256)
          if (earlier) return earlier
          const submitted = submitOne(pie, path)
          submissions.set(pie.sha256, submitted)
          // The slot is held until the upload ends (a failure is the row's, read below).
          await submitted.catch(() => {})
          return submitted
        })
        const queryId = await submission
        row.queryId = queryId
        if (reusedIds.has(queryId)) row.reused = 'query'
        row.status = 'SUBMITTED'
        row.passed = true
        if (wait) {
          let waiting = waits.get(queryId)
          if (!waiting) {
            waiting = client.waitForQuery(queryId, { timeoutMs: inputs['timeout-minutes'] * 60_000, signal })
            waits.set(queryId, waiting)
          }
          const result = await waiting
          const record = result.provingQuery
          row.status = record.status
          Object.assign(row, outputFacts(record))
          let factCheck
          if (record.status === 'DONE' && !expectsProof(asked)) {
            row.facts = 'none'
          } else if (record.status === 'DONE' && (inputs['verify-facts'] || row.reused)) {
            // A reused query's facts are compared again, whatever `verify-facts` says.
            factCheck = await checkFacts(record, pie!)
            row.facts = factCheck.ok ? 'match' : 'differ'
          }
          const refusals = evaluateGate(record, factCheck, {
            allowMockedFact: inputs['allow-mocked-fact'],
            expectedProgramHash: inputs['expected-program-hash'],
            expected: asked,
          })
          row.passed = refusals.length === 0
          row.error = refusals.map((refusal) => refusal.message).join(' ') || null
        }
      } catch (error) {
        row.status = signal.aborted ? 'CANCELLED' : 'ERROR'
        row.error = error instanceof ProvingKitError ? error.shortMessage : (error as Error).message
        row.passed = false
      } finally {
        await pie?.cleanup()
      }
      io.info(`[${index + 1}/${paths.length}] ${row.pie}: ${row.queryId ? `query ${row.queryId}${row.reused ? ' (reused)' : ''} ` : ''}${row.status}${row.facts === 'match' ? ', facts match' : ''}${row.error ? `: ${row.error}` : ''}`)
      return row
    }),
  )
  const failed = rows.filter((row) => !row.passed)
  step.outputs.set({
    results: JSON.stringify(rows),
    status: failed.length ? 'FAILED' : wait ? 'DONE' : 'SUBMITTED',
    'facts-verified': String(wait && inputs['verify-facts'] && rows.every((row) => row.facts === 'match' || row.facts === 'none')),
  })
  step.extraRows.push(['PIEs', String(rows.length)], ['Passed', `${rows.length - failed.length} of ${rows.length}`], ['Concurrency', String(inputs.concurrency)])
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

function batchMarkdown(rows: BatchRow[]): string {
  return [
    '| # | PIE | query | status | facts | gate |',
    '|---|---|---|---|---|---|',
    ...rows.map(
      (row, index) =>
        `| ${index + 1} | ${forSummaryCell(row.pie, 'code')} | ${forSummaryCell(row.queryId ?? '', 'code')} | ${forSummaryCell(row.status)} | ${row.facts} | ${row.passed ? '✅' : `❌ ${forSummaryCell(row.error ?? '')}`} |`,
    ),
  ].join('\n')
}
