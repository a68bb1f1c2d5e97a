/** The statement pipeline: one request, one statement or many, decided once for every host. */
export { type Decision, decideReuse, decisionLine, reuseRequestOf } from './decide.ts'
export { type FactsVerdict, type Judgement, judgeQuery } from './judge.ts'
export { followQuery, type FollowInput, retryAndFollow } from './follow.ts'
export {
  checkRequest,
  expectedOf,
  type GatePolicy,
  type GeneralFields,
  inBucket,
  labelOf,
  type JournalPolicy,
  type ReusePolicy,
  resultOf,
  type StatementEndpoint,
  type StatementPolicy,
  type StatementRequest,
  type StatementSubject,
} from './request.ts'
export {
  proveStatements,
  type RunContext,
  type StatementEnding,
  type StatementEvent,
  type StatementHooks,
  type StatementOutcome,
} from './run.ts'
export { wrongProgramDetail } from './prepare.ts'
export type { Submitted } from './submit.ts'
export { actedAs, PLAN_DECISIONS, type PlanContext, type PlanDecision, type PlanRow, planStatements } from './plan.ts'
