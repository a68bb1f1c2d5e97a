/**
 * What the `task/` and `decommit/` sub-actions share: their services' cross-check, outputs set
 * as soon as their value is known (`task-uuid` right after submission, so a step that fails,
 * times out or is cancelled still hands the next step the uuid), one log line per status change
 * inside a group, and the closing report: a job summary with the stage reached and the MMRs as
 * a table, and the failure message, whichever way the step ends.
 */
import type { TaskClient, TaskProgress } from '../../clients/tasks.ts'
import { AbortedError, InvalidInputError, RemoteFailureError, WaitTimeoutError } from '../../core/errors.ts'
import { parseJsonBytes, parseJsonText } from '../../core/json-limits.ts'
import { formatDuration } from '../../core/poll.ts'
import { forSummaryCell, serviceLine } from '../../core/service-text.ts'
import type { TaskStatusRecord, UsedMmrRecord } from '../../schemas/tasks.ts'
import { TASK_STAGES, taskStageLabel, taskStageOf } from '../../schemas/tasks-constants.ts'
import { describeServiceFailure, inputProblemsEnding, type ServiceText } from './failure.ts'
import { InputProblemsError, requireSecretAndUrl } from './inputs.ts'
import { loggerFor } from './io.ts'
import { OutputWriter, type TaskOutputName } from './outputs.ts'
import { Step, type StepOptions } from './step.ts'
import type { Ending, SummaryValue } from './summary.ts'
import type { ActionIO } from '../types.ts'

// --- Inputs (declared in ./inputs.ts) -------------------------------------------------------

/** `api-key` and `tasks-url` are required: the sub-actions have no emulator of their own. */
export const requireTaskService = requireSecretAndUrl(
  {
    input: 'api-key',
    message:
      '`api-key` is required: pass it from a secret, e.g. `api-key: ${{ secrets.PROVING_API_KEY }}`; it is sent as X-API-KEY.',
  },
  { input: 'tasks-url', service: 'task service' },
)

/**
 * A JSON input given inline (it starts with `{`) or as the path of a file; a problem names the
 * input. `what` says what it holds, for messages.
 */
export async function readJsonInput(name: string, value: string, what: string, workspace?: string): Promise<unknown> {
  const inline = value.trimStart().startsWith('{')
  const label = `\`${name}\``
  const refuse = (message: string) => new InputProblemsError([{ input: name, message }])
  // UTF-8 only, at most 16 MiB and 32 levels deep (src/core/json-limits.ts), before anything is sent.
  try {
    if (inline) return parseJsonText(value, { input: name, label, what: 'the inline JSON' })
    const { readFile } = await import('node:fs/promises')
    let bytes: Uint8Array
    try {
      // A path is the workspace's, like every path input (the runner's working directory may differ).
      bytes = await readFile((await import('node:path')).resolve(workspace || process.cwd(), value))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      throw refuse(
        code === 'ENOENT'
          ? `${label}: no file at ${value}; give the path of ${what} (relative to the workspace), or the JSON itself.`
          : code === 'EISDIR'
            ? `${label}: ${value} is a folder; give the path of ${what}, or the JSON itself.`
            : `${label}: cannot read ${value} (${code ?? (error as Error).message}); check the path and its permissions.`,
      )
    }
    return parseJsonBytes(bytes, { input: name, label, what: value })
  } catch (error) {
    if (error instanceof InvalidInputError && !(error instanceof InputProblemsError))
      throw refuse([error.shortMessage, ...(error.metaMessages ?? [])].join(' '))
    throw error
  }
}

/** A body's problems (from checkTaskRequest) as input problems: "`task`: destination_chain_id must be ...". */
/** How to follow a task from outside the step: the CLI (each GitHub release carries it), or the service itself. */
export function followTask(uuid: string): string {
  return `Follow task \`${uuid}\` with the CLI (docs/tasks.md): \`PROVING_TASKS_URL=<tasks-url> proving task wait ${uuid}\`, or read \`GET <tasks-url>/tasks/${uuid}/status\`.`
}

export function bodyProblems(name: string, problems: string[]): InputProblemsError {
  return new InputProblemsError(
    problems.slice(0, 20).map((problem) => ({ input: name, message: `\`${name}\`: ${problem}.` })),
  )
}

// --- The step --------------------------------------------------------------------------------

export type TaskStepOptions = StepOptions & {
  timeoutMinutes?: number | undefined
  /** Output names to use instead of the sub-actions' (the root action already has a `status`). */
  outputNames?: Partial<Record<TaskOutputName, string>> | undefined
}

export class TaskStep extends Step<TaskStepOptions, TaskOutputName> {
  uuid: string | undefined
  record: TaskStatusRecord | undefined
  mmrs: UsedMmrRecord[] | undefined
  /** Rows shown before the status (what was submitted). */
  rowsBefore: [string, SummaryValue][] = []
  /** Stages this kind of task runs (a decommitment-only task: just the last). */
  stages: readonly (typeof TASK_STAGES)[number][] = TASK_STAGES

  constructor(io: ActionIO, options: TaskStepOptions) {
    const names = options.outputNames ?? {}
    super(
      io,
      options,
      new OutputWriter({ setOutput: (name, value) => io.setOutput(names[name as TaskOutputName] ?? name, value) }),
    )
  }

  queued(response: { message: string; uuid: string }): void {
    this.uuid = response.uuid
    this.outputs.set({ 'task-uuid': response.uuid })
    this.remember(`task ${response.uuid}`, followTask(response.uuid))
    this.io.info(`${response.message}: task ${response.uuid}`)
  }

  /** Follows the task to its end: one line per status, outputs kept current. */
  async follow(client: TaskClient, timeoutMs: number): Promise<TaskStatusRecord> {
    const uuid = this.uuid!
    this.io.startGroup(`Waiting for task ${uuid} (up to ${formatDuration(timeoutMs)})`)
    try {
      const record = await client.waitForTask(uuid, {
        timeoutMs,
        signal: this.options.signal,
        onProgress: (progress) => this.#progress(progress),
      })
      this.#showLatest(record)
      return record
    } catch (error) {
      if (error instanceof RemoteFailureError) this.#showLatest(error.record as TaskStatusRecord)
      if (error instanceof WaitTimeoutError && isStatusRecord(error.lastSeen)) this.#showLatest(error.lastSeen)
      throw error
    } finally {
      this.io.endGroup()
    }
  }

  #progress(progress: TaskProgress): void {
    const stage = progress.stage ? `  (${taskStageLabel(progress.stage)})` : ''
    this.io.info(`[${formatDuration(progress.elapsedMs).padStart(6)}] ${serviceLine(progress.status, 200)}${stage}`)
    this.#showLatest(progress.record)
  }

  /** The latest record the wait read: kept for the summary, its status in the outputs. */
  #showLatest(record: TaskStatusRecord): void {
    this.record = record
    this.outputs.set({
      status: record.status,
      'updated-at': record.updatedAt || undefined,
      'error-message': record.errorMessage?.trim() || undefined,
    })
  }

  /** The MMRs the task used, as the `mmrs` output; a failure to read them only warns. */
  async readMmrs(client: TaskClient): Promise<void> {
    if (!this.uuid || this.options.signal.aborted) return
    try {
      const response = await client.getTaskMmrs(this.uuid, { signal: this.options.signal })
      this.mmrs = response.mmrs
      this.outputs.set({ mmrs: JSON.stringify(response.mmrs) })
    } catch (error) {
      this.io.warning(`Could not read the MMRs of task ${this.uuid}: ${(error as Error).message.split('\n')[0]}`)
    }
  }

  override rows(): [string, SummaryValue][] {
    const record = this.record
    return [
      ['Task', { code: this.uuid }],
      ...this.rowsBefore,
      ['Status', record?.status],
      ['Stages', record ? this.#pipeline(record.status) : undefined],
      ['Error', record?.errorMessage?.trim() || undefined],
      ['Updated', record?.updatedAt || undefined],
      ['Duration', formatDuration(this.now() - this.started)],
      ...this.extraRows,
    ]
  }

  /** "dry run ✓ → chain proofs fetch ✓ → trace generation ✗ → proving → decommitment". */
  #pipeline(status: string): string | undefined {
    const current = taskStageOf(status)
    if (current === undefined) return undefined
    const index = this.stages.findIndex((entry) => entry.stage === current)
    const failed = status.endsWith('Failed')
    const completed = status.endsWith('Completed')
    return this.stages
      .map((entry, i) => {
        if (i < index || (i === index && completed)) return `${entry.label} ✓`
        if (i === index) return failed ? `${entry.label} ✗` : `${entry.label} …`
        return entry.label
      })
      .join(' → ')
  }

  protected override summary(markdown: string): string {
    return withMmrTable(markdown, this.mmrs)
  }

  protected describe(error: unknown): Ending {
    return describeTaskFailure(error, this)
  }

  /**
   * The task client, loaded here rather than up front: a step refused at its inputs never loads
   * it. Its keep-alive connections are closed once the step has reported, so the process can exit.
   */
  async connect(tasksUrl: string, apiKey: string | undefined, allowInsecureHttp: boolean): Promise<TaskClient> {
    const { TaskClient } = await import('../../clients/tasks.ts')
    this.onClose(async () => (await import('../../core/http.ts')).closeDefaultDispatcher())
    return new TaskClient({ baseUrl: tasksUrl, apiKey, logger: loggerFor(this.io), allowInsecureHttp })
  }
}

function isStatusRecord(value: unknown): value is TaskStatusRecord {
  return typeof value === 'object' && value !== null && typeof (value as { status?: unknown }).status === 'string'
}

/** The MMRs as a table, placed before the summary's footer line. */
export function withMmrTable(markdown: string, mmrs: UsedMmrRecord[] | undefined): string {
  if (mmrs === undefined) return markdown
  // The task service's values: data in code spans and cells, never Markdown (core/service-text.ts).
  const cell = (text: string) => forSummaryCell(text, 'code')
  const table =
    mmrs.length === 0
      ? ['**MMRs used**', '', 'None reported.', '']
      : [
          '**MMRs used**',
          '',
          '| Chain | Hashing | Id | Size | Root |',
          '|---|---|---|---|---|',
          ...mmrs.map(
            (mmr) =>
              `| ${cell(mmr.chain_id)} | ${forSummaryCell(mmr.hashing_function)} | ${cell(mmr.id)} | ${cell(mmr.size)} | ${cell(mmr.root)} |`,
          ),
          '',
        ]
  const footer = markdown.lastIndexOf('<sub>')
  if (footer < 0) return `${markdown}\n${table.join('\n')}`
  return `${markdown.slice(0, footer)}${table.join('\n')}\n${markdown.slice(footer)}`
}

const TASK_SERVICE: ServiceText = {
  service: 'task service',
  urlInput: 'tasks-url',
  notFound: 'is `tasks-url` the right deployment?',
  docs: 'docs/tasks.md',
  ambiguous: {
    headline: 'The task may or may not have been queued; it was not sent again, to avoid running it twice.',
    nextStep: "Check the service's task list (`proving task list`) for a new task before running this step again.",
  },
  networkDetails: true,
}

/** What failed and what to do, by kind of failure. */
export function describeTaskFailure(error: unknown, step: Pick<TaskStep, 'uuid' | 'options'>): Ending {
  const uuid = step.uuid
  const follow = uuid ? followTask(uuid) : undefined
  if (error instanceof InputProblemsError) return inputProblemsEnding(error, 'nothing was sent', 'docs/tasks.md')
  if (error instanceof RemoteFailureError) {
    const record = error.record as TaskStatusRecord | undefined
    const stage = record ? taskStageOf(record.status) : undefined
    return {
      outcome: 'failed',
      headline: `Task ${uuid} failed${stage && stage !== 'received' ? ` at ${taskStageLabel(stage)}` : ''}${record ? ` (${record.status})` : ''}.`,
      problems: record?.errorMessage?.trim() ? [record.errorMessage.trim()] : undefined,
      nextSteps: [
        stage === 'decommitment'
          ? 'Check that the proving query is DONE and that `dp-output`, `program-hash` and the destination chain belong to it.'
          : 'Read the error above; fix the module, its inputs or the destination chain, and submit the task again.',
      ],
      failure: error.shortMessage,
    }
  }
  if (error instanceof AbortedError) {
    return {
      outcome: 'cancelled',
      headline: uuid
        ? `Cancelled while waiting for task ${uuid}; the task goes on running on the service.`
        : 'Cancelled before the task was queued.',
      nextSteps: follow
        ? [follow]
        : ["If the request had gone out, a task may still have been queued: check the service's task list."],
      failure: uuid ? `Cancelled while waiting for task ${uuid}.` : 'Cancelled before the task was queued.',
    }
  }
  if (error instanceof WaitTimeoutError) {
    const minutes = step.options.timeoutMinutes
    return {
      outcome: 'timed-out',
      headline: `Stopped waiting after ${minutes === undefined ? 'the timeout' : formatDuration(minutes * 60_000)}; task ${uuid} is still running on the service.`,
      nextSteps: [...(follow ? [follow] : []), 'Or raise `timeout-minutes`.'],
      failure: `Timed out waiting for task ${uuid}.`,
    }
  }
  return describeServiceFailure(error, TASK_SERVICE, follow ? { follow: () => [follow] } : undefined)
}
