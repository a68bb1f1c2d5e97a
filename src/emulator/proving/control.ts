import { z } from 'zod'
import { KNOWN_STEPS } from '../../schemas/proving-constants.ts'
import type { EmulatorContext } from '../context.ts'
import { flag, millis, objectBody, parseControl, text } from '../control-body.ts'
import { badRequest, conflict, PROVING_QUERY_NOT_FOUND } from '../errors.ts'
import { controlRoute, type Reply, type Route, type RouteContext } from '../router.ts'
import { own, type NextQueryPlan } from '../state.ts'
import { currentStepIndex, defaultFailureReason, isTerminal, type Timing } from './lifecycle.ts'
import { gateOf, plannedFailure, queryProgress } from './queries.ts'
import { recordL } from './records.ts'

/**
 * The proving service's controls under /_emulator/: its timing, failing or completing a query,
 * and planning how the next submissions end. Bodies are read with the zod schemas below; the
 * first problem is the 400's message. Documented in docs/emulator.md.
 */
export function provingControlRoutes(emulator: EmulatorContext): Route[] {
  const state = () => emulator.store.state
  const now = () => emulator.clock.now()
  const save = () => emulator.store.save()

  return [
    controlRoute('GET', '/_emulator/timing', () => ({ status: 200, body: { timing: state().timing } })),
    controlRoute('PUT', '/_emulator/timing', setTiming),
    controlRoute('POST', '/_emulator/queries/:id/fail', failQuery),
    controlRoute('POST', '/_emulator/queries/:id/complete', completeQuery),
    controlRoute('POST', '/_emulator/queries/:id/record', overrideRecord),
    controlRoute('POST', '/_emulator/next-query', planNextQuery),
  ]

  /** Applies to runs started from now on (submissions, retries); running ones keep theirs. */
  async function setTiming(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(TIMING_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const next: Timing = { ...state().timing }
    if (parsed.data.receivedMs !== undefined) next.receivedMs = parsed.data.receivedMs
    if (parsed.data.stepMs !== undefined) next.stepMs = parsed.data.stepMs
    state().timing = next
    save()
    return { status: 200, body: { timing: next } }
  }

  /** Fails the query now, or when it reaches `step` (at the end of that step). */
  async function failQuery(ctx: RouteContext): Promise<Reply> {
    const query = own(state().queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const parsed = parseControl(FAIL_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const { retriable, reason, step } = parsed.data
    const at = now()
    const progress = queryProgress(state(), query, at)
    if (isTerminal(progress)) return { status: 409, body: conflict(`Query ${query.id} is already ${progress.status}.`) }
    if (step === undefined) {
      query.run.forced = {
        at,
        outcome: 'fail',
        retriable,
        reason: reason ?? defaultFailureReason(progress.step ?? 'RECEIVED', retriable),
      }
    } else {
      const stepIndex = query.run.steps.indexOf(step)
      if (stepIndex < 0) return bad(`step must be one of this query's steps: ${query.run.steps.join(', ')}.`)
      if (stepIndex < currentStepIndex(query.run, gateOf(state(), query), at)) {
        return { status: 409, body: conflict(`Query ${query.id} has already passed ${step}.`) }
      }
      query.run.failure = plannedFailure(query.run.steps, { retriable, atStep: step, reason: reason ?? null })
    }
    emulator.store.touch('queries', query.id)
    save()
    return { status: 200, body: { provingQuery: recordL(query, queryProgress(state(), query, at)) } }
  }

  /** Finishes the query now (DONE), whatever its timing or bucket. */
  function completeQuery(ctx: RouteContext): Reply {
    const query = own(state().queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const at = now()
    const progress = queryProgress(state(), query, at)
    if (isTerminal(progress)) return { status: 409, body: conflict(`Query ${query.id} is already ${progress.status}.`) }
    query.run.forced = { at, outcome: 'done' }
    emulator.store.touch('queries', query.id)
    save()
    return { status: 200, body: { provingQuery: recordL(query, queryProgress(state(), query, at)) } }
  }

  /**
   * Makes the query's record say other facts or mock state than what was proved, another
   * bucket than the one that lists it, or a prover (a field given as null is reported null),
   * finished or not; the fields left out keep what they were.
   */
  async function overrideRecord(ctx: RouteContext): Promise<Reply> {
    const query = own(state().queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const parsed = parseControl(RECORD_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    query.recordOverride = { ...query.recordOverride, ...parsed.data }
    emulator.store.touch('queries', query.id)
    save()
    return { status: 200, body: { provingQuery: recordL(query, queryProgress(state(), query, now())) } }
  }

  /** Decides how the next submitted query ends; plans queue up, one per submission. */
  async function planNextQuery(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(NEXT_QUERY_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const body = parsed.data
    const plan: NextQueryPlan = {
      outcome: body.outcome,
      retriable: body.retriable ?? false,
      atStep: body.atStep ?? null,
      reason: body.reason ?? null,
      times: body.times,
      ...(body.record ? { record: body.record } : {}),
    }
    state().nextQueries.push(plan)
    save()
    return { status: 200, body: { plan, pending: state().nextQueries.length } }
  }
}

function bad(message: string): Reply {
  return { status: 400, body: badRequest(message) }
}

const TIMING_BODY = z.object({ receivedMs: millis('receivedMs').optional(), stepMs: millis('stepMs').optional() })

const FAIL_BODY = z.object({
  retriable: z.boolean({ error: 'retriable is required (a boolean).' }),
  reason: text('reason').optional(),
  step: text('step').optional(),
})

const HASH_TEXT = (field: string) =>
  z
    .string({ error: `${field} must be a string (any text: a malformed hash is allowed) or null.` })
    .max(200, { error: `${field} is at most 200 characters.` })
    .nullable()
    .optional()
/** The record's facts, mock state, result kind, step, bucket and prover as a test wants them said (malformed text included). */
const RECORD_BODY = z.strictObject(
  {
    programHash: HASH_TEXT('programHash'),
    sharpFactHash: HASH_TEXT('sharpFactHash'),
    integrityFactHash: HASH_TEXT('integrityFactHash'),
    isFactMocked: z.boolean({ error: 'isFactMocked must be a boolean or null.' }).nullable().optional(),
    result: HASH_TEXT('result'),
    step: HASH_TEXT('step'),
    bucketId: HASH_TEXT('bucketId'),
    sharpProver: HASH_TEXT('sharpProver'),
  },
  {
    error:
      'record takes programHash, sharpFactHash, integrityFactHash, isFactMocked, result, step, bucketId and sharpProver only.',
  },
)

const TIMES = 'times must be a whole number from 1 to 4.'
const NEXT_QUERY_BODY = z.object({
  outcome: z.enum(['fail', 'done'], { error: 'outcome must be "fail" or "done".' }),
  retriable: flag('retriable').optional(),
  atStep: z.enum(KNOWN_STEPS, { error: `atStep must be one of ${KNOWN_STEPS.join(', ')}.` }).optional(),
  reason: text('reason').optional(),
  times: z.number({ error: TIMES }).int({ error: TIMES }).min(1, { error: TIMES }).max(4, { error: TIMES }).default(1),
  record: RECORD_BODY.optional(),
})
