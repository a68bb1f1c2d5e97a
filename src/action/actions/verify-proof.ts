/**
 * `verify-proof/`: submits an existing proof.json for verification on L2, then (by default)
 * waits for the query. The gate: the query must be DONE, and its fact may be mocked only when
 * `mock-fact-hash` asked for it.
 */
import { evaluateGate } from '../../pipeline/gate.ts'
import { parseInputs, requireService, VERIFY_PROOF_INPUTS } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClient } from '../steps/lazy.ts'
import { QueryStep } from '../steps/query-step.ts'
import type { ActionIO, RunOptions } from '../types.ts'

export async function run(io: ActionIO, options: RunOptions = {}): Promise<void> {
  const signal = options.signal ?? new AbortController().signal
  io.setSecret(io.getInput('api-key'))
  let inputs
  try {
    inputs = parseInputs(io, VERIFY_PROOF_INPUTS, requireService)
  } catch (error) {
    await new QueryStep(io, { action: 'Verify proof', signal, emulated: false }).fail(error)
    return
  }
  const step = new QueryStep(io, {
    action: 'Verify proof',
    signal,
    emulated: false,
    baseUrl: inputs['base-url'],
    timeoutMinutes: inputs['timeout-minutes'],
  })
  try {
    const services = await loadClient()
    const client = services.provingClient({ baseUrl: inputs['base-url']!, apiKey: inputs['api-key'], logger: loggerFor(io), allowInsecureHttp: inputs['allow-insecure-http'] === true })
    const { provingQueryId } = await client.submitProofVerification({
      proof: inputs.proof,
      stoneVersion: inputs['stone-version'],
      memoryVerification: inputs['memory-verification'],
      mockFactHash: inputs['mock-fact-hash'],
      signal,
    })
    step.submitted(provingQueryId)
    step.facts = { kind: 'skipped', reason: 'a proof file carries no PIE to compare with' }
    if (!inputs.wait) {
      await step.report({
        outcome: 'submitted',
        headline: `Submitted query ${provingQueryId}; not waiting for it (\`wait: false\`).`,
        nextSteps: ['Follow the query with the `wait` sub-action and its `query-id`.'],
      })
      return
    }
    const result = await step.wait(client, provingQueryId, inputs['timeout-minutes'] * 60_000)
    const refusals = evaluateGate(result.provingQuery, undefined, { allowMockedFact: inputs['mock-fact-hash'] })
    await step.finishGate(refusals, `Query ${provingQueryId} is DONE: the proof was verified${result.provingQuery.isFactMocked ? ' (mocked fact, as asked)' : ''}.`)
  } catch (error) {
    await step.fail(error)
  }
}
