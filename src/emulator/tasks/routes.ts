import { randomUUID } from 'node:crypto'
import type { z } from 'zod'
import { checkTaskRequest, decommitmentBody, taskBody } from '../../schemas/tasks.ts'
import {
  DECOMMITMENT_QUEUED_MESSAGE,
  MISSING_API_KEY_ERROR,
  RATE_LIMIT_ERROR,
  TASK_LIST_DEFAULT_PER_PAGE,
  TASK_LIST_MAX_PER_PAGE,
  TASK_LIST_PARAMETERS,
  TASK_QUEUED_MESSAGE,
  type TaskStage,
} from '../../schemas/tasks-constants.ts'
import type { EmulatorContext } from '../context.ts'
import { HttpError, type Reply, type Route, type RouteContext } from '../router.ts'
import { own, type Owner } from '../state.ts'
import { taskControlRoutes } from './control.ts'
import { deriveDpOutput, deriveProgramHash, deriveTransactionHash, knownMmrsOf } from './derive.ts'
import { ALL_STAGES, positionOf, type TaskRun } from './pipeline.ts'
import { currentTaskTiming, type NextTaskPlan, type StoredTask, taskState } from './store.ts'
import { TaskSweeper } from './sweep.ts'

/**
 * The data-processor task service, on the emulator's one port:
 * the route table first, then one short handler per endpoint. Every service handler checks in
 * the same order: rate limit (429) -> API key where required (401) -> body (400) -> the thing
 * named (404) -> the work. Error bodies are the service's: `{ error }` for 400, 401 and 429,
 * `{ error, details, message, taskId }` for 404 and 500.
 */

const INTERNAL_ERROR = {
  error: 'Internal Server Error',
  details: 'The emulated task service failed while handling the request',
  message: 'An unexpected error occurred',
  taskId: '',
}

export function taskRoutes(emulator: EmulatorContext): Route[] {
  const tasks = () => taskState(emulator)
  const now = () => emulator.clock.now()
  const sweeper = new TaskSweeper(emulator)
  const route = (method: Route['method'], pattern: string, handler: Route['handler']) =>
    sweeper.route(method, pattern, handler, { internalErrorBody: INTERNAL_ERROR })
  // A state file from an earlier run may hold tasks whose webhooks are still to go out.
  sweeper.resume()

  return [
    route('POST', '/tasks', scheduleTask),
    route('POST', '/tasks/decommitment', submitDecommitment),
    route('GET', '/tasks', listTasks),
    route('GET', '/tasks/:uuid/status', getStatus),
    route('GET', '/tasks/:uuid/mmrs', getMmrs),
    ...taskControlRoutes(emulator, sweeper),
  ]

  /** POST /tasks: the whole pipeline, from Received. */
  async function scheduleTask(ctx: RouteContext): Promise<Reply> {
    const checked = await acceptedRequest(ctx, taskBody)
    if (!checked.ok) return checked.reply
    const uuid = randomUUID()
    const task = createTask({
      uuid,
      kind: 'full',
      owner: checked.owner,
      destinationChainId: checked.data.destination_chain_id,
      programHash: checked.data.program_hash,
      provingQueryId: null,
      dpOutput: deriveDpOutput(uuid, checked.data.destination_chain_id),
      taskInputs: checked.data.task_inputs.length,
      webhookUrl: checked.data.webhook_url ?? null,
      stages: ALL_STAGES,
    })
    return { status: 200, body: { message: TASK_QUEUED_MESSAGE, uuid: task.uuid } }
  }

  /**
   * POST /tasks/decommitment: starts at TaskDecommitmentStarted. dp_output and program_hash
   * default to what the proving query holds, read from the emulator's own state; a proving
   * query that does not exist is a 404 (the decommitment needs its proof in any case).
   */
  async function submitDecommitment(ctx: RouteContext): Promise<Reply> {
    const checked = await acceptedRequest(ctx, decommitmentBody)
    if (!checked.ok) return checked.reply
    const queryId = checked.data.proving_query_id
    const query = own(emulator.store.state.queries, queryId)
    if (!query) {
      return notFound(
        '',
        `No proving query with id ${queryId}; dp_output and program_hash cannot be fetched from it`,
        'Proving query not found',
      )
    }
    const uuid = randomUUID()
    createTask({
      uuid,
      kind: 'decommitment',
      owner: checked.owner,
      destinationChainId: checked.data.destination_chain_id,
      programHash: checked.data.program_hash ?? query.facts.programHash ?? deriveProgramHash(query.id),
      provingQueryId: queryId,
      dpOutput: checked.data.dp_output ?? deriveDpOutput(query.id, checked.data.destination_chain_id),
      taskInputs: 0,
      webhookUrl: checked.data.webhook_url ?? null,
      stages: ['decommitment'],
    })
    return { status: 200, body: { message: DECOMMITMENT_QUEUED_MESSAGE, uuid } }
  }

  /** GET /tasks: newest first; no authentication. */
  function listTasks(ctx: RouteContext): Reply {
    const refused = throttled()
    if (refused) return refused
    const page = integerParameter(ctx, TASK_LIST_PARAMETERS.page, 1, Number.MAX_SAFE_INTEGER, 1)
    if (typeof page === 'string') return { status: 400, body: { error: page } }
    const perPage = integerParameter(
      ctx,
      TASK_LIST_PARAMETERS.perPage,
      1,
      TASK_LIST_MAX_PER_PAGE,
      TASK_LIST_DEFAULT_PER_PAGE,
    )
    if (typeof perPage === 'string') return { status: 400, body: { error: perPage } }
    const search = ctx.query.get(TASK_LIST_PARAMETERS.search)?.trim().toLowerCase() || undefined
    const status = ctx.query.get(TASK_LIST_PARAMETERS.status)?.trim() || undefined
    const clientId = ctx.query.get(TASK_LIST_PARAMETERS.clientId)?.trim() || undefined
    const at = now()
    const matching = Object.values(tasks().tasks)
      .map((task) => ({ task, position: positionOf(task.run, at) }))
      .filter(
        ({ task, position }) =>
          (!search || task.uuid.toLowerCase().includes(search)) &&
          (!status || position.status === status) &&
          (!clientId || task.owner.clientId === clientId),
      )
      .sort((a, b) => b.task.sequence - a.task.sequence)
    const start = (page - 1) * perPage
    return {
      status: 200,
      body: {
        tasks: matching.slice(start, start + perPage).map(({ task, position }) => ({
          uuid: task.uuid,
          status: position.status,
          destinationChainId: task.destinationChainId,
          programHash: task.programHash,
          clientId: task.owner.clientId,
          createdAt: iso(task.createdAt),
          updatedAt: iso(position.since),
          kind: task.kind,
          provingQueryId: task.provingQueryId,
        })),
        pagination: { page, perPage, total: matching.length, totalPages: Math.ceil(matching.length / perPage) },
      },
    }
  }

  /** GET /tasks/{uuid}/status: no authentication. */
  function getStatus(ctx: RouteContext): Reply {
    const refused = throttled()
    if (refused) return refused
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return taskNotFound(ctx.params.uuid!)
    const position = positionOf(task.run, now())
    return {
      status: 200,
      body: {
        status: position.status,
        taskId: task.uuid,
        updatedAt: iso(position.since),
        errorMessage: position.errorMessage ?? '',
      },
    }
  }

  /**
   * GET /tasks/{uuid}/mmrs: the MMRs of the task's mmr_metas, once they are known: after the
   * chain proofs fetch for a full task, from the start for a decommitment-only one.
   */
  function getMmrs(ctx: RouteContext): Reply {
    const refused = throttled()
    if (refused) return refused
    const task = own(tasks().tasks, ctx.params.uuid)
    if (!task) return taskNotFound(ctx.params.uuid!)
    return { status: 200, body: { mmrs: knownMmrsOf(task, positionOf(task.run, now())), taskId: task.uuid } }
  }

  // --- Helpers -----------------------------------------------------------------------------

  function createTask(
    input: Omit<StoredTask, 'sequence' | 'createdAt' | 'transactionHash' | 'run' | 'webhook'> & {
      webhookUrl: string | null
      stages: TaskStage[]
    },
  ): StoredTask {
    const state = tasks()
    const at = now()
    const { webhookUrl, stages, ...rest } = input
    const task: StoredTask = {
      ...rest,
      sequence: ++state.sequence,
      createdAt: at,
      transactionHash: deriveTransactionHash(input.uuid),
      run: newRun(stages, at, state.nextTasks.shift()),
      webhook: webhookUrl ? { url: webhookUrl, state: 'pending', attempts: [], payload: null } : null,
    }
    state.tasks[task.uuid] = task
    emulator.store.touch('tasks', task.uuid)
    emulator.store.save()
    sweeper.sweep()
    return task
  }

  function newRun(stages: TaskStage[], at: number, plan: NextTaskPlan | undefined): TaskRun {
    const run: TaskRun = {
      startedAt: at,
      timing: currentTaskTiming(emulator),
      stages: [...stages],
      failure: null,
      forced: null,
    }
    if (plan?.outcome === 'done') run.forced = { at, outcome: 'done' }
    if (plan?.outcome === 'fail') {
      // A plan naming a stage this task does not run (decommitment-only) fails its last stage.
      const index = plan.stage === null ? -1 : stages.indexOf(plan.stage as TaskStage)
      run.failure = { stageIndex: index < 0 ? stages.length - 1 : index, error: plan.error }
    }
    return run
  }

  /**
   * The checks every submission passes, in the order the service makes them: rate limit (429),
   * API key (401), a JSON body (400), the body's fields (400, every problem listed).
   */
  async function acceptedRequest<T>(
    ctx: RouteContext,
    schema: z.ZodType<T>,
  ): Promise<{ ok: true; owner: Owner; data: T } | { ok: false; reply: Reply }> {
    const refused = throttled()
    if (refused) return { ok: false, reply: refused }
    const owner = caller(ctx)
    if (!owner.ok) return owner
    const body = await jsonBody(ctx)
    if (!body.ok) return body
    const checked = checkTaskRequest(schema, body.value)
    if (!checked.ok) return { ok: false, reply: invalid(checked.problems) }
    return { ok: true, owner: owner.value, data: checked.data }
  }

  function throttled(): Reply | undefined {
    const state = tasks()
    if (state.throttled <= 0) return undefined
    state.throttled--
    emulator.store.save()
    return { status: 429, headers: { 'retry-after': '1' }, body: { error: RATE_LIMIT_ERROR } }
  }

  function caller(ctx: RouteContext): { ok: true; value: Owner } | { ok: false; reply: Reply } {
    const key = ctx.header('x-api-key')
    if (!key?.trim()) return { ok: false, reply: { status: 401, body: { error: MISSING_API_KEY_ERROR } } }
    const owner = emulator.keys.identify(key)
    if (!owner) return { ok: false, reply: { status: 401, body: { error: 'Invalid X-API-KEY header' } } }
    return { ok: true, value: owner }
  }
}

async function jsonBody(ctx: RouteContext): Promise<{ ok: true; value: unknown } | { ok: false; reply: Reply }> {
  const type = ctx.header('content-type') ?? ''
  if (!/^application\/json\b/i.test(type.trim())) {
    return {
      ok: false,
      reply: { status: 400, body: { error: `Content-Type must be application/json, got ${JSON.stringify(type)}` } },
    }
  }
  try {
    return { ok: true, value: await ctx.json() }
  } catch (error) {
    if (!(error instanceof HttpError)) throw error
    const message = (error.body as { message?: unknown }).message
    return {
      ok: false,
      reply: { status: 400, body: { error: typeof message === 'string' ? message : 'Malformed JSON body' } },
    }
  }
}

function invalid(problems: string[]): Reply {
  return { status: 400, body: { error: `Invalid request body: ${problems.slice(0, 10).join('; ')}` } }
}

function notFound(taskId: string, details: string, message: string): Reply {
  return { status: 404, body: { error: 'Not Found', details, message, taskId } }
}

function taskNotFound(uuid: string): Reply {
  return notFound(uuid, `No task with uuid ${uuid}`, 'Task not found')
}

/** A whole-number query parameter within bounds, its default when absent, or the problem. */
function integerParameter(
  ctx: RouteContext,
  name: string,
  min: number,
  max: number,
  fallback: number,
): number | string {
  const raw = ctx.query.get(name)
  if (raw === null || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    const bounds = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`
    return `${name} must be a whole number ${bounds}, got ${JSON.stringify(raw)}`
  }
  return value
}

const iso = (ms: number) => new Date(ms).toISOString()
