/**
 * `wait/`: follows a query submitted earlier (by the root action with `wait: false`, by another
 * job, or before a cancellation) to DONE or FAILED and applies the root's gate. Given `pie` (the
 * PIE that was submitted), the facts the service reports are checked locally against it as the
 * root action does (`facts-verified`); without it they are not, while `expected-program-hash`
 * and `allow-mocked-fact` still are, and a DONE proof must still carry well-formed facts. The
 * kind it expects is `expected-result`, else what the run's journal recorded, else a proof.
 */
import { ANY_PROOF, type ExpectedResult, expectResult } from '../../pipeline/gate.ts'
import type { PreparedPie } from '../../pipeline/prepared-pie.ts'
import { followQuery } from '../../pipeline/statement/index.ts'
import { defineAction } from '../steps/define-action.ts'
import { requireService, WAIT_INPUTS } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClientModule } from '../steps/lazy.ts'
import { preparePieForStep, showFacts } from '../steps/query-pie.ts'
import { startGitHub } from '../steps/github.ts'
import { mockNote, serviceQueryStep } from '../steps/query-step.ts'
import type { ActionIO } from '../types.ts'

export const run = defineAction({
  inputs: WAIT_INPUTS,
  crossCheck: requireService,
  step: serviceQueryStep('Wait'),
  async work({ io, signal, inputs, step }) {
    step.expectedProgramHash = inputs['expected-program-hash']
    const subject = inputs.pie ?? `query ${inputs['query-id']}`
    if (
      !(await startGitHub(io, step, inputs, {
        subject,
        serviceUrl: () => inputs['base-url'],
        signal,
        allowInsecureHttp: inputs['allow-insecure-http'] === true,
      }))
    )
      return
    // Before waiting: a PIE that cannot be read fails now, not after the query is done.
    let pie: PreparedPie | undefined
    if (inputs.pie) pie = await preparePieForStep(io, step, inputs.pie, { signal, inspect: true })
    const services = await loadClientModule()
    const client = services.provingClient({
      baseUrl: inputs['base-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
    })
    const queryId = inputs['query-id']
    // What the query was asked for, never its record's word for it: `expected-result`, else what
    // this run's submission journal recorded, else a proof with its facts.
    const expected = await expectedFor(io, inputs['expected-result'], queryId, new URL(client.http.baseUrl).origin)
    const timeoutMs = inputs['timeout-minutes'] * 60_000
    const judgement = await followQuery(
      client,
      {
        queryId,
        expected,
        gate: {
          allowMockedFact: inputs['allow-mocked-fact'],
          expectedProgramHash: inputs['expected-program-hash'],
          verifyFacts: true,
        },
        pie,
        timeoutMs,
      },
      { logger: loggerFor(io), signal, aroundWait: (wait) => step.showWait(queryId, timeoutMs, wait) },
    )
    showFacts(io, step, judgement, { expectedLabel: expected.label, noPie: 'no `pie` was given to compare with' })
    const record = judgement.result.provingQuery
    await step.finishGate(
      judgement.refusals,
      `Query ${queryId} is DONE${mockNote(record.isFactMocked)}${judgement.factCheck?.ok ? ', and the facts match the PIE' : ''}.`,
    )
  },
})

async function expectedFor(
  io: ActionIO,
  input: string | undefined,
  queryId: string,
  service: string,
): Promise<ExpectedResult> {
  if (input !== undefined) return expectResult(input)
  const { actionJournalDir, recordedResult } = await import('../../pipeline/journal.ts')
  const dir = actionJournalDir(io.env)
  const recorded = dir === undefined ? undefined : await recordedResult(dir, queryId, service)
  if (recorded === undefined) return ANY_PROOF
  io.info(`Expecting ${recorded}: what this run's submission journal recorded for query ${queryId}.`)
  return expectResult(recorded)
}
