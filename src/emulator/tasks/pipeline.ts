import { TASK_STAGES, type TaskStage, type TaskStatus } from '../../schemas/tasks-constants.ts'

/**
 * Where a task stands, computed from when its run started and the timing it started with, on
 * every read (as for proving queries, see ../proving/lifecycle.ts): nothing is scheduled, so a
 * simulated clock jumping ahead or an emulator restarted from its state file simply computes a
 * later position.
 *
 *   Received ─receivedMs─▶ DryRunStarted ─stageMs─▶ DryRunCompleted ─handoffMs─▶
 *   ChainProofsFetchStarted ─stageMs─▶ ... ─▶ TaskDecommitmentStarted ─stageMs─▶ TaskDecommitmentCompleted
 *
 * A decommitment-only task starts at TaskDecommitmentStarted. A failure planned
 * for a stage replaces that stage's Completed by its Failed; a failure forced at an instant
 * fails the stage under way then (or the next one, between stages).
 */

export type TaskTiming = {
  /** Time in Received before the dry run starts (full tasks only). */
  receivedMs: number
  /** Time in each stage's Started status. */
  stageMs: number
  /** Time in each stage's Completed status before the next stage starts. */
  handoffMs: number
}

export type TaskEnding = { at: number; outcome: 'done' } | { at: number; outcome: 'fail'; error: string | null }

export type TaskRun = {
  startedAt: number
  timing: TaskTiming
  /** The stages this run goes through, in order. */
  stages: TaskStage[]
  /** Fail at the end of this stage (index into `stages`). */
  failure: { stageIndex: number; error: string | null } | null
  /** An ending imposed through the control API at an instant. */
  forced: TaskEnding | null
}

export type TaskPosition = {
  status: TaskStatus
  /** When the task entered `status`. */
  since: number
  /** Index of the stage `status` belongs to; -1 in Received. */
  stageIndex: number
  terminal: boolean
  errorMessage: string | null
}

export const ALL_STAGES: TaskStage[] = TASK_STAGES.map((entry) => entry.stage)

const prefixOf = (stage: TaskStage) => TASK_STAGES.find((entry) => entry.stage === stage)!.prefix

function statusOf(stage: TaskStage, phase: 'Started' | 'Completed' | 'Failed'): TaskStatus {
  return `${prefixOf(stage)}${phase}` as TaskStatus
}

/** When stage `index` starts; full tasks wait `receivedMs` first, decommitment-only ones do not. */
function stageStart(run: TaskRun, index: number): number {
  const first = run.stages.length === ALL_STAGES.length ? run.startedAt + run.timing.receivedMs : run.startedAt
  return first + index * (run.timing.stageMs + run.timing.handoffMs)
}

function stageEnd(run: TaskRun, index: number): number {
  return stageStart(run, index) + run.timing.stageMs
}

/** How the run ends unless something intervenes: planned failure, or success after the last stage. */
function naturalEnding(run: TaskRun): TaskEnding & { stageIndex: number } {
  if (run.failure)
    return {
      at: stageEnd(run, run.failure.stageIndex),
      outcome: 'fail',
      error: run.failure.error,
      stageIndex: run.failure.stageIndex,
    }
  const last = run.stages.length - 1
  return { at: stageEnd(run, last), outcome: 'done', stageIndex: last }
}

/** The stage running at `at`, or about to run (between stages, and in Received: the next one). */
export function stageIndexAt(run: TaskRun, at: number): number {
  for (let index = 0; index < run.stages.length; index++) {
    if (at < stageEnd(run, index)) return index
  }
  return run.stages.length - 1
}

export function endingOf(run: TaskRun): TaskEnding & { stageIndex: number } {
  const natural = naturalEnding(run)
  if (!run.forced || run.forced.at >= natural.at) return natural
  return run.forced.outcome === 'done'
    ? { at: run.forced.at, outcome: 'done', stageIndex: run.stages.length - 1 }
    : { at: run.forced.at, outcome: 'fail', error: run.forced.error, stageIndex: stageIndexAt(run, run.forced.at) }
}

export function positionOf(run: TaskRun, now: number): TaskPosition {
  const ending = endingOf(run)
  if (ending.at <= now) {
    const stage = run.stages[ending.stageIndex]!
    return ending.outcome === 'done'
      ? {
          status: 'TaskDecommitmentCompleted',
          since: ending.at,
          stageIndex: ending.stageIndex,
          terminal: true,
          errorMessage: null,
        }
      : {
          status: statusOf(stage, 'Failed'),
          since: ending.at,
          stageIndex: ending.stageIndex,
          terminal: true,
          errorMessage: ending.error ?? defaultTaskError(stage),
        }
  }
  for (let index = run.stages.length - 1; index >= 0; index--) {
    const stage = run.stages[index]!
    if (now >= stageEnd(run, index))
      return {
        status: statusOf(stage, 'Completed'),
        since: stageEnd(run, index),
        stageIndex: index,
        terminal: false,
        errorMessage: null,
      }
    if (now >= stageStart(run, index))
      return {
        status: statusOf(stage, 'Started'),
        since: stageStart(run, index),
        stageIndex: index,
        terminal: false,
        errorMessage: null,
      }
  }
  return { status: 'Received', since: run.startedAt, stageIndex: -1, terminal: false, errorMessage: null }
}

/** When the run ends as things stand (for the webhook timer). */
export function endsAt(run: TaskRun): number {
  return endingOf(run).at
}

export function defaultTaskError(stage: TaskStage): string {
  switch (stage) {
    case 'dry-run':
      return 'Dry run failed: the module panicked while running (emulated)'
    case 'chain-proofs-fetch':
      return 'Chain proofs fetch failed: the RPC provider did not answer (emulated)'
    case 'trace-generation':
      return 'Trace generation failed: the Cairo run did not finish (emulated)'
    case 'proving':
      return 'Proving failed: the prover rejected the trace (emulated)'
    case 'decommitment':
      return 'Task decommitment failed: the on-chain transaction reverted (emulated)'
  }
}
