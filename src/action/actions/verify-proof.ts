/**
 * `verify-proof/`: submits an existing proof.json for verification on L2, then (by default)
 * waits for the query. The gate: the query must be DONE, and its fact may be mocked only when
 * `mock-fact-hash` asked for it.
 */
import { resolve } from 'node:path'
import { expectResult } from '../../pipeline/gate.ts'
import { proveStatements } from '../../pipeline/statement/index.ts'
import { defineAction } from '../steps/define-action.ts'
import { requireService, VERIFY_PROOF_INPUTS } from '../steps/inputs.ts'
import { loggerFor } from '../steps/io.ts'
import { loadClientModule } from '../steps/lazy.ts'
import { serviceQueryStep } from '../steps/query-step.ts'

export const run = defineAction({
  inputs: VERIFY_PROOF_INPUTS,
  crossCheck: requireService,
  step: serviceQueryStep('Verify proof'),
  async work({ io, signal, inputs, step }) {
    const services = await loadClientModule()
    const client = services.provingClient({
      baseUrl: inputs['base-url']!,
      apiKey: inputs['api-key'],
      logger: loggerFor(io),
      allowInsecureHttp: inputs['allow-insecure-http'] === true,
    })
    const timeoutMs = inputs['timeout-minutes'] * 60_000
    // The L2 verification endpoint's kind, whatever the record says (and the resumed `wait`'s).
    const expected = expectResult('PROOF_VERIFICATION_ON_L2')
    step.expecting(expected.label)
    step.facts = { kind: 'skipped', reason: 'a proof file carries no PIE to compare with' }
    const [outcome] = await proveStatements(
      {
        subjects: [{ kind: 'proof', path: resolve(io.env.GITHUB_WORKSPACE || process.cwd(), inputs.proof) }],
        endpoint: {
          kind: 'proof',
          stoneVersion: inputs['stone-version'],
          memoryVerification: inputs['memory-verification'],
          mockFactHash: inputs['mock-fact-hash'],
        },
        policy: {
          wait: inputs.wait,
          timeoutMs,
          concurrency: 1,
          // verify-proof has no `allow-mocked-fact`: a mocked fact passes when `mock-fact-hash` asked for one.
          gate: {
            allowMockedFact: inputs['mock-fact-hash'],
            verifyFacts: false,
            notAllowed: '`mock-fact-hash` is false',
          },
          reuse: { mode: 'never' },
        },
      },
      {
        client,
        logger: loggerFor(io),
        signal,
        hooks: {
          onEvent: (event) => {
            if (event.type === 'submitted') step.submitted(event.submitted.queryId)
          },
          aroundWait: (_, queryId, wait) => step.showWait(queryId, timeoutMs, wait),
        },
      },
    )
    const ended = outcome!
    if (ended.error !== undefined) throw ended.error
    const provingQueryId = ended.submitted!.queryId
    if (!ended.judgement) {
      await step.endWithoutWaiting(
        provingQueryId,
        `Follow the query with the \`wait\` sub-action, its \`query-id\` and \`expected-result: ${expected.label}\`.`,
      )
      return
    }
    const record = ended.judgement.result.provingQuery
    await step.finishGate(
      ended.judgement.refusals,
      `Query ${provingQueryId} is DONE: the proof was verified${record.isFactMocked ? ' (mocked fact, as asked)' : ''}.`,
    )
  },
})
