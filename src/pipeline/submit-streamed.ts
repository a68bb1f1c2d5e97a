/**
 * `prove DIR` in one pass: the PIE directory is packed, validated and uploaded at once, the
 * upload fed from the zip's bytes as the packer writes them (pipeline/prepared-pie.ts `streamPie`).
 *
 * What keeps it safe:
 * - nothing is sent before the directory is found to hold exactly a PIE's files and its JSON
 *   files are valid (a directory refused there never contacts the service);
 * - the body's last bytes (the zip's end record and the closing boundary) are held back until
 *   the PIE is known valid, the zip renamed into place, and the journal written; a PIE found
 *   invalid, or a journal that says "already submitted", cuts the upload before its end, so the
 *   service never has a complete form and creates no query;
 * - a DONE query that already proves the PIE (`reuse`, checked once the PIE is known valid)
 *   cuts the upload before its end too, and is followed instead;
 * - the upload is tried once (its bytes cannot be produced again). A service that refuses it
 *   before processing (411/501/505, a server that wants a length; or, before the body's end,
 *   when it cannot have had the whole form, a network failure, a 5xx or a page from something
 *   in between) gets the packed pie.zip instead, with a warning: the same bytes, sent the
 *   usual way;
 * - the pie.zip is kept as `preparePie` keeps it (`packDir`), byte-identical to what was sent.
 */
import type { ProvingClient } from '../clients/proving.ts'
import { AbortedError, SubmissionOutcomeUnknownError, NetworkError, ServiceError } from '../core/errors.ts'
import type { Logger } from '../core/runtime.ts'
import type { L2Layout } from '../schemas/proving-constants.ts'
import { type JournaledSubmission, type JournalParts, type SubmissionJournal, submitWithJournal } from './journal.ts'
import type { KeyQueries } from './key-queries.ts'
import type { PieStream, PreparedPie } from './prepared-pie.ts'

export type StreamedSubmitOptions = {
  client: ProvingClient
  layout: L2Layout
  prover: string
  mockFactHash: boolean
  signal?: AbortSignal | undefined
  logger: Logger
  /**
   * Once the PIE is known valid, before the upload's end: a query that already proves it
   * (pipeline/reuse.ts), followed instead; the upload is then cut before its end, so the service
   * never has a complete form and creates no query.
   */
  reuse?:
    | ((
        pie: PreparedPie,
      ) => Promise<(JournaledSubmission & { reused?: { createdAt: string | null } | undefined }) | undefined>)
    | undefined
  /** The local journal (never pay twice); absent for a service that forgets (a command's own emulator). */
  journal?:
    | {
        journal: SubmissionJournal
        forceNew: boolean
        forceNewHint?: string | undefined
        parts: (pie: PreparedPie) => JournalParts
        timeoutMs?: number | undefined
        factsChecked?: boolean | undefined
        queries?: KeyQueries | undefined
      }
    | undefined
}

export type StreamedSubmission = {
  pie: PreparedPie
  submitted: JournaledSubmission & { reused?: { createdAt: string | null } | undefined }
  /** False when the service refused the streamed upload and the packed file was sent instead. */
  streamed: boolean
}

/** Statuses that refuse a body's framing (chunked transfer encoding) before reading it. */
const FRAMING_REFUSED = new Set([411, 501, 505])

export async function submitPieStreamed(
  stream: PieStream,
  options: StreamedSubmitOptions,
): Promise<StreamedSubmission> {
  const { client, signal, logger } = options
  const params = { layout: options.layout, prover: options.prover, mockFactHash: options.mockFactHash }
  let released = false
  let failedBeforeEnd = false
  // Nothing goes out before the directory holds a PIE's files and its JSON files are valid.
  await Promise.race([stream.ready, stream.prepared])
  const upload = client.submitPieStream({ ...params, pieBytes: stream.bytes, signal })
  upload.catch((error: unknown) => {
    if (released) return
    failedBeforeEnd = true
    // The upload will take no more bytes (it may never have asked for any: a service URL that
    // does not answer like the service): the packer must not wait for it.
    stream.abandon(error)
  })
  let pie: PreparedPie
  try {
    pie = await stream.prepared
  } catch (error) {
    // The packer failed (an invalid PIE, a read error, an abort): the body was cut before its end.
    await upload.catch(() => {})
    throw error
  }
  let reused
  try {
    reused = await options.reuse?.(pie)
  } catch (error) {
    // A cancelled lookup: the upload never gets its end.
    stream.abandon(error)
    await upload.catch(() => {})
    throw error
  }
  if (reused) {
    stream.abandon(new Error(`The upload was not completed: query ${reused.provingQueryId} already proves this PIE.`))
    await upload.catch(() => {})
    return { pie, submitted: reused, streamed: false }
  }
  let streamed = true
  const finish = async (): Promise<{ provingQueryId: string }> => {
    released = true
    stream.release()
    try {
      return await upload
    } catch (error) {
      if (!mayResendAsFile(error, failedBeforeEnd, signal)) throw error
      streamed = false
      logger.warn(
        `The proving service did not take the PIE sent while it was packed (${describe(error)}); sending the packed pie.zip the usual way instead.`,
      )
      return client.submitPie({ ...params, pieZip: pie.zipPath, signal })
    }
  }
  if (!options.journal) return { pie, submitted: await finish(), streamed }
  let started = false
  try {
    const submitted = await submitWithJournal({
      journal: options.journal.journal,
      parts: options.journal.parts(pie),
      client,
      forceNew: options.journal.forceNew,
      forceNewHint: options.journal.forceNewHint,
      inspection: pie.inspection,
      timeoutMs: options.journal.timeoutMs,
      factsChecked: options.journal.factsChecked,
      queries: options.journal.queries,
      logger,
      signal,
      submit: () => {
        started = true
        return finish()
      },
    })
    return { pie, submitted, streamed }
  } finally {
    if (!started) {
      // The journal followed an earlier query or refused: the upload never gets its end.
      stream.abandon(new Error('The upload was not completed: the journal settled the submission without it.'))
      await upload.catch(() => {})
    }
  }
}

/**
 * Whether a failed streamed upload may be sent again as the packed file: never after a
 * cancellation; when the service refused the framing itself; or when it failed before the
 * body's end without the service answering (or with a 5xx): the form was never complete.
 */
function mayResendAsFile(error: unknown, failedBeforeEnd: boolean, signal: AbortSignal | undefined): boolean {
  if (signal?.aborted || error instanceof AbortedError) return false
  const failure = rootFailure(error)
  if (failure instanceof ServiceError && failure.status !== undefined && FRAMING_REFUSED.has(failure.status))
    return true
  if (!failedBeforeEnd) return false
  // Before the end, nothing complete reached the service: a reset, a 5xx, or a page from
  // something in between (a proxy that will not pass the body on) may be tried as a file.
  return (
    failure instanceof NetworkError ||
    (failure instanceof ServiceError && ((failure.status ?? 0) >= 500 || failure.gatewayPage))
  )
}

/** The failure itself, out of the SubmissionOutcomeUnknownError that may wrap it. */
function rootFailure(error: unknown): unknown {
  return error instanceof SubmissionOutcomeUnknownError && error.cause ? error.cause : error
}

function describe(error: unknown): string {
  const failure = rootFailure(error)
  if (failure instanceof ServiceError && failure.status !== undefined) return `HTTP ${failure.status}`
  return failure instanceof Error
    ? ((failure as { shortMessage?: string }).shortMessage ?? failure.message)
    : String(failure)
}
