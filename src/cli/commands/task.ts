import { readFile } from 'node:fs/promises'
import { TaskClient, type TaskProgress } from '../../clients/tasks.ts'
import { InvalidInputError, RemoteFailureError } from '../../core/errors.ts'
import { MAX_JSON_BODY_BYTES, parseJsonBytes } from '../../core/json-limits.ts'
import { formatDuration } from '../../core/poll.ts'
import { serviceLine } from '../../core/service-text.ts'
import type {
  DecommitmentBodyInput,
  TaskBodyInput,
  TaskMmrsResponse,
  TaskStatusRecord,
  TaskSummary,
} from '../../schemas/tasks.ts'
import {
  TASK_LIST_MAX_PER_PAGE,
  TASK_STATUSES,
  taskStageLabel,
  taskStageOf,
  type TaskStatus,
} from '../../schemas/tasks-constants.ts'
import {
  type CommandContext,
  type CommandSpec,
  defineCommand,
  type OptionSpecs,
  pageOptions,
  pageSummary,
  parseInteger,
  SERVICE_OPTIONS,
  allowInsecureHttp,
  waitOptions,
} from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { missingAddressError } from '../profiles.ts'
import { timeoutFrom } from '../services.ts'

/**
 * `proving task ...`: the data-processor task service. Submissions need the API key (sent as
 * X-API-KEY); status, MMRs, wait and list need none. The service's address is its own
 * (--tasks-url / PROVING_TASKS_URL): in production it is not the proving service's.
 */

export const TASK_SERVICE_OPTIONS = {
  'tasks-url': {
    type: 'string',
    valueName: '<url>',
    env: 'PROVING_TASKS_URL',
    description: 'Address of the task service.',
  },
  'api-key': SERVICE_OPTIONS['api-key'],
} as const satisfies OptionSpecs

const WAIT_OPTIONS = waitOptions('Wait for the task to finish (exit 0 TaskDecommitmentCompleted, 1 on any *Failed).')

function taskClientFrom(
  context: CommandContext<typeof TASK_SERVICE_OPTIONS>,
  options: { needsKey: boolean },
): TaskClient {
  const baseUrl = context.values['tasks-url']?.trim()
  if (!baseUrl) {
    throw missingAddressError('tasksUrl')
  }
  const apiKey = context.values['api-key']?.trim()
  if (options.needsKey && !apiKey) {
    throw new InvalidInputError('No API key: set PROVING_API_KEY (or pass --api-key <key>); it is sent as X-API-KEY.', {
      input: '--api-key',
    })
  }
  if (apiKey) context.redactor.add(apiKey)
  try {
    return new TaskClient({ baseUrl, apiKey, logger: context.logger, allowInsecureHttp: allowInsecureHttp(context) })
  } catch (error) {
    throw new InvalidInputError(`--tasks-url ${(error as Error).message.split('\n')[0]}`, {
      input: '--tasks-url',
      cause: error,
    })
  }
}

/**
 * Reads a JSON file (`-`: stdin); a problem names the flag or argument it came from. The bytes
 * must be UTF-8 and the JSON at most 16 MiB and 32 levels deep (src/core/json-limits.ts).
 */
async function readJsonFile(context: CommandContext, path: string, name: string): Promise<unknown> {
  let bytes: Uint8Array
  try {
    bytes = path === '-' ? await readStdin(context, name) : await readFile(path)
  } catch (error) {
    if (error instanceof InvalidInputError) throw error
    const code = (error as NodeJS.ErrnoException).code
    throw new InvalidInputError(
      code === 'ENOENT'
        ? `${name}: no file at ${path}; check the path.`
        : code === 'EISDIR'
          ? `${name}: ${path} is a folder; give the path of a JSON file.`
          : `${name}: cannot read ${path} (${code ?? (error as Error).message}); check the path and its permissions.`,
      { input: name, cause: error },
    )
  }
  return parseJsonBytes(bytes, { input: name, what: path === '-' ? 'stdin' : path })
}

async function readStdin(context: CommandContext, name: string): Promise<Uint8Array> {
  const stdin = context.io.stdin
  if (!stdin)
    throw new InvalidInputError('No standard input to read the task from; give a file path instead of -.', {
      input: '<task.json>',
    })
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    size += buffer.length
    if (size > MAX_JSON_BODY_BYTES) {
      throw new InvalidInputError(
        `${name}: stdin holds more than the ${MAX_JSON_BODY_BYTES / (1024 * 1024)} MiB a JSON body may be; send a smaller one.`,
        { input: name },
      )
    }
    chunks.push(buffer)
  }
  return Buffer.concat(chunks)
}

function progressReporter(context: CommandContext) {
  return (progress: TaskProgress) => {
    const stage = progress.stage ? `  (${taskStageLabel(progress.stage)})` : ''
    context.progress(
      `[${formatDuration(progress.elapsedMs).padStart(6)}] ${progress.taskId}  ${progress.status}${stage}`,
    )
  }
}

export function describeTaskStatus(record: TaskStatusRecord): string {
  const stage = taskStageOf(record.status)
  const rows: [string, string | null | undefined][] = [
    ['task', record.taskId],
    ['status', record.status],
    ['stage', stage ? taskStageLabel(stage) : null],
    ['updated', record.updatedAt],
    ['error', record.errorMessage],
  ]
  return rows
    .filter(([, value]) => value !== null && value !== undefined && value !== '')
    .map(([label, value]) => `${label.padEnd(9)}${serviceLine(String(value))}`)
    .join('\n')
}

export function describeMmrs(response: TaskMmrsResponse): string {
  if (response.mmrs.length === 0) return `Task ${response.taskId} has used no MMRs yet.`
  const lines = [`${'chain'.padEnd(12)}${'hashing'.padEnd(11)}${'id'.padEnd(10)}${'size'.padEnd(12)}root`]
  for (const mmr of response.mmrs) {
    lines.push(
      serviceLine(
        `${mmr.chain_id.padEnd(12)}${mmr.hashing_function.padEnd(11)}${mmr.id.padEnd(10)}${mmr.size.padEnd(12)}${mmr.root}`,
      ),
    )
  }
  return lines.join('\n')
}

/**
 * After a submission: either the `{ message, uuid }` answer, or (--wait) the final status
 * record, printed on failure too so a script reads `status` and `errorMessage` either way.
 */
async function afterSubmission(
  context: CommandContext<typeof WAIT_OPTIONS>,
  client: TaskClient,
  queued: { message: string; uuid: string },
): Promise<number> {
  if (!context.values.wait) {
    context.print(`${queued.message}: task ${queued.uuid}\nFollow it with: proving task wait ${queued.uuid}`, queued)
    return EXIT.ok
  }
  context.progress(`${queued.message}: task ${queued.uuid}`)
  return waitAndPrint(context, client, queued.uuid)
}

async function waitAndPrint(
  context: CommandContext<{ timeout: typeof WAIT_OPTIONS.timeout }>,
  client: TaskClient,
  uuid: string,
): Promise<number> {
  const timeoutMs = timeoutFrom(context)
  try {
    const record = await client.waitForTask(uuid, {
      timeoutMs,
      signal: context.signal,
      onProgress: progressReporter(context),
    })
    context.print(`${describeTaskStatus(record)}\nMMRs: proving task mmrs ${uuid}`, record)
    return EXIT.ok
  } catch (error) {
    if (!(error instanceof RemoteFailureError)) throw error
    const record = error.record as TaskStatusRecord
    context.print(describeTaskStatus(record), record)
    // With --json, the `{ "error": … }` object on stderr, as for any failure.
    if (context.json) context.fail(error)
    else context.logger.error(error.shortMessage)
    return EXIT.remoteFailure
  }
}

export const taskSubmit = defineCommand({
  path: ['task', 'submit'],
  args: '<task.json>',
  summary: 'Schedule a data-processor task from a JSON body (- reads stdin).',
  details: [
    "The body is POST /tasks's: destination_chain_id, input { compiled_class, injected_state, params },",
    'program_hash, task_inputs (default []), webhook_url (optional). It is checked before it is sent.',
  ],
  positionals: { min: 1, max: 1 },
  options: { ...TASK_SERVICE_OPTIONS, ...WAIT_OPTIONS },
  async run(context) {
    const body = await readJsonFile(context, context.positionals[0]!, '<task.json>')
    timeoutFrom(context) // a bad --timeout is refused before anything is queued
    const client = taskClientFrom(context, { needsKey: true })
    // The file's JSON as it is: the client checks it against the schema (every problem listed) before sending.
    const queued = await client.scheduleTask(body as TaskBodyInput, { signal: context.signal })
    return afterSubmission(context, client, queued)
  },
})

export const taskDecommit = defineCommand({
  path: ['task', 'decommit'],
  summary: 'Submit a decommitment-only task for a proving query whose data processor ran locally.',
  details: ['Without --dp-output and --program-hash the service fetches both from the proving query.'],
  positionals: { min: 0, max: 0 },
  options: {
    ...TASK_SERVICE_OPTIONS,
    'proving-query-id': { type: 'string', valueName: '<id>', description: 'The proving query to decommit (required).' },
    'destination-chain-id': {
      type: 'string',
      valueName: '<0x...>',
      description: 'Destination chain id, 0x-prefixed hex (required).',
    },
    'dp-output': {
      type: 'string',
      valueName: '<file>',
      description: 'dp_output JSON file (default: fetched from the query).',
    },
    'program-hash': {
      type: 'string',
      valueName: '<0x...>',
      description: 'Program hash (default: fetched from the query).',
    },
    'webhook-url': { type: 'string', valueName: '<url>', description: 'URL the service calls when the task ends.' },
    ...WAIT_OPTIONS,
  },
  async run(context) {
    const provingQueryId = context.values['proving-query-id']
    const destinationChainId = context.values['destination-chain-id']
    if (provingQueryId === undefined) {
      throw new InvalidInputError('--proving-query-id is required: the proving query whose proof is decommitted.', {
        input: '--proving-query-id',
      })
    }
    if (destinationChainId === undefined) {
      throw new InvalidInputError(
        '--destination-chain-id is required: the chain to commit on, 0x-prefixed hex (e.g. 0xaa36a7).',
        {
          input: '--destination-chain-id',
        },
      )
    }
    const dpOutputPath = context.values['dp-output']
    const body = {
      proving_query_id: provingQueryId,
      destination_chain_id: destinationChainId,
      ...(dpOutputPath === undefined ? {} : { dp_output: await readJsonFile(context, dpOutputPath, '--dp-output') }),
      ...(context.values['program-hash'] === undefined ? {} : { program_hash: context.values['program-hash'] }),
      ...(context.values['webhook-url'] === undefined ? {} : { webhook_url: context.values['webhook-url'] }),
    }
    timeoutFrom(context) // a bad --timeout is refused before anything is queued
    const client = taskClientFrom(context, { needsKey: true })
    // dp_output is the file's JSON as it is: the client checks the body before sending.
    const queued = await client.submitDecommitment(body as DecommitmentBodyInput, { signal: context.signal })
    return afterSubmission(context, client, queued)
  },
})

export const taskStatus = defineCommand({
  path: ['task', 'status'],
  args: '<uuid>',
  summary: "Show a task's status (no API key needed).",
  positionals: { min: 1, max: 1 },
  options: { ...TASK_SERVICE_OPTIONS },
  async run(context) {
    const client = taskClientFrom(context, { needsKey: false })
    const record = await client.getTaskStatus(context.positionals[0]!, { signal: context.signal })
    context.print(describeTaskStatus(record), record)
    return EXIT.ok
  },
})

export const taskMmrs = defineCommand({
  path: ['task', 'mmrs'],
  args: '<uuid>',
  summary: 'Show the MMRs a task used (no API key needed).',
  positionals: { min: 1, max: 1 },
  options: { ...TASK_SERVICE_OPTIONS },
  async run(context) {
    const client = taskClientFrom(context, { needsKey: false })
    const response = await client.getTaskMmrs(context.positionals[0]!, { signal: context.signal })
    context.print(describeMmrs(response), response)
    return EXIT.ok
  },
})

export const taskWait = defineCommand({
  path: ['task', 'wait'],
  args: '<uuid>',
  summary: 'Wait for a task to finish; exit 0 when TaskDecommitmentCompleted, 1 on any *Failed.',
  positionals: { min: 1, max: 1 },
  options: { ...TASK_SERVICE_OPTIONS, timeout: WAIT_OPTIONS.timeout, 'max-rps': WAIT_OPTIONS['max-rps'] },
  async run(context) {
    const client = taskClientFrom(context, { needsKey: false })
    return waitAndPrint(context, client, context.positionals[0]!)
  },
})

export const taskList = defineCommand({
  path: ['task', 'list'],
  summary: 'List tasks, newest first, with filters (no API key needed).',
  positionals: { min: 0, max: 0 },
  options: {
    ...TASK_SERVICE_OPTIONS,
    ...pageOptions('Tasks', TASK_LIST_MAX_PER_PAGE),
    search: { type: 'string', valueName: '<text>', description: 'Match the task uuid.' },
    status: {
      type: 'string',
      valueName: '<status>',
      description: `Only tasks in this status (${TASK_STATUSES[0]}, ..., ${TASK_STATUSES.at(-1)}).`,
    },
    'client-id': { type: 'string', valueName: '<id>', description: 'Only tasks of this client.' },
    all: {
      type: 'boolean',
      description: `Every page, not just one, ${TASK_LIST_MAX_PER_PAGE} tasks a request (--limit and --offset are for one page).`,
    },
  },
  async run(context) {
    // The same paging as every list here (--limit/--offset); the task service pages by number.
    const limit = parseInteger(context.values.limit, 'limit', 1, TASK_LIST_MAX_PER_PAGE)
    const offset = parseInteger(context.values.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    const status = context.values.status
    if (status !== undefined && !(TASK_STATUSES as readonly string[]).includes(status)) {
      throw new InvalidInputError(
        `--status must be one of ${TASK_STATUSES.join(', ')}; got ${JSON.stringify(status)}.`,
        { input: '--status' },
      )
    }
    const client = taskClientFrom(context, { needsKey: false })
    const filters = {
      search: context.values.search,
      status: status as TaskStatus | undefined,
      clientId: context.values['client-id'],
      signal: context.signal,
    }
    let tasks: TaskSummary[]
    let pagination
    if (context.values.all) {
      tasks = []
      // At the service's largest page, not --limit's: each page costs a request (issue 35).
      for await (const task of client.iterateTasks(filters)) tasks.push(task)
      pagination = { page: 1, perPage: tasks.length, total: tasks.length, totalPages: 1 }
    } else {
      // An offset that is not a whole number of pages spans two pages of `limit`.
      const first = Math.floor(offset / limit) + 1
      const response = await client.listTasks({ ...filters, page: first, perPage: limit })
      tasks = response.tasks
      if (offset % limit !== 0 && first < response.pagination.totalPages) {
        tasks = tasks.concat((await client.listTasks({ ...filters, page: first + 1, perPage: limit })).tasks)
      }
      tasks = tasks.slice(offset % limit, (offset % limit) + limit)
      pagination = { ...response.pagination, limit, offset }
    }
    const lines = tasks.map((task) =>
      serviceLine(
        `${task.uuid.padEnd(38)}${task.status.padEnd(27)}${(task.destinationChainId ?? '').padEnd(12)}${task.createdAt}`,
      ),
    )
    lines.push(
      context.values.all
        ? `${tasks.length} task${tasks.length === 1 ? '' : 's'}.`
        : pageSummary({ shown: tasks.length, offset, limit, total: pagination.total }),
    )
    context.print(lines.join('\n'), { tasks, pagination })
    return EXIT.ok
  },
})

export const TASK_COMMANDS: CommandSpec[] = [taskSubmit, taskDecommit, taskStatus, taskMmrs, taskWait, taskList]
