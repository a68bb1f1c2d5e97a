/**
 * The task service's statuses, stages, fixed messages and limits,
 * and small functions over them. Plain values with no zod, so that the main entry loads without
 * the schemas; the task client loads schemas/tasks.ts on its first request.
 */

// --- Statuses ----------------------------------------------------------------------------

/** Task statuses in pipeline order. */
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
export type TaskStatus = (typeof TASK_STATUSES)[number]

export const TASK_SUCCESS_STATUS = 'TaskDecommitmentCompleted' satisfies TaskStatus
export const TASK_FAILED_STATUSES = [
  'DryRunFailed',
  'ChainProofsFetchFailed',
  'TraceGenFailed',
  'ProvingFailed',
  'TaskDecommitmentFailed',
] as const satisfies readonly TaskStatus[]
export const TERMINAL_TASK_STATUSES = [TASK_SUCCESS_STATUS, ...TASK_FAILED_STATUSES] as const

/** The pipeline's stages, in order, with the status prefix each one reports under. */
export const TASK_STAGES = [
  { stage: 'dry-run', label: 'dry run', prefix: 'DryRun' },
  { stage: 'chain-proofs-fetch', label: 'chain proofs fetch', prefix: 'ChainProofsFetch' },
  { stage: 'trace-generation', label: 'trace generation', prefix: 'TraceGen' },
  { stage: 'proving', label: 'proving', prefix: 'Proving' },
  { stage: 'decommitment', label: 'decommitment', prefix: 'TaskDecommitment' },
] as const
export type TaskStage = (typeof TASK_STAGES)[number]['stage']

export function isTerminalTaskStatus(status: string): boolean {
  return (TERMINAL_TASK_STATUSES as readonly string[]).includes(status)
}

/**
 * The stage a status belongs to (`received` before the first one), or undefined for a status
 * this version does not know.
 */
export function taskStageOf(status: string): TaskStage | 'received' | undefined {
  if (status === 'Received') return 'received'
  for (const { stage, prefix } of TASK_STAGES) {
    if (status === `${prefix}Started` || status === `${prefix}Completed` || status === `${prefix}Failed`) return stage
  }
  return undefined
}

/** The person-readable name of a stage: "chain proofs fetch". */
export function taskStageLabel(stage: TaskStage | 'received'): string {
  return stage === 'received' ? 'received' : TASK_STAGES.find((entry) => entry.stage === stage)!.label
}

/** The fixed `message` of the two submissions. */
export const TASK_QUEUED_MESSAGE = 'Task has been queued'
export const DECOMMITMENT_QUEUED_MESSAGE = 'Decommitment-only task has been queued'

export const HEX_PATTERN = /^0x[0-9a-fA-F]+$/

export const TASK_INPUT_VISIBILITIES = ['public', 'private'] as const

export const MMR_HASHING_FUNCTIONS = ['Poseidon', 'Keccak'] as const

/** GET /tasks query parameters and their bounds. */
export const TASK_LIST_PARAMETERS = {
  page: 'dp_tasks_page',
  perPage: 'dp_tasks_per_page',
  search: 'dp_tasks_search',
  status: 'dp_tasks_status',
  clientId: 'dp_tasks_client_id',
} as const
export const TASK_LIST_DEFAULT_PER_PAGE = 10
export const TASK_LIST_MAX_PER_PAGE = 100

export const MISSING_API_KEY_ERROR = 'Missing X-API-KEY header'
export const RATE_LIMIT_ERROR = 'Rate limit exceeded'
