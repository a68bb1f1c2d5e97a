/**
 * `storage-query/`: submits a storage-proof batch query (POST /batch-query) from a JSON body
 * given as a path or inline, sets `internal-id` at once, and (by default) waits for DONE. FAILED,
 * a timeout or a cancellation fail the step. Never throws: every ending writes the outputs known
 * so far and the job summary.
 */
import type { StorageProofClient } from '../../clients/storage-proof.ts'
import { AbortedError, WaitTimeoutError } from '../../core/errors.ts'
import { formatDuration } from '../../core/poll.ts'
import { batchQueryBody, describeBatchQueryProblems } from '../../schemas/storage-proof.ts'
import { describeServiceFailure, type ServiceText } from '../steps/failure.ts'
import { API_KEY_SECRET, InputProblemsError, parseInputs, requireSecretAndUrl, STORAGE_QUERY_INPUTS } from '../steps/inputs.ts'
import { loggerFor, writeSummary } from '../steps/io.ts'
import { OutputWriter, STORAGE_QUERY_OUTPUTS } from '../steps/outputs.ts'
import { renderSummary, runUrl, type Ending, type SummaryValue } from '../steps/summary.ts'
import { readJsonInput } from '../steps/task-step.ts'
import type { ActionIO, RunOptions } from '../types.ts'

type OutputName = (typeof STORAGE_QUERY_OUTPUTS)[number]

const requireStorageService = requireSecretAndUrl(API_KEY_SECRET, { input: 'storage-proof-url', service: 'storage-proof service' })

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
    await writeSummary(io, renderSummary({ action: 'Storage query', rows, runUrl: runUrl(io.env), ...end }))
    if (end.failure) io.setFailed(end.failure)
  }
  try {
    const inputs = parseInputs(io, STORAGE_QUERY_INPUTS, requireStorageService)
    timeoutMinutes = inputs['timeout-minutes']
    const parsed = batchQueryBody.safeParse(await readJsonInput('query', inputs.query, 'the batch query (POST /batch-query)'))
    if (!parsed.success) {
      throw new InputProblemsError(describeBatchQueryProblems(parsed.error, 20).map((message) => ({ input: 'query', message: `\`query\`: ${message}.` })))
    }

    const { StorageProofClient } = await import('../../clients/storage-proof.ts')
    close = async () => (await import('../../core/http.ts')).closeDefaultDispatcher()
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

const STORAGE_PROOF_SERVICE: ServiceText = {
  service: 'storage-proof service',
  urlInput: 'storage-proof-url',
  // The batch query is the one body sent; the service's 400 names what it refused in it.
  statusAdvice: (status) => (status === 400 ? 'Fix the batch query: the service names what it refused.' : undefined),
  ambiguous: {
    headline: 'The batch query may or may not have been submitted; it was not sent again, to avoid paying its fee twice.',
    nextStep: 'Check the dashboard explorer for a new batch query before running this step again.',
  },
  networkDetails: false,
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
  // Unlike the other steps, nothing to follow after an unexpected failure: kept as it was.
  return describeServiceFailure(error, STORAGE_PROOF_SERVICE, follow ? { follow: (after) => (after === 'other' ? [] : [follow]) } : undefined)
}
