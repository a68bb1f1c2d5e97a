/**
 * A FAILED query run again: POST /proving-queries/{id}/retry, and what a re-run does with the
 * FAILED query it finds (retry it when the service allows, else say why a new one is submitted).
 */
import { AbortedError, ServiceError } from '../../core/errors.ts'
import { requireId } from '../../core/checks.ts'
import { serviceLine } from '../../core/service-text.ts'
import type { RetryResponse } from '../../schemas/proving.ts'
import { getQuery } from './reads.ts'
import { apiKeyFor, type ProvingService, provingSchemas } from './service.ts'

/** POST /proving-queries/{id}/retry: sends a FAILED, retriable query back to RECEIVED. */
export async function retryQuery(
  service: ProvingService,
  queryId: string,
  options: { signal?: AbortSignal } = {},
): Promise<RetryResponse> {
  const id = requireId(queryId, 'queryId')
  const { data } = await service.http.request({
    method: 'POST',
    path: `/proving-queries/${encodeURIComponent(id)}/retry`,
    headers: { 'api-key': apiKeyFor(service, 'Retrying a query') },
    schema: (await provingSchemas()).retryResponse,
    operation: `retry query ${id}`,
    signal: options.signal,
  })
  return data
}

/** The most retries the proving service allows a query. */
export const MAX_QUERY_RETRIES = 3

/** A FAILED query sent back to run again (or found already running again: `byAnother`). */
export type RetriedQuery = {
  retried: true
  queryId: string
  retryCount: number | undefined
  errorReason: string
  byAnother: boolean
}

/** What a re-run did with a FAILED query it found: retried it, or why not (then a new query is submitted). */
export type FailedQueryRetry = RetriedQuery | { retried: false; queryId: string; reason: string }

/**
 * A re-run found its earlier query FAILED: retry it (POST /proving-queries/{id}/retry) when its
 * error is retriable and fewer than 3 retries are used, so the same query runs again instead of
 * a new, paid one. Record D's `isRetriable` and `retryCount` decide when the service gives them;
 * when it does not (production may leave both out) the retry endpoint is asked, and its
 * refusal (400 QUERY_NOT_RETRIABLE, MAX_RETRIES_REACHED; 403, 404) means "submit a new query". 409 (no
 * longer FAILED) means another run retried it: it is followed. Any other failure of the retry is
 * thrown: whether it took effect is unknown, so nothing is submitted.
 */
export async function retryFailedQuery(
  service: ProvingService,
  queryId: string,
  options: { signal?: AbortSignal } = {},
): Promise<FailedQueryRetry> {
  let record:
    | {
        isRetriable?: boolean | null | undefined
        retryCount?: number | null | undefined
        errorReason?: string | null | undefined
      }
    | undefined
  try {
    record = (await getQuery(service, queryId, options)).provingQuery
  } catch (error) {
    if (error instanceof AbortedError) throw error
    // Unreadable: the retry endpoint decides.
  }
  const errorReason = serviceLine(record?.errorReason?.trim() || 'no reason given', 200)
  const count = typeof record?.retryCount === 'number' ? record.retryCount : undefined
  const limit = (used: number | undefined) => ({
    retried: false as const,
    queryId,
    reason: `the retry limit is reached (${used ?? MAX_QUERY_RETRIES} of ${MAX_QUERY_RETRIES} retries used)`,
  })
  const refused = retryRefusal(record)
  if (refused === 'limit') return limit(count)
  if (refused === 'not-retriable')
    return { retried: false, queryId, reason: `its error is not retriable (${errorReason})` }
  try {
    const answer = await retryQuery(service, queryId, options)
    const retryCount =
      typeof answer.provingQuery.retryCount === 'number'
        ? answer.provingQuery.retryCount
        : count === undefined
          ? undefined
          : count + 1
    return { retried: true, queryId, retryCount, errorReason, byAnother: false }
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error
    if (error.code === 'MAX_RETRIES_REACHED') return limit(count)
    if (error.code === 'QUERY_NOT_RETRIABLE')
      return { retried: false, queryId, reason: `its error is not retriable (${errorReason})` }
    if (error.status === 409) return { retried: true, queryId, retryCount: undefined, errorReason, byAnother: true }
    if (error.status === 403 || error.status === 404)
      return {
        retried: false,
        queryId,
        reason: `the service refuses to retry it (${error.status} ${serviceLine(error.code ?? '', 80)})`.replace(
          ' )',
          ')',
        ),
      }
    throw new ServiceError(
      `Query ${queryId} FAILED, and retrying it failed (${error.shortMessage}); nothing new was submitted.`,
      {
        status: error.status,
        code: error.code,
        details: error.details,
        cause: error,
        metaMessages: ["The retry may have taken effect: run again, or read the query's record first."],
        nextStep: { kind: 'read-query', id: queryId },
      },
    )
  }
}

/**
 * What record D says of a FAILED query's retry before the endpoint is asked: its retries used up,
 * its error not retriable, or undefined (retriable, or not said: the endpoint decides). The one
 * rule a retry and a plan both read.
 */
export function retryRefusal(
  record: { isRetriable?: unknown; retryCount?: unknown } | undefined,
): 'limit' | 'not-retriable' | undefined {
  if (typeof record?.retryCount === 'number' && record.retryCount >= MAX_QUERY_RETRIES) return 'limit'
  if (record?.isRetriable === false) return 'not-retriable'
  return undefined
}

/** One line for the log: "Query X failed with a retriable error (…); retried it (retry 2 of 3)", or why it was not. */
export function describeRetry(queryId: string, retry: FailedQueryRetry): string {
  if (!retry.retried) return `Query ${queryId} FAILED and cannot be retried: ${retry.reason}.`
  if (retry.byAnother)
    return `Query ${queryId} FAILED (${retry.errorReason}) and is running again (another run retried it); following it instead of paying for a new query.`
  const which = retry.retryCount === undefined ? '' : ` (retry ${retry.retryCount} of ${MAX_QUERY_RETRIES})`
  return `Query ${queryId} failed with a retriable error (${retry.errorReason}); retried it${which}, and following it instead of paying for a new query.`
}
