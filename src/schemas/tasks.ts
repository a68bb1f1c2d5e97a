import { z } from 'zod'
import { article, describeValue } from './issue-words.ts'
import { openEnum } from './open-enum.ts'
import { HEX_PATTERN, TASK_INPUT_VISIBILITIES, TASK_STATUSES } from './tasks-constants.ts'

/**
 * The task service's structures. Two kinds of schema live here:
 * - request bodies (`taskBody`, `decommitmentBody` and what they hold) are strict: they check
 *   what the user wrote before anything is sent, and an unknown field is a mistake to report
 *   (a misspelt `webhook_url` would otherwise be dropped in silence). The compiled class is the
 *   exception: compilers add fields, and it is passed through as the compiler wrote it;
 * - response records are tolerant, as everywhere (unknown statuses and extra fields pass with
 *   a debug note; a wrong type is an error).
 */

// --- Request structures ------------------------------------------------------------------

/** `0x` followed by hexadecimal digits: chain ids, hashes, selectors, primes, params, roots. */
export const hexString = z
  .string()
  .regex(HEX_PATTERN, { error: (issue) => `must be 0x-prefixed hex, got ${JSON.stringify(issue.input)}` })

/** One of a task's `task_inputs`: a hex value and whether it is public or private. */
export const taskInputItem = z.strictObject({
  value: hexString,
  visibility: z.enum(TASK_INPUT_VISIBILITIES),
})

/** The metadata of a Poseidon MMR a task reads. */
export const poseidonMmrMeta = z.strictObject({
  chain_id: hexString,
  id: hexString,
  root: hexString,
  size: hexString,
})

/** The metadata of a Keccak MMR a task reads (its root in two halves). */
export const keccakMmrMeta = z.strictObject({
  chain_id: hexString,
  id: hexString,
  root_high: hexString,
  root_low: hexString,
  size: hexString,
})

/** The metadata of a Poseidon MMR. */
export type PoseidonMmrMeta = z.infer<typeof poseidonMmrMeta>
/** The metadata of a Keccak MMR. */
export type KeccakMmrMeta = z.infer<typeof keccakMmrMeta>
/** An element of `mmr_metas`: exactly one key naming the hashing function. */
export type MmrMeta = { Poseidon: PoseidonMmrMeta } | { Keccak: KeccakMmrMeta }

/**
 * Parsed as one object with two optional keys plus an "exactly one" check rather than a union:
 * a union's error lists both branches' failures, and "root_high is required" is no help to
 * someone writing a Poseidon meta.
 */
export const mmrMeta = z
  .strictObject({ Poseidon: poseidonMmrMeta.optional(), Keccak: keccakMmrMeta.optional() })
  .check((ctx) => {
    const keys = Object.keys(ctx.value).filter((key) => key === 'Poseidon' || key === 'Keccak')
    if (keys.length !== 1) {
      ctx.issues.push({
        code: 'custom',
        input: ctx.value,
        message:
          keys.length === 0
            ? 'must have exactly one key, Poseidon or Keccak; it has none'
            : 'must have exactly one key, Poseidon or Keccak; it has both',
      })
    }
  }) as unknown as z.ZodType<MmrMeta>

/** The output of a data processor run: the MMRs used, the output tree's root and the task hash. */
export const dpOutput = z.strictObject({
  mmr_metas: z.array(mmrMeta),
  output_tree_root_high: hexString,
  output_tree_root_low: hexString,
  task_hash_high: hexString,
  task_hash_low: hexString,
})
/** The output of a data processor run. */
export type DpOutput = z.infer<typeof dpOutput>

/** An entry point of a compiled class: selector, offset and builtins. */
export const entryPoint = z.looseObject({
  builtins: z.array(z.string()),
  offset: z.number().int().nonnegative(),
  selector: hexString,
})

/** A compiled Cairo class (CASM), as a task's module input carries it. */
export const compiledClass = z.looseObject({
  bytecode: z.array(hexString),
  bytecode_segment_lengths: z.array(z.number().int().nonnegative()),
  compiler_version: z.string(),
  entry_points_by_type: z.looseObject({
    CONSTRUCTOR: z.array(entryPoint),
    EXTERNAL: z.array(entryPoint),
    L1_HANDLER: z.array(entryPoint),
  }),
  hints: z.array(z.unknown()),
  prime: hexString,
  pythonic_hints: z.array(z.unknown()),
})
/** A compiled Cairo class (CASM). */
export type CompiledClass = z.infer<typeof compiledClass>
/** An entry point of a compiled class. */
export type EntryPoint = z.infer<typeof entryPoint>

/** A task's `input`: the compiled class of its module, its injected state and its parameters. */
export const taskModuleInput = z.strictObject({
  compiled_class: compiledClass,
  injected_state: z.record(z.string(), z.unknown()),
  params: z.array(hexString),
})

/** An absolute http(s) URL: the service calls it from outside, so nothing relative will do. */
export const webhookUrl = z.string().refine(
  (value) => {
    try {
      const url = new URL(value)
      return url.protocol === 'http:' || url.protocol === 'https:'
    } catch {
      return false
    }
  },
  { error: (issue) => `must be an absolute http(s) URL, got ${JSON.stringify(issue.input)}` },
)

/**
 * The optional fields production's POST /tasks takes beyond the documented ones:
 * - `is_mock`: run the pipeline with mocked proving (testing), a boolean;
 * - `schedule_mode`: how the task is scheduled, a name the service defines;
 * - `schedule_tx_hash`: the transaction that scheduled the task on chain, 0x hex;
 * - `injected_state_server`: the address of the server holding the injected state, a URL.
 * Their types are checked; any other field is passed through as written, with a warning.
 */
export const TASK_OPTIONAL_FIELDS = {
  is_mock: z.boolean(),
  schedule_mode: z.string().min(1, { error: 'must not be empty' }),
  schedule_tx_hash: hexString,
  injected_state_server: webhookUrl,
} as const

/** POST /tasks. Required: destination_chain_id, input, program_hash. */
export const taskBody = z.looseObject({
  destination_chain_id: hexString,
  input: taskModuleInput,
  program_hash: hexString,
  task_inputs: z.array(taskInputItem).default([]),
  webhook_url: webhookUrl.optional(),
  is_mock: TASK_OPTIONAL_FIELDS.is_mock.optional(),
  schedule_mode: TASK_OPTIONAL_FIELDS.schedule_mode.optional(),
  schedule_tx_hash: TASK_OPTIONAL_FIELDS.schedule_tx_hash.optional(),
  injected_state_server: TASK_OPTIONAL_FIELDS.injected_state_server.optional(),
})

/**
 * The top-level fields of a task body this version does not know (the client sends them as written, with a warning).
 *
 * @param body The task body.
 * @returns Their names.
 * @example
 * ```ts
 * import { unknownTaskFields } from 'proving-kit/schemas'
 *
 * unknownTaskFields({ program_hash: '0x1', priority: 'high' }) // ['priority']
 * ```
 */
export function unknownTaskFields(body: unknown): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return []
  const known = Object.keys(taskBody.shape)
  return Object.keys(body).filter((key) => !known.includes(key))
}
/** A task as sent: `POST /tasks`'s body, checked. */
export type TaskBody = z.infer<typeof taskBody>
/** What a caller may give: `task_inputs` defaults to []. */
export type TaskBodyInput = z.input<typeof taskBody>

/** POST /tasks/decommitment. dp_output and program_hash are fetched by the service when omitted. */
export const decommitmentBody = z.strictObject({
  proving_query_id: z.string().trim().min(1, { error: 'must not be empty' }),
  destination_chain_id: hexString,
  dp_output: dpOutput.optional(),
  program_hash: hexString.optional(),
  webhook_url: webhookUrl.optional(),
})
/** A decommitment-only task as sent, checked. */
export type DecommitmentBody = z.infer<typeof decommitmentBody>
/** What a caller gives {@link TaskClient.submitDecommitment}. */
export type DecommitmentBodyInput = z.input<typeof decommitmentBody>

// --- Responses ---------------------------------------------------------------------------

/** Both submissions answer `{ message, uuid }`. */
export const taskQueuedResponse = z.looseObject({
  message: z.string(),
  uuid: z.string().min(1),
})
/** What a task submission answers: a fixed message and the task's uuid. */
export type TaskQueuedResponse = z.infer<typeof taskQueuedResponse>

/**
 * GET /tasks/{uuid}/status. The documentation says all four are strings. Only `status` decides
 * anything, so only it is required: `taskId`, `updatedAt` and `errorMessage` are also
 * accepted as null or absent (how "no error" is commonly sent), no reason to fail a wait over.
 */
export const taskStatusRecord = z.looseObject({
  status: openEnum(TASK_STATUSES),
  taskId: z.string().nullable().optional(),
  updatedAt: z.string().nullable().optional(),
  errorMessage: z.string().nullable().optional(),
})
/** A task's status: `status`, and when present its id, last update and error message. */
export type TaskStatusRecord = z.infer<typeof taskStatusRecord>

/** An MMR a task used: chain, hashing function, id, root and size. */
export const usedMmrRecord = z.looseObject({
  chain_id: z.string(),
  hashing_function: openEnum(['poseidon', 'keccak']),
  id: z.string(),
  root: z.string(),
  size: z.string(),
})
/** An MMR a task used. */
export type UsedMmrRecord = z.infer<typeof usedMmrRecord>

/** The answer of `GET /tasks/{uuid}/mmrs`: the MMRs the task used. */
export const taskMmrsResponse = z.looseObject({
  mmrs: z.array(usedMmrRecord),
  taskId: z.string().nullable().optional(),
})
/** The MMRs a task used. */
export type TaskMmrsResponse = z.infer<typeof taskMmrsResponse>

/**
 * A task of the list (more fields are allowed). Only what the client acts on is
 * required (uuid, status); production's items may lack `clientId`, and the
 * rest may be absent or null too.
 */
export const taskSummary = z.looseObject({
  uuid: z.string(),
  status: openEnum(TASK_STATUSES),
  destinationChainId: z.string().nullable().optional(),
  programHash: z.string().nullable().optional(),
  clientId: z.string().nullable().optional(),
  createdAt: z.string().nullable().optional(),
  updatedAt: z.string().nullable().optional(),
})
/** A task as the list shows it: its uuid and status, and what the service adds. */
export type TaskSummary = z.infer<typeof taskSummary>

/** Where a page of tasks is: its number and size, the total and the page count. */
export const taskPagination = z.looseObject({
  page: z.number().int().nonnegative(),
  perPage: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  totalPages: z.number().int().nonnegative(),
})

/** The answer of `GET /tasks`: one page of tasks and where it is. */
export const taskListResponse = z.looseObject({
  tasks: z.array(taskSummary),
  pagination: taskPagination,
})
/** One page of tasks and where it is. */
export type TaskListResponse = z.infer<typeof taskListResponse>

// --- Error bodies (contract.md status codes) ---------------------------------------------

/** 400 (malformed body), 401 (missing X-API-KEY), 429 (rate limit). */
export const taskShortErrorBody = z.looseObject({ error: z.string() })
/** 404 and 500. */
export const taskGeneralErrorBody = z.looseObject({
  error: z.string(),
  details: z.string(),
  message: z.string(),
  taskId: z.string(),
})
/** The task service's error body for 400, 401 and 429. */
export type TaskShortErrorBody = z.infer<typeof taskShortErrorBody>
/** The task service's error body for 404 and 500. */
export type TaskGeneralErrorBody = z.infer<typeof taskGeneralErrorBody>

/** What the task service posts to `webhook_url` when a task succeeds. */
export const taskWebhookSuccess = z.looseObject({
  status: z.string(),
  task_id: z.string(),
  timestamp: z.string(),
  transaction_hash: z.string(),
})
/** What the task service posts to `webhook_url` when a task fails. */
export const taskWebhookFailure = z.looseObject({
  status: z.string(),
  task_id: z.string(),
  timestamp: z.string(),
  error: z.string(),
})
/** A task's success webhook. */
export type TaskWebhookSuccess = z.infer<typeof taskWebhookSuccess>
/** A task's failure webhook. */
export type TaskWebhookFailure = z.infer<typeof taskWebhookFailure>
/** What a task's webhook receives: a success or a failure. */
export type TaskWebhookPayload = TaskWebhookSuccess | TaskWebhookFailure

// --- Problems in a request body, in words --------------------------------------------------

/**
 * Checks a request body and lists its problems as "field why" sentences
 * (`destination_chain_id must be 0x-prefixed hex, got "11155111"`), as {@link TaskClient} does before sending.
 *
 * @param schema The body's schema (`taskBody`, `decommitmentBody`).
 * @param value The body.
 * @returns `{ ok: true, data }`, or `{ ok: false, problems }`.
 * @example
 * ```ts
 * import { checkTaskRequest, decommitmentBody } from 'proving-kit/schemas'
 *
 * const result = checkTaskRequest(decommitmentBody, { proving_query_id: 'a1b2', destination_chain_id: '11155111' })
 * if (!result.ok) console.log(result.problems)
 * ```
 */
export function checkTaskRequest<T>(
  schema: z.ZodType<T>,
  value: unknown,
): { ok: true; data: T } | { ok: false; problems: string[] } {
  const result = schema.safeParse(value, { reportInput: true })
  if (result.success) return { ok: true, data: result.data }
  return { ok: false, problems: result.error.issues.flatMap((issue) => describeIssue(issue, [])) }
}

type Issue = z.core.$ZodIssue

function describeIssue(issue: Issue, prefix: readonly PropertyKey[]): string[] {
  const path = [...prefix, ...issue.path]
  const field = fieldPath(path)
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) return [`${field} is required`]
      return [`${field} must be ${article(issue.expected)}, got ${describeValue(issue.input)}`]
    }
    case 'unrecognized_keys':
      return issue.keys.map((key) => `${fieldPath([...path, key])} is not a known field`)
    case 'invalid_value':
      return [
        `${field} must be ${issue.values.map((value) => JSON.stringify(value)).join(' or ')}, got ${describeValue(issue.input)}`,
      ]
    case 'too_small':
      return [
        `${field} ${issue.message.startsWith('Too small') ? `must be at least ${String(issue.minimum)}` : issue.message}`,
      ]
    case 'too_big':
      return [
        `${field} ${issue.message.startsWith('Too big') ? `must be at most ${String(issue.maximum)}` : issue.message}`,
      ]
    case 'invalid_union':
      return issue.errors[0]?.flatMap((inner) => describeIssue(inner, path)) ?? [`${field} ${issue.message}`]
    default:
      return [`${field} ${issue.message}`]
  }
}

/** `input.compiled_class.bytecode[3]`; the body itself is "the body". */
function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'the body'
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join('')
}
