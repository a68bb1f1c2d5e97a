/**
 * The release gate: whether a finished query is a result a release may rely on. Pure: it judges
 * the record the service returned (and the local fact check, when one was made) and lists every
 * reason to refuse, so a host can show them all at once. It fails closed: a fact the result
 * kind carries that the record leaves out, nulls or garbles, and a mock state the service does
 * not give, are refusals, never passes.
 */
import { serviceLine } from '../core/service-text.ts'
import type { FactCheckResult, FactField } from '../pie/index.ts'

export type GateOptions = {
  /** A mocked fact (no real on-chain verification), or one whose mock state is unknown, passes only when allowed. */
  allowMockedFact: boolean
  /** The program hash the query must have proved (0x hex); any value when absent. */
  expectedProgramHash?: string | undefined
  /** The result kind the query was submitted for, used when the record does not say (production may null `result`). */
  result?: string | undefined
  /** Why a mocked fact was not allowed, in the caller's words (default: "`allow-mocked-fact` is false"). */
  notAllowed?: string | undefined
}

export type GateRecord = {
  status: string
  programHash?: string | null | undefined
  sharpFactHash?: string | null | undefined
  integrityFactHash?: string | null | undefined
  isFactMocked?: boolean | null | undefined
  errorReason?: string | null | undefined
  result?: string | null | undefined
  sharpProver?: string | null | undefined
}

export type GateRefusal = {
  kind:
    | 'failed'
    | 'not-done'
    | 'mocked-fact'
    | 'mock-state-unknown'
    | 'fact-missing'
    | 'fact-malformed'
    | 'program-hash'
    | 'fact-mismatch'
    | 'not-on-chain'
  message: string
}

/** The result kinds that generate a trace, not a proof: nothing is proved, so there is no fact. */
const TRACE_RESULTS: readonly string[] = ['TRACE_GENERATION', 'TRACE_AND_METADATA_GENERATION']

/** Whether a query of this result kind proves something (a missing kind is taken to: fail closed). */
export function resultHasFact(result: string | null | undefined): boolean {
  return typeof result !== 'string' || !TRACE_RESULTS.includes(result)
}

/** What a gate must find in a DONE record of some result kind: every field of `all`, and one of `oneOf` at least. */
export type FactRequirement = { all: FactField[]; oneOf: FactField[] }

/**
 * Which fact fields a DONE query of this kind must carry (docs/action.md, "What the gate
 * refuses"). A trace carries none. A proof always carries its program hash, and at least one
 * fact that binds the output (the program hash alone is shared by every run of the program);
 * where the result names the registry the fact is verified in, that one: the SHARP fact for
 * L1, and for L2 the Integrity fact with Stone or the bridged SHARP fact with Stwo
 * (production.md, "Where facts are registered").
 */
export function requiredFacts(record: Pick<GateRecord, 'result' | 'sharpProver'>, fallbackResult?: string): FactRequirement {
  const result = record.result ?? fallbackResult
  if (!resultHasFact(result)) return { all: [], oneOf: [] }
  const prover = record.sharpProver?.toLowerCase()
  let registered: FactField | undefined
  if (result === 'PROOF_VERIFICATION_ON_L1') registered = 'sharpFactHash'
  else if (result === 'PROOF_VERIFICATION_ON_L2' && prover === 'stone') registered = 'integrityFactHash'
  else if (result === 'PROOF_VERIFICATION_ON_L2' && prover?.startsWith('stwo')) registered = 'sharpFactHash'
  return registered ? { all: ['programHash', registered], oneOf: [] } : { all: ['programHash'], oneOf: ['sharpFactHash', 'integrityFactHash'] }
}

const FACT_FIELDS: readonly FactField[] = ['programHash', 'sharpFactHash', 'integrityFactHash']
/** What a hash the gate compares must look like (the service's records use this form). */
const HASH_FORM = /^0x[0-9a-fA-F]{1,64}$/

/** Whether the service's value is a hash the gate can compare: 0x hex, at most 256 bits. */
export function isWellFormedHash(value: unknown): value is string {
  return typeof value === 'string' && HASH_FORM.test(value)
}

export function evaluateGate(record: GateRecord, factCheck: FactCheckResult | undefined, options: GateOptions): GateRefusal[] {
  if (record.status === 'FAILED') {
    return [
      {
        kind: 'failed',
        // The service's reason is data: one line, whatever it holds (core/service-text.ts).
        message: `The query FAILED: ${serviceLine(record.errorReason?.trim() || 'the service gave no reason')}.`,
      },
    ]
  }
  if (record.status !== 'DONE') {
    return [{ kind: 'not-done', message: `The query is ${serviceLine(record.status, 200)}, not DONE.` }]
  }
  const refusals: GateRefusal[] = []
  const proves = resultHasFact(record.result ?? options.result)
  if (record.isFactMocked === true && !options.allowMockedFact) {
    refusals.push({
      kind: 'mocked-fact',
      message: `The fact is mocked: nothing was verified on chain, and ${options.notAllowed ?? '`allow-mocked-fact` is false'}.`,
    })
  } else if (proves && typeof record.isFactMocked !== 'boolean' && !options.allowMockedFact) {
    refusals.push({
      kind: 'mock-state-unknown',
      message: `The service did not say whether the fact is mocked (isFactMocked is ${record.isFactMocked === null ? 'null' : 'absent'}), so it may not be verified on chain, and ${options.notAllowed ?? '`allow-mocked-fact` is false'}.`,
    })
  }
  if (proves) refusals.push(...factFieldRefusals(record, options.result))
  if (options.expectedProgramHash !== undefined) {
    const reported = record.programHash
    if (!reported) {
      refusals.push({
        kind: 'program-hash',
        message: `The service reported no program hash, so it cannot be checked against the expected ${options.expectedProgramHash}.`,
      })
    } else if (!sameFelt(reported, options.expectedProgramHash)) {
      refusals.push({
        kind: 'program-hash',
        message: `The program hash is ${showValue(reported)}, not the expected ${options.expectedProgramHash}.`,
      })
    }
  }
  if (factCheck && !factCheck.ok) {
    if (factCheck.mismatches.length) {
      const lines = factCheck.mismatches.map(
        (mismatch) => `${mismatch.field}: the service says ${showValue(mismatch.actual)}, the PIE gives ${mismatch.expected}`,
      )
      refusals.push({
        kind: 'fact-mismatch',
        message: `What the service says it proved differs from the PIE: ${lines.join('; ')}.`,
      })
    } else if (!refusals.some((refusal) => refusal.kind === 'fact-missing' || refusal.kind === 'fact-malformed')) {
      // Nothing that binds the output was compared: matching nothing is not matching.
      refusals.push({
        kind: 'fact-missing',
        message: 'The service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent).',
      })
    }
  }
  return refusals
}

/** The fact fields of a DONE proof: each required one present, none malformed. */
function factFieldRefusals(record: GateRecord, fallbackResult: string | undefined): GateRefusal[] {
  const refusals: GateRefusal[] = []
  const requirement = requiredFacts(record, fallbackResult)
  const kind = record.result ?? fallbackResult ?? 'of unknown kind'
  const absent = (field: FactField) => (record[field] === null ? 'null' : 'absent')
  for (const field of FACT_FIELDS) {
    const value = record[field]
    if (value === null || value === undefined) {
      if (requirement.all.includes(field)) {
        refusals.push({
          kind: 'fact-missing',
          message: `The service reported no ${field} (${absent(field)}) for a DONE ${kindLabel(kind, record.sharpProver)} result, so there is nothing to check it against.`,
        })
      }
    } else if (!isWellFormedHash(value)) {
      refusals.push({
        kind: 'fact-malformed',
        message: `The service's ${field} is not a 0x hex hash of at most 64 digits (it says ${showValue(value)}), so it cannot be compared.`,
      })
    }
  }
  if (requirement.oneOf.length && requirement.oneOf.every((field) => record[field] === null || record[field] === undefined)) {
    refusals.push({
      kind: 'fact-missing',
      message: `The service reported neither ${requirement.oneOf.join(' nor ')} for a DONE ${kindLabel(kind, record.sharpProver)} result: no fact binds the program's output, so nothing shows what was proved.`,
    })
  }
  return refusals
}

/** The result kind and prover as the service named them (open enums: any text), one line, cut short. */
function kindLabel(result: string, prover: string | null | undefined): string {
  return prover ? `${serviceLine(result, 80)} (${serviceLine(prover, 80)})` : serviceLine(result, 80)
}

/**
 * A hash the service sent, for a message or a table: as it is when well formed, else quoted
 * (control characters escaped) and cut short, so its text stays data, never markup or a
 * terminal escape.
 */
export function showValue(value: unknown): string {
  if (isWellFormedHash(value)) return value
  const text = String(value)
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)
}

/** Two hashes as field elements: case and leading zeros do not matter. */
export function sameFelt(a: string, b: string): boolean {
  const parse = (text: string) => {
    const trimmed = text.trim()
    if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(trimmed)) return undefined
    return BigInt(trimmed)
  }
  const left = parse(a)
  const right = parse(b)
  return left !== undefined && left === right
}
