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

export const taskInputItem = z.strictObject({
  value: hexString,
  visibility: z.enum(TASK_INPUT_VISIBILITIES),
})

export const poseidonMmrMeta = z.strictObject({
  chain_id: hexString,
  id: hexString,
  root: hexString,
  size: hexString,
})

export const keccakMmrMeta = z.strictObject({
  chain_id: hexString,
  id: hexString,
  root_high: hexString,
  root_low: hexString,
  size: hexString,
})

export type PoseidonMmrMeta = z.infer<typeof poseidonMmrMeta>
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

export const dpOutput = z.strictObject({
  mmr_metas: z.array(mmrMeta),
  output_tree_root_high: hexString,
  output_tree_root_low: hexString,
  task_hash_high: hexString,
  task_hash_low: hexString,
})
export type DpOutput = z.infer<typeof dpOutput>

export const entryPoint = z.looseObject({
  builtins: z.array(z.string()),
  offset: z.number().int().nonnegative(),
  selector: hexString,
})

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
export type CompiledClass = z.infer<typeof compiledClass>
export type EntryPoint = z.infer<typeof entryPoint>

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

/** The top-level fields of a task body this version does not know (sent as written). */
export function unknownTaskFields(body: unknown): string[] {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return []
  const known = Object.keys(taskBody.shape)
  return Object.keys(body).filter((key) => !known.includes(key))
}
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
export type DecommitmentBody = z.infer<typeof decommitmentBody>
export type DecommitmentBodyInput = z.input<typeof decommitmentBody>

// --- Responses ---------------------------------------------------------------------------

/** Both submissions answer `{ message, uuid }`. */
export const taskQueuedResponse = z.looseObject({
  message: z.string(),
  uuid: z.string().min(1),
})
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
export type TaskStatusRecord = z.infer<typeof taskStatusRecord>

export const usedMmrRecord = z.looseObject({
  chain_id: z.string(),
  hashing_function: openEnum(['poseidon', 'keccak']),
  id: z.string(),
  root: z.string(),
  size: z.string(),
})
export type UsedMmrRecord = z.infer<typeof usedMmrRecord>

export const taskMmrsResponse = z.looseObject({
  mmrs: z.array(usedMmrRecord),
  taskId: z.string().nullable().optional(),
})
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
export type TaskSummary = z.infer<typeof taskSummary>

export const taskPagination = z.looseObject({
  page: z.number().int().nonnegative(),
  perPage: z.number().int().nonnegative(),
  total: z.number().int().nonnegative(),
  totalPages: z.number().int().nonnegative(),
})

export const taskListResponse = z.looseObject({
  tasks: z.array(taskSummary),
  pagination: taskPagination,
})
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
export type TaskShortErrorBody = z.infer<typeof taskShortErrorBody>
export type TaskGeneralErrorBody = z.infer<typeof taskGeneralErrorBody>

/** The webhook payloads on terminal states. */
export const taskWebhookSuccess = z.looseObject({
  status: z.string(),
  task_id: z.string(),
  timestamp: z.string(),
  transaction_hash: z.string(),
})
export const taskWebhookFailure = z.looseObject({
  status: z.string(),
  task_id: z.string(),
  timestamp: z.string(),
  error: z.string(),
})
export type TaskWebhookSuccess = z.infer<typeof taskWebhookSuccess>
export type TaskWebhookFailure = z.infer<typeof taskWebhookFailure>
export type TaskWebhookPayload = TaskWebhookSuccess | TaskWebhookFailure

// --- Problems in a request body, in words --------------------------------------------------

/**
 * Checks a request body and lists its problems as "field why" sentences, e.g.
 * `destination_chain_id must be 0x-prefixed hex, got "11155111"`. The client refuses to send
 * a body with problems; the emulator answers 400 with the first of them.
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
      return [`${field} must be ${issue.values.map((value) => JSON.stringify(value)).join(' or ')}, got ${describeValue(issue.input)}`]
    case 'too_small':
      return [`${field} ${issue.message.startsWith('Too small') ? `must be at least ${String(issue.minimum)}` : issue.message}`]
    case 'too_big':
      return [`${field} ${issue.message.startsWith('Too big') ? `must be at most ${String(issue.maximum)}` : issue.message}`]
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

