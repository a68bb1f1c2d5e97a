import { UnknownStatusError } from '../../core/errors.ts'
import { requireId } from '../../core/checks.ts'
import { serviceLine } from '../../core/service-text.ts'
import {
  DEFAULT_WAIT_TIMEOUT_MS,
  DEFAULT_STUCK_AFTER_MS,
  pollUntil,
  formatDuration,
  StateWatch,
  type WaitOptions,
} from '../../core/poll.ts'
import type { QueryRecordWithStatus } from '../../schemas/proving.ts'
import { QUERY_STATUSES } from '../../schemas/proving-constants.ts'
import { type QueryResult, StatusReader } from './reads.ts'
import type { ProvingService, ReadPaths } from './service.ts'

/** A query's state as a wait sees it, given to `onProgress` on every change. */
export type QueryProgress = {
  queryId: string
  status: string
  step: string | null
  elapsedMs: number
  record: QueryRecordWithStatus
}

/** How {@link ProvingClient.waitForQuery} waits: its timeout and signal, its progress callbacks, the read path. */
export type WaitForQueryOptions = WaitOptions<QueryProgress> & {
  /** Overrides the client's readPaths for this wait. */
  path?: ReadPaths | undefined
  /**
   * Warn when one status or step lasts longer than this.
   * @default 1_800_000 (30 minutes)
   */
  stuckAfterMs?: number | undefined
  /**
   * Called once when one status or step has lasted longer than `stuckAfterMs` (a warning is logged
   * too; the wait goes on).
   */
  onStuck?: ((progress: QueryProgress & { stepElapsedMs: number }) => void) | undefined
  /**
   * The query was just accepted by this service (the wait follows a submission): a page from
   * something in between, even a 404 on both read paths, is then a gateway hiccup and the wait
   * goes on until its timeout. Otherwise such a 404 before any successful read ends the wait
   * (a wrong URL).
   */
  afterSubmission?: boolean | undefined
  /**
   * The result kind the caller's gate expects of this query (`PROOF_VERIFICATION_ON_L2`), when it
   * is one kind: carried by a timeout's or a cancellation's `waitedFor`, so that whoever resumes
   * the wait gates it against the same kind, never a weaker one.
   */
  expectedResult?: string | undefined
}

/** See ProvingClient.waitForQuery: until DONE or FAILED (both results), reporting progress and a step that lasts too long. */
export async function waitForQuery(
  service: ProvingService,
  queryId: string,
  options: WaitForQueryOptions = {},
): Promise<QueryResult> {
  const id = requireId(queryId, 'queryId')
  const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS
  const { clock, logger } = service.http
  const started = clock.now()
  const watch = new StateWatch(options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS, started)
  const reader = new StatusReader(service, id, options.path ?? service.readPaths)
  return pollUntil<QueryResult>(
    async () => {
      const current = await reader.read(options.signal)
      const record = current.provingQuery
      const now = clock.now()
      const progress: QueryProgress = {
        queryId: id,
        status: record.status,
        step: record.step ?? null,
        elapsedMs: now - started,
        record,
      }
      const change = watch.update(`${record.status}|${record.step ?? ''}`, now)
      if (change === 'changed') {
        options.onProgress?.(progress)
      } else if (change === 'stuck') {
        const stepElapsedMs = now - watch.since
        const step = record.step ? ` in step ${serviceLine(record.step, 200)}` : ''
        logger.warn(
          `Query ${id} has been ${serviceLine(record.status, 200)}${step} for ${formatDuration(stepElapsedMs)}, far longer than expected; still waiting until the timeout.`,
        )
        options.onStuck?.({ ...progress, stepElapsedMs })
      }
      if (record.status === 'DONE' || record.status === 'FAILED') return { done: true, value: current }
      if (!(QUERY_STATUSES as readonly string[]).includes(record.status)) {
        throw new UnknownStatusError(
          `Query ${id} reports status "${serviceLine(record.status, 200)}", which this version of proving-kit does not know; check it on the service and update proving-kit.`,
        )
      }
      return { done: false, state: record }
    },
    {
      what: `query ${id}`,
      timeoutMs,
      signal: options.signal,
      clock,
      logger,
      schedule: options.schedule,
      waitedFor: {
        kind: 'query',
        id,
        ...(options.expectedResult === undefined ? {} : { expectedResult: options.expectedResult }),
      },
      pagesAreTransient: options.afterSubmission === true,
    },
  )
}
