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
import { defineAction } from '../steps/define-action.ts'
import { API_KEY_SECRET, InputProblemsError, requireSecretAndUrl, STORAGE_QUERY_INPUTS } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import type { STORAGE_QUERY_OUTPUTS } from '../steps/outputs.ts'
import { Step, type StepOptions } from '../steps/step.ts'
import type { Ending, SummaryValue } from '../steps/summary.ts'
import { readJsonInput } from '../steps/task-step.ts'

type OutputName = (typeof STORAGE_QUERY_OUTPUTS)[number]

const requireStorageService = requireSecretAndUrl(API_KEY_SECRET, {
  input: 'storage-proof-url',
  service: 'storage-proof service',
})

type StorageQueryStepOptions = StepOptions & { timeoutMinutes?: number | undefined }

/** The batch query's step: its id and status in the summary, its failures in the service's words. */
class StorageQueryStep extends Step<StorageQueryStepOptions, OutputName> {
  internalId: string | undefined
  status: string | undefined

  override rows(): [string, SummaryValue][] {
    return [
      ['Batch query', { code: this.internalId }],
      ['Status', this.status],
      ['Duration', formatDuration(this.now() - this.started)],
      ...this.extraRows,
    ]
  }

  /** The latest status the wait read: in the summary and the `query-status` output. */
  showLatest(status: string): void {
    this.status = status
    this.outputs.set({ 'query-status': status })
  }

  override async fail(error: unknown): Promise<void> {
    if (error instanceof WaitTimeoutError && typeof error.lastSeen === 'string') this.showLatest(error.lastSeen)
    await super.fail(error)
  }

  protected describe(error: unknown): Ending {
    return describeFailure(error, this.internalId, this.options.timeoutMinutes)
  }
}

export const run = defineAction({
  inputs: STORAGE_QUERY_INPUTS,
  crossCheck: requireStorageService,
  step: (io, signal, inputs) =>
    new StorageQueryStep(io, { action: 'Storage query', signal, timeoutMinutes: inputs?.['timeout-minutes'] }),
  async work({ io, signal, inputs, step }) {
    const parsed = batchQueryBody.safeParse(
      await readJsonInput('query', inputs.query, 'the batch query (POST /batch-query)', io.env.GITHUB_WORKSPACE),
    )
    if (!parsed.success) {
      throw new InputProblemsError(
        describeBatchQueryProblems(parsed.error, 20).map((message) => ({
          input: 'query',
          message: `\`query\`: ${message}.`,
        })),
      )
    }

    const { StorageProofClient } = await import('../../clients/storage-proof.ts')
    step.onClose(async () => (await import('../../core/http.ts')).closeDefaultDispatcher())
    const client: StorageProofClient = new StorageProofClient({
      baseUrl: inputs['storage-proof-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
      allowInsecureHttp: inputs['allow-insecure-http'],
    })
    const internalId = (await client.submitBatchQuery(parsed.data, { signal })).internalId
    step.internalId = internalId
    step.outputs.set({ 'internal-id': internalId })
    step.remember(`batch query ${internalId}`, followBatchQuery(internalId))
    io.info(`Submitted: batch query ${internalId}`)

    if (!inputs.wait) {
      await step.report({
        outcome: 'submitted',
        headline: `Submitted batch query ${internalId}; not waiting for it (\`wait: false\`).`,
        nextSteps: [followBatchQuery(internalId)],
      })
      return
    }
    io.startGroup(`Waiting for batch query ${internalId} (up to ${formatDuration(inputs['timeout-minutes'] * 60_000)})`)
    try {
      const result = await client.waitForBatchQuery(internalId, {
        timeoutMs: inputs['timeout-minutes'] * 60_000,
        signal,
        onProgress: (progress) => {
          step.showLatest(progress.queryStatus)
          io.info(`[${formatDuration(progress.elapsedMs).padStart(6)}] ${progress.queryStatus}`)
        },
      })
      step.showLatest(result.queryStatus)
    } finally {
      io.endGroup()
    }
    if (step.status === 'DONE') {
      await step.report({ outcome: 'passed', headline: `Batch query ${internalId} is DONE.` })
    } else {
      await step.report({
        outcome: 'failed',
        headline: `Batch query ${internalId} ended ${step.status}.`,
        nextSteps: ['Open the batch query in the dashboard explorer (by its internal id) to see why.'],
        failure: `Batch query ${internalId} ended ${step.status}.`,
      })
    }
  },
})

/** How to follow a batch query from outside the step: the CLI (each GitHub release carries it). */
function followBatchQuery(internalId: string): string {
  return `Follow batch query \`${internalId}\` with the CLI (docs/storage-and-auth.md): \`PROVING_STORAGE_PROOF_URL=<url> proving storage status ${internalId} --wait\`, or in the dashboard explorer.`
}

const STORAGE_PROOF_SERVICE: ServiceText = {
  service: 'storage-proof service',
  urlInput: 'storage-proof-url',
  // The batch query is the one body sent; the service's 400 names what it refused in it.
  statusAdvice: (status) => (status === 400 ? 'Fix the batch query: the service names what it refused.' : undefined),
  ambiguous: {
    headline:
      'The batch query may or may not have been submitted; it was not sent again, to avoid paying its fee twice.',
    nextStep: 'Check the dashboard explorer for a new batch query before running this step again.',
  },
  networkDetails: false,
}

function describeFailure(error: unknown, internalId: string | undefined, timeoutMinutes: number | undefined): Ending {
  const follow = internalId ? followBatchQuery(internalId) : undefined
  if (error instanceof AbortedError) {
    return {
      outcome: 'cancelled',
      headline: internalId
        ? `Cancelled while waiting for batch query ${internalId}; it goes on running on the service.`
        : 'Cancelled before the batch query was submitted.',
      nextSteps: follow ? [follow] : undefined,
      failure: internalId
        ? `Cancelled while waiting for batch query ${internalId}.`
        : 'Cancelled before the batch query was submitted.',
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
  return describeServiceFailure(
    error,
    STORAGE_PROOF_SERVICE,
    follow ? { follow: (after) => (after === 'other' ? [] : [follow]) } : undefined,
  )
}
