import { mkdir, rm } from 'node:fs/promises'
import { KNOWN_STEPS } from '../schemas/proving.ts'
import type { EmulatorContext } from './context.ts'
import { badRequest, conflict, PROVING_QUERY_NOT_FOUND } from './errors.ts'
import { parseFault } from './faults.ts'
import { currentStepIndex, defaultFailureReason, isTerminal, type Timing } from './proving/lifecycle.ts'
import { gateOf, plannedFailure, queryProgress } from './proving/queries.ts'
import { bucketStatusOf, recordL } from './proving/records.ts'
import { HttpError, type Reply, type Route, type RouteContext } from './router.ts'
import { own, type NextQueryPlan } from './state.ts'

/**
 * The control API under /_emulator/: what tests and benches use to steer the emulator (timing,
 * failures, simulated time, faults) and to look inside it (state, request log). No
 * authentication; documented in docs/emulator.md.
 */
export function controlRoutes(emulator: EmulatorContext): Route[] {
  const state = () => emulator.store.state
  const now = () => emulator.clock.now()
  const save = () => emulator.store.save()
  const control = (method: Route['method'], pattern: string, handler: Route['handler']): Route => ({ method, pattern, handler, control: true })

  return [
    control('POST', '/_emulator/reset', reset),
    control('GET', '/_emulator/timing', () => ({ status: 200, body: { timing: state().timing } })),
    control('PUT', '/_emulator/timing', setTiming),
    control('POST', '/_emulator/queries/:id/fail', failQuery),
    control('POST', '/_emulator/queries/:id/complete', completeQuery),
    control('POST', '/_emulator/next-query', planNextQuery),
    control('POST', '/_emulator/clock/advance', advanceClock),
    control('GET', '/_emulator/state', describeState),
    control('GET', '/_emulator/requests', () => ({ status: 200, body: { requests: emulator.requestLog.list() } })),
    control('DELETE', '/_emulator/requests', clearRequests),
    control('POST', '/_emulator/faults', addFault),
    control('GET', '/_emulator/faults', () => ({ status: 200, body: { faults: state().faults } })),
    control('DELETE', '/_emulator/faults', clearFaults),
    control('DELETE', '/_emulator/faults/:id', removeFault),
    control('POST', '/_emulator/restart', restart),
  ]

  /** Forgets queries, buckets, uploads, plans, faults and the request log; timing back to the start's. */
  async function reset(): Promise<Reply> {
    emulator.store.reset(emulator.initialTiming)
    emulator.requestLog.clear()
    await rm(emulator.uploadsDir, { recursive: true, force: true })
    await mkdir(emulator.uploadsDir, { recursive: true })
    return { status: 200, body: { reset: true } }
  }

  /** Applies to runs started from now on (submissions, retries); running ones keep theirs. */
  async function setTiming(ctx: RouteContext): Promise<Reply> {
    const body = await objectBody(ctx)
    const next: Timing = { ...state().timing }
    for (const key of ['receivedMs', 'stepMs'] as const) {
      const value = body[key]
      if (value === undefined) continue
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return bad(`${key} must be a number of milliseconds >= 0.`)
      next[key] = value
    }
    state().timing = next
    save()
    return { status: 200, body: { timing: next } }
  }

  /** Fails the query now, or when it reaches `step` (at the end of that step). */
  async function failQuery(ctx: RouteContext): Promise<Reply> {
    const query = own(state().queries, ctx.params.id)
    if (!query) return { status: 404, body: PROVING_QUERY_NOT_FOUND }
    const body = await objectBody(ctx)
    if (typeof body.retriable !== 'boolean') return bad('retriable is required (a boolean).')
    if (body.reason !== undefined && typeof body.reason !== 'string') return bad('reason must be a string.')
    if (body.step !== undefined && typeof body.step !== 'string') return bad('step must be a string.')
    const at = now()
    const progress = queryProgress(state(), query, at)
    if (isTerminal(progress)) return { status: 409, body: conflict(`Query ${query.id} is already ${progress.status}.`) }
    const retriable = body.retriable
    if (body.step === undefined) {
      const reason = (body.reason as string | undefined) ?? defaultFailureReason(progress.step ?? 'RECEIVED', retriable)
      query.run.forced = { at, outcome: 'fail', retriable, reason }
    } else {
      const stepIndex = query.run.steps.indexOf(body.step)
      if (stepIndex < 0) return bad(`step must be one of this query's steps: ${query.run.steps.join(', ')}.`)
      if (stepIndex < currentStepIndex(query.run, gateOf(state(), query), at)) {
        return { status: 409, body: conflict(`Query ${query.id} has already passed ${body.step}.`) }
      }
      query.run.failure = plannedFailure(query.run.steps, { retriable, atStep: body.step, reason: (body.reason as string | undefined) ?? null })
    }
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
    save()
    return { status: 200, body: { provingQuery: recordL(query, queryProgress(state(), query, at)) } }
  }

  /** Decides how the next submitted query ends; plans queue up, one per submission. */
  async function planNextQuery(ctx: RouteContext): Promise<Reply> {
    const body = await objectBody(ctx)
    if (body.outcome !== 'fail' && body.outcome !== 'done') return bad('outcome must be "fail" or "done".')
    if (body.retriable !== undefined && typeof body.retriable !== 'boolean') return bad('retriable must be a boolean.')
    if (body.atStep !== undefined && !(KNOWN_STEPS as readonly unknown[]).includes(body.atStep)) {
      return bad(`atStep must be one of ${KNOWN_STEPS.join(', ')}.`)
    }
    if (body.reason !== undefined && typeof body.reason !== 'string') return bad('reason must be a string.')
    const times = body.times ?? 1
    if (!Number.isInteger(times) || (times as number) < 1 || (times as number) > 4) return bad('times must be a whole number from 1 to 4.')
    const plan: NextQueryPlan = {
      outcome: body.outcome,
      retriable: (body.retriable as boolean | undefined) ?? false,
      atStep: (body.atStep as string | undefined) ?? null,
      reason: (body.reason as string | undefined) ?? null,
      times: times as number,
    }
    state().nextQueries.push(plan)
    save()
    return { status: 200, body: { plan, pending: state().nextQueries.length } }
  }

  async function advanceClock(ctx: RouteContext): Promise<Reply> {
    if (!emulator.clock.simulated) {
      return { status: 409, body: conflict('The emulator runs on real time; start it with a simulated clock to advance time.') }
    }
    const body = await objectBody(ctx)
    if (typeof body.ms !== 'number' || !Number.isFinite(body.ms) || body.ms < 0) return bad('ms must be a number of milliseconds >= 0.')
    emulator.clock.advance(body.ms)
    return { status: 200, body: { now: new Date(now()).toISOString(), nowMs: now() } }
  }

  /** A summary for eyes and assertions; the full records are on the service endpoints. */
  function describeState(): Reply {
    const at = now()
    const queries = Object.values(state().queries).map((query) => {
      const progress = queryProgress(state(), query, at)
      return {
        id: query.id,
        owner: query.owner.keyId,
        endpoint: query.endpoint,
        status: progress.status,
        step: progress.step,
        retryCount: query.retryCount,
        dedupId: query.dedupId,
        bucketId: query.bucketId,
        createdAt: new Date(query.createdAt).toISOString(),
      }
    })
    const buckets = Object.values(state().buckets).map((bucket) => ({
      id: bucket.id,
      owner: bucket.owner.keyId,
      status: bucketStatusOf(state(), bucket, at),
      leaves: queries.filter((query) => query.bucketId === bucket.id).length,
    }))
    return {
      status: 200,
      body: {
        now: new Date(at).toISOString(),
        clock: emulator.clock.simulated ? 'simulated' : 'real',
        persistent: emulator.store.persistent,
        timing: state().timing,
        counters: state().counters,
        queries,
        buckets,
        nextQueries: state().nextQueries,
        faults: state().faults,
      },
    }
  }

  function clearRequests(): Reply {
    emulator.requestLog.clear()
    return { status: 200, body: { cleared: true } }
  }

  async function addFault(ctx: RouteContext): Promise<Reply> {
    const fault = parseFault(await ctx.json())
    if (typeof fault === 'string') return bad(fault)
    state().faults.push(fault)
    save()
    return { status: 201, body: { fault } }
  }

  /** Answers, then restarts the whole emulator (see EmulatorContext.restart). */
  async function restart(ctx: RouteContext): Promise<Reply> {
    const body = await objectBody(ctx)
    const downMs = body.downMs ?? 0
    if (typeof downMs !== 'number' || !Number.isFinite(downMs) || downMs < 0 || downMs > 60_000) return bad('downMs must be from 0 to 60000.')
    if (!emulator.restart) return { status: 409, body: conflict('This emulator cannot restart itself.') }
    const restartNow = emulator.restart
    ctx.afterReply(() => void restartNow(downMs).catch((error: unknown) => emulator.logger.error(`emulator: restart failed: ${String(error)}`)))
    return {
      status: 202,
      headers: { connection: 'close' },
      body: { restarting: true, downMs, stateReloaded: emulator.store.persistent },
    }
  }

  function removeFault(ctx: RouteContext): Reply {
    const index = state().faults.findIndex((fault) => fault.id === ctx.params.id)
    if (index < 0) return { status: 404, body: { message: `No fault ${ctx.params.id} (it may have been used up).`, error: 'NOT_FOUND' } }
    const [fault] = state().faults.splice(index, 1)
    save()
    return { status: 200, body: { removed: fault } }
  }

  function clearFaults(): Reply {
    state().faults = []
    save()
    return { status: 200, body: { cleared: true } }
  }
}

function bad(message: string): Reply {
  return { status: 400, body: badRequest(message) }
}

async function objectBody(ctx: RouteContext): Promise<Record<string, unknown>> {
  const body = await ctx.json()
  if (body === undefined) return {}
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, badRequest('The body must be a JSON object.'))
  return body as Record<string, unknown>
}
