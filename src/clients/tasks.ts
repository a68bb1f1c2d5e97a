import type { z } from 'zod'
import { apiKeyOf, checkInteger, checkServiceId, requireId } from '../core/checks.ts'
import {
  InvalidInputError,
  RemoteFailureError,
  UnknownStatusError,
} from '../core/errors.ts'
import { type ConnectionOptions, connectionOf, HttpClient } from '../core/http.ts'
import { explainSubmissionFailure } from '../core/submission.ts'
import { serializeJsonBody } from '../core/json-limits.ts'
import { DEFAULT_WAIT_TIMEOUT_MS, DEFAULT_STUCK_AFTER_MS, formatDuration, pollUntil, StateWatch, type WaitOptions } from '../core/poll.ts'
import { redact, SecretRedactor } from '../core/redact.ts'
import { serviceLine } from '../core/service-text.ts'
import type {
  DecommitmentBodyInput,
  TaskBodyInput,
  TaskListResponse,
  TaskMmrsResponse,
  TaskQueuedResponse,
  TaskStatusRecord,
  TaskSummary,
} from '../schemas/tasks.ts'
import {
  isTerminalTaskStatus,
  TASK_LIST_MAX_PER_PAGE,
  TASK_LIST_PARAMETERS,
  TASK_STATUSES,
  TASK_SUCCESS_STATUS,
  type TaskStage,
  type TaskStatus,
  taskStageLabel,
  taskStageOf,
} from '../schemas/tasks-constants.ts'

/** The schemas load with the first request, not with the client: zod stays off the import path (bench figure 8). */
const taskSchemas = () => import('../schemas/tasks.ts')
type TaskSchemas = Awaited<ReturnType<typeof taskSchemas>>

export type TaskClientOptions = ConnectionOptions & {
  /** Sent as `X-API-KEY` on the two submissions only; reads need none. */
  apiKey?: string | undefined
  /** Extra values to keep out of messages (the API key is always kept out). */
  secrets?: string[] | undefined
}

export type ListTasksOptions = {
  /** Page number, from 1 (service default 1). */
  page?: number | undefined
  /** Tasks per page, 1 to 100 (service default 10). */
  perPage?: number | undefined
  /** Matches the task UUID. */
  search?: string | undefined
  status?: TaskStatus | undefined
  clientId?: string | undefined
  signal?: AbortSignal | undefined
}

export type TaskProgress = {
  taskId: string
  status: string
  /** The pipeline stage the status belongs to; undefined for a status this version does not know. */
  stage: TaskStage | 'received' | undefined
  elapsedMs: number
  record: TaskStatusRecord
}

/** `onProgress` is called on every change of status (and once for the first status seen). */
export type WaitForTaskOptions = WaitOptions<TaskProgress> & {
  /** Warn when one status lasts longer than this (default 30 min). */
  stuckAfterMs?: number | undefined
  /**
   * How long a status this version does not know may last before the wait ends with
   * UnknownStatusError (default 10 min). A new intermediate stage passes through; an unknown
   * terminal state does not hold the wait until its timeout.
   */
  unknownStatusGraceMs?: number | undefined
}

const DEFAULT_UNKNOWN_STATUS_GRACE_MS = 10 * 60_000

/**
 * The data-processor task service: schedule a task, submit a decommitment-only task, list
 * tasks, read a task's status and the MMRs it used, and wait for it to finish. Every body is
 * checked before it is sent; a problem is an InvalidInputError naming the field and why.
 */
export class TaskClient {
  readonly http: HttpClient
  readonly #apiKey: string | undefined

  constructor(options: TaskClientOptions) {
    this.#apiKey = apiKeyOf(options.apiKey)
    this.http = new HttpClient({
      ...connectionOf(options),
      serviceName: 'task service',
      redactor: new SecretRedactor([this.#apiKey, ...(options.secrets ?? [])]),
    })
  }

  get hasApiKey(): boolean {
    return this.#apiKey !== undefined
  }

  /** POST /tasks: schedules a task through the whole pipeline. */
  async scheduleTask(body: TaskBodyInput, options: { signal?: AbortSignal } = {}): Promise<TaskQueuedResponse> {
    const schemas = await taskSchemas()
    const checked = this.#check(schemas, schemas.taskBody, body, 'task body')
    // production.md: fields beyond the documented ones are passed through, not refused.
    const unknown = schemas.unknownTaskFields(checked)
    if (unknown.length) {
      this.http.logger.warn(
        `The task body has ${unknown.length === 1 ? 'a field' : 'fields'} this version of proving-kit does not know (${unknown.join(', ')}); sent as written, the service decides.`,
      )
    }
    return this.#submit('/tasks', checked, 'schedule the task', this.#key('Scheduling a task'), options.signal)
  }

  /**
   * POST /tasks/decommitment: a decommitment-only task for a proving query whose data
   * processor ran locally. Without dp_output and program_hash the service fetches them from
   * the proving query.
   */
  async submitDecommitment(
    body: DecommitmentBodyInput,
    options: { signal?: AbortSignal } = {},
  ): Promise<TaskQueuedResponse> {
    const schemas = await taskSchemas()
    const checked = this.#check(schemas, schemas.decommitmentBody, body, 'decommitment body')
    return this.#submit(
      '/tasks/decommitment',
      checked,
      'submit the decommitment task',
      this.#key('Submitting a decommitment task'),
      options.signal,
    )
  }

  /** GET /tasks: one page of tasks. */
  async listTasks(options: ListTasksOptions = {}): Promise<TaskListResponse> {
    if (options.page !== undefined) checkInteger(options.page, 'page', 1, Number.MAX_SAFE_INTEGER)
    if (options.perPage !== undefined) checkInteger(options.perPage, 'perPage', 1, TASK_LIST_MAX_PER_PAGE)
    if (options.status !== undefined && !(TASK_STATUSES as readonly string[]).includes(options.status)) {
      throw new InvalidInputError(
        `status must be one of ${TASK_STATUSES.join(', ')}; got ${JSON.stringify(options.status)}.`,
        { input: 'status' },
      )
    }
    const { data } = await this.http.request({
      method: 'GET',
      path: '/tasks',
      query: {
        [TASK_LIST_PARAMETERS.page]: options.page,
        [TASK_LIST_PARAMETERS.perPage]: options.perPage,
        [TASK_LIST_PARAMETERS.search]: emptyToUndefined(options.search),
        [TASK_LIST_PARAMETERS.status]: options.status,
        [TASK_LIST_PARAMETERS.clientId]: emptyToUndefined(options.clientId),
      },
      schema: (await taskSchemas()).taskListResponse,
      operation: 'list tasks',
      signal: options.signal,
    })
    return data
  }

  /**
   * Every task matching the filters, page after page (100 per request unless `perPage` says
   * otherwise). A task that moves to another page while the pages are read is yielded once.
   */
  async *iterateTasks(options: Omit<ListTasksOptions, 'page'> = {}): AsyncGenerator<TaskSummary> {
    const perPage = options.perPage ?? TASK_LIST_MAX_PER_PAGE
    const seen = new Set<string>()
    for (let page = 1; ; page++) {
      const response = await this.listTasks({ ...options, perPage, page })
      for (const task of response.tasks) {
        if (seen.has(task.uuid)) continue
        seen.add(task.uuid)
        yield task
      }
      if (response.tasks.length === 0 || page >= response.pagination.totalPages) return
    }
  }

  /** GET /tasks/{uuid}/status (no authentication). */
  getTaskStatus(uuid: string, options: { signal?: AbortSignal } = {}): Promise<TaskStatusRecord> {
    return this.#readTask(uuid, 'status', (schemas) => schemas.taskStatusRecord, 'the status', options.signal)
  }

  /** GET /tasks/{uuid}/mmrs: the MMRs the task used (no authentication). */
  getTaskMmrs(uuid: string, options: { signal?: AbortSignal } = {}): Promise<TaskMmrsResponse> {
    return this.#readTask(uuid, 'mmrs', (schemas) => schemas.taskMmrsResponse, 'the MMRs', options.signal)
  }

  /** GET /tasks/{uuid}/{part}: one part of a task's record, read without authentication. */
  async #readTask<T>(uuid: string, part: 'status' | 'mmrs', schema: (schemas: TaskSchemas) => z.ZodType<T>, what: string, signal: AbortSignal | undefined): Promise<T> {
    const id = requireId(uuid, 'uuid', 'The task uuid')
    const { data } = await this.http.request({
      method: 'GET',
      path: `/tasks/${encodeURIComponent(id)}/${part}`,
      schema: schema(await taskSchemas()),
      operation: `get ${what} of task ${id}`,
      signal,
    })
    return data
  }

  /**
   * Waits for a task to reach TaskDecommitmentCompleted and returns its final status record.
   * Any `*Failed` status ends the wait with a RemoteFailureError carrying the service's error
   * message and the record; the other endings are WaitTimeoutError, AbortedError and
   * UnknownStatusError (see `unknownStatusGraceMs`). Same polling discipline as waitForQuery.
   */
  async waitForTask(uuid: string, options: WaitForTaskOptions = {}): Promise<TaskStatusRecord> {
    const id = requireId(uuid, 'uuid', 'The task uuid')
    const timeoutMs = options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS
    const graceMs = options.unknownStatusGraceMs ?? DEFAULT_UNKNOWN_STATUS_GRACE_MS
    const clock = this.http.clock
    const started = clock.now()
    const watch = new StateWatch(options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS, started)
    return pollUntil<TaskStatusRecord>(
      async () => {
        const record = await this.getTaskStatus(id, { signal: options.signal })
        const now = clock.now()
        const stage = taskStageOf(record.status)
        const progress: TaskProgress = { taskId: id, status: record.status, stage, elapsedMs: now - started, record }
        const seen = watch.see(record.status, now)
        if (seen === 'changed') {
          options.onProgress?.(progress)
        } else if (seen === 'stuck') {
          this.http.logger.warn(
            `Task ${id} has been ${serviceLine(record.status, 200)} for ${formatDuration(now - watch.since)}, far longer than expected; still waiting until the timeout.`,
          )
        }
        if (record.status === TASK_SUCCESS_STATUS) return { done: true, value: record }
        // A status ending in "Failed" ends the wait even when this version does not know it.
        if (isTerminalTaskStatus(record.status) || record.status.endsWith('Failed')) {
          throw taskFailure(id, record, this.http.redactor)
        }
        if (stage === undefined) {
          if (now - watch.since >= graceMs) {
            throw new UnknownStatusError(
              `Task ${id} has reported status "${serviceLine(record.status, 200)}", which this version of proving-kit does not know, for ${formatDuration(now - watch.since)}; read the task's record on the service and update proving-kit.`,
              { nextStep: { kind: 'read-task', id } },
            )
          }
          if (now === watch.since) {
            this.http.logger.warn(`Task ${id} reports status "${serviceLine(record.status, 200)}", which this version of proving-kit does not know; still waiting.`)
          }
        }
        return { done: false, state: record }
      },
      {
        what: `task ${id}`,
        timeoutMs,
        signal: options.signal,
        clock,
        logger: this.http.logger,
        schedule: options.schedule,
        waitedFor: { kind: 'task', id },
      },
    )
  }

  #key(operation: string): string {
    if (!this.#apiKey) {
      throw new InvalidInputError(`${operation} needs an API key (sent as X-API-KEY); pass apiKey when creating the TaskClient.`, {
        input: 'apiKey',
      })
    }
    return this.#apiKey
  }

  #check<T>({ checkTaskRequest }: TaskSchemas, schema: z.ZodType<T>, body: unknown, what: string): T {
    // Nesting and size first: a hostile body must not reach the schema, nor JSON.stringify.
    serializeJsonBody(body, { input: 'body', what: `the ${what}` })
    const result = checkTaskRequest(schema, body)
    if (result.ok) return result.data
    const problems = result.problems.map((problem) => redact(problem, this.http.redactor))
    const first = problems[0] ?? `the ${what} is not valid`
    const more = problems.length - 1
    throw new InvalidInputError(
      more > 0 ? `${first} (and ${more} more problem${more > 1 ? 's' : ''} in the ${what}, listed below).` : `${first}.`,
      {
        input: fieldOf(first),
        metaMessages: more > 0 ? problems.slice(0, 20) : undefined,
      },
    )
  }

  /**
   * The submissions carry no deduplication key, so one whose answer was lost is never sent
   * again here: the error says how to look for the task before trying again.
   */
  async #submit(
    path: string,
    json: unknown,
    operation: string,
    apiKey: string,
    signal: AbortSignal | undefined,
  ): Promise<TaskQueuedResponse> {
    try {
      const { data } = await this.http.request({
        method: 'POST',
        path,
        headers: { 'x-api-key': apiKey },
        json,
        schema: (await taskSchemas()).taskQueuedResponse,
        operation,
        signal,
      })
      const uuid = checkServiceId(data.uuid, 'The task uuid the task service returned', 'The service may have queued the task: look for it among your tasks before submitting again.', {
        kind: 'look-for-task',
      })
      return { ...data, uuid }
    } catch (error) {
      throw explainSubmissionFailure(error, {
        ambiguous: 'The task may or may not have been queued by the task service; it was not sent again, to avoid running it twice.',
        howToCheck: 'Look for a new task among your tasks (TaskClient.listTasks) before submitting again.',
        ifCancelled: 'If the request had gone out, the task may have been queued anyway: look among your tasks (TaskClient.listTasks) before submitting again.',
        nextStep: { kind: 'look-for-task' },
      })
    }
  }
}

function taskFailure(id: string, record: TaskStatusRecord, redactor: SecretRedactor): RemoteFailureError {
  const stage = taskStageOf(record.status)
  const where = stage && stage !== 'received' ? ` at ${taskStageLabel(stage)}` : ''
  const reason = record.errorMessage?.trim() ? `: ${serviceLine(record.errorMessage.trim())}` : ' (the service gave no error message)'
  return new RemoteFailureError(redact(`Task ${id} failed${where} (${serviceLine(record.status, 200)})${reason}`, redactor), {
    code: record.status,
    record,
  })
}


/** The field a problem sentence starts with: "input.params[1] must be ..." -> "input.params[1]". */
function fieldOf(problem: string): string {
  return problem.startsWith('the body ') ? 'body' : (problem.split(' ')[0] ?? problem)
}


function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value
}
