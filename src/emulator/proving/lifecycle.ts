import type { QueryStatus } from '../../schemas/proving-constants.ts'

/**
 * How a query moves from RECEIVED through its steps to DONE or FAILED, computed from the time
 * its run started and the timing it started with, on every read. Nothing is scheduled: a
 * simulated clock jumping ahead, or an emulator restarted from its state file, simply computes
 * a later position. A run keeps its own copy of the timing so a change of timing never moves a
 * running query backwards.
 */

/** How long an emulated query stays RECEIVED and each of its steps takes, in ms of the emulator's clock. */
export type Timing = {
  /** Time spent in RECEIVED before the first step starts. */
  receivedMs: number
  /** Time each step takes. */
  stepMs: number
}

/** The emulator's timing unless told otherwise: 300 ms RECEIVED, 300 ms a step. */
export const DEFAULT_TIMING: Timing = { receivedMs: 300, stepMs: 300 }

/** A failure planned for a step: the query fails when that step would have ended. */
export type PlannedFailure = { stepIndex: number; retriable: boolean; reason: string }

/** An ending imposed through the control API, at a given instant. */
export type ForcedEnd =
  | { at: number; outcome: 'done' }
  | { at: number; outcome: 'fail'; retriable: boolean; reason: string }

export type QueryRun = {
  startedAt: number
  timing: Timing
  steps: string[]
  /**
   * Bucket queries: steps from this index on wait until the bucket is closed (closing finalizes
   * them). Null outside buckets.
   */
  holdFrom: number | null
  failure: PlannedFailure | null
  forced: ForcedEnd | null
}

export type Progress = {
  status: QueryStatus
  step: string | null
  /** Every step entered so far, the current one included. */
  steps: string[]
  /** When the query ended (DONE or FAILED); null while running. */
  endedAt: number | null
  errorReason: string | null
  /** Whether the failure may be retried; null unless FAILED. */
  retriable: boolean | null
}

/** When step `index` starts (`index === steps.length`: when the last one ends). */
function stepStart(run: QueryRun, index: number, gateAt: number | null): number {
  const first = run.startedAt + run.timing.receivedMs
  if (run.holdFrom === null || index < run.holdFrom) return first + index * run.timing.stepMs
  const released = Math.max(first + run.holdFrom * run.timing.stepMs, gateAt ?? Number.POSITIVE_INFINITY)
  return released + (index - run.holdFrom) * run.timing.stepMs
}

/** The step being run at `at` (-1: still RECEIVED). Only meaningful before the run ends. */
function stepIndexAt(run: QueryRun, at: number, gateAt: number | null): number {
  let index = -1
  for (let i = 0; i < run.steps.length; i++) {
    if (stepStart(run, i, gateAt) <= at) index = i
    else break
  }
  return index
}

type Ending =
  | { at: number; outcome: 'done' }
  | { at: number; outcome: 'fail'; retriable: boolean; reason: string; stepIndex: number | null }

/** How and when the run ends, if nothing else intervenes. */
function endingOf(run: QueryRun, gateAt: number | null): Ending {
  const natural: Ending = run.failure
    ? {
        at: stepStart(run, run.failure.stepIndex, gateAt) + run.timing.stepMs,
        outcome: 'fail',
        retriable: run.failure.retriable,
        reason: run.failure.reason,
        stepIndex: run.failure.stepIndex,
      }
    : { at: stepStart(run, run.steps.length, gateAt), outcome: 'done' }
  // A forced end was decided while the run was going: it wins a tie with the natural end.
  if (!run.forced || run.forced.at > natural.at) return natural
  return run.forced.outcome === 'done'
    ? { at: run.forced.at, outcome: 'done' }
    : {
        at: run.forced.at,
        outcome: 'fail',
        retriable: run.forced.retriable,
        reason: run.forced.reason,
        stepIndex: null,
      }
}

/**
 * Where the run stands at `now`. `gateAt` is when the query's bucket was closed (null: not
 * closed, or no bucket).
 */
export function progressOf(run: QueryRun, gateAt: number | null, now: number): Progress {
  const ending = endingOf(run, gateAt)
  if (ending.at <= now) {
    if (ending.outcome === 'done') {
      return {
        status: 'DONE',
        step: run.steps.at(-1) ?? null,
        steps: [...run.steps],
        endedAt: ending.at,
        errorReason: null,
        retriable: null,
      }
    }
    // A forced failure stops the query wherever it stood at that instant.
    const index = ending.stepIndex ?? stepIndexAt(run, ending.at, gateAt)
    return {
      status: 'FAILED',
      step: run.steps[index] ?? null,
      steps: run.steps.slice(0, index + 1),
      endedAt: ending.at,
      errorReason: ending.reason,
      retriable: ending.retriable,
    }
  }
  const index = stepIndexAt(run, now, gateAt)
  if (index < 0) return { status: 'RECEIVED', step: null, steps: [], endedAt: null, errorReason: null, retriable: null }
  return {
    status: 'IN_PROGRESS',
    step: run.steps[index]!,
    steps: run.steps.slice(0, index + 1),
    endedAt: null,
    errorReason: null,
    retriable: null,
  }
}

export function isTerminal(progress: Progress): boolean {
  return progress.status === 'DONE' || progress.status === 'FAILED'
}

/** The index of the step the run is in at `now` (-1 before the first one). */
export function currentStepIndex(run: QueryRun, gateAt: number | null, now: number): number {
  return stepIndexAt(run, now, gateAt)
}

export function defaultFailureReason(step: string, retriable: boolean): string {
  return retriable
    ? `${step} failed on a transient error (emulated); the query can be retried`
    : `${step} failed (emulated); the query cannot be retried`
}
