/**
 * Following a query that already exists (submitted earlier, by another job, before a
 * cancellation, or sent back by a retry) to its end, and judging it as a new one is judged: the
 * facts against the PIE when one is given, the gate against what was asked for, the chain where
 * the policy asks. `query wait`, `query retry`, `wait/` and `retry/` enter the pipeline here.
 */
import type { ProvingClient, QueryProgress, QueryResult } from '../../clients/proving.ts'
import type { Logger } from '../../core/runtime.ts'
import type { RetryResponse } from '../../schemas/proving.ts'
import { type ExpectedResult, singleKind } from '../gate.ts'
import type { OnchainPolicy } from '../onchain.ts'
import { computeFactsAhead, type PreparedPie } from '../prepared-pie.ts'
import { type Judgement, judgeQuery } from './judge.ts'
import type { GatePolicy } from './request.ts'

/** The query {@link followQuery} follows, what it was asked for, and how it is judged. */
export type FollowInput = {
  queryId: string
  /** What the query was asked for: the gate judges the record against it, never the record's word. */
  expected: ExpectedResult
  gate: GatePolicy
  /** The PIE the query should prove: its facts are compared with the record's. */
  pie?: PreparedPie | undefined
  timeoutMs: number
  onchain?: OnchainPolicy | undefined
  /** The query was just accepted by this service: a gateway's 404 mid-wait is a hiccup, not a wrong URL. */
  afterSubmission?: boolean | undefined
  emulatorUrl?: string | undefined
}

/** What {@link followQuery} runs with: a logger, a signal, and a wrapper of the wait for progress. */
export type FollowContext = {
  logger: Logger
  signal?: AbortSignal | undefined
  /** Wraps the wait (a log group, a heartbeat), handing it the progress callback to use. */
  aroundWait?:
    | ((wait: (onProgress: (progress: QueryProgress) => void) => Promise<QueryResult>) => Promise<QueryResult>)
    | undefined
  onOnchainProgress?: ((line: string) => void) | undefined
}

/** Waits for the query to end and judges it. */
export async function followQuery(
  client: ProvingClient,
  input: FollowInput,
  context: FollowContext,
): Promise<Judgement> {
  if (input.pie) computeFactsAhead(input.pie, context.signal)
  const wait = (onProgress?: (progress: QueryProgress) => void): Promise<QueryResult> =>
    client.waitForQuery(input.queryId, {
      timeoutMs: input.timeoutMs,
      signal: context.signal,
      onProgress,
      afterSubmission: input.afterSubmission,
      expectedResult: singleKind(input.expected),
    })
  const result = context.aroundWait ? await context.aroundWait(wait) : await wait()
  return judgeQuery(
    result,
    { expected: input.expected, gate: input.gate, pie: input.pie, onchain: input.onchain },
    {
      signal: context.signal,
      logger: context.logger,
      emulatorUrl: input.emulatorUrl,
      onOnchainProgress: context.onOnchainProgress,
    },
  )
}

/** Sends a FAILED, retriable query back to the service; with `wait`, follows and judges it. */
export async function retryAndFollow(
  client: ProvingClient,
  input: FollowInput & { wait: boolean },
  context: FollowContext & { onRetried?: ((response: RetryResponse) => void) | undefined },
): Promise<{ retried: RetryResponse; judgement: Judgement | undefined }> {
  const retried = await client.retryQuery(input.queryId, { signal: context.signal })
  context.onRetried?.(retried)
  if (!input.wait) return { retried, judgement: undefined }
  return { retried, judgement: await followQuery(client, input, context) }
}
