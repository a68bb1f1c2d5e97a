/**
 * `wait/`: follows a query submitted earlier (by the root action with `wait: false`, by another
 * job, or before a cancellation) to DONE or FAILED and applies the root's gate. It has no PIE,
 * so the facts are not checked locally; `expected-program-hash` and `allow-mocked-fact` still are.
 */
import { evaluateGate } from '../pipeline/gate.ts'
import { parseInputs, requireService, WAIT_INPUTS } from './inputs.ts'
import { loggerFor, type ActionIO } from './io.ts'
import { loadClient } from './lazy.ts'
import type { RunOptions } from './main.ts'
import { QueryStep } from './query-step.ts'

export async function run(io: ActionIO, options: RunOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal
  io.setSecret(io.getInput('api-key'))
  let inputs
  try {
    inputs = parseInputs(io, WAIT_INPUTS, requireService)
  } catch (error) {
    await new QueryStep(io, { action: 'Wait', signal, emulated: false }).fail(error)
    return
  }
  const step = new QueryStep(io, {
    action: 'Wait',
    signal,
    emulated: false,
    baseUrl: inputs['base-url'],
    timeoutMinutes: inputs['timeout-minutes'],
  })
  step.expectedProgramHash = inputs['expected-program-hash']
  try {
    const services = await loadClient()
    const client = services.provingClient({ baseUrl: inputs['base-url']!, apiKey: inputs['api-key'], logger: loggerFor(io) })
    const queryId = inputs['query-id']
    const result = await step.wait(client, queryId, inputs['timeout-minutes'] * 60_000)
    step.facts = { kind: 'skipped', reason: 'the `wait` sub-action has no PIE to compare with' }
    const refusals = evaluateGate(result.provingQuery, undefined, {
      allowMockedFact: inputs['allow-mocked-fact'],
      expectedProgramHash: inputs['expected-program-hash'],
    })
    await step.finishGate(refusals, `Query ${queryId} is DONE${result.provingQuery.isFactMocked ? ' with a mocked fact (allowed)' : ''}.`)
  } catch (error) {
    await step.fail(error)
  }
}
