import type { z } from 'zod'
import { apiKeyOf, checkInteger, checkServiceId, requireId } from '../core/checks.ts'
import { InvalidInputError, RemoteFailureError, UnknownStatusError } from '../core/errors.ts'
import { type ConnectionOptions, connectionOf, HttpClient } from '../core/http.ts'
import { explainSubmissionFailure } from '../core/submission.ts'
import { serializeJsonBody } from '../core/json-limits.ts'
import {
  DEFAULT_WAIT_TIMEOUT_MS,
  DEFAULT_STUCK_AFTER_MS,
  formatDuration,
  pollUntil,
  StateWatch,
  type WaitOptions,
} from '../core/poll.ts'
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

/** How {@link TaskClient} reaches the data-processor task service. */
export type TaskClientOptions = ConnectionOptions & {
  /** Sent as `X-API-KEY` on the two submissions only; reads need none. */
  apiKey?: string | undefined
  /** Extra values to keep out of messages (the API key is always kept out). */
  secrets?: string[] | undefined
}

/** Which page of tasks {@link TaskClient.listTasks} reads, and its filters. */
export type ListTasksOptions = {
  /** Page number, from 1 (service default 1). */
  page?: number | undefined
  /** Tasks per page, 1 to 100 (service default 10). */
  perPage?: number | undefined
  /** Matches the task UUID. */
  search?: string | undefined
  /** Only the tasks in this status (one of `TASK_STATUSES`; another is refused before anything is sent). */
  status?: TaskStatus | undefined
  /** Only the tasks of this client. */
  clientId?: string | undefined
  /** Cancels the request (the promise rejects with AbortedError). */
  signal?: AbortSignal | undefined
}

/** A task's state as a wait sees it, given to `onProgress` on every change. */
export type TaskProgress = {
  taskId: string
  status: string
  /** The pipeline stage the status belongs to; undefined for a status this version does not know. */
  stage: TaskStage | 'received' | undefined
  elapsedMs: number
  record: TaskStatusRecord
}

/**
 * How {@link TaskClient.waitForTask} waits: its timeout and signal, its progress callback, how long
 * an unknown status may last.
 */
export type WaitForTaskOptions = WaitOptions<TaskProgress> & {
  /**
   * Warn when one status lasts longer than this.
   * @default 1_800_000 (30 minutes)
   */
  stuckAfterMs?: number | undefined
  /**
   * How long a status this version does not know may last before the wait ends with
   * UnknownStatusError: a new intermediate stage passes through, an unknown terminal state does not
   * hold the wait until its timeout.
   * @default 600_000 (10 minutes)
   */
  unknownStatusGraceMs?: number | undefined
}

const DEFAULT_UNKNOWN_STATUS_GRACE_MS = 10 * 60_000

/**
 * A client of the data-processor task service: schedule a task, submit a decommitment-only task,
 * list tasks, read a task's status and the MMRs it used, and wait for it to finish. Every body is
 * checked before it is sent; a problem is an {@link InvalidInputError} naming the field and why.
 *
 * @example
 * ```ts
 * import { TaskClient } from 'proving-kit'
 *
 * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
 * const { uuid } = await tasks.submitDecommitment({ proving_query_id: 'a1b2c3', destination_chain_id: '0xaa36a7' })
 * const record = await tasks.waitForTask(uuid)
 * console.log(record.status)
 * ```
 */
export class TaskClient {
  /** The HTTP client every request of this client goes through. */
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

  /** Whether the client was given an API key (the two submissions need one). */
  get hasApiKey(): boolean {
    return this.#apiKey !== undefined
  }

  /**
   * Schedules a task through the whole pipeline (`POST /tasks`). The body is checked first: every
   * problem is listed and nothing is sent; a top-level field this version does not know is sent as
   * written, with a warning. The service has no deduplication: a submission whose answer was lost is
   * not sent again (the error says how to look for the task).
   *
   * @param body The task: `destination_chain_id`, `input` (the module and its parameters),
   * `program_hash`, and the optional fields.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ message, uuid }`: the task's uuid, to wait for.
   * @throws {InvalidInputError} When the body is malformed (the first problem on the error's face,
   * all in `metaMessages`), or the client has no API key.
   * @throws {SubmissionOutcomeUnknownError} When the task may have been queued but the answer was lost.
   * @throws {ServiceError} When the service refuses the task.
   * @example
   * ```ts
   * import { readFile } from 'node:fs/promises'
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * import type { TaskBodyInput } from 'proving-kit'
   * const body = JSON.parse(await readFile('task.json', 'utf8')) as TaskBodyInput
   * const { uuid } = await tasks.scheduleTask(body)
   * ```
   */
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
   * Submits a decommitment-only task for a proving query whose data processor ran elsewhere
   * (`POST /tasks/decommitment`). Without `dp_output` and `program_hash` the service takes them from
   * the proving query.
   *
   * @param body `proving_query_id`, `destination_chain_id`, and optionally `dp_output`, `program_hash`, `webhook_url`.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ message, uuid }`: the task's uuid.
   * @throws {InvalidInputError} When the body is malformed, or the client has no API key.
   * @throws {SubmissionOutcomeUnknownError} When the task may have been queued but the answer was lost.
   * @throws {ServiceError} When the service refuses the task.
   * @example
   * ```ts
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * const { uuid } = await tasks.submitDecommitment({ proving_query_id: 'a1b2c3', destination_chain_id: '0xaa36a7' })
   * ```
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

  /**
   * Lists one page of tasks (`GET /tasks`).
   *
   * @param options The page (`page`, `perPage`) and the filters.
   * @returns `{ tasks, pagination }`: the page's tasks and the page count.
   * @throws {InvalidInputError} When `page`, `perPage` or `status` is out of range.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * const { tasks: page, pagination } = await tasks.listTasks({ status: 'TaskDecommitmentCompleted', perPage: 50 })
   * console.log(page.length, pagination.totalPages)
   * ```
   */
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
   * Yields every task matching the filters, page after page. A task that moves to another page while
   * the pages are read is yielded once.
   *
   * @param options The filters of {@link TaskClient.listTasks}, and `perPage`. Default `perPage`: 100.
   * @returns An async iterator of the tasks.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * for await (const task of tasks.iterateTasks({ search: 'a1b2' })) console.log(task.uuid, task.status)
   * ```
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

  /**
   * Reads a task's status (`GET /tasks/{uuid}/status`, no authentication).
   *
   * @param uuid The task's uuid.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ status, taskId, updatedAt, errorMessage }`.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * const { status, errorMessage } = await tasks.getTaskStatus('0b6f-...')
   * console.log(status, errorMessage)
   * ```
   */
  getTaskStatus(uuid: string, options: { signal?: AbortSignal } = {}): Promise<TaskStatusRecord> {
    return this.#readTask(uuid, 'status', (schemas) => schemas.taskStatusRecord, 'the status', options.signal)
  }

  /**
   * Reads the MMRs a task used (`GET /tasks/{uuid}/mmrs`, no authentication).
   *
   * @param uuid The task's uuid.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ mmrs }`: each MMR's chain, hashing function, id, root and size.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * const { mmrs } = await tasks.getTaskMmrs('0b6f-...')
   * for (const mmr of mmrs) console.log(mmr.chain_id, mmr.root)
   * ```
   */
  getTaskMmrs(uuid: string, options: { signal?: AbortSignal } = {}): Promise<TaskMmrsResponse> {
    return this.#readTask(uuid, 'mmrs', (schemas) => schemas.taskMmrsResponse, 'the MMRs', options.signal)
  }

  /** GET /tasks/{uuid}/{part}: one part of a task's record, read without authentication. */
  async #readTask<T>(
    uuid: string,
    part: 'status' | 'mmrs',
    schema: (schemas: TaskSchemas) => z.ZodType<T>,
    what: string,
    signal: AbortSignal | undefined,
  ): Promise<T> {
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
   * Waits for a task to reach TaskDecommitmentCompleted and returns its final status record, polling
   * as {@link ProvingClient.waitForQuery} does.
   *
   * @param uuid The task's uuid.
   * @param options The timeout, the progress callback, the signal and the poll schedule.
   * @returns The final status record.
   * @throws {RemoteFailureError} When the task fails (any `*Failed` status): the service's error
   * message, and the record in `record`.
   * @throws {WaitTimeoutError} When the task has not ended within `timeoutMs`.
   * @throws {AbortedError} When `signal` aborts.
   * @throws {UnknownStatusError} When an unknown status lasts longer than `unknownStatusGraceMs`.
   * @example
   * ```ts
   * import { TaskClient } from 'proving-kit'
   *
   * const tasks = new TaskClient({ baseUrl: process.env.TASK_BASE_URL!, apiKey: process.env.TASK_API_KEY })
   * const record = await tasks.waitForTask('0b6f-...', {
   *   onProgress: ({ status, stage }) => console.log(status, stage),
   * })
   * ```
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
        const change = watch.update(record.status, now)
        if (change === 'changed') {
          options.onProgress?.(progress)
        } else if (change === 'stuck') {
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
              `Task ${id} has reported status "${serviceLine(record.status, 200)}", unknown to this version, for ${formatDuration(now - watch.since)}.`,
              {
                metaMessages: ["Read the task's record on the service, and update proving-kit."],
                nextStep: { kind: 'read-task', id },
              },
            )
          }
          if (now === watch.since) {
            this.http.logger.warn(
              `Task ${id} reports status "${serviceLine(record.status, 200)}", which this version of proving-kit does not know; still waiting.`,
            )
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
      throw new InvalidInputError(
        `${operation} needs an API key (sent as X-API-KEY); pass apiKey when creating the TaskClient.`,
        {
          input: 'apiKey',
        },
      )
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
      more > 0
        ? `${first} (and ${more} more problem${more > 1 ? 's' : ''} in the ${what}, listed below).`
        : `${first}.`,
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
      const uuid = checkServiceId(
        data.uuid,
        'The task uuid the task service returned',
        'The service may have queued the task: look for it among your tasks before submitting again.',
        {
          kind: 'look-for-task',
        },
      )
      return { ...data, uuid }
    } catch (error) {
      throw explainSubmissionFailure(error, {
        ambiguous:
          'The task may or may not have been queued by the task service; it was not sent again, to avoid running it twice.',
        howToCheck: 'Look for a new task among your tasks (TaskClient.listTasks) before submitting again.',
        ifCancelled:
          'If the request had gone out, the task may have been queued anyway: look among your tasks (TaskClient.listTasks) before submitting again.',
        nextStep: { kind: 'look-for-task' },
      })
    }
  }
}

function taskFailure(id: string, record: TaskStatusRecord, redactor: SecretRedactor): RemoteFailureError {
  const stage = taskStageOf(record.status)
  const where = stage && stage !== 'received' ? ` at ${taskStageLabel(stage)}` : ''
  const reason = record.errorMessage?.trim()
    ? `: ${serviceLine(record.errorMessage.trim())}`
    : ' (the service gave no error message)'
  return new RemoteFailureError(
    redact(`Task ${id} failed${where} (${serviceLine(record.status, 200)})${reason}`, redactor),
    {
      code: record.status,
      record,
    },
  )
}

/** The field a problem sentence starts with: "input.params[1] must be ..." -> "input.params[1]". */
function fieldOf(problem: string): string {
  return problem.startsWith('the body ') ? 'body' : (problem.split(' ')[0] ?? problem)
}

function emptyToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value
}
