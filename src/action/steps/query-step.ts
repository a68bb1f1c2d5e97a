/**
 * What every action that submits or follows a proving query shares: outputs set as soon as
 * their value is known, one log line per status or step change inside a group, state for the
 * post step, and the closing report (job summary plus the failure message) that says what
 * failed and what to do, whichever way the step ends.
 */
import type { QueryProgress, QueryResult } from '../../clients/proving.ts'
import { AbortedError, InvalidPieError, WaitTimeoutError } from '../../core/errors.ts'
import { formatDuration } from '../../core/poll.ts'
import { forSummaryCode, serviceLine } from '../../core/service-text.ts'
import type { QueryRecordWithStatus } from '../../schemas/proving.ts'
import type { FactCheckResult } from '../../pie/index.ts'
import { bytes32Text } from '../../pie/shared/index.ts'
import { type GateRefusal, showValue } from '../../pipeline/gate.ts'
import { describeServiceFailure, inputProblemsEnding, type ServiceText, type Submitted } from './failure.ts'
import { InputProblemsError } from './inputs.ts'
import { queryOutputs } from './outputs.ts'
import { STATE } from './state.ts'
import { resumeSnippet, yesNo, type Ending, type SummaryLink, type SummaryValue } from './summary.ts'
import { Step, type StepOptions } from './step.ts'
import type { ActionIO } from '../types.ts'

export { STATE }

export type FactsNote = { kind: 'checked'; result: FactCheckResult } | { kind: 'skipped'; reason: string }

export type ProvingStepOptions = StepOptions & {
  baseUrl?: string | undefined
  timeoutMinutes?: number | undefined
}

/**
 * A step of the proving service's actions, with or without a query (pack, bucket-close): its
 * failures told in that service's words, `error-reason` set on failure, and the state the root
 * action's post step reads.
 */
export class ProvingStep extends Step<ProvingStepOptions> {
  queryId: string | undefined
  /** The result kind the query was asked for, when one: the resume snippet's `expected-result`. */
  expectedResult: string | undefined
  /** How the step ended and the summary it wrote: what the GitHub side (../github/) repeats. */
  ended: Ending | undefined
  summaryMarkdown: string | undefined

  constructor(io: ActionIO, options: ProvingStepOptions) {
    super(io, options)
    io.saveState(STATE.action, options.action)
    if (options.emulated !== undefined) {
      this.outputs.set({ emulated: String(options.emulated) })
      io.saveState(STATE.emulated, String(options.emulated))
    }
    if (options.baseUrl) io.saveState(STATE.baseUrl, options.baseUrl)
    if (options.timeoutMinutes !== undefined) io.saveState(STATE.timeoutMinutes, String(options.timeoutMinutes))
  }

  protected describe(error: unknown): Ending {
    return describeFailure(error, this)
  }

  /**
   * What the query was asked for (the endpoint's kind, the general submission's `result`): the
   * `wait` step that resumes it expects the same (`expected-result`), not any proof.
   */
  expecting(result: string): void {
    this.expectedResult = result
    this.io.saveState(STATE.expectedResult, result)
  }

  protected override ending(end: Ending): void {
    this.ended = end
    if (end.failure) this.outputs.set({ 'error-reason': end.failure })
  }

  protected override summary(markdown: string): string {
    this.summaryMarkdown = markdown
    return markdown
  }

  protected override reported(): void {
    this.io.saveState(STATE.reported, 'true')
  }
}

/** A step that submits or follows a proving query: the query's outputs, progress and gate. */
export class QueryStep extends ProvingStep {
  /** The last record seen (progress, final result or a timeout's last state). */
  record: QueryRecordWithStatus | undefined
  metadataUrls: string[] = []
  /** `shown`: the PIE as the summary names it (workspace-relative, as the workflow wrote it). */
  pie: { zipPath: string; sha256: string; shown?: string } | undefined
  localProgramHash: string | undefined
  facts: FactsNote | undefined
  expectedProgramHash: string | undefined
  artifacts: SummaryLink[] = []
  artifactNote: string | undefined
  #proof: Promise<string> | undefined

  /**
   * The query's proof.json, downloaded once however many features take it (the artifact, the
   * release): the first caller's `path` is where it lands, and later callers get that file.
   * Undefined when the service lists no proof.json; a failed download is tried again by the next.
   */
  proofJson(path: string, download: (url: string, path: string) => Promise<void>): Promise<string> | undefined {
    const url = this.metadataUrls.find((candidate) => new URL(candidate, 'http://x').pathname.endsWith('/proof.json'))
    if (!url) return undefined
    this.#proof ??= download(url, path).then(
      () => path,
      (error: unknown) => {
        this.#proof = undefined
        throw error
      },
    )
    return this.#proof
  }

  /** The query id, the moment the service returns it. */
  /** `followed`: the query is an earlier submission's, said instead of "Submitted" (nothing was sent). */
  submitted(queryId: string, followed?: string): void {
    this.queryId = queryId
    this.outputs.set({ 'query-id': queryId })
    this.io.saveState(STATE.queryId, queryId)
    this.io.info(
      followed ? `Following query ${queryId}, ${followed}; nothing was sent again.` : `Submitted: query ${queryId}`,
    )
  }

  /** A DONE query that already proves the PIE, followed instead of submitting (`reuse: auto`): the query id, said as such. */
  reusedQuery(record: { id: string; createdAt?: string | null | undefined }): void {
    this.queryId = record.id
    this.outputs.set({ 'query-id': record.id })
    this.io.saveState(STATE.queryId, record.id)
    const created = record.createdAt ? `, created ${record.createdAt}` : ''
    this.extraRows.push(['Reused', `yes: query ${record.id}${created} already proves this PIE; nothing was submitted`])
  }

  /** `wait: false`: the step ends once the query is submitted, saying how to follow it. */
  async endWithoutWaiting(queryId: string, follow: string): Promise<void> {
    await this.report({
      outcome: 'submitted',
      headline: `Submitted query ${queryId}; not waiting for it (\`wait: false\`).`,
      nextSteps: [follow],
    })
  }

  /**
   * Shows a wait the pipeline runs: one line per change, in a group; outputs kept current, the
   * final record's outputs set once it ends.
   */
  async showWait<T extends QueryResult>(
    queryId: string,
    timeoutMs: number,
    wait: (onProgress: (progress: QueryProgress) => void) => Promise<T>,
  ): Promise<T> {
    if (!this.queryId) {
      this.queryId = queryId
      this.outputs.set({ 'query-id': queryId })
      this.io.saveState(STATE.queryId, queryId)
    }
    this.io.startGroup(`Waiting for query ${queryId} (up to ${formatDuration(timeoutMs)})`)
    try {
      const result = await wait((progress) => this.#progress(progress))
      this.result(result)
      return result
    } catch (error) {
      if (error instanceof WaitTimeoutError && isRecord(error.lastSeen)) this.#showLatest(error.lastSeen)
      throw error
    } finally {
      this.io.endGroup()
    }
  }

  #progress(progress: QueryProgress): void {
    // The status and step are the service's words: one line each, whatever they hold.
    const step = progress.step ? `  step ${serviceLine(progress.step, 200)}` : ''
    this.io.info(`[${formatDuration(progress.elapsedMs).padStart(6)}] ${serviceLine(progress.status, 200)}${step}`)
    this.#showLatest(progress.record)
  }

  /** The latest record the wait read: kept for the summary, its status and step in the outputs. */
  #showLatest(record: QueryRecordWithStatus): void {
    this.record = record
    this.outputs.set({ status: record.status, step: record.step ?? undefined })
  }

  /** A final (or read) record: every output the record gives. */
  result(result: QueryResult): void {
    this.record = result.provingQuery
    this.metadataUrls = result.metadataUrls
    this.outputs.set(queryOutputs(result))
  }

  override rows(): [string, SummaryValue][] {
    const record = this.record
    const statusText = record ? `${record.status}${record.step ? ` (step ${record.step})` : ''}` : undefined
    const facts = this.facts
    const factsText =
      facts === undefined
        ? undefined
        : facts.kind === 'skipped'
          ? `not checked: ${facts.reason}`
          : facts.result.ok
            ? `yes: ${facts.result.checked.join(', ') || 'nothing reported'} equal what the PIE gives${facts.result.programHashVariant ? ` (${facts.result.programHashVariant} program hash)` : ''}`
            : facts.result.mismatches.length
              ? `MISMATCH: ${facts.result.mismatches.map((mismatch) => mismatch.field).join(', ')}`
              : 'no: the service reported no fact to compare'
    const mocked = record?.isFactMocked
    return [
      ['Query', { code: this.queryId }],
      ['Status', statusText],
      ['Error reason', record?.errorReason ?? undefined],
      ['Program hash', { code: hashText(record?.programHash) ?? this.localProgramHash }],
      ['Expected program hash', this.expectedProgramHash ? { code: this.expectedProgramHash } : undefined],
      ['SHARP fact', { code: hashText(record?.sharpFactHash, 'bytes32') }],
      ['Integrity fact', { code: hashText(record?.integrityFactHash) }],
      ['Fact mocked', mocked === true ? 'YES: nothing was verified on chain' : yesNo(mocked)],
      ['Facts checked locally', factsText],
      ['Duration', this.queryId || this.pie ? formatDuration(this.now() - this.started) : undefined],
      [
        'PIE',
        this.pie
          ? { markdown: `${forSummaryCode(this.pie.shown ?? this.pie.zipPath)}<br>sha256 \`${this.pie.sha256}\`` }
          : undefined,
      ],
      ['Proof', this.proofLinks()],
      ['Artifacts', this.artifacts.length ? { links: this.artifacts } : this.artifactNote],
      ...this.extraRows,
    ]
  }

  /**
   * The query's artifacts on the service (its metadata URLs: proof.json first, then the PIE and
   * metadata.json), which need no key to read: the proof is one click from the summary, uploaded
   * as a workflow artifact or not. None for the emulator: it stops with the step.
   */
  proofLinks(): { links: SummaryLink[] } | undefined {
    if (this.options.emulated || this.metadataUrls.length === 0) return undefined
    const named = this.metadataUrls.map((url) => ({ url, label: fileName(url) }))
    named.sort((a, b) => Number(b.label === 'proof.json') - Number(a.label === 'proof.json'))
    return { links: named.map(({ url, label }) => ({ label: `${label} (on the service)`, url })) }
  }

  /** The step ends as the gate decided (refusals: failed; none: passed). */
  async finishGate(refusals: GateRefusal[], passedHeadline: string): Promise<void> {
    if (refusals.length === 0) {
      await this.report({ outcome: 'passed', headline: passedHeadline })
      return
    }
    const first = refusals[0]!
    const nextSteps = refusals.flatMap((refusal) => NEXT_STEP[refusal.kind])
    await this.report({
      outcome: 'failed',
      headline:
        first.kind === 'failed' ? `Query ${this.queryId} FAILED on the service.` : 'The gate refused the result.',
      problems: refusals.map((refusal) => refusal.message),
      nextSteps: [...new Set(nextSteps)],
      failure:
        refusals.length === 1
          ? first.message
          : `${first.message} (and ${refusals.length - 1} more: see the job summary)`,
    })
  }

  protected override ending(end: Ending): void {
    this.ended = end
    if (end.failure) this.outputs.set({ 'error-reason': this.record?.errorReason ?? end.failure })
    if (this.outputs.get('facts-verified') === undefined) {
      this.outputs.set({ 'facts-verified': String(this.facts?.kind === 'checked' && this.facts.result.ok) })
    }
  }
}

/**
 * The step of a sub-action that talks to the proving service (no emulator of its own): its
 * address and timeout once the inputs parsed, for the post step and the resume snippet.
 */
export function serviceQueryStep(action: string) {
  return (
    io: ActionIO,
    signal: AbortSignal,
    inputs: { 'base-url'?: string | undefined; 'timeout-minutes': number } | undefined,
  ) =>
    new QueryStep(io, {
      action,
      signal,
      emulated: false,
      baseUrl: inputs?.['base-url'],
      timeoutMinutes: inputs?.['timeout-minutes'],
    })
}

/** What to do about each kind of refusal: a line each, the first what matters most. */
const NEXT_STEP: Record<GateRefusal['kind'], string | readonly string[]> = {
  failed:
    'Read the error reason above. If the service marks the query retriable, run the `retry` sub-action with its `query-id`; otherwise fix the PIE or the parameters and prove again.',
  'not-done': 'Wait for the query to finish with the `wait` sub-action.',
  'wrong-kind': [
    'Do not rely on this result: the service says the query is not what was asked for (a trace where a proof was asked).',
    'For a query submitted for another result kind, tell the `wait` sub-action with `expected-result`; otherwise report it to the service operator.',
  ],
  'mocked-fact':
    'A mocked fact proves nothing on chain. Prove with `mock-fact-hash: false` for a release, or set `allow-mocked-fact: true` where a mocked fact is enough (a dry run).',
  'mock-state-unknown': [
    'The service did not say whether the fact is mocked: check on chain (`verify-onchain`: a fact registered in the real registry passes).',
    'Or set `allow-mocked-fact: true` where a mocked fact is enough (a dry run).',
  ],
  'fact-missing': [
    'Do not rely on this result: the service did not report the fact that shows what was proved.',
    'Read the query again later (`wait` sub-action) or ask the service operator; `verify-onchain` cannot help without the fact.',
  ],
  'fact-malformed':
    'Do not rely on this result: the service reported a hash that is not 0x hex, so it cannot be compared. Report it to the service operator.',
  'program-hash':
    "Check that the PIE comes from the program you meant to release, and that `expected-program-hash` is that program's hash.",
  'fact-mismatch':
    'Do not rely on this result: what the service reports was not computed from this PIE. Check that the same pie.zip was submitted, and report it to the service operator.',
  'unknown-prover': [
    'Do not rely on this result: the service names a prover this version does not know (not stone, stwo or stwoHerodotus), so which fact proves the output cannot be told.',
    'A lookalike name (a letter of another alphabet) is not the prover it resembles: report it to the service operator.',
    'For a prover the service added since, update proving-kit.',
  ],
  'other-bucket':
    'Do not rely on this bucket: it lists a query whose own record places it in another bucket (or none). Check that every job proved into this `bucket-id`, and report it to the service operator.',
  'not-on-chain': [
    'A registration can land some minutes after DONE: raise `onchain-timeout-minutes`, or check later with `proving fact check` (docs/onchain.md).',
    'If the RPC failed, check `ethereum-rpc-url` / `starknet-rpc-url` and `fact-registry`.',
  ],
}

/** The passed headline's word on the mock state, when the fact is not plainly real. */
export function mockNote(isFactMocked: boolean | null | undefined): string {
  if (isFactMocked === true) return ' with a mocked fact (allowed)'
  return isFactMocked === false ? '' : ', the service not saying whether its fact is mocked'
}

/** A hash the service sent, for a cell; a malformed one quoted with its control characters escaped (the gate refuses it). */
/** A hash the service reported: a bytes32 fact in its 32-byte form (pie/shared/hex.ts), a felt as it is; malformed text quoted. */
function hashText(value: string | null | undefined, form: 'felt' | 'bytes32' = 'felt'): string | undefined {
  return typeof value === 'string' ? showValue(form === 'bytes32' ? bytes32Text(value) : value) : undefined
}

/** The last segment of a URL's path, as the link's label (the service's text: escaped where shown). */
function fileName(url: string): string {
  const last = URL.parse(url)?.pathname.split('/').at(-1)
  if (!last) return url
  try {
    return decodeURIComponent(last)
  } catch {
    return last
  }
}

function isRecord(value: unknown): value is QueryRecordWithStatus {
  return typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'string'
}

const PROVING_SERVICE: ServiceText = {
  service: 'service',
  urlInput: 'base-url',
  notFound: 'is `base-url` the service it was created on?',
  docs: 'docs/action.md',
  ambiguous: {
    headline:
      'The submission may or may not have reached the proving service; it was not sent again, to avoid paying twice.',
    nextStep: "Check the service's list of queries for a new one before running this step again.",
  },
  networkDetails: true,
}

/** What failed and what to do, by kind of failure. */
export function describeFailure(
  error: unknown,
  step: Pick<ProvingStep, 'queryId' | 'options' | 'io'> & { expectedResult?: string | undefined },
): Ending {
  const queryId = step.queryId
  const env = step.io.env
  const emulated = step.options.emulated === true
  const resume = (minutes?: number): Ending['snippet'] =>
    queryId && !emulated
      ? {
          caption: 'To pick the query up again, add this step (or re-run with it):',
          yaml: resumeSnippet(env, queryId, minutes, step.options.baseUrl, step.expectedResult),
        }
      : undefined
  const emulatorNote =
    'The query ran on the emulator inside this step, which has stopped: it cannot be resumed. Re-run the step.'

  if (error instanceof InputProblemsError)
    return inputProblemsEnding(error, 'nothing was packed or sent', 'docs/action.md')
  if (error instanceof InvalidPieError) {
    const shown = error.problems.slice(0, 20)
    if (error.problems.length > shown.length) shown.push(`… and ${error.problems.length - shown.length} more`)
    return {
      outcome: 'failed',
      headline: `${error.shortMessage}`,
      problems: shown,
      nextSteps: [
        'Check that `pie` points at the pie.zip (or the PIE directory) your Cairo run wrote, e.g. with `cairo-run --cairo_pie_output pie.zip`.',
      ],
      failure: [error.shortMessage, ...shown.slice(0, 5).map((line) => `  ${line}`)].join('\n'),
    }
  }
  if (error instanceof AbortedError) {
    if (queryId) {
      return {
        outcome: 'cancelled',
        headline: emulated
          ? `Cancelled while waiting for query ${queryId}.`
          : `Cancelled while waiting for query ${queryId}; the query goes on running on the service.`,
        nextSteps: [
          emulated ? emulatorNote : `Follow it with the \`wait\` sub-action and \`query-id: ${queryId}\` (below).`,
        ],
        snippet: resume(step.options.timeoutMinutes),
        failure: emulated
          ? `Cancelled while waiting for query ${queryId}.`
          : `Cancelled while waiting for query ${queryId}. Resume with the wait sub-action: query-id ${queryId}.`,
      }
    }
    return {
      outcome: 'cancelled',
      headline: 'Cancelled before the service returned a query id.',
      nextSteps: [
        "If the upload had started, a query may still have been created: check the service's list of queries before proving again.",
      ],
      failure: 'Cancelled before the service returned a query id.',
    }
  }
  if (error instanceof WaitTimeoutError && !queryId) {
    // A wait that follows no query (bucket-close: the bucket, then the reads of its queries).
    return {
      outcome: 'timed-out',
      headline: error.shortMessage,
      nextSteps: [
        'Run this sub-action again with `wait: true` (closing a bucket again is harmless), or raise `timeout-minutes`.',
      ],
      failure: error.shortMessage,
    }
  }
  if (error instanceof WaitTimeoutError) {
    const minutes = step.options.timeoutMinutes
    return {
      outcome: 'timed-out',
      headline: `Stopped waiting after ${minutes === undefined ? 'the timeout' : formatDuration(minutes * 60_000)}; query ${queryId} is still running on the service.`,
      nextSteps: [
        emulated
          ? emulatorNote
          : `Follow it with the \`wait\` sub-action and \`query-id: ${queryId}\` (below), or raise \`timeout-minutes\`.`,
      ],
      snippet: resume(minutes),
      failure: emulated
        ? `Timed out waiting for query ${queryId}.`
        : `Timed out waiting for query ${queryId}. Resume with the wait sub-action: query-id ${queryId}.`,
    }
  }
  const submitted: Submitted | undefined = queryId
    ? {
        follow: (after) => [
          after === 'network'
            ? `Query ${queryId} was submitted; follow it with the \`wait\` sub-action once the service is reachable.`
            : `Query ${queryId} was submitted; follow it with the \`wait\` sub-action.`,
        ],
        snippet: resume(step.options.timeoutMinutes),
      }
    : undefined
  return describeServiceFailure(error, PROVING_SERVICE, submitted)
}
