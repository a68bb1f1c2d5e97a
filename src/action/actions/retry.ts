/**
 * `retry/`: sends a FAILED, retriable query back to the service (at most 3 times per query),
 * then (by default) waits for it again and applies the root's gate without a PIE: DONE, with the
 * facts its result kind carries, well formed, and a fact that is not mocked and whose mock state
 * the service gives (unless `allow-mocked-fact`). For `expected-program-hash` or a local fact
 * check, follow with the `wait` sub-action.
 */
import { ANY_PROOF } from '../../pipeline/gate.ts'
import { retryAndFollow } from '../../pipeline/statement/index.ts'
import { defineAction } from '../steps/define-action.ts'
import { requireService, RETRY_INPUTS } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClientModule } from '../steps/lazy.ts'
import { mockNote, serviceQueryStep } from '../steps/query-step.ts'

export const run = defineAction({
  inputs: RETRY_INPUTS,
  crossCheck: requireService,
  step: serviceQueryStep('Retry'),
  async work({ io, signal, inputs, step }) {
    const queryId = inputs['query-id']
    const services = await loadClientModule()
    const client = services.provingClient({
      baseUrl: inputs['base-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
    })
    step.queryId = queryId
    step.outputs.set({ 'query-id': queryId })
    const timeoutMs = inputs['timeout-minutes'] * 60_000
    step.facts = { kind: 'skipped', reason: 'the `retry` sub-action has no PIE to compare with' }
    const { retried, judgement } = await retryAndFollow(
      client,
      // A retried query is expected to prove, whatever its record says (for a trace, follow with `wait` and `expected-result`).
      {
        queryId,
        expected: ANY_PROOF,
        gate: { allowMockedFact: inputs['allow-mocked-fact'], verifyFacts: false },
        timeoutMs,
        wait: inputs.wait,
      },
      {
        logger: loggerFor(io),
        signal,
        aroundWait: (wait) => step.showWait(queryId, timeoutMs, wait),
        onRetried: (response) => {
          const record = response.provingQuery
          step.outputs.set({ status: record.status, 'retry-count': String(record.retryCount) })
          step.extraRows.push(['Retries used', `${record.retryCount} of 3`])
          io.info(`${response.message}: query ${queryId} is ${record.status} again (retry ${record.retryCount} of 3).`)
        },
      },
    )
    const record = retried.provingQuery
    if (!judgement) {
      step.record = { ...record, client: null }
      await step.report({
        outcome: 'submitted',
        headline: `Query ${queryId} was sent back to the service (retry ${record.retryCount} of 3); not waiting for it (\`wait: false\`).`,
        nextSteps: ['Follow the query with the `wait` sub-action and its `query-id`.'],
      })
      return
    }
    await step.finishGate(
      judgement.refusals,
      `Query ${queryId} is DONE after retry ${record.retryCount} of 3${mockNote(judgement.result.provingQuery.isFactMocked)}.`,
    )
  },
})
