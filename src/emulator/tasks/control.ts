import { TASK_STAGES, type TaskStage } from '../../schemas/tasks.ts'
import type { EmulatorContext } from '../context.ts'
import { own } from '../state.ts'
import { badRequest, conflict } from '../errors.ts'
import { HttpError, type Reply, type Route, type RouteContext } from '../router.ts'
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
  const control = (method: Route['method'], pattern: string, handler: Route['handler']): Route => ({
    method,
    pattern,
    handler: (ctx) => {
      sweeper.sweep()
      return handler(ctx)
    },
    control: true,
  })

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
    return { status: 200, body: { ...timingBody(), tasks: list, nextTasks: tasks().nextTasks, throttled: tasks().throttled } }
  }

  function getTask(ctx: RouteContext): Reply {
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return notFound(ctx.params.uuid!)
    return { status: 200, body: { ...describe(task, now()), dpOutput: task.dpOutput, run: task.run } }
  }

  /** New tasks take this timing; running ones keep theirs. Fields left out keep their value. */
  async function setTiming(ctx: RouteContext): Promise<Reply> {
    const body = await objectBody(ctx)
    const next: TaskTiming = currentTaskTiming(emulator)
    for (const key of ['receivedMs', 'stageMs', 'handoffMs'] as const) {
      const value = body[key]
      if (value === undefined) continue
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return bad(`${key} must be a number of milliseconds >= 0.`)
      next[key] = value
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
    const body = await objectBody(ctx)
    const times = body.times ?? 1
    if (!Number.isInteger(times) || (times as number) < 0 || (times as number) > 1000) return bad('times must be a whole number from 0 to 1000.')
    tasks().throttled = times as number
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
    const body = await objectBody(ctx)
    if (body.error !== undefined && typeof body.error !== 'string') return bad('error must be a string.')
    const error = (body.error as string | undefined) ?? null
    const at = now()
    const position = positionOf(task.run, at)
    if (position.terminal) return { status: 409, body: conflict(`Task ${task.uuid} has already ended: ${position.status}.`) }
    if (body.stage === undefined) {
      task.run.forced = { at, outcome: 'fail', error }
    } else {
      const stage = stageNamed(body.stage)
      if (!stage) return bad(`stage must be one of ${TASK_STAGES.map((entry) => entry.stage).join(', ')} (or a *Failed status).`)
      const index = task.run.stages.indexOf(stage)
      if (index < 0) return bad(`Task ${task.uuid} is decommitment-only: its one stage is decommitment.`)
      if (index < stageIndexAt(task.run, at)) return { status: 409, body: conflict(`Task ${task.uuid} has already passed ${stage}.`) }
      task.run.failure = { stageIndex: index, error }
    }
    save()
    sweeper.sweep()
    return { status: 200, body: describe(task, at) }
  }

  function completeTask(ctx: RouteContext): Reply {
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return notFound(ctx.params.uuid!)
    const at = now()
    const position = positionOf(task.run, at)
    if (position.terminal) return { status: 409, body: conflict(`Task ${task.uuid} has already ended: ${position.status}.`) }
    task.run.forced = { at, outcome: 'done' }
    save()
    sweeper.sweep()
    return { status: 200, body: describe(task, at) }
  }

  /** How the next submitted task(s) end; plans queue up, one per submission. */
  async function planNextTask(ctx: RouteContext): Promise<Reply> {
    const body = await objectBody(ctx)
    if (body.outcome !== 'fail' && body.outcome !== 'done') return bad('outcome must be "fail" or "done".')
    let stage: TaskStage | null = null
    if (body.stage !== undefined) {
      stage = stageNamed(body.stage) ?? null
      if (!stage) return bad(`stage must be one of ${TASK_STAGES.map((entry) => entry.stage).join(', ')} (or a *Failed status).`)
    }
    if (body.error !== undefined && typeof body.error !== 'string') return bad('error must be a string.')
    const times = body.times ?? 1
    if (!Number.isInteger(times) || (times as number) < 1 || (times as number) > 100) return bad('times must be a whole number from 1 to 100.')
    const plan: NextTaskPlan = { outcome: body.outcome, stage, error: (body.error as string | undefined) ?? null }
    for (let i = 0; i < (times as number); i++) tasks().nextTasks.push({ ...plan })
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
  return { status: 404, body: { error: 'Not Found', details: `No task with uuid ${uuid}`, message: 'Task not found', taskId: uuid } }
}

function bad(message: string): Reply {
  return { status: 400, body: badRequest(message) }
}

async function objectBody(ctx: RouteContext): Promise<Record<string, unknown>> {
  const body = await ctx.json()
  if (body === undefined) return {}
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new HttpError(400, badRequest('The body must be a JSON object.'))
  return body as Record<string, unknown>
}
