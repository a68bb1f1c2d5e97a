import { redactUrl } from '../../core/redact.ts'
import { describeMintedKeys, MASK } from '../account/routes.ts'
import type { EmulatorContext } from '../context.ts'
import { metadataUrlsOf } from '../proving/artifacts.ts'
import { queriesOfBucket, queryProgress } from '../proving/queries.ts'
import { newestFirst, queryIndex } from '../proving/query-index.ts'
import { bucketStatusOf, recordL } from '../proving/records.ts'
import { describeBatchQueries } from '../storage-proof/routes.ts'
import { knownMmrsOf } from '../tasks/derive.ts'
import { positionOf } from '../tasks/pipeline.ts'
import { taskState } from '../tasks/store.ts'

/**
 * Everything the console shows, in one read (GET /_emulator/console/snapshot): what the
 * services hold, newest first, as the control API sees it. No secret leaves here: callers are
 * named by their keyId (a digest), minted keys are masked down to their public prefix, request
 * paths and webhook URLs have their credentials masked. Strings the services or their callers
 * supplied (externalIds, failure reasons, URLs) are passed through as data; the page inserts
 * them as text.
 */

/** The request log is long (10,000 entries); the page shows the newest. */
export const CONSOLE_REQUESTS = 200
/**
 * Rows of each other list: a long run (a bench, a soak test) keeps thousands of queries, and the
 * page reads the snapshot every second. `totals` counts them all.
 */
export const CONSOLE_ROWS = 200

export function consoleSnapshot(emulator: EmulatorContext) {
  const at = emulator.clock.now()
  const state = emulator.store.state
  const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

  // Newest first by creation order: the index's list read from its end, O(rows), not a sort of
  // every query (many share a millisecond under a simulated clock; creation order is exact).
  const storedQueries = queryIndex(state).all
  const queries = newestFirst(storedQueries, 0, CONSOLE_ROWS, null).page.map((query) => {
    const progress = queryProgress(state, query, at)
    const record = recordL(query, progress)
    const path = `/proving-query/${encodeURIComponent(query.id)}`
    return {
      id: query.id,
      owner: query.owner.keyId,
      endpoint: query.endpoint,
      externalId: query.externalId,
      status: progress.status,
      step: progress.step,
      steps: query.run.steps,
      stepsDone: progress.steps.length,
      programHash: record.programHash,
      sharpFactHash: record.sharpFactHash,
      integrityFactHash: record.integrityFactHash,
      isFactMocked: query.mockFactHash,
      bucketId: query.bucketId,
      bucketJobIndex: query.bucketJobIndex,
      errorReason: progress.errorReason,
      retriable: progress.retriable,
      retryCount: query.retryCount,
      createdAt: iso(query.createdAt),
      completedAt: record.completedAt,
      recordUrl: path,
      artifacts: metadataUrlsOf('', query, progress).map((url) => ({ name: url.slice(url.lastIndexOf('/') + 1), url })),
    }
  })

  const storedBuckets = Object.values(state.buckets)
  const buckets = newestFirst(storedBuckets, 0, CONSOLE_ROWS, null).page.map((bucket) => ({
    id: bucket.id,
    owner: bucket.owner.keyId,
    externalId: bucket.externalId,
    status: bucketStatusOf(state, bucket, at),
    leaves: queriesOfBucket(state, bucket.id).length,
    mockProof: bucket.mockProof,
    createdAt: iso(bucket.createdAt),
    closedAt: iso(bucket.closedAt),
  }))

  const storedTasks = Object.values(taskState(emulator).tasks)
  const tasks = newestFirst(storedTasks, 0, CONSOLE_ROWS, null).page.map((task) => {
    const position = positionOf(task.run, at)
    return {
      uuid: task.uuid,
      kind: task.kind,
      owner: task.owner.keyId,
      status: position.status,
      ended: position.terminal,
      errorMessage: position.errorMessage,
      destinationChainId: task.destinationChainId,
      programHash: task.programHash,
      provingQueryId: task.provingQueryId,
      createdAt: iso(task.createdAt),
      updatedAt: iso(position.since),
      mmrs: knownMmrsOf(task, position),
    }
  })

  const withWebhook = storedTasks.filter((task) => task.webhook !== null).reverse()
  const webhooks = withWebhook.slice(0, CONSOLE_ROWS).flatMap((task) => {
    const delivery = task.webhook
    if (!delivery) return []
    const last = delivery.attempts.at(-1)
    return [
      {
        taskId: task.uuid,
        url: redactUrl(delivery.url),
        state: delivery.state,
        attempts: delivery.attempts.length,
        lastAt: last?.at ?? null,
        lastStatus: last?.status ?? null,
        lastError: last?.error ?? null,
        event: delivery.payload?.status ?? null,
      },
    ]
  })

  const allBatchQueries = describeBatchQueries(emulator, at).reverse()
  const batchQueries = allBatchQueries.slice(0, CONSOLE_ROWS)

  // Every caller the emulator knows, by keyId: from the allow-list, minted by the account
  // service, or seen on a record (any key is accepted without a list).
  type KeyRow = {
    keyId: string
    masked: string
    source: string
    name: string | null
    projectId: string | null
    createdAt: string | null
    queries: number
    tasks: number
    batchQueries: number
  }
  const keys = new Map<string, KeyRow>()
  const keyRow = (keyId: string, source: string): KeyRow => {
    let row = keys.get(keyId)
    if (!row) {
      row = {
        keyId,
        masked: MASK,
        source,
        name: null,
        projectId: null,
        createdAt: null,
        queries: 0,
        tasks: 0,
        batchQueries: 0,
      }
      keys.set(keyId, row)
    }
    return row
  }
  const allowed = emulator.keys.allowedKeyIds()
  for (const keyId of allowed ?? []) keyRow(keyId, 'allow-list')
  for (const minted of describeMintedKeys(emulator)) {
    Object.assign(keyRow(minted.keyId, 'account service'), {
      source: 'account service',
      masked: minted.masked,
      name: minted.name,
      projectId: minted.projectId,
      createdAt: minted.createdAt,
    })
  }
  for (const [keyId, owned] of queryIndex(state).byOwner) keyRow(keyId, 'seen').queries += owned.length
  for (const task of storedTasks) keyRow(task.owner.keyId, 'seen').tasks++
  for (const batch of allBatchQueries) keyRow(batch.owner, 'seen').batchQueries++

  const requests = emulator.requestLog.list()
  return {
    now: new Date(at).toISOString(),
    clock: emulator.clock.simulated ? 'simulated' : 'real',
    persistent: emulator.store.persistent,
    shape: emulator.shape,
    timing: state.timing,
    queries,
    nextQueries: state.nextQueries,
    buckets,
    tasks,
    batchQueries,
    keys: { anyKeyAccepted: allowed === null, keys: [...keys.values()] },
    webhooks,
    requests: requests.slice(-CONSOLE_REQUESTS).reverse(),
    requestCount: requests.length,
    totals: {
      queries: storedQueries.length,
      buckets: storedBuckets.length,
      tasks: storedTasks.length,
      batches: allBatchQueries.length,
      webhooks: withWebhook.length,
      requests: requests.length,
    },
    faults: state.faults.length,
  }
}
