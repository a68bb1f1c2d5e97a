/**
 * Judging a finished query, the one place it is done: the facts it reports against the PIE's
 * (where a PIE is at hand and a fact is due), the release gate against what was asked for, then
 * the on-chain check where the policy asks for one. Every host and path (one PIE, many, a
 * follow-up wait, a retry, a proof verification) judges through here.
 */
import type { QueryResult } from '../../clients/proving.ts'
import type { Logger } from '../../core/runtime.ts'
import type { FactCheckResult } from '../../pie/index.ts'
import { afterOnChainCheck, type ExpectedResult, evaluateGate, expectsProof, type GateRefusal } from '../gate.ts'
import { judgeOnChain, type OnchainPolicy, type OnchainVerdict } from '../onchain.ts'
import { checkFacts, type PreparedPie } from '../prepared-pie.ts'
import type { GatePolicy } from './request.ts'

/** What the fact comparison found: equal, different, no fact due (a trace), or not compared (and why). */
export type FactsVerdict = 'match' | 'differ' | 'none' | 'not checked'

/**
 * The release gate's verdict on a query: `passed`, the final record, the fact comparison, the on-
 * chain verdict, and every refusal.
 */
export type Judgement = {
  result: QueryResult
  facts: FactsVerdict
  factCheck?: FactCheckResult | undefined
  /** Why the facts were not compared, or that none is due. */
  factsNote?: string | undefined
  /** Every reason to refuse, the on-chain check's included; none when the gate passed. */
  refusals: GateRefusal[]
  onchain: OnchainVerdict
  /** DONE and nothing refused. */
  passed: boolean
}

export type JudgeInput = {
  expected: ExpectedResult
  gate: GatePolicy
  /** The PIE the query should prove, when there is one. */
  pie?: Pick<PreparedPie, 'zipPath' | 'inspection' | 'factsAhead'> | undefined
  /** A query this run did not pay for (reused): its facts are compared whatever the policy says. */
  reused?: boolean | undefined
  onchain?: OnchainPolicy | undefined
}

export type JudgeOptions = {
  signal?: AbortSignal | undefined
  logger: Logger
  emulatorUrl?: string | undefined
  /** Lines for a person while the on-chain registration is waited for. */
  onOnchainProgress?: ((line: string) => void) | undefined
}

export async function judgeQuery(result: QueryResult, input: JudgeInput, options: JudgeOptions): Promise<Judgement> {
  const record = result.provingQuery
  const done = record.status === 'DONE'
  const proves = expectsProof(input.expected)
  let factCheck: FactCheckResult | undefined
  let facts: FactsVerdict = 'not checked'
  let factsNote: string | undefined
  if (done && !proves) {
    facts = 'none'
    factsNote = `a ${input.expected.label} query generates a trace, not a proof: it has no fact`
  } else if (done && input.pie && (input.gate.verifyFacts || input.reused)) {
    factCheck = await checkFacts(record, input.pie)
    facts = factCheck.ok ? 'match' : 'differ'
  } else {
    factsNote = !done
      ? `the query is ${record.status}`
      : !input.pie
        ? 'there is no PIE to compute them from (a program, a program hash or a proof was submitted)'
        : 'the fact check is off'
  }
  const gated = evaluateGate(record, factCheck, {
    allowMockedFact: input.gate.allowMockedFact,
    expectedProgramHash: input.gate.expectedProgramHash,
    expected: input.expected,
    notAllowed: input.gate.notAllowed,
  })
  // An unknown mock state is what the on-chain check settles: a fact registered in the registry
  // it reads (the real one: the record does not say the fact is mocked) was verified. Every
  // other refusal stands whatever the chain says, and stops the check.
  const refusalsBesidesMockState = gated.filter((refusal) => refusal.kind !== 'mock-state-unknown')
  const onchain = await judgeOnChain(record, input.onchain, refusalsBesidesMockState, {
    signal: options.signal,
    logger: options.logger,
    emulatorUrl: options.emulatorUrl,
    onProgress: options.onOnchainProgress,
  })
  const refusals = afterOnChainCheck(gated, {
    refusals: onchain.refusals,
    registered: onchain.checked && onchain.registered,
  })
  return { result, facts, factCheck, factsNote, refusals, onchain, passed: done && refusals.length === 0 }
}
