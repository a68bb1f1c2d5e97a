import { mkdir, rm } from 'node:fs/promises'
import { z } from 'zod'
import type { EmulatorContext } from './context.ts'
import { millis, objectBody, parseControl } from './control-body.ts'
import { badRequest, conflict } from './errors.ts'
import { parseFault } from './faults.ts'
import { queriesOfBucket, queryProgress } from './proving/queries.ts'
import { bucketStatusOf } from './proving/records.ts'
import { controlRoute, type Reply, type Route, type RouteContext } from './router.ts'

/**
 * The control API under /_emulator/ that concerns the whole emulator: reset, simulated time,
 * faults, restart, and looking inside (state, request log). Each service's own controls sit
 * beside its routes (proving/control.ts: timing, failing and completing queries, planning the
 * next one; tasks/control.ts; the storage-proof and account route tables). No authentication;
 * documented in docs/emulator.md.
 */
export function controlRoutes(emulator: EmulatorContext): Route[] {
  const state = () => emulator.store.state
  const now = () => emulator.clock.now()
  const save = () => emulator.store.save()

  return [
    controlRoute('POST', '/_emulator/reset', reset),
    controlRoute('POST', '/_emulator/clock/advance', advanceClock),
    controlRoute('GET', '/_emulator/state', describeState),
    controlRoute('GET', '/_emulator/requests', () => ({
      status: 200,
      body: { requests: emulator.requestLog.list(), counts: emulator.requestLog.counts() },
    })),
    controlRoute('DELETE', '/_emulator/requests', clearRequests),
    controlRoute('POST', '/_emulator/faults', addFault),
    controlRoute('GET', '/_emulator/faults', () => ({ status: 200, body: { faults: state().faults } })),
    controlRoute('DELETE', '/_emulator/faults', clearFaults),
    controlRoute('DELETE', '/_emulator/faults/:id', removeFault),
    controlRoute('POST', '/_emulator/restart', restart),
  ]

  /** Forgets queries, buckets, uploads, plans, faults and the request log; timing back to the start's. */
  async function reset(): Promise<Reply> {
    emulator.store.reset(emulator.initialTiming)
    emulator.requestLog.clear()
    await rm(emulator.uploadsDir, { recursive: true, force: true })
    await mkdir(emulator.uploadsDir, { recursive: true })
    return { status: 200, body: { reset: true } }
  }

  async function advanceClock(ctx: RouteContext): Promise<Reply> {
    if (!emulator.clock.simulated) {
      return {
        status: 409,
        body: conflict('The emulator runs on real time; start it with a simulated clock to advance time.'),
      }
    }
    const parsed = parseControl(ADVANCE_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    emulator.clock.advance(parsed.data.ms)
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
      leaves: queriesOfBucket(state(), bucket.id).length,
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
    const parsed = parseControl(RESTART_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const { downMs } = parsed.data
    if (!emulator.restart) return { status: 409, body: conflict('This emulator cannot restart itself.') }
    const restartNow = emulator.restart
    ctx.afterReply(
      () =>
        void restartNow(downMs).catch((error: unknown) =>
          emulator.logger.error(`emulator: restart failed: ${String(error)}`),
        ),
    )
    return {
      status: 202,
      headers: { connection: 'close' },
      body: { restarting: true, downMs, stateReloaded: emulator.store.persistent },
    }
  }

  function removeFault(ctx: RouteContext): Reply {
    const index = state().faults.findIndex((fault) => fault.id === ctx.params.id)
    if (index < 0)
      return {
        status: 404,
        body: { message: `No fault ${ctx.params.id} (it may have been used up).`, error: 'NOT_FOUND' },
      }
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

const ADVANCE_BODY = z.object({ ms: millis('ms') })

const DOWN_MS = 'downMs must be from 0 to 60000.'
const RESTART_BODY = z.object({
  downMs: z.number({ error: DOWN_MS }).min(0, { error: DOWN_MS }).max(60_000, { error: DOWN_MS }).default(0),
})
