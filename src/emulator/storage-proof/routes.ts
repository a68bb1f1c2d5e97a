import { randomUUID } from 'node:crypto'
import { z } from 'zod'
import { type BatchQueryBody, batchQueryBody, describeBatchQueryProblems } from '../../schemas/storage-proof.ts'
import type { EmulatorState, Owner } from '../state.ts'
import { sameOwner } from '../auth.ts'
import type { EmulatorContext } from '../context.ts'
import { millis, objectBody, parseControl, text } from '../control-body.ts'
import { controlRoute, type Reply, type Route, type RouteContext } from '../router.ts'

/**
 * The storage-proof service: `POST /batch-query` and its status, which moves
 * RECEIVED -> IN_PROGRESS -> DONE by the time elapsed since submission (computed on each read,
 * as for proving queries, so a simulated clock moves it along). Control routes under
 * /_emulator/storage-proof/ set the timing and force a failure (docs/emulator.md).
 *
 * Batch queries are kept in the emulator's state under their own key (`storageProof`, plain
 * JSON, like the task service's), so `stateDir` keeps them across restarts and
 * `POST /_emulator/reset` forgets them.
 */

export type StorageTiming = {
  /** Time spent in RECEIVED. */
  receivedMs: number
  /** Time spent in IN_PROGRESS before DONE. */
  inProgressMs: number
}

export const DEFAULT_STORAGE_TIMING: StorageTiming = { receivedMs: 300, inProgressMs: 600 }

type StoredBatchQuery = {
  internalId: string
  owner: Owner
  body: BatchQueryBody
  createdAt: number
  /** The timing at submission: a later change of timing never moves a query backwards. */
  timing: StorageTiming
  failedAt: number | null
  reason: string | null
}

type StorageState = { timing: StorageTiming; queries: Record<string, StoredBatchQuery> }

type WithStorage = EmulatorState & { storageProof?: StorageState }

function storageState(emulator: EmulatorContext): StorageState {
  const state = emulator.store.state as WithStorage
  state.storageProof ??= { timing: { ...DEFAULT_STORAGE_TIMING }, queries: {} }
  return state.storageProof
}

/** An id from a URL is looked up as an own key only (`constructor` is not a batch query). */
function findQuery(emulator: EmulatorContext, id: string): StoredBatchQuery | undefined {
  const queries = storageState(emulator).queries
  return Object.hasOwn(queries, id) ? queries[id] : undefined
}

const UNAUTHORIZED = { error: 'Missing or unknown api-key header' } as const
const NOT_FOUND = { error: 'BATCH_QUERY_NOT_FOUND' } as const

export function storageProofRoutes(emulator: EmulatorContext): Route[] {
  const now = () => emulator.clock.now()

  return [
    { method: 'POST', pattern: '/batch-query', handler: submitBatchQuery },
    // contract.md's status path (public clients of production), and the older one it replaced.
    { method: 'GET', pattern: '/batch-query-status', handler: getStatus },
    { method: 'GET', pattern: '/batch-query/:id/status', handler: getStatus },
    controlRoute('GET', '/_emulator/storage-proof/timing', () => ({
      status: 200,
      body: { timing: storageState(emulator).timing },
    })),
    controlRoute('PUT', '/_emulator/storage-proof/timing', setTiming),
    controlRoute('GET', '/_emulator/storage-proof/batch-queries', listBatchQueries),
    controlRoute('POST', '/_emulator/storage-proof/batch-queries/:id/fail', failBatchQuery),
  ]

  /** POST /batch-query: 401 without a key, 400 `{ error }` naming what is malformed, else 200. */
  async function submitBatchQuery(ctx: RouteContext): Promise<Reply> {
    const owner = emulator.keys.fromHeader(ctx)
    if (!owner) return { status: 401, body: UNAUTHORIZED }
    const result = batchQueryBody.safeParse(await ctx.json())
    if (!result.success)
      return {
        status: 400,
        body: { error: `Invalid batch query: ${describeBatchQueryProblems(result.error).join('; ')}` },
      }
    const state = storageState(emulator)
    const query: StoredBatchQuery = {
      internalId: randomUUID(),
      owner,
      body: result.data,
      createdAt: now(),
      timing: { ...state.timing },
      failedAt: null,
      reason: null,
    }
    state.queries[query.internalId] = query
    emulator.store.touch('batchQueries', query.internalId)
    emulator.store.save()
    return { status: 200, body: { internalId: query.internalId } }
  }

  /** GET /batch-query/{id}/status: another key's query is not found, as an unknown one. */
  function getStatus(ctx: RouteContext): Reply {
    const owner = emulator.keys.fromHeader(ctx)
    if (!owner) return { status: 401, body: UNAUTHORIZED }
    const id = ctx.params.id ?? ctx.query.get('batchQueryId')
    if (!id) return { status: 400, body: { error: 'batchQueryId is required.' } }
    const query = findQuery(emulator, id)
    if (!query || !sameOwner(query.owner, owner)) return { status: 404, body: NOT_FOUND }
    return { status: 200, body: { queryStatus: statusOf(query, now()) } }
  }

  async function setTiming(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(TIMING_BODY, await objectBody(ctx, refusal))
    if (!parsed.ok) return { status: 400, body: refusal(parsed.message) }
    const state = storageState(emulator)
    const next = { ...state.timing }
    for (const key of ['receivedMs', 'inProgressMs'] as const) {
      const value = parsed.data[key]
      if (value !== undefined) next[key] = value
    }
    state.timing = next
    emulator.store.save()
    return { status: 200, body: { timing: next } }
  }

  function listBatchQueries(): Reply {
    return { status: 200, body: { batchQueries: describeBatchQueries(emulator, now()) } }
  }

  /** Fails a batch query now; 409 when it has already ended. */
  async function failBatchQuery(ctx: RouteContext): Promise<Reply> {
    const query = findQuery(emulator, ctx.params.id!)
    if (!query) return { status: 404, body: NOT_FOUND }
    const parsed = parseControl(FAIL_BODY, await objectBody(ctx, refusal))
    if (!parsed.ok) return { status: 400, body: refusal(parsed.message) }
    const at = now()
    const status = statusOf(query, at)
    if (status === 'DONE' || status === 'FAILED')
      return { status: 409, body: { error: `Batch query ${query.internalId} is already ${status}.` } }
    query.failedAt = at
    query.reason = parsed.data.reason ?? 'failed (emulated)'
    emulator.store.touch('batchQueries', query.internalId)
    emulator.store.save()
    return { status: 200, body: { internalId: query.internalId, queryStatus: statusOf(query, at) } }
  }
}

/** The batch queries as the control API shows them (`owner` is the keyId), oldest first. */
export function describeBatchQueries(emulator: EmulatorContext, at: number) {
  return Object.values(storageState(emulator).queries).map((query) => ({
    internalId: query.internalId,
    owner: query.owner.keyId,
    queryStatus: statusOf(query, at),
    createdAt: new Date(query.createdAt).toISOString(),
    destinationChainId: query.body.destinationChainId,
    chains: Object.keys(query.body.data),
    reason: query.reason,
  }))
}

/** Where a batch query stands at `now`. */
export function statusOf(
  query: { createdAt: number; timing: StorageTiming; failedAt: number | null },
  now: number,
): string {
  const doneAt = query.createdAt + query.timing.receivedMs + query.timing.inProgressMs
  if (query.failedAt !== null && query.failedAt < doneAt && query.failedAt <= now) return 'FAILED'
  if (now >= doneAt) return 'DONE'
  if (now >= query.createdAt + query.timing.receivedMs) return 'IN_PROGRESS'
  return 'RECEIVED'
}

/** The storage-proof service's error body: `{ error }`. */
function refusal(message: string): { error: string } {
  return { error: message }
}

const TIMING_BODY = z.object({
  receivedMs: millis('receivedMs').optional(),
  inProgressMs: millis('inProgressMs').optional(),
})
const FAIL_BODY = z.object({ reason: text('reason').optional() })
