/**
 * The statement pipeline: every statement of a request, one or many, through the same steps.
 * prepare (validate, pack, inspect; the wrong program refused before paying) -> decide (reuse
 * what proves it, follow what an earlier attempt left running, or submit) -> submit (journal,
 * dedup chain) with at most `concurrency` uploads at once, one submission per PIE digest -> one
 * shared wait per query -> judge (facts, gate, on chain) -> settle the journal's entries or keep
 * them. Hosts render the events and outcomes; nothing here prints or exits.
 */
import type { ProvingClient, QueryProgress, QueryResult, UploadProgress } from '../../clients/proving.ts'
import { withBound } from '../../core/deadline.ts'
import { AbortedError, ProvingKitError, WaitTimeoutError } from '../../core/errors.ts'
import { DEADLINE_CODE } from '../../core/http/failures.ts'
import { formatDuration } from '../../core/poll.ts'
import type { Logger } from '../../core/runtime.ts'
import type { GateRefusal } from '../gate.ts'
import { KeyQueries } from '../key-queries.ts'
import { RerunNothingSentError } from '../reuse.ts'
import { limiter } from '../limit.ts'
import { computeFactsAhead, type PreparedPie } from '../prepared-pie.ts'
import { type Decision, decideReuse } from './decide.ts'
import { type Judgement, judgeQuery } from './judge.ts'
import { checkExpectedProgram, NotTheExpectedProgram, preparePieOf, shouldStream, submitStreamed } from './prepare.ts'
import {
  checkRequest,
  expectedOf,
  inBucket,
  labelOf,
  type StatementPolicy,
  type StatementRequest,
  type StatementSubject,
} from './request.ts'
import { type Submitted, submitStatement } from './submit.ts'

/** How a statement ended. */
export type StatementEnding =
  /** Waited for, DONE and the gate passed; or already proven on chain. */
  | 'passed'
  /** Waited for and ended, but the gate refused it (a FAILED query included). */
  | 'refused'
  /** Refused before anything was paid for (the PIE is not the expected program). */
  | 'not-submitted'
  /** Submitted (or reused), not waited for. */
  | 'submitted'
  /** Submitted into a bucket: it ends with the bucket. */
  | 'in-bucket'
  /** An error (invalid PIE, the service, a timeout, a refusal to pay twice): `error`. */
  | 'error'
  | 'interrupted'

/**
 * How one statement of a run ended: `passed` and `ending`, what was decided and submitted, the
 * judgement, the refusals or the error.
 */
export type StatementOutcome = {
  index: number
  subject: StatementSubject
  pie?: PreparedPie | undefined
  decision?: Decision | undefined
  submitted?: Submitted | undefined
  /** The index of the earlier statement of this run whose submission this one shares (the same PIE). */
  sameAs?: number | undefined
  judgement?: Judgement | undefined
  /** Where the query was placed, for a statement submitted into a bucket. */
  bucket?: { bucketId: string; bucketJobIndex: number | undefined } | undefined
  /** Why it did not pass; none when it did. */
  refusals: GateRefusal[]
  ending: StatementEnding
  error?: unknown
  passed: boolean
}

/** What a run reports to `hooks.onEvent` as it goes: a PIE prepared, a decision, a submission, a statement ended. */
export type StatementEvent =
  | { type: 'prepared'; index: number; pie: PreparedPie }
  | { type: 'decided'; index: number; decision: Decision }
  | { type: 'submitted'; index: number; submitted: Submitted; sameAs?: number | undefined }
  | { type: 'ended'; index: number; outcome: StatementOutcome }

/** How a host shows what the pipeline does. Every hook is optional; none decides anything. */
export type StatementHooks = {
  onEvent?: ((event: StatementEvent) => void) | undefined
  onUploadProgress?: ((index: number, progress: UploadProgress) => void) | undefined
  /** Wraps a wait the pipeline runs (a log group, a heartbeat), handing it the progress callback to use. */
  aroundWait?:
    | ((
        index: number,
        queryId: string,
        wait: (onProgress: (progress: QueryProgress) => void) => Promise<QueryResult>,
      ) => Promise<QueryResult>)
    | undefined
  /** Lines for a person while the on-chain registration is waited for. */
  onOnchainProgress?: ((index: number, line: string) => void) | undefined
  /** Lines for a person while a PIE is prepared (packed, validated). */
  onPrepareProgress?: ((index: number, line: string) => void) | undefined
}

/** What {@link proveStatements} runs with: the proving client, a logger, a signal, and the progress hooks. */
export type RunContext = {
  client: ProvingClient
  logger: Logger
  signal?: AbortSignal | undefined
  hooks?: StatementHooks | undefined
}

/**
 * Proves every statement of the request. Never throws for one statement's failure (it is that
 * statement's outcome); throws only for a request that cannot mean anything (`checkRequest`).
 */
export async function proveStatements(request: StatementRequest, context: RunContext): Promise<StatementOutcome[]> {
  checkRequest(request)
  const run = new StatementRun(request, context)
  const outcomes = await Promise.all(request.subjects.map((subject, index) => run.prove(subject, index)))
  await run.close()
  return outcomes
}

/** What a statement was doing when its run was stopped, for the cancellation's message. */
const STAGE_TEXT = {
  preparing: 'Validating the PIE',
  submitting: 'Submitting the PIE',
  waiting: 'Waiting for the query',
  judging: 'Judging the query',
}

class StatementRun {
  readonly #request: StatementRequest
  readonly #context: RunContext
  readonly #limit: ReturnType<typeof limiter>
  /** One submission per PIE digest (or subject): the same PIE named twice is sent once. */
  readonly #submissions = new Map<
    string,
    { index: number; submitted: Promise<{ submitted: Submitted; decision: Decision }> }
  >()
  /** One wait per query, shared by every statement that names it. */
  readonly #waits = new Map<string, Promise<QueryResult>>()
  /**
   * Each submission, and whether its outcome is known (waited to DONE and judged): at the end
   * its journal entry is settled (forgotten) when it is, kept when it is not.
   */
  readonly #outcomeKnown = new Map<Submitted, boolean>()
  /** The key's queries, read once for every statement and every listing of the run. */
  readonly #queries: KeyQueries
  /** The run's one deadline: the reuse lookup, a re-run's candidates, the journal's waits and the query waits share it. */
  readonly #deadline: number

  constructor(request: StatementRequest, context: RunContext) {
    this.#request = request
    this.#context = context
    this.#limit = limiter(request.policy.concurrency)
    this.#queries = new KeyQueries(context.client)
    this.#deadline = context.client.http.clock.now() + request.policy.timeoutMs
  }

  /** What is left of the run's timeout. */
  #remainingMs(): number {
    return Math.max(0, this.#deadline - this.#context.client.http.clock.now())
  }

  /** The policy with what is left of the run's timeout: every wait started now ends by the run's deadline. */
  #policyNow(): StatementPolicy {
    return { ...this.#request.policy, timeoutMs: this.#remainingMs() }
  }

  /** Every request a statement makes, however deep, is bounded by the run's deadline (core/deadline.ts). */
  prove(subject: StatementSubject, index: number): Promise<StatementOutcome> {
    return withBound(this.#deadline, () => this.#prove(subject, index))
  }

  async #prove(subject: StatementSubject, index: number): Promise<StatementOutcome> {
    const outcome: StatementOutcome = { index, subject, refusals: [], ending: 'error', passed: false }
    const { signal } = this.#context
    try {
      const sent = await this.#limit(() => this.#prepareAndSubmit(subject, index, outcome))
      if (!sent) return this.#ended(outcome)
      const { submitted, decision } = sent
      outcome.submitted = submitted
      outcome.decision = decision
      if (!this.#outcomeKnown.has(submitted)) this.#outcomeKnown.set(submitted, false)
      await this.#follow(outcome, submitted)
    } catch (error) {
      // A signal's bare reason (a host's "received SIGTERM") is a cancellation, never an unexpected failure.
      const stopped = signal?.aborted === true && !(error instanceof ProvingKitError)
      outcome.error = stopped
        ? new AbortedError(
            `${STAGE_TEXT[outcome.judgement ? 'judging' : outcome.submitted ? 'waiting' : outcome.pie ? 'submitting' : 'preparing']} was aborted`,
            { cause: signal?.reason },
          )
        : error
      outcome.ending = outcome.error instanceof AbortedError || signal?.aborted ? 'interrupted' : 'error'
      outcome.passed = false
    } finally {
      await outcome.pie?.cleanup().catch(() => {})
    }
    return this.#ended(outcome)
  }

  /** After the submission: into a bucket, not waited for, or waited for and judged. */
  async #follow(outcome: StatementOutcome, submitted: Submitted): Promise<void> {
    const { endpoint, policy } = this.#request
    if (outcome.decision?.kind === 'reuse-chain') {
      outcome.ending = 'passed'
      outcome.passed = true
      return
    }
    if (inBucket(endpoint) && endpoint.kind === 'general') {
      // The query's place in the bucket (the service assigns one when none was given).
      const placed = await this.#context.client
        .getQuery(submitted.queryId, { signal: this.#context.signal })
        .catch(() => undefined)
      const index = placed?.provingQuery.bucketJobIndex ?? endpoint.fields.bucketJobIndex
      outcome.bucket = {
        bucketId: endpoint.fields.bucketId!,
        bucketJobIndex: typeof index === 'number' ? index : undefined,
      }
      outcome.ending = 'in-bucket'
      outcome.passed = true
      return
    }
    if (!policy.wait) {
      outcome.ending = 'submitted'
      outcome.passed = true
      return
    }
    // The local program hash (seconds for a long program) is computed while the query runs.
    if (outcome.pie) computeFactsAhead(outcome.pie, this.#context.signal)
    const result = await this.#wait(outcome.index, submitted.queryId)
    const judgement = await judgeQuery(
      result,
      {
        expected: expectedOf(endpoint),
        gate: policy.gate,
        pie: outcome.pie,
        reused: submitted.how === 'reused',
        onchain: policy.onchain,
      },
      {
        signal: this.#context.signal,
        logger: this.#loggerOf(outcome.index),
        emulatorUrl: policy.emulatorUrl,
        onOnchainProgress: (line) => this.#context.hooks?.onOnchainProgress?.(outcome.index, line),
      },
    )
    outcome.judgement = judgement
    outcome.refusals = judgement.refusals
    outcome.passed = judgement.passed
    outcome.ending = judgement.passed ? 'passed' : 'refused'
    if (result.provingQuery.status === 'DONE') this.#outcomeKnown.set(submitted, true)
  }

  /** Prepares the statement and sends it (or finds its earlier submission in this run); undefined when refused before paying. */
  async #prepareAndSubmit(
    subject: StatementSubject,
    index: number,
    outcome: StatementOutcome,
  ): Promise<{ submitted: Submitted; decision: Decision } | undefined> {
    const { signal, hooks } = this.#context
    signal?.throwIfAborted()
    const { policy } = this.#request
    const decide = (pie: PreparedPie | undefined) => this.#decide(pie, index)
    try {
      if (shouldStream(this.#request, subject)) {
        const onPrepared = (pie: PreparedPie) => {
          if (outcome.pie) return
          outcome.pie = pie
          hooks?.onEvent?.({ type: 'prepared', index, pie })
        }
        const path = subject.kind === 'pie' ? subject.path : ''
        const streamed = await submitStreamed(
          path,
          this.#request,
          this.#submitContext(index),
          decide,
          onPrepared,
          (line) => hooks?.onPrepareProgress?.(index, line),
        )
        return this.#sent(index, streamed)
      }
      const pie = await preparePieOf(subject, this.#request, {
        signal,
        onProgress: (line) => hooks?.onPrepareProgress?.(index, line),
      })
      if (pie) {
        outcome.pie = pie
        hooks?.onEvent?.({ type: 'prepared', index, pie })
        checkExpectedProgram(pie, policy.gate.expectedProgramHash)
      }
      const key = pie ? `pie:${pie.sha256}` : `${subject.kind}:${JSON.stringify(subject)}`
      const earlier = this.#submissions.get(key)
      if (earlier) {
        const shared = await earlier.submitted
        outcome.sameAs = earlier.index
        hooks?.onEvent?.({ type: 'submitted', index, submitted: shared.submitted, sameAs: earlier.index })
        return shared
      }
      const submission = (async () => {
        const decision = await decide(pie)
        if (decision.kind === 'reuse-chain') return { decision, submitted: { queryId: '', how: 'reused' as const } }
        if (decision.kind === 'reuse-query') {
          return {
            decision,
            submitted: {
              queryId: decision.record.id,
              how: 'reused' as const,
              createdAt: decision.record.createdAt ?? null,
            },
          }
        }
        if (this.#remainingMs() === 0) throw this.#timedOut(subject)
        const submitted = await submitStatement(subject, pie, this.#submitContext(index))
        if (submitted.how === 'submitted') this.#queries.created.add(submitted.queryId)
        this.#afterUnreadableList(index, decision, submitted)
        return { decision, submitted }
      })()
      this.#submissions.set(key, { index, submitted: submission })
      // The slot is held until the upload ends (a failure is the statement's, read by the caller).
      const sent = await submission
      return this.#sent(index, sent)
    } catch (error) {
      if (error instanceof NotTheExpectedProgram) {
        outcome.refusals = [error.refusal]
        outcome.ending = 'not-submitted'
        return undefined
      }
      throw error
    }
  }

  #sent(
    index: number,
    sent: { submitted: Submitted; decision: Decision },
  ): { submitted: Submitted; decision: Decision } {
    this.#context.hooks?.onEvent?.({ type: 'submitted', index, submitted: sent.submitted })
    return sent
  }

  /** The run's timeout passed before the statement was sent: nothing was, nothing will be. */
  #timedOut(subject: StatementSubject): WaitTimeoutError {
    return new WaitTimeoutError(
      `The run's timeout (${formatDuration(this.#request.policy.timeoutMs)}) passed before ${labelOf(subject)} was submitted; nothing was sent.`,
    )
  }

  async #decide(pie: PreparedPie | undefined, index: number): Promise<Decision> {
    const context = {
      client: this.#context.client,
      endpoint: this.#request.endpoint,
      policy: this.#policyNow(),
      logger: this.#loggerOf(index),
      signal: this.#context.signal,
      queries: this.#queries,
      pieDigest: pie?.sha256,
    }
    let decision: Decision
    try {
      decision = await decideReuse(pie?.inspection, context)
    } catch (error) {
      // The lookup cut by the run's deadline is the run's timeout, before anything was paid for.
      const cut = this.#remainingMs() === 0 || (error instanceof ProvingKitError && error.code === DEADLINE_CODE)
      // A re-run's refusal names the queries to follow (and a retry it may have sent): it stays itself.
      if (cut && !(error instanceof WaitTimeoutError) && !(error instanceof RerunNothingSentError))
        throw this.#timedOut(this.#request.subjects[index]!)
      throw error
    }
    this.#context.hooks?.onEvent?.({ type: 'decided', index, decision })
    return decision
  }

  /** A list that could not be read is said once, and only when the submission that followed went through. */
  #afterUnreadableList(index: number, decision: Decision, submitted: Submitted): void {
    if (decision.kind === 'submit' && decision.quiet && submitted.how === 'submitted') {
      this.#loggerOf(index).warn(
        `No earlier query could be reused: ${decision.reason}; query ${submitted.queryId} was submitted.`,
      )
    }
  }

  /** With several statements, each line a statement's steps log names its statement. */
  #loggerOf(index: number): Logger {
    const logger = this.#context.logger
    if (this.#request.subjects.length === 1) return logger
    const label = labelOf(this.#request.subjects[index]!)
    const named = (level: 'debug' | 'info' | 'warn' | 'error') => (message: string) =>
      logger[level](`${label}: ${message}`)
    return { debug: named('debug'), info: named('info'), warn: named('warn'), error: named('error') }
  }

  #submitContext(index: number) {
    return {
      client: this.#context.client,
      endpoint: this.#request.endpoint,
      policy: this.#policyNow(),
      queries: this.#queries,
      logger: this.#loggerOf(index),
      signal: this.#context.signal,
      onUploadProgress: this.#context.hooks?.onUploadProgress
        ? (progress: UploadProgress) => this.#context.hooks!.onUploadProgress!(index, progress)
        : undefined,
    }
  }

  #wait(index: number, queryId: string): Promise<QueryResult> {
    let waiting = this.#waits.get(queryId)
    if (!waiting) {
      const { client, signal, hooks } = this.#context
      const expected = expectedOf(this.#request.endpoint)
      const kind = expected.kinds.length === 1 ? expected.kinds[0] : undefined
      const wait = (onProgress?: (progress: QueryProgress) => void) =>
        client.waitForQuery(queryId, {
          timeoutMs: this.#remainingMs(),
          signal,
          onProgress,
          afterSubmission: true,
          expectedResult: kind,
        })
      waiting = hooks?.aroundWait ? hooks.aroundWait(index, queryId, wait) : wait()
      this.#waits.set(queryId, waiting)
    }
    return waiting
  }

  #ended(outcome: StatementOutcome): StatementOutcome {
    this.#context.hooks?.onEvent?.({ type: 'ended', index: outcome.index, outcome })
    return outcome
  }

  /**
   * Every statement that shared a query has ended: only now may its journal entry go, and only
   * where the outcome is known; an interrupted or unwaited one stays for the same run again. All
   * at once: the journal lists its folder once for the entries settling together.
   */
  async close(): Promise<void> {
    await Promise.all(
      [...this.#outcomeKnown].map(([submitted, known]) =>
        (known ? submitted.settle : submitted.keep)?.().catch(() => {}),
      ),
    )
  }
}
