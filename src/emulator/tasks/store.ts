import type { DpOutput } from '../../schemas/tasks.ts'
import type { EmulatorContext } from '../context.ts'
import type { EmulatorState, Owner } from '../state.ts'
import type { TaskRun, TaskTiming } from './pipeline.ts'

/**
 * What the emulated task service keeps, as plain JSON inside the emulator's state (so it is
 * written through to state.json with the rest, and a reset forgets it with the rest). It hangs
 * off its own key, created on first use, so the proving service's state type needs no change.
 */

export type WebhookAttempt = {
  /** ISO 8601, real time: deliveries happen in real time even under a simulated clock. */
  at: string
  /** The HTTP status answered; null when no answer came (refused, timed out). */
  status: number | null
  error: string | null
}

export type WebhookDelivery = {
  url: string
  /** pending: not due yet; sending: attempts under way; then delivered or failed (3 attempts spent). */
  state: 'pending' | 'sending' | 'delivered' | 'failed'
  attempts: WebhookAttempt[]
  /** The payload sent, once the task has ended. */
  payload: Record<string, string> | null
}

export type StoredTask = {
  uuid: string
  kind: 'full' | 'decommitment'
  owner: Owner
  /** Creation order; the list is newest first, and many tasks share a millisecond under a simulated clock. */
  sequence: number
  createdAt: number
  destinationChainId: string
  programHash: string
  provingQueryId: string | null
  /** Given, fetched from the proving query, or (full tasks) what the emulated run produces. */
  dpOutput: DpOutput
  taskInputs: number
  transactionHash: string
  run: TaskRun
  webhook: WebhookDelivery | null
}

/** Applies to the next submitted task (POST /_emulator/next-task). */
export type NextTaskPlan = {
  outcome: 'done' | 'fail'
  /** The stage to fail at; null: the task's last stage. */
  stage: string | null
  error: string | null
}

export type TaskServiceState = {
  /** null: follow the emulator's timing (receivedMs, and stepMs for each stage). */
  timing: TaskTiming | null
  sequence: number
  tasks: Record<string, StoredTask>
  nextTasks: NextTaskPlan[]
  /** Task-service requests still to be refused with 429 (POST /_emulator/tasks/throttle). */
  throttled: number
}

type WithTasks = EmulatorState & { taskService?: TaskServiceState }

export function taskState(emulator: EmulatorContext): TaskServiceState {
  const state = emulator.store.state as WithTasks
  state.taskService ??= { timing: null, sequence: 0, tasks: {}, nextTasks: [], throttled: 0 }
  return state.taskService
}

/** The timing new tasks start with. */
export function currentTaskTiming(emulator: EmulatorContext): TaskTiming {
  const own = taskState(emulator).timing
  if (own) return { ...own }
  const { receivedMs, stepMs } = emulator.store.state.timing
  return { receivedMs, stageMs: stepMs, handoffMs: stepMs }
}
