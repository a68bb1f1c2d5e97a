import { z } from 'zod'
import { TASK_STAGES, type TaskStage } from '../../schemas/tasks-constants.ts'
import type { EmulatorContext } from '../context.ts'
import { own } from '../state.ts'
import { millis, objectBody, parseControl, text } from '../control-body.ts'
import { badRequest, conflict } from '../errors.ts'
import type { Reply, Route, RouteContext } from '../router.ts'
import { endsAt, positionOf, stageIndexAt, type TaskTiming } from './pipeline.ts'
import { currentTaskTiming, type NextTaskPlan, type StoredTask, taskState } from './store.ts'
import type { TaskSweeper } from './sweep.ts'

/**
 * The task service's part of the control API (docs/emulator.md, "Task service"): timing,
 * failure at any stage (of one task, or of the next ones submitted), immediate completion,
 * rate limiting, and a look inside (tasks with their webhook deliveries). No authentication,
 * like the rest of /_emulator/.
 */
export function taskControlRoutes(emulator: EmulatorContext, sweeper: TaskSweeper): Route[] {
  const tasks = () => taskState(emulator)
  const now = () => emulator.clock.now()
  const save = () => emulator.store.save()
  const control = (method: Route['method'], pattern: string, handler: Route['handler']) =>
    sweeper.route(method, pattern, handler, { control: true })

  return [
    control('GET', '/_emulator/tasks', listTasks),
    control('GET', '/_emulator/tasks/timing', () => ({ status: 200, body: timingBody() })),
    control('PUT', '/_emulator/tasks/timing', setTiming),
    control('DELETE', '/_emulator/tasks/timing', resetTiming),
    control('POST', '/_emulator/tasks/throttle', throttle),
    control('GET', '/_emulator/tasks/:uuid', getTask),
    control('POST', '/_emulator/tasks/:uuid/fail', failTask),
    control('POST', '/_emulator/tasks/:uuid/complete', completeTask),
    control('POST', '/_emulator/next-task', planNextTask),
  ]

  function timingBody() {
    return { timing: currentTaskTiming(emulator), followsEmulatorTiming: tasks().timing === null }
  }

  function listTasks(): Reply {
    const at = now()
    const list = Object.values(tasks().tasks)
      .sort((a, b) => a.sequence - b.sequence)
      .map((task) => describe(task, at))
    return {
      status: 200,
      body: { ...timingBody(), tasks: list, nextTasks: tasks().nextTasks, throttled: tasks().throttled },
    }
  }

  function getTask(ctx: RouteContext): Reply {
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return notFound(ctx.params.uuid!)
    return { status: 200, body: { ...describe(task, now()), dpOutput: task.dpOutput, run: task.run } }
  }

  /** New tasks take this timing; running ones keep theirs. Fields left out keep their value. */
  async function setTiming(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(TIMING_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const next: TaskTiming = currentTaskTiming(emulator)
    for (const key of ['receivedMs', 'stageMs', 'handoffMs'] as const) {
      const value = parsed.data[key]
      if (value !== undefined) next[key] = value
    }
    tasks().timing = next
    save()
    return { status: 200, body: timingBody() }
  }

  /** Back to following the emulator's timing (receivedMs, and stepMs per stage). */
  function resetTiming(): Reply {
    tasks().timing = null
    save()
    return { status: 200, body: timingBody() }
  }

  /** The next `times` task-service requests answer 429 `{ error: "Rate limit exceeded" }`. */
  async function throttle(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(THROTTLE_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    tasks().throttled = parsed.data.times
    save()
    return { status: 200, body: { throttled: tasks().throttled } }
  }

  /**
   * Fails the task now (the stage under way, or the next one between stages), or, with
   * `stage`, when that stage would have completed. 409 when it has already ended or passed
   * that stage.
   */
  async function failTask(ctx: RouteContext): Promise<Reply> {
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return notFound(ctx.params.uuid!)
    const parsed = parseControl(FAIL_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const { error = null, stage: stageName } = parsed.data
    const at = now()
    const position = positionOf(task.run, at)
    if (position.terminal)
      return { status: 409, body: conflict(`Task ${task.uuid} has already ended: ${position.status}.`) }
    if (stageName === undefined) {
      task.run.forced = { at, outcome: 'fail', error }
    } else {
      const stage = stageNamed(stageName)
      if (!stage) return bad(STAGE)
      const index = task.run.stages.indexOf(stage)
      if (index < 0) return bad(`Task ${task.uuid} is decommitment-only: its one stage is decommitment.`)
      if (index < stageIndexAt(task.run, at))
        return { status: 409, body: conflict(`Task ${task.uuid} has already passed ${stage}.`) }
      task.run.failure = { stageIndex: index, error }
    }
    emulator.store.touch('tasks', task.uuid)
    save()
    sweeper.sweep()
    return { status: 200, body: describe(task, at) }
  }

  function completeTask(ctx: RouteContext): Reply {
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return notFound(ctx.params.uuid!)
    const at = now()
    const position = positionOf(task.run, at)
    if (position.terminal)
      return { status: 409, body: conflict(`Task ${task.uuid} has already ended: ${position.status}.`) }
    task.run.forced = { at, outcome: 'done' }
    emulator.store.touch('tasks', task.uuid)
    save()
    sweeper.sweep()
    return { status: 200, body: describe(task, at) }
  }

  /** How the next submitted task(s) end; plans queue up, one per submission. */
  async function planNextTask(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(NEXT_TASK_BODY, await objectBody(ctx))
    if (!parsed.ok) return bad(parsed.message)
    const body = parsed.data
    const plan: NextTaskPlan = { outcome: body.outcome, stage: body.stage ?? null, error: body.error ?? null }
    for (let i = 0; i < body.times; i++) tasks().nextTasks.push({ ...plan })
    save()
    return { status: 200, body: { plan, pending: tasks().nextTasks.length } }
  }
}

/** A stage by its name (`trace-generation`) or by its failure status (`TraceGenFailed`). */
function stageNamed(value: unknown): TaskStage | undefined {
  if (typeof value !== 'string') return undefined
  return TASK_STAGES.find((entry) => entry.stage === value || `${entry.prefix}Failed` === value)?.stage
}

function describe(task: StoredTask, at: number) {
  const position = positionOf(task.run, at)
  return {
    uuid: task.uuid,
    kind: task.kind,
    status: position.status,
    errorMessage: position.errorMessage,
    destinationChainId: task.destinationChainId,
    programHash: task.programHash,
    provingQueryId: task.provingQueryId,
    clientId: task.owner.clientId,
    createdAt: new Date(task.createdAt).toISOString(),
    endsAt: new Date(endsAt(task.run)).toISOString(),
    transactionHash: position.status === 'TaskDecommitmentCompleted' ? task.transactionHash : null,
    webhook: task.webhook,
  }
}

function notFound(uuid: string): Reply {
  return {
    status: 404,
    body: { error: 'Not Found', details: `No task with uuid ${uuid}`, message: 'Task not found', taskId: uuid },
  }
}

function bad(message: string): Reply {
  return { status: 400, body: badRequest(message) }
}

const TIMING_BODY = z.object({
  receivedMs: millis('receivedMs').optional(),
  stageMs: millis('stageMs').optional(),
  handoffMs: millis('handoffMs').optional(),
})

const THROTTLE_TIMES = 'times must be a whole number from 0 to 1000.'
const THROTTLE_BODY = z.object({
  times: z
    .number({ error: THROTTLE_TIMES })
    .int({ error: THROTTLE_TIMES })
    .min(0, { error: THROTTLE_TIMES })
    .max(1000, { error: THROTTLE_TIMES })
    .default(1),
})

// `stage` is named after the task's own checks (a task that has ended is a 409 first).
const FAIL_BODY = z.object({ error: text('error').optional(), stage: z.unknown().optional() })

const STAGE = `stage must be one of ${TASK_STAGES.map((entry) => entry.stage).join(', ')} (or a *Failed status).`
const PLAN_TIMES = 'times must be a whole number from 1 to 100.'
const NEXT_TASK_BODY = z.object({
  outcome: z.enum(['fail', 'done'], { error: 'outcome must be "fail" or "done".' }),
  stage: z
    .unknown()
    .transform((value, ctx) => {
      const stage = stageNamed(value)
      if (stage === undefined) ctx.addIssue({ code: 'custom', message: STAGE })
      return stage as TaskStage
    })
    .optional(),
  error: text('error').optional(),
  times: z
    .number({ error: PLAN_TIMES })
    .int({ error: PLAN_TIMES })
    .min(1, { error: PLAN_TIMES })
    .max(100, { error: PLAN_TIMES })
    .default(1),
})
