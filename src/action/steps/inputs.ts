/**
 * Action inputs: one declaration per action (the names are the contract of action.yml), parsed
 * with zod, every problem reported at once and each naming its input, before anything is packed
 * or sent. The runner applies action.yml's defaults; `run()` applies the same ones again so a
 * test (or a runner that passes nothing) sees the documented behaviour. A unit test keeps these
 * declarations and the action.yml files equal.
 */
import { z } from 'zod'
import { DEFAULT_MAX_REQUESTS_PER_SECOND } from '../../core/budget.ts'
import { InvalidInputError } from '../../core/errors.ts'
import {
  CAIRO_VERSIONS,
  CAIRO_VMS,
  HINTS,
  JOB_SIZES,
  layoutProblem,
  MEMORY_VERIFICATIONS,
  NETWORKS,
  RESULTS,
  SHARP_PROVERS,
  STONE_VERSIONS,
} from '../../schemas/proving-constants.ts'
import { onchainCrossCheck, REGISTRY_KIND_VALUES, VERIFY_ONCHAIN_MODES } from './onchain-inputs.ts'
import type {
  ActionIO,
  CrossCheck,
  DefaultedInput,
  InputSpecs,
  InputValues,
  OptionalInput,
  RequiredInput,
} from '../types.ts'

export const required = <T>(schema: z.ZodType<T>, options: { secret?: boolean } = {}): RequiredInput<T> => ({
  kind: 'required',
  schema,
  ...options,
})
export const optional = <T>(schema: z.ZodType<T>, options: { secret?: boolean } = {}): OptionalInput<T> => ({
  kind: 'optional',
  schema,
  ...options,
})
export const withDefault = <T>(value: string, schema: z.ZodType<T>): DefaultedInput<T> => ({
  kind: 'default',
  default: value,
  schema,
})

// --- Value schemas (messages read after the input's name: "`wait` must be ...") -----------

/** The YAML 1.2 core booleans, as @actions/core's getBooleanInput accepts them. */
const BOOLEAN_WORDS = ['true', 'True', 'TRUE', 'false', 'False', 'FALSE'] as const
export const booleanValue = z
  .enum(BOOLEAN_WORDS, { error: 'must be true or false' })
  .transform((word) => word.toLowerCase() === 'true')

const MAX_MINUTES = 7 * 24 * 60
export const minutesValue = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { error: 'must be a number of minutes, such as 30 or 0.5' })
  .transform(Number)
  .refine((minutes) => minutes > 0 && minutes <= MAX_MINUTES, {
    error: `must be above 0 and at most ${MAX_MINUTES} (7 days)`,
  })

/** `max-requests-per-second`: the process's request budget (src/core/budget.ts), 0.1 to 1,000. */
export const requestRateValue = z
  .string()
  .regex(/^\d+(\.\d+)?$/, { error: 'must be a number of requests per second, such as 10 or 0.5' })
  .transform(Number)
  .refine((perSecond) => perSecond >= 0.1 && perSecond <= 1_000, { error: 'must be from 0.1 to 1000' })

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

export const httpUrlValue = z
  .string()
  .refine(isHttpUrl, { error: 'must be an absolute http(s) URL, such as https://proving.example.com' })
  .transform((text) => text.replace(/\/+$/, ''))

/**
 * The task schemas' rules (HEX_PATTERN, webhookUrl in ../../schemas/tasks.ts), repeated rather than
 * imported so that parsing the inputs of an action without a task never loads the task
 * schemas; the request body is checked again by those schemas before it is sent.
 */
export const hexValue = z.string().regex(/^0x[0-9a-fA-F]+$/, { error: 'must be 0x-prefixed hex, such as 0xaa36a7' })
/** Kept as given (no trailing-slash trimming): the service calls exactly this URL. */
export const webhookUrlValue = z.string().refine(isHttpUrl, {
  error: 'must be an absolute http(s) URL, such as https://hooks.example.com/dp',
})

export const identifierValue = z
  .string()
  .max(256, { error: 'is longer than 256 characters; copy the identifier as the service returned it' })
  .regex(/^[^\s/?#]+$/, {
    error: 'is not a valid identifier (no spaces, "/", "?" or "#"); copy it as the service returned it',
  })

export const feltValue = z
  .string()
  .regex(/^0x[0-9a-fA-F]{1,64}$/, { error: 'must be a 0x-prefixed hexadecimal hash, such as 0x4f028ea2...' })

export const pathValue = z.string().min(1, { error: 'must be a path' })

export const nonEmptyValue = z.string().min(1, { error: 'must not be empty' })

/** A JSON object written in an input (production.md: bucket aggregatorParams travel as one). */
export const jsonObjectValue = z.string().transform((text, ctx) => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    ctx.addIssue({ code: 'custom', message: 'must be a JSON object, such as {"use_kzg_da": true}' })
    return z.NEVER
  }
  return parsed as Record<string, unknown>
})

/** @actions/artifact refuses these characters in an artifact name. */
export const artifactNameValue = z
  .string()
  .regex(/^[^":<>|*?\r\n\\/]+$/, { error: 'must not contain any of " : < > | * ? \\ / or a line break' })

/** A layout name; which ones the endpoint accepts is checked with the other inputs (mainCrossCheck). */
export const layoutValue = z.string().trim()
export const stoneVersionValue = z.enum(STONE_VERSIONS, { error: `must be one of ${STONE_VERSIONS.join(', ')}` })
export const memoryVerificationValue = z.enum(MEMORY_VERIFICATIONS, {
  error: `must be one of ${MEMORY_VERIFICATIONS.join(', ')}`,
})

/**
 * The queries a bucket must hold (`expected-queries`): a whole number from 1 (how many), or the
 * query ids the jobs submitted, separated by commas, spaces or line breaks (a JSON array of
 * strings too, as `toJSON` writes one). Every id is checked, and an id given twice is refused.
 */
export const expectedQueriesValue = z.string().transform((text, ctx): { count: number } | { ids: string[] } => {
  const trimmed = text.trim()
  if (/^[+-]?\d+$/.test(trimmed)) {
    const count = Number(trimmed)
    if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(count) || count < 1) {
      ctx.addIssue({ code: 'custom', message: 'must be a whole number from 1 (how many queries), or the query ids' })
      return z.NEVER
    }
    return { count }
  }
  let ids: string[]
  if (trimmed.startsWith('[')) {
    let parsed: unknown
    try {
      parsed = JSON.parse(trimmed)
    } catch {
      parsed = undefined
    }
    if (!Array.isArray(parsed) || !parsed.every((item) => typeof item === 'string')) {
      ctx.addIssue({ code: 'custom', message: 'starts with "[" but is not a JSON array of query ids (strings)' })
      return z.NEVER
    }
    ids = parsed.map((id) => id.trim())
  } else {
    ids = trimmed.split(/[\s,]+/)
  }
  ids = ids.filter((id) => id !== '')
  if (ids.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'names no query: give the query ids, or how many queries' })
    return z.NEVER
  }
  const problems: string[] = []
  const bad = ids.filter((id) => !identifierValue.safeParse(id).success)
  if (bad.length)
    problems.push(
      `has ${bad.length === 1 ? 'an id' : `${bad.length} ids`} that ${bad.length === 1 ? 'is' : 'are'} not a query id (no "/", "?" or "#", at most 256 characters): ${bad
        .slice(0, 5)
        .map((id) => JSON.stringify(id.slice(0, 80)))
        .join(', ')}`,
    )
  const twice = [...new Set(ids.filter((id, index) => ids.indexOf(id) !== index))]
  if (twice.length) problems.push(`names ${twice.slice(0, 5).join(', ')} more than once (each query once)`)
  for (const message of problems) ctx.addIssue({ code: 'custom', message })
  return problems.length ? z.NEVER : { ids }
})

/** A git tag name: no spaces or the characters git refuses in a ref (git check-ref-format). */
export const tagValue = z
  .string()
  .max(255, { error: 'must be at most 255 characters' })
  .regex(/^(?!-)(?!.*\.\.)(?!.*@\{)[^\s~^:?*[\\\x00-\x1f\x7f]+(?<![./]|\.lock)$/, {
    error: 'is not a valid tag name (no spaces, ~ ^ : ? * [ \\ or "..")',
  })

const wholeNumberIn = (low: number, high: number) =>
  z
    .string()
    .regex(/^\d+$/, { error: `must be a whole number from ${low} to ${high}` })
    .transform(Number)
    .refine((value) => value >= low && value <= high, { error: `must be a whole number from ${low} to ${high}` })

/**
 * The root action's GitHub side (../github/): the token, the release, the pull request's comment,
 * the check run and the in-toto statement. The runner puts the job's token in `github-token`.
 */
/** What tells one PR comment of a job from its others (matrix legs): one line of printable text. */
const commentKeyValue = z
  .string()
  .regex(/^[^\x00-\x1f\x7f]{1,200}$/, { error: 'must be one line of at most 200 characters' })

export const GITHUB_REPORT_INPUTS = {
  'github-token': { ...withDefault('${{ github.token }}', nonEmptyValue), secret: true },
  'pr-comment': withDefault('false', booleanValue),
  'check-run': withDefault('false', booleanValue),
  'comment-key': optional(commentKeyValue),
} satisfies InputSpecs

/** With one PIE proved: the release's assets and the in-toto statement too. */
export const GITHUB_INPUTS = {
  ...GITHUB_REPORT_INPUTS,
  'release-tag': optional(tagValue),
  attest: withDefault('false', booleanValue),
} satisfies InputSpecs

// --- The actions' inputs -------------------------------------------------------------------

const service = {
  'api-key': optional(nonEmptyValue, { secret: true }),
  'base-url': optional(httpUrlValue),
  'allow-insecure-http': withDefault('false', booleanValue),
}

const openNameValue = (known: readonly string[]) =>
  z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, { error: `must be one of ${known.join(', ')} (or a newer name)` })
const enumValue = <T extends string>(values: readonly T[]) =>
  z.enum(values as [T, ...T[]], { error: `must be one of ${values.join(', ')}` })
const upperEnumValue = <T extends string>(values: readonly T[]) =>
  z
    .string()
    .transform((text) => text.toUpperCase())
    .pipe(enumValue(values))

export const bucketJobIndexValue = z
  .string()
  .regex(/^\d+$/, { error: 'must be a whole number from 0, such as 0 or ${{ strategy.job-index }}' })
  .transform(Number)
  .refine((value) => value <= 2_147_483_647, { error: 'must be at most 2147483647' })

export const concurrencyValue = wholeNumberIn(1, 64)

/** Integrity's security bits: a u32. */
export const securityBitsValue = wholeNumberIn(0, 2 ** 32 - 1)

/** A Cairo short string, as Integrity's verifier settings are (`recursive`, `keccak_160_lsb`, `stone6`). */
export const shortStringValue = z
  .string()
  .regex(/^[\x20-\x7e]{1,31}$/, { error: 'must be 1 to 31 ASCII characters, such as recursive or stone6' })

/** The general submission's fields (POST /proving-query), as the root action takes them. */
export const GENERAL_INPUTS = {
  result: optional(enumValue(RESULTS)),
  'cairo-version': optional(enumValue(CAIRO_VERSIONS)),
  'cairo-vm': optional(enumValue(CAIRO_VMS)),
  program: optional(pathValue),
  'program-input': optional(pathValue),
  'program-hash': optional(feltValue),
  network: optional(upperEnumValue(NETWORKS)),
  'declared-job-size': optional(upperEnumValue(JOB_SIZES)),
  'external-id': optional(nonEmptyValue),
  'dedup-id': optional(z.string().max(128, { error: 'must be at most 128 characters' })),
  // Open lists (production.md): a newer hint or prover is sent as given; the client warns.
  hints: optional(openNameValue(HINTS)),
  'sharp-prover': optional(openNameValue(SHARP_PROVERS)),
  'bucket-id': optional(identifierValue),
  'bucket-job-index': optional(bucketJobIndexValue),
} satisfies InputSpecs

export const MAIN_INPUTS = {
  pie: optional(pathValue),
  ...service,
  emulator: withDefault('false', booleanValue),
  layout: withDefault('auto', layoutValue),
  prover: withDefault('svc_sharp', nonEmptyValue),
  'mock-fact-hash': withDefault('false', booleanValue),
  wait: withDefault('true', booleanValue),
  'timeout-minutes': withDefault('120', minutesValue),
  'max-requests-per-second': withDefault(String(DEFAULT_MAX_REQUESTS_PER_SECOND), requestRateValue),
  'allow-mocked-fact': withDefault('false', booleanValue),
  'expected-program-hash': optional(feltValue),
  'verify-facts': withDefault('true', booleanValue),
  // pipeline/reuse.ts REUSE_MODES (not imported: the bundle's start holds the inputs only).
  reuse: withDefault('auto', enumValue(['auto', 'never'] as const)),
  'upload-artifacts': withDefault('false', booleanValue),
  'artifact-name': withDefault('proof', artifactNameValue),
  'retention-days': optional(wholeNumberIn(1, 90)),
  'compression-level': withDefault('0', wholeNumberIn(0, 9)),
  overwrite: withDefault('false', booleanValue),
  'verify-onchain': withDefault(
    'none',
    z.enum(VERIFY_ONCHAIN_MODES, { error: `must be one of ${VERIFY_ONCHAIN_MODES.join(', ')}` }),
  ),
  'ethereum-rpc-url': optional(httpUrlValue, { secret: true }),
  'starknet-rpc-url': optional(httpUrlValue, { secret: true }),
  'fact-registry': optional(nonEmptyValue),
  'registry-kind': optional(
    z.enum(REGISTRY_KIND_VALUES, { error: `must be one of ${REGISTRY_KIND_VALUES.join(', ')}` }),
  ),
  'min-security-bits': withDefault('96', securityBitsValue),
  'verifier-layout': optional(shortStringValue),
  'verifier-hasher': optional(shortStringValue),
  'verifier-stone-version': optional(shortStringValue),
  'verifier-memory-verification': optional(shortStringValue),
  'onchain-timeout-minutes': withDefault('30', minutesValue),
  'decommit-destination-chain-id': optional(hexValue),
  'tasks-url': optional(httpUrlValue),
  ...GENERAL_INPUTS,
  concurrency: withDefault('4', concurrencyValue),
  'dry-run': withDefault('false', booleanValue),
  ...GITHUB_INPUTS,
} satisfies InputSpecs

export const PACK_INPUTS = {
  'pie-dir': required(pathValue),
  output: withDefault('pie.zip', pathValue),
} satisfies InputSpecs

export const WAIT_INPUTS = {
  'query-id': required(identifierValue),
  ...service,
  'timeout-minutes': withDefault('120', minutesValue),
  'max-requests-per-second': withDefault(String(DEFAULT_MAX_REQUESTS_PER_SECOND), requestRateValue),
  'allow-mocked-fact': withDefault('false', booleanValue),
  'expected-program-hash': optional(feltValue),
  'expected-result': optional(enumValue(RESULTS)),
  pie: optional(pathValue),
  ...GITHUB_INPUTS,
} satisfies InputSpecs

export const VERIFY_PROOF_INPUTS = {
  proof: required(pathValue),
  'stone-version': withDefault('stone6', stoneVersionValue),
  'memory-verification': withDefault('relaxed', memoryVerificationValue),
  'mock-fact-hash': withDefault('false', booleanValue),
  wait: withDefault('true', booleanValue),
  'timeout-minutes': withDefault('120', minutesValue),
  'max-requests-per-second': withDefault(String(DEFAULT_MAX_REQUESTS_PER_SECOND), requestRateValue),
  ...service,
} satisfies InputSpecs

export const RETRY_INPUTS = {
  'query-id': required(identifierValue),
  ...service,
  wait: withDefault('true', booleanValue),
  'timeout-minutes': withDefault('120', minutesValue),
  'max-requests-per-second': withDefault(String(DEFAULT_MAX_REQUESTS_PER_SECOND), requestRateValue),
  'allow-mocked-fact': withDefault('false', booleanValue),
} satisfies InputSpecs

export const BUCKET_CLOSE_INPUTS = {
  'bucket-id': required(identifierValue),
  ...service,
  wait: withDefault('false', booleanValue),
  'timeout-minutes': withDefault('120', minutesValue),
  'max-requests-per-second': withDefault(String(DEFAULT_MAX_REQUESTS_PER_SECOND), requestRateValue),
  pie: optional(pathValue),
  'allow-mocked-fact': withDefault('false', booleanValue),
  'expected-program-hash': optional(feltValue),
  'expected-queries': optional(expectedQueriesValue),
  ...GITHUB_REPORT_INPUTS,
} satisfies InputSpecs

export const BUCKET_CREATE_INPUTS = {
  'aggregator-version': withDefault('v1', nonEmptyValue),
  'external-id': optional(nonEmptyValue),
  'node-width': optional(
    z
      .string()
      .regex(/^[1-9]\d*$/, { error: 'must be a whole number from 1' })
      .transform(Number),
  ),
  'aggregator-params': optional(jsonObjectValue),
  'mock-proof': withDefault('false', booleanValue),
  ...service,
} satisfies InputSpecs

/** What the actions that follow a task or batch query share: the key, whether and how long to wait, plain http. */
const waitingService = {
  'api-key': optional(nonEmptyValue, { secret: true }),
  wait: withDefault('true', booleanValue),
  'timeout-minutes': withDefault('120', minutesValue),
  'max-requests-per-second': withDefault(String(DEFAULT_MAX_REQUESTS_PER_SECOND), requestRateValue),
  'allow-insecure-http': withDefault('false', booleanValue),
}

/** `tasks-url` and `api-key` are required by the task actions' cross-check (./task-step.ts). */
export const TASK_INPUTS = {
  task: required(nonEmptyValue),
  'tasks-url': optional(httpUrlValue),
  ...waitingService,
} satisfies InputSpecs

export const DECOMMIT_INPUTS = {
  'proving-query-id': required(identifierValue),
  'destination-chain-id': required(hexValue),
  'dp-output': optional(nonEmptyValue),
  'program-hash': optional(hexValue),
  'webhook-url': optional(webhookUrlValue),
  'tasks-url': optional(httpUrlValue),
  ...waitingService,
} satisfies InputSpecs

/** `storage-proof-url` and `api-key` are required by the action's cross-check (../actions/storage-query.ts). */
export const STORAGE_QUERY_INPUTS = {
  query: required(nonEmptyValue),
  'storage-proof-url': optional(httpUrlValue),
  ...waitingService,
} satisfies InputSpecs

/** `private-key` and `auth-url` are required by the action's cross-check (../actions/api-key.ts). */
export const API_KEY_INPUTS = {
  'private-key': optional(nonEmptyValue, { secret: true }),
  'auth-url': optional(httpUrlValue),
  'project-id': optional(nonEmptyValue),
  'create-key': optional(nonEmptyValue),
  'allow-insecure-http': withDefault('false', booleanValue),
} satisfies InputSpecs

/** Every action's inputs by the folder of its action.yml ('' is the root). */
export const ACTION_INPUTS: Record<string, InputSpecs> = {
  '': MAIN_INPUTS,
  pack: PACK_INPUTS,
  wait: WAIT_INPUTS,
  'verify-proof': VERIFY_PROOF_INPUTS,
  retry: RETRY_INPUTS,
  'bucket-close': BUCKET_CLOSE_INPUTS,
  'bucket-create': BUCKET_CREATE_INPUTS,
  task: TASK_INPUTS,
  decommit: DECOMMIT_INPUTS,
  'storage-query': STORAGE_QUERY_INPUTS,
  'api-key': API_KEY_INPUTS,
}

// --- Parsing -------------------------------------------------------------------------------

/** Every problem with the inputs, each naming its input; nothing was packed or sent. */
export class InputProblemsError extends InvalidInputError {
  override name = 'InputProblemsError'
  readonly problems: readonly { input: string; message: string }[]
  constructor(problems: readonly { input: string; message: string }[]) {
    const lines = problems.map((problem) => problem.message)
    super(
      problems.length === 1
        ? lines[0]!
        : `${problems.length} inputs need fixing; nothing was packed or sent:\n${lines.map((line) => `- ${line}`).join('\n')}`,
      { input: problems[0]?.input },
    )
    this.problems = problems
  }
}

/**
 * Reads and parses every input of `specs`; throws InputProblemsError listing all the problems
 * found (field checks, then the cross-checks), in declaration order.
 */
export function parseInputs<S extends InputSpecs>(
  io: Pick<ActionIO, 'getInput'>,
  specs: S,
  crossCheck?: CrossCheck<S>,
): InputValues<S> {
  const problems: { input: string; message: string }[] = []
  const values: Record<string, unknown> = {}
  const raw: Record<string, string> = {}
  const failed = new Set<string>()
  for (const [name, spec] of Object.entries(specs)) {
    let text = io.getInput(name).trim()
    if (text === '' && spec.kind === 'default') text = spec.default
    raw[name] = text
    if (text === '') {
      if (spec.kind === 'required') {
        problems.push({ input: name, message: `\`${name}\` is required and was not given.` })
        failed.add(name)
      }
      continue
    }
    const result = spec.schema.safeParse(text)
    if (result.success) {
      values[name] = result.data
    } else {
      failed.add(name)
      const message = result.error.issues[0]?.message ?? 'is not valid'
      const shown = spec.secret ? '' : `; got ${JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)}`
      problems.push({ input: name, message: `\`${name}\` ${message}${shown}.` })
    }
  }
  crossCheck?.({
    values: values as Partial<InputValues<S>>,
    raw: raw as Record<keyof S & string, string>,
    parsed: (name) => !failed.has(name),
    problem: (input, message) => problems.push({ input, message }),
  })
  if (problems.length) throw new InputProblemsError(problems)
  return values as InputValues<S>
}

/**
 * A sub-action has no emulator: it needs its secret (refused with how to pass it) and the
 * address of its service.
 */
export function requireSecretAndUrl(
  secret: { input: string; message: string },
  url: { input: string; service: string },
): CrossCheck<InputSpecs> {
  return ({ raw, problem }) => {
    if (!raw[secret.input]) problem(secret.input, secret.message)
    if (!raw[url.input]) problem(url.input, `\`${url.input}\` is required: the address of the ${url.service}.`)
  }
}

/** `api-key` as the proving and storage-proof sub-actions ask for it. */
export const API_KEY_SECRET = {
  input: 'api-key',
  message: '`api-key` is required: pass it from a secret, e.g. `api-key: ${{ secrets.PROVING_API_KEY }}`.',
}

/** `api-key` and `base-url` are required (the sub-actions have no emulator). */
export const requireService: CrossCheck<typeof service> = requireSecretAndUrl(API_KEY_SECRET, {
  input: 'base-url',
  service: 'proving service',
})

/**
 * The root: the service inputs are required unless the in-process emulator is used, and so is
 * `tasks-url` when a decommitment follows the proof (the emulator serves the task service too).
 */
export const mainCrossCheck: CrossCheck<typeof MAIN_INPUTS> = (context) => {
  const { values, raw, parsed, problem } = context
  // The endpoint's own list, before anything is packed or sent (the service refuses another).
  if (parsed('layout')) {
    // Any general-submission input sends the query through it (steps/general-submission.ts GENERAL_ONLY).
    const general = Object.keys(GENERAL_INPUTS).some(
      (name) => values[name as keyof typeof GENERAL_INPUTS] !== undefined,
    )
    const layout = layoutProblem(values.layout ?? 'auto', general ? 'general' : 'l2', '`layout`')
    if (layout) problem('layout', layout)
  }
  onchainCrossCheck(context)
  const sources = (['pie', 'program', 'program-hash'] as const).filter((name) => raw[name])
  if (sources.length === 0) problem('pie', '`pie` is required (or `program`, or `program-hash`): what to prove.')
  if (sources.length > 1)
    problem(sources[1]!, `\`${sources[0]}\` and \`${sources[1]}\` exclude each other: give one thing to prove.`)
  if (raw['program-input'] && !raw.program)
    problem('program-input', '`program-input` goes with `program`: give the program it is the input of.')
  if (raw['bucket-job-index'] && !raw['bucket-id'])
    problem('bucket-job-index', '`bucket-job-index` needs `bucket-id`: it is a position in that bucket.')
  if (values['cairo-version'] === 'cairo1' && values['cairo-vm'] === 'python') {
    problem('cairo-vm', '`cairo-version: cairo1` runs on the rust VM only: drop `cairo-vm: python`.')
  }
  if (
    raw['program-input'] &&
    (values['cairo-version'] ?? 'cairo0') === 'cairo0' &&
    (values['cairo-vm'] ?? 'rust') === 'rust'
  ) {
    problem(
      'program-input',
      '`program-input` is not supported for cairo0 on the rust VM: set `cairo-version: cairo1` (input.txt) or `cairo-vm: python` (JSON input).',
    )
  }
  if (!parsed('emulator')) return
  if (values.emulator && raw['bucket-id']) {
    problem(
      'bucket-id',
      '`bucket-id` and `emulator: true` exclude each other: the emulator stops with this step, and the bucket with it.',
    )
  }
  if (values.emulator) {
    if (raw['base-url']) {
      problem(
        'base-url',
        '`base-url` and `emulator: true` exclude each other: drop `base-url` to use the emulator, or drop `emulator`.',
      )
    }
    if (raw['tasks-url']) {
      problem(
        'tasks-url',
        '`tasks-url` and `emulator: true` exclude each other: the emulator serves the task service itself; drop `tasks-url`.',
      )
    }
    return
  }
  if (!raw['api-key']) {
    problem(
      'api-key',
      '`api-key` is required unless `emulator` is true: pass it from a secret, e.g. `api-key: ${{ secrets.PROVING_API_KEY }}`.',
    )
  }
  if (!raw['base-url'])
    problem('base-url', '`base-url` is required unless `emulator` is true: the address of the proving service.')
  if (raw['decommit-destination-chain-id'] && !raw['tasks-url']) {
    problem(
      'tasks-url',
      '`tasks-url` is required with `decommit-destination-chain-id` unless `emulator` is true: the address of the task service.',
    )
  }
}
