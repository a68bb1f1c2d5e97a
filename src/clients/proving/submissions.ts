import { type ProvingKitError, ServiceError } from '../../core/errors.ts'
import { checkServiceId } from '../../core/checks.ts'
import type { RequestBody } from '../../core/http.ts'
import { streamedMultipart } from '../../core/multipart-stream.ts'
import { prepareMultipart } from '../../core/multipart.ts'
import { explainSubmissionFailure, mayHaveBeenProcessed } from '../../core/submission.ts'
import type { QueryRecord } from '../../schemas/proving.ts'
import { isDedupRefusal, resolveDedupId } from './dedup.ts'
import {
  pieForm,
  proofForm,
  queryForm,
  requireFile,
  type SubmitPieOptions,
  type SubmitPieStreamOptions,
  type SubmitProofOptions,
  type SubmitQueryOptions,
} from './forms.ts'
import { apiKeyFor, checkService, type ProvingService, provingSchemas } from './service.ts'

/** What the general submission answers: the query, and the dedupId it went under. */
export type SubmittedQuery = {
  provingQueryId: string
  /** The dedupId already had a (not FAILED) query: that one is followed, nothing was sent. */
  deduplicated: boolean
  /** After a FAILED query only: the dedupId this submission went under instead (its successor in the chain). */
  dedupId?: string | undefined
  /** After a FAILED query only: the FAILED queries of the same submission that this one replaces, oldest first. */
  failedQueryIds?: string[] | undefined
}

const L2_PIE_PATH = '/v1/l2/proving-query/proof-generation-verification'
const PIE_OPERATION = 'submit the PIE for proof generation and verification'
const L2_PROOF_PATH = '/v1/l2/proving-query/proof-verification'
/** Uploads of large files: the service may take long to answer after the last byte. */
const UPLOAD_HEADERS_TIMEOUT_MS = 10 * 60_000

/** What to do after a submission whose answer held an unusable query id: the query may exist (and be paid for). */
const QUERY_ID_REFUSED =
  'The service may hold a new query for it: look among your queries (ProvingClient.listQueries) before submitting again.'
const LOOK_FOR_QUERY = { kind: 'look-for-query' } as const

/** The pie.zip, streamed from disk, to the L2 endpoint (no dedupId: sent once). */
export async function submitPie(
  service: ProvingService,
  options: SubmitPieOptions,
): Promise<{ provingQueryId: string }> {
  const fields = pieForm(options)
  await requireFile(options.pieZip, 'pieZip')
  const body = await prepareMultipart(
    { pieFile: { path: options.pieZip, fileName: 'pie.zip', contentType: 'application/zip' }, ...fields },
    { onProgress: options.onUploadProgress },
  )
  return submitOnce(service, L2_PIE_PATH, body, PIE_OPERATION, options.signal)
}

/** The same submission with the pie.zip sent while it is produced: tried once, the bytes cannot be produced again. */
export async function submitPieStream(
  service: ProvingService,
  options: SubmitPieStreamOptions,
): Promise<{ provingQueryId: string }> {
  const body = streamedMultipart(pieForm(options), {
    field: 'pieFile',
    fileName: 'pie.zip',
    contentType: 'application/zip',
    bytes: options.pieBytes,
  })
  return submitOnce(service, L2_PIE_PATH, body, PIE_OPERATION, options.signal, { maxAttempts: 1 })
}

/** POST /v1/l2/proving-query/proof-verification: verifies an existing proof file on L2. */
export async function submitProofVerification(
  service: ProvingService,
  options: SubmitProofOptions,
): Promise<{ provingQueryId: string }> {
  const body = await prepareMultipart(await proofForm(options))
  return submitOnce(service, L2_PROOF_PATH, body, 'submit the proof for verification', options.signal)
}

/** A submission without a dedupId: never sent again after a failure that may have reached the service. */
async function submitOnce(
  service: ProvingService,
  path: string,
  body: () => RequestBody,
  operation: string,
  signal: AbortSignal | undefined,
  retry?: { maxAttempts: number },
): Promise<{ provingQueryId: string }> {
  apiKeyFor(service, 'Submitting')
  await checkService(service, { signal })
  try {
    const { data } = await service.http.request({
      method: 'POST',
      path,
      query: { apiKey: apiKeyFor(service, 'Submitting') },
      body,
      // Not awaited here: the upload starts while zod loads (~0.1-0.2 s of the main thread).
      schema: provingSchemas().then((schemas) => schemas.submissionResponse),
      operation,
      signal,
      headersTimeoutMs: UPLOAD_HEADERS_TIMEOUT_MS,
      ...(retry ? { retry } : {}),
    })
    return {
      provingQueryId: checkServiceId(
        data.provingQueryId,
        'The query id the proving service returned',
        QUERY_ID_REFUSED,
        LOOK_FOR_QUERY,
      ),
    }
  } catch (error) {
    throw explainSubmissionFailure(error, {
      ambiguous:
        'The submission may or may not have reached the proving service; it was not sent again, to avoid paying twice.',
      howToCheck: 'Look for a new query among your queries (ProvingClient.listQueries) before submitting again.',
      // Cancelled mid-upload is as ambiguous as a lost answer: say where to look.
      ifCancelled:
        'If the upload had started, the service may have created a query anyway: look among your queries (ProvingClient.listQueries) before submitting again.',
      nextStep: LOOK_FOR_QUERY,
    })
  }
}

/**
 * POST /proving-query (extension), safe to send again: after an ambiguous failure (or a refusal
 * of the dedupId as used) the dedupId is looked up first, and only a service without such a query
 * gets the form again. A dedupId whose query FAILED moves to the next one of its chain.
 */
export async function submitQuery(service: ProvingService, options: SubmitQueryOptions): Promise<SubmittedQuery> {
  const fields = await queryForm(service, options)
  let dedupId = fields.dedupId
  const failedQueryIds: string[] = []
  let body = await prepareMultipart(fields.parts, { onProgress: options.onUploadProgress })
  apiKeyFor(service, 'Submitting')
  await checkService(service, { signal: options.signal })
  const answer = (provingQueryId: string, deduplicated: boolean): SubmittedQuery => ({
    provingQueryId,
    deduplicated,
    ...(failedQueryIds.length ? { dedupId, failedQueryIds } : {}),
  })
  const attempt = async () => {
    const { data } = await service.http.request({
      method: 'POST',
      path: '/proving-query',
      headers: { 'api-key': apiKeyFor(service, 'Submitting') },
      body,
      schema: provingSchemas().then((schemas) => schemas.submissionResponse),
      operation: 'submit the query',
      signal: options.signal,
      headersTimeoutMs: UPLOAD_HEADERS_TIMEOUT_MS,
    })
    return checkServiceId(
      data.provingQueryId,
      'The query id the proving service returned',
      QUERY_ID_REFUSED,
      LOOK_FOR_QUERY,
    )
  }
  /** Past the FAILED queries of the chain: the live one to follow, or the next dedupId to use. */
  const resolve = async (): Promise<QueryRecord | null> => {
    const found = await resolveDedupId(service, dedupId, { signal: options.signal })
    if (found.failedQueryIds.length) {
      const next = found.existing
        ? `following query ${found.existing.id}, submitted after it`
        : 'submitting it again as a new query'
      service.http.logger.warn(
        `Query ${found.failedQueryIds.join(', then ')} with this PIE and these parameters FAILED; ${next} (dedupId ${found.dedupId}).`,
      )
      failedQueryIds.push(...found.failedQueryIds)
      if (found.dedupId !== dedupId) {
        dedupId = found.dedupId
        fields.parts.dedupId = dedupId
        body = await prepareMultipart(fields.parts, { onProgress: options.onUploadProgress })
      }
    }
    return found.existing
  }
  const existingFor = async (refusal: ServiceError): Promise<SubmittedQuery> => {
    const refused = dedupId
    const existing = await resolve()
    if (existing) {
      service.http.logger.info(
        `A query with dedupId ${dedupId} exists already (${existing.id}); following it instead of submitting again.`,
      )
      return answer(existing.id, true)
    }
    if (dedupId !== refused) return answer(await attempt(), false)
    throw new ServiceError(
      `The proving service refused the submission as a duplicate of dedupId ${dedupId}, but finds no query with it; give another dedupId, or look among your queries.`,
      {
        status: refusal.status,
        code: refusal.code,
        details: refusal.details,
        cause: refusal,
        nextStep: LOOK_FOR_QUERY,
      },
    )
  }
  try {
    return answer(await attempt(), false)
  } catch (error) {
    // production.md: a used dedupId is refused, not answered with the first id: look it up.
    if (isDedupRefusal(error)) return existingFor(error)
    if (!mayHaveBeenProcessed(error)) throw error
    service.http.logger.warn(
      `The answer to the submission was lost (${(error as ProvingKitError).shortMessage}); looking up dedupId ${dedupId} before sending again.`,
    )
    const existing = await resolve()
    if (existing) return answer(existing.id, true)
    try {
      return answer(await attempt(), false)
    } catch (again) {
      // The lost first answer may land between the lookup and this attempt.
      if (isDedupRefusal(again)) return existingFor(again)
      throw again
    }
  }
}
