/**
 * Outputs: the names of each action.yml, the mapping from a query to them, and a writer that
 * sets each one as soon as its value is known (so a step that fails, times out or is cancelled
 * still hands the next step its `query-id`). An output whose value is not known is left unset:
 * the runner then gives ''.
 */
import type { QueryResult } from '../../clients/proving.ts'
import type { BucketRecord } from '../../schemas/proving.ts'
import { bytes32Text } from '../../pie/shared/index.ts'
import type { ActionIO } from '../types.ts'

export const QUERY_OUTPUTS = [
  'query-id',
  'status',
  'step',
  'program-hash',
  'integrity-fact-hash',
  'sharp-fact-hash',
  'is-fact-mocked',
  'facts-verified',
  'metadata-urls',
  'pie-zip',
  'pie-sha256',
  'error-reason',
  'emulated',
] as const

/** The `task/` and `decommit/` sub-actions' outputs. */
export const TASK_OUTPUTS = ['task-uuid', 'status', 'error-message', 'mmrs', 'updated-at'] as const
export type TaskOutputName = (typeof TASK_OUTPUTS)[number]
/** The `task/` and `decommit/` sub-actions: the task's outputs and, like every action, `error-reason`. */
export const TASK_STEP_OUTPUTS = [...TASK_OUTPUTS, 'error-reason'] as const

/**
 * The root action's names for the outputs of the decommitment that follows a DONE proof
 * (`decommit-destination-chain-id`): its own `status` is the query's.
 */
export const ROOT_DECOMMIT_OUTPUT_NAMES = {
  'task-uuid': 'task-uuid',
  status: 'task-status',
  'error-message': 'task-error-message',
  mmrs: 'mmrs',
  'updated-at': 'task-updated-at',
} as const satisfies Record<TaskOutputName, string>

/** The root action adds the on-chain check's and the decommitment's outputs to the query's. */
export const MAIN_OUTPUTS = [
  ...QUERY_OUTPUTS,
  'onchain-verified',
  'onchain-details',
  'reused',
  'dedup-id',
  'bucket-id',
  'bucket-job-index',
  'results',
  'plan',
  ...TASK_OUTPUTS.map((name) => ROOT_DECOMMIT_OUTPUT_NAMES[name]),
  'artifact-id',
  'artifact-url',
  'release-url',
  'release-assets',
  'facts-json',
  'attestation-statement',
] as const

/** `wait/` adds the GitHub side's outputs to the query's (src/action/github/). */
export const WAIT_OUTPUTS = [
  ...QUERY_OUTPUTS,
  'release-url',
  'release-assets',
  'facts-json',
  'attestation-statement',
] as const

export const PACK_OUTPUTS = [
  'pie-zip',
  'pie-sha256',
  'size-bytes',
  'n-steps',
  'job-size',
  'program-hash',
  'output',
  'error-reason',
] as const
export const RETRY_OUTPUTS = ['status', 'retry-count', ...QUERY_OUTPUTS.filter((name) => name !== 'status')] as const
export const BUCKET_CLOSE_OUTPUTS = [
  'bucket-id',
  'leaves',
  'bucket',
  'status',
  'gate-passed',
  'queries',
  'error-reason',
] as const
export const BUCKET_CREATE_OUTPUTS = ['bucket-id', 'bucket', 'error-reason'] as const
export const STORAGE_QUERY_OUTPUTS = ['internal-id', 'query-status', 'error-reason'] as const
export const API_KEY_OUTPUTS = ['api-key', 'project-id', 'wallet', 'error-reason'] as const

/** Every action's outputs by the folder of its action.yml ('' is the root). */
export const ACTION_OUTPUTS: Record<string, readonly string[]> = {
  '': MAIN_OUTPUTS,
  pack: PACK_OUTPUTS,
  wait: WAIT_OUTPUTS,
  'verify-proof': QUERY_OUTPUTS,
  retry: RETRY_OUTPUTS,
  'bucket-close': BUCKET_CLOSE_OUTPUTS,
  'bucket-create': BUCKET_CREATE_OUTPUTS,
  task: TASK_STEP_OUTPUTS,
  decommit: TASK_STEP_OUTPUTS,
  'storage-query': STORAGE_QUERY_OUTPUTS,
  'api-key': API_KEY_OUTPUTS,
}

export type QueryOutputName = (typeof QUERY_OUTPUTS)[number]
export type Outputs<N extends string = string> = Partial<Record<N, string>>

const flag = (value: boolean | null | undefined): string | undefined =>
  value === null || value === undefined ? undefined : String(value)

/** What the service's record says, in output names; fields the record leaves null stay unset. */
export function queryOutputs(result: QueryResult): Outputs<QueryOutputName> {
  const query = result.provingQuery
  return prune({
    'query-id': query.id,
    status: query.status,
    step: query.step ?? undefined,
    'program-hash': query.programHash ?? undefined,
    'integrity-fact-hash': query.integrityFactHash ?? undefined,
    // bytes32 on chain: `0x` and 64 hex digits (pie/shared/hex.ts); felts keep their minimal form.
    'sharp-fact-hash': typeof query.sharpFactHash === 'string' ? bytes32Text(query.sharpFactHash) : undefined,
    'is-fact-mocked': flag(query.isFactMocked),
    'metadata-urls': JSON.stringify(result.metadataUrls),
    'error-reason': query.errorReason ?? undefined,
  })
}

export function bucketOutputs(bucket: BucketRecord): Outputs<(typeof BUCKET_CLOSE_OUTPUTS)[number]> {
  return prune({
    'bucket-id': bucket.id,
    leaves: bucket.leaves === undefined || bucket.leaves === null ? undefined : String(bucket.leaves),
    bucket: JSON.stringify(bucket),
  })
}

function prune<T extends Record<string, string | undefined>>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== '')) as T
}

/**
 * Sets outputs as they become known; a value is written again only when it changes (the runner
 * keeps the last one). `values` is what was set, for the summary.
 */
export class OutputWriter<N extends string = string> {
  readonly #io: Pick<ActionIO, 'setOutput'>
  readonly #values = new Map<N, string>()

  constructor(io: Pick<ActionIO, 'setOutput'>) {
    this.#io = io
  }

  set(outputs: Outputs<N>): void {
    for (const [name, value] of Object.entries(outputs) as [N, string | undefined][]) {
      if (value === undefined || this.#values.get(name) === value) continue
      this.#values.set(name, value)
      this.#io.setOutput(name, value)
    }
  }

  get(name: N): string | undefined {
    return this.#values.get(name)
  }

  get values(): Outputs<N> {
    return Object.fromEntries(this.#values) as Outputs<N>
  }
}
