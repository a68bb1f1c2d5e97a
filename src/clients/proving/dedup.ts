/**
 * The dedupId of a general submission: what makes sending it again safe. Derived from the file's
 * digest and the parameters unless given; after a FAILED query, the query retried when its
 * error is retriable (`retryFailedQuery`), else the next dedupId of its chain.
 */
import { createHash } from 'node:crypto'
import { AbortedError, isNoRoute, ServiceError } from '../../core/errors.ts'
import { checkServiceId, requireId } from '../../core/checks.ts'
import type { QueryRecord } from '../../schemas/proving.ts'
import { readQuery } from './reads.ts'
import { apiKeyFor, type ProvingService, provingSchemas } from './service.ts'
import { describeRetry, type RetriedQuery, retryFailedQuery } from './retries.ts'

/** How many FAILED queries a dedupId chain passes before the client stops submitting again. */
export const MAX_FAILED_RESUBMISSIONS = 16

/**
 * The dedupId {@link ProvingClient.submitQuery} derives when none is given: a digest of what is
 * proved and of every field sent (the files and the dedupId itself aside), so the same submission
 * always gets the same one and a changed field gets another.
 *
 * @param digest The SHA-256 of the file sent (for a program, its digest and its input's), or the program hash.
 * @param parts The fields of the submission.
 * @returns `pk-` and 40 hex digits.
 * @example
 * ```ts
 * import { deriveDedupId } from 'proving-kit'
 *
 * const dedupId = deriveDedupId('5f0c...e1', { declaredJobSize: 'XS', layout: 'auto', result: 'PROOF_GENERATION' })
 * ```
 */
export function deriveDedupId(digest: string, parts: Record<string, unknown>): string {
  const parameters = Object.keys(parts)
    .filter((key) => !['pieFile', 'programFile', 'inputFile', 'dedupId'].includes(key))
    .sort()
    .map((key) => `${key}=${String(parts[key])}`)
    .join('&')
  return `pk-${createHash('sha256').update(`${digest}\n${parameters}`).digest('hex').slice(0, 40)}`
}

/**
 * The dedupId to submit with after the query of `dedupId` FAILED: derived from both, so every
 * re-run after that failure agrees on it (and finds the query it creates), and it differs from
 * the one production would refuse as reused.
 */
export function dedupIdAfterFailure(dedupId: string, failedQueryId: string): string {
  return `pk-${createHash('sha256').update(`${dedupId}\nafter FAILED ${failedQueryId}`).digest('hex').slice(0, 40)}`
}

/** In production, a used dedupId is refused with this code, not answered with the first query's id. */
export function isDedupRefusal(error: unknown): error is ServiceError {
  return error instanceof ServiceError && error.code === 'PROVING_QUERY_WITH_DEDUP_ID_ALREADY_EXISTS'
}

/** See ProvingClient.resolveDedupId: the query a dedupId stands for, past the FAILED ones of its chain. */
export async function resolveDedupId(
  service: ProvingService,
  dedupId: string,
  options: { signal?: AbortSignal } = {},
): Promise<{
  dedupId: string
  existing: QueryRecord | null
  failedQueryIds: string[]
  retried?: RetriedQuery | undefined
}> {
  const failedQueryIds: string[] = []
  let current = dedupId
  for (let link = 0; link <= MAX_FAILED_RESUBMISSIONS; link++) {
    const existing = await findQueryByDedupId(service, current, options)
    if (!existing || (await statusOf(service, existing, options)) !== 'FAILED')
      return { dedupId: current, existing, failedQueryIds }
    // Retried, the same query runs again: nothing new is paid for.
    const retry = await retryFailedQuery(service, existing.id, options)
    service.http.logger.warn(describeRetry(existing.id, retry))
    if (retry.retried) return { dedupId: current, existing, failedQueryIds, retried: retry }
    failedQueryIds.push(existing.id)
    current = dedupIdAfterFailure(current, existing.id)
  }
  throw new ServiceError(
    `This submission FAILED ${failedQueryIds.length} times (${failedQueryIds.slice(-3).join(', ')}, ...); nothing was sent again.`,
    {
      metaMessages: [`Read why in the record of query ${failedQueryIds.at(-1)}, then give another dedupId.`],
      nextStep: { kind: 'read-query', id: failedQueryIds.at(-1)! },
    },
  )
}

/**
 * GET /proving-query-by-dedup-id (extension): the query with this dedupId, or null.
 * Production answers it without the `client` object and may omit other fields.
 */
export async function findQueryByDedupId(
  service: ProvingService,
  dedupId: string,
  options: { signal?: AbortSignal } = {},
): Promise<QueryRecord | null> {
  const id = requireId(dedupId, 'dedupId')
  try {
    const { data } = await service.http.request({
      method: 'GET',
      path: '/proving-query-by-dedup-id',
      query: { dedupId: id },
      headers: { 'api-key': apiKeyFor(service, 'Looking up a dedupId') },
      schema: (await provingSchemas()).dedupLookupResponse,
      operation: `look up dedupId ${id}`,
      signal: options.signal,
    })
    const found = data.provingQuery
    // Its id is followed and logged next: the same check as a submission's answer.
    if (found)
      checkServiceId(
        found.id,
        `The query id the proving service gave for dedupId ${id}`,
        'Look for the query among your queries before submitting again.',
        { kind: 'look-for-query' },
      )
    return found
  } catch (error) {
    if (error instanceof ServiceError && error.status === 404 && !isNoRoute(error)) return null
    throw error
  }
}

/**
 * A record's status; read from a path that carries it when the record has none (the documented record
 * D). Unreadable: undefined.
 */
async function statusOf(
  service: ProvingService,
  record: QueryRecord,
  options: { signal?: AbortSignal },
): Promise<string | undefined> {
  if (typeof record.status === 'string') return record.status
  try {
    return (await readQuery(service, record.id, options)).provingQuery.status
  } catch (error) {
    if (error instanceof AbortedError) throw error
    return undefined
  }
}
