/**
 * `verify-proof/`: submits an existing proof.json for verification on L2, then (by default)
 * waits for the query. The gate: the query must be DONE, and its fact may be mocked only when
 * `mock-fact-hash` asked for it.
 */
import { evaluateGate, expectResult } from '../../pipeline/gate.ts'
import { defineAction } from '../steps/define-action.ts'
import { requireService, VERIFY_PROOF_INPUTS } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClient } from '../steps/lazy.ts'
import { serviceQueryStep } from '../steps/query-step.ts'

export const run = defineAction({
  inputs: VERIFY_PROOF_INPUTS,
  crossCheck: requireService,
  step: serviceQueryStep('Verify proof'),
  async work({ io, signal, inputs, step }) {
    const services = await loadClient()
    const client = services.provingClient({ baseUrl: inputs['base-url']!, apiKey: inputs['api-key'], logger: loggerFor(io), allowInsecureHttp: inputs['allow-insecure-http'] === true })
    const { provingQueryId } = await client.submitProofVerification({
      proof: (await import('node:path')).resolve(io.env.GITHUB_WORKSPACE || process.cwd(), inputs.proof),
      stoneVersion: inputs['stone-version'],
      memoryVerification: inputs['memory-verification'],
      mockFactHash: inputs['mock-fact-hash'],
      signal,
    })
    step.submitted(provingQueryId)
    step.facts = { kind: 'skipped', reason: 'a proof file carries no PIE to compare with' }
    // The L2 verification endpoint's kind, whatever the record says (and the resumed `wait`'s).
    const expected = expectResult('PROOF_VERIFICATION_ON_L2')
    step.expecting(expected.label)
    if (!inputs.wait) {
      await step.endWithoutWaiting(provingQueryId, `Follow the query with the \`wait\` sub-action, its \`query-id\` and \`expected-result: ${expected.label}\`.`)
      return
    }
    const result = await step.wait(client, provingQueryId, inputs['timeout-minutes'] * 60_000)
    // The L2 verification endpoint's kind, whatever the record says.
    const refusals = evaluateGate(result.provingQuery, undefined, {
      allowMockedFact: inputs['mock-fact-hash'],
      expected,
      // verify-proof has no `allow-mocked-fact`: a mocked fact passes when `mock-fact-hash` asked for one.
      notAllowed: '`mock-fact-hash` is false',
    })
    await step.finishGate(refusals, `Query ${provingQueryId} is DONE: the proof was verified${result.provingQuery.isFactMocked ? ' (mocked fact, as asked)' : ''}.`)
  },
})
