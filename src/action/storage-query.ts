/**
 * `storage-query/`: submits a storage-proof batch query (POST /batch-query) from a JSON body
 * given as a path or inline, sets `internal-id` at once, and (by default) waits for DONE. FAILED,
 * a timeout or a cancellation fail the step. Never throws: every ending writes the outputs known
 * so far and the job summary.
 */
import type { StorageProofClient } from '../clients/storage-proof.ts'
import {
  AbortedError,
  AmbiguousSubmissionError,
  InvalidInputError,
  NetworkError,
  ProvingKitError,
  ServiceError,
  WaitTimeoutError,
} from '../core/errors.ts'
import { formatDuration } from '../core/poll.ts'
import { batchQueryBody, describeBatchQueryProblems } from '../schemas/storage-proof.ts'
import { type CrossCheck, InputProblemsError, type InputSpecs, parseInputs, STORAGE_QUERY_INPUTS } from './inputs.ts'
import { loggerFor, type ActionIO } from './io.ts'
import type { RunOptions } from './main.ts'
import { OutputWriter, STORAGE_QUERY_OUTPUTS } from './outputs.ts'
import { renderSummary, runUrl, type Outcome, type SummaryValue } from './summary.ts'
import { readJsonInput } from './task-step.ts'

type OutputName = (typeof STORAGE_QUERY_OUTPUTS)[number]

const requireStorageService: CrossCheck<InputSpecs> = ({ raw, problem }) => {
  if (!raw['api-key']) {
    problem('api-key', '`api-key` is required: pass it from a secret, e.g. `api-key: ${{ secrets.PROVING_API_KEY }}`.')
  }
  if (!raw['storage-proof-url']) problem('storage-proof-url', '`storage-proof-url` is required: the address of the storage-proof service.')
}

type Ending = { outcome: Outcome; headline: string; problems?: string[]; nextSteps?: string[]; failure?: string }

export async function run(io: ActionIO, options: RunOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal
  io.setSecret(io.getInput('api-key'))
  const outputs = new OutputWriter<OutputName>(io)
  const started = Date.now()
  let internalId: string | undefined
  let status: string | undefined
  let timeoutMinutes: number | undefined
  let close: (() => Promise<void>) | undefined
  const report = async (end: Ending) => {
    const rows: [string, SummaryValue][] = [
      ['Batch query', { code: internalId }],
      ['Status', status],
      ['Duration', formatDuration(Date.now() - started)],
    ]
    try {
      await io.appendSummary(renderSummary({ action: 'Storage query', rows, runUrl: runUrl(io.env), ...end }))
    } catch (error) {
      io.warning(`Could not write the job summary: ${(error as Error).message}`)
    }
    if (end.failure) io.setFailed(end.failure)
  }
  try {
    const inputs = parseInputs(io, STORAGE_QUERY_INPUTS, requireStorageService)
    timeoutMinutes = inputs['timeout-minutes']
    const parsed = batchQueryBody.safeParse(await readJsonInput('query', inputs.query, 'the batch query (POST /batch-query)'))
    if (!parsed.success) {
      throw new InputProblemsError(describeBatchQueryProblems(parsed.error, 20).map((message) => ({ input: 'query', message: `\`query\`: ${message}.` })))
    }

    const { StorageProofClient } = await import('../clients/storage-proof.ts')
    close = async () => (await import('../core/http.ts')).closeDefaultDispatcher()
    const client: StorageProofClient = new StorageProofClient({
      baseUrl: inputs['storage-proof-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
    })
    internalId = (await client.submitBatchQuery(parsed.data, { signal })).internalId
    outputs.set({ 'internal-id': internalId })
    io.info(`Submitted: batch query ${internalId}`)

    if (!inputs.wait) {
      await report({
        outcome: 'submitted',
        headline: `Submitted batch query ${internalId}; not waiting for it (\`wait: false\`).`,
        nextSteps: [`Follow it with \`npx -p proving-kit proving storage status ${internalId} --wait\` (with \`PROVING_STORAGE_PROOF_URL\` set).`],
      })
      return
    }
    io.startGroup(`Waiting for batch query ${internalId} (up to ${formatDuration(inputs['timeout-minutes'] * 60_000)})`)
    try {
      const result = await client.waitForBatchQuery(internalId, {
        timeoutMs: inputs['timeout-minutes'] * 60_000,
        signal,
        onProgress: (progress) => {
          status = progress.queryStatus
          outputs.set({ 'query-status': progress.queryStatus })
          io.info(`[${formatDuration(progress.elapsedMs).padStart(6)}] ${progress.queryStatus}`)
        },
      })
      status = result.queryStatus
      outputs.set({ 'query-status': result.queryStatus })
    } finally {
      io.endGroup()
    }
    if (status === 'DONE') {
      await report({ outcome: 'passed', headline: `Batch query ${internalId} is DONE.` })
    } else {
      await report({
        outcome: 'failed',
        headline: `Batch query ${internalId} ended ${status}.`,
        nextSteps: ['Open the batch query in the dashboard explorer (by its internal id) to see why.'],
        failure: `Batch query ${internalId} ended ${status}.`,
      })
    }
  } catch (error) {
    if (error instanceof WaitTimeoutError && typeof error.lastSeen === 'string') {
      status = error.lastSeen
      outputs.set({ 'query-status': error.lastSeen })
    }
    await report(describeFailure(error, internalId, timeoutMinutes))
  } finally {
    await close?.().catch(() => {})
  }
}

function describeFailure(error: unknown, internalId: string | undefined, timeoutMinutes: number | undefined): Ending {
  const follow = internalId ? `Follow it with \`npx -p proving-kit proving storage status ${internalId} --wait\`.` : undefined
  if (error instanceof AbortedError) {
    return {
      outcome: 'cancelled',
      headline: internalId ? `Cancelled while waiting for batch query ${internalId}; it goes on running on the service.` : 'Cancelled before the batch query was submitted.',
      nextSteps: follow ? [follow] : undefined,
      failure: internalId ? `Cancelled while waiting for batch query ${internalId}.` : 'Cancelled before the batch query was submitted.',
    }
  }
  if (error instanceof WaitTimeoutError) {
    return {
      outcome: 'timed-out',
      headline: `Stopped waiting after ${timeoutMinutes === undefined ? 'the timeout' : formatDuration(timeoutMinutes * 60_000)}; batch query ${internalId} is still running on the service.`,
      nextSteps: [...(follow ? [follow] : []), 'Or raise `timeout-minutes`.'],
      failure: `Timed out waiting for batch query ${internalId}.`,
    }
  }
  if (error instanceof AmbiguousSubmissionError) {
    return {
      outcome: 'failed',
      headline: 'The batch query may or may not have been submitted; it was not sent again, to avoid paying its fee twice.',
      problems: [error.details ?? error.shortMessage],
      nextSteps: ['Check the dashboard explorer for a new batch query before running this step again.'],
      failure: error.shortMessage,
    }
  }
  if (error instanceof InvalidInputError) {
    return {
      outcome: 'failed',
      headline: 'An input was refused; nothing was sent.',
      problems: [error.shortMessage, ...(error.metaMessages ?? [])],
      nextSteps: [`Fix ${error.input ? `\`${error.input}\`` : 'the input'} in the workflow file.`],
      failure: error.shortMessage,
    }
  }
  if (error instanceof ServiceError) {
    const status = error.status ?? 0
    const next =
      status === 401 || status === 403
        ? 'Check `api-key`: the storage-proof service refused it (is the secret set for this repository, and still valid?).'
        : status === 400
          ? 'Fix the batch query: the service names what it refused.'
          : 'The storage-proof service is failing or busy: run the step again later.'
    return {
      outcome: 'failed',
      headline: error.shortMessage,
      problems: error.details ? [error.details] : undefined,
      nextSteps: [next, ...(follow ? [follow] : [])],
      failure: error.details ? `${error.shortMessage} ${error.details}` : error.shortMessage,
    }
  }
  if (error instanceof NetworkError) {
    return {
      outcome: 'failed',
      headline: error.shortMessage,
      nextSteps: ['Check `storage-proof-url`, and that the runner can reach the service.', ...(follow ? [follow] : [])],
      failure: error.shortMessage,
    }
  }
  const message = error instanceof ProvingKitError ? error.shortMessage : error instanceof Error ? error.message : String(error)
  return { outcome: 'failed', headline: `The step failed: ${message}`, failure: message }
}
