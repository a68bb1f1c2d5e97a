import { z } from 'zod'
import { InvalidInputError } from '../core/errors.ts'

/**
 * The shape of `<stateDir>/state.json`, checked on load: a file that is empty, cut short, or
 * JSON of another shape is refused with one line naming the file and the fix, instead of an
 * emulator that starts and answers 500 on every read. Loose where the emulator tolerates
 * extra fields; exact on everything it reads.
 */
/** The version of the state file's format. */
export const STATE_VERSION = 1

const timing = z.object({ receivedMs: z.number().nonnegative(), stepMs: z.number().nonnegative() })
const owner = z.looseObject({ keyId: z.string(), projectId: z.string(), clientId: z.string() })
const storedFile = z.looseObject({ name: z.string(), size: z.number().nonnegative(), sha256: z.string() })
const nullableString = z.string().nullable()
const run = z.looseObject({
  startedAt: z.number(),
  timing,
  steps: z.array(z.string()),
  holdFrom: z.number().int().nullable(),
  failure: z.looseObject({ stepIndex: z.number().int(), retriable: z.boolean(), reason: z.string() }).nullable(),
  forced: z.looseObject({ at: z.number(), outcome: z.string() }).nullable(),
})
const query = z.looseObject({
  id: z.string().min(1),
  owner,
  endpoint: z.enum(['l2-pie', 'l2-proof', 'general']),
  externalId: nullableString,
  dedupId: nullableString,
  layout: z.string(),
  mockFactHash: z.boolean(),
  isProofMocked: z.boolean(),
  result: z.string(),
  cairoVm: z.string(),
  cairoVersion: z.string(),
  facts: z.looseObject({
    programHash: nullableString,
    sharpFactHash: nullableString,
    integrityFactHash: nullableString,
    output: z.array(z.string()).nullable(),
    nSteps: z.number().nullable(),
  }),
  files: z.looseObject({
    pie: storedFile.optional(),
    proof: storedFile.optional(),
    program: storedFile.optional(),
    input: storedFile.optional(),
  }),
  createdAt: z.number(),
  retryCount: z.number().int().nonnegative(),
  run,
})
const bucket = z.looseObject({
  id: z.string().min(1),
  owner,
  aggregatorVersion: z.string(),
  mockProof: z.boolean(),
  createdAt: z.number(),
  closedAt: z.number().nullable(),
})
const fault = z.looseObject({
  id: z.string(),
  path: z.string(),
  kind: z.string(),
  delayMs: z.number(),
  skip: z.number(),
  remaining: z.number(),
})

export const emulatorStateSchema = z.looseObject({
  version: z.literal(STATE_VERSION),
  timing,
  counters: z.looseObject({ submissions: z.number(), retries: z.number(), buckets: z.number() }),
  queries: z.record(z.string(), query),
  buckets: z.record(z.string(), bucket),
  nextQueries: z.array(z.looseObject({ outcome: z.enum(['done', 'fail']) })),
  faults: z.array(fault),
})

const FIX = `remove it (or move it aside) to start with an empty state, or give another --state-dir`

/** A state file's JSON; one line naming the file and the fix when it is empty or cut short. */
export function parseJsonState(file: string, text: string): Record<string, unknown> {
  let json: unknown
  try {
    if (!text.trim()) throw new Error('the file is empty')
    json = JSON.parse(text)
  } catch (error) {
    const why =
      error instanceof Error && error.message === 'the file is empty' ? 'is empty' : 'is not valid JSON (cut short?)'
    throw new InvalidInputError(`The emulator state file ${file} ${why}; ${FIX}.`, { input: 'stateDir' })
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return checkStateFile(file, json)
  return json as Record<string, unknown>
}

/** Checks a state read from a file (and its log); one line naming the file and the fix when it is not one. */
export function checkStateFile<T>(file: string, json: unknown): T {
  const version = (json as { version?: unknown } | null)?.version
  if (json && typeof json === 'object' && version !== undefined && version !== STATE_VERSION) {
    throw new InvalidInputError(
      `The emulator state file ${file} has state version ${String(version)}; this emulator reads version ${STATE_VERSION}: ${FIX}.`,
      {
        input: 'stateDir',
      },
    )
  }
  const checked = emulatorStateSchema.safeParse(json)
  if (!checked.success) {
    const first = checked.error.issues[0]!
    const where = first.path.length ? first.path.map(String).join('.') : '(the top level)'
    const more = checked.error.issues.length > 1 ? ` (and ${checked.error.issues.length - 1} more problems)` : ''
    throw notAState(file, where, `${first.message}${more}`)
  }
  return checked.data as T
}

/** The one line for a state file of another shape: the file, where, what is wrong there, the fix. */
export function notAState(file: string, where: string, problem: string): InvalidInputError {
  return new InvalidInputError(
    `The emulator state file ${file} is not an emulator state: ${where}: ${problem}; ${FIX}.`,
    { input: 'stateDir' },
  )
}
