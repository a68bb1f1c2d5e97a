/**
 * The task service's statuses, stages, fixed messages and limits,
 * and small functions over them. Plain values with no zod, so that the main entry loads without
 * the schemas; the task client loads schemas/tasks.ts on its first request.
 */

// --- Statuses ----------------------------------------------------------------------------

/** A task's statuses, in pipeline order. */
export const TASK_STATUSES = [
  'Received',
  'DryRunStarted',
  'DryRunCompleted',
  'DryRunFailed',
  'ChainProofsFetchStarted',
  'ChainProofsFetchCompleted',
  'ChainProofsFetchFailed',
  'TraceGenStarted',
  'TraceGenCompleted',
  'TraceGenFailed',
  'ProvingStarted',
  'ProvingCompleted',
  'ProvingFailed',
  'TaskDecommitmentStarted',
  'TaskDecommitmentCompleted',
  'TaskDecommitmentFailed',
] as const
/** A task's status: one of {@link TASK_STATUSES}. */
export type TaskStatus = (typeof TASK_STATUSES)[number]

/** The status a task ends in when it succeeded. */
export const TASK_SUCCESS_STATUS = 'TaskDecommitmentCompleted' satisfies TaskStatus
/** The statuses a task ends in when it failed, one per stage. */
export const TASK_FAILED_STATUSES = [
  'DryRunFailed',
  'ChainProofsFetchFailed',
  'TraceGenFailed',
  'ProvingFailed',
  'TaskDecommitmentFailed',
] as const satisfies readonly TaskStatus[]
/** Every status a task ends in. */
export const TERMINAL_TASK_STATUSES = [TASK_SUCCESS_STATUS, ...TASK_FAILED_STATUSES] as const

/** The pipeline's stages, in order, with the status prefix each one reports under. */
export const TASK_STAGES = [
  { stage: 'dry-run', label: 'dry run', prefix: 'DryRun' },
  { stage: 'chain-proofs-fetch', label: 'chain proofs fetch', prefix: 'ChainProofsFetch' },
  { stage: 'trace-generation', label: 'trace generation', prefix: 'TraceGen' },
  { stage: 'proving', label: 'proving', prefix: 'Proving' },
  { stage: 'decommitment', label: 'decommitment', prefix: 'TaskDecommitment' },
] as const
/** A stage of a task's pipeline: `dry-run`, `chain-proofs-fetch`, `trace-generation`, `proving`, `decommitment`. */
export type TaskStage = (typeof TASK_STAGES)[number]['stage']

/**
 * Whether a task in this status has ended.
 *
 * @param status The task's status.
 * @returns true for {@link TASK_SUCCESS_STATUS} and the {@link TASK_FAILED_STATUSES}.
 * @example
 * ```ts
 * import { isTerminalTaskStatus } from 'proving-kit'
 *
 * isTerminalTaskStatus('ProvingFailed') // true
 * ```
 */
export function isTerminalTaskStatus(status: string): boolean {
  return (TERMINAL_TASK_STATUSES as readonly string[]).includes(status)
}

/**
 * The stage of the pipeline a task's status belongs to.
 *
 * @param status The task's status.
 * @returns The stage, `received` before the first one, or undefined for a status this version does not know.
 * @example
 * ```ts
 * import { taskStageOf } from 'proving-kit'
 *
 * taskStageOf('TraceGenStarted') // 'trace-generation'
 * ```
 */
export function taskStageOf(status: string): TaskStage | 'received' | undefined {
  if (status === 'Received') return 'received'
  for (const { stage, prefix } of TASK_STAGES) {
    if (status === `${prefix}Started` || status === `${prefix}Completed` || status === `${prefix}Failed`) return stage
  }
  return undefined
}

/**
 * The name of a stage for a person.
 *
 * @param stage The stage.
 * @returns Its label: "chain proofs fetch".
 * @example
 * ```ts
 * import { taskStageLabel, taskStageOf } from 'proving-kit'
 *
 * const stage = taskStageOf('ChainProofsFetchStarted')
 * if (stage) console.log(taskStageLabel(stage)) // chain proofs fetch
 * ```
 */
export function taskStageLabel(stage: TaskStage | 'received'): string {
  return stage === 'received' ? 'received' : TASK_STAGES.find((entry) => entry.stage === stage)!.label
}

/** The fixed `message` of the two submissions. */
export const TASK_QUEUED_MESSAGE = 'Task has been queued'
/** The fixed `message` of a decommitment-only submission. */
export const DECOMMITMENT_QUEUED_MESSAGE = 'Decommitment-only task has been queued'

export const HEX_PATTERN = /^0x[0-9a-fA-F]+$/

export const TASK_INPUT_VISIBILITIES = ['public', 'private'] as const

/** The hashing functions of an MMR a task reads. */
export const MMR_HASHING_FUNCTIONS = ['Poseidon', 'Keccak'] as const

/** GET /tasks query parameters and their bounds. */
export const TASK_LIST_PARAMETERS = {
  page: 'dp_tasks_page',
  perPage: 'dp_tasks_per_page',
  search: 'dp_tasks_search',
  status: 'dp_tasks_status',
  clientId: 'dp_tasks_client_id',
} as const
/** The tasks per page the service lists when not told. */
export const TASK_LIST_DEFAULT_PER_PAGE = 10
/** The most tasks per page the service lists. */
export const TASK_LIST_MAX_PER_PAGE = 100

export const MISSING_API_KEY_ERROR = 'Missing X-API-KEY header'
export const RATE_LIMIT_ERROR = 'Rate limit exceeded'
