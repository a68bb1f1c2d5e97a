/**
 * The release gate: whether a finished query is a result a release may rely on. Pure: it judges
 * the record the service returned against what the request asked for (`ExpectedResult`, never
 * the record's own word for its kind) and the local fact check, when one was made, and lists
 * every reason to refuse, so a host can show them all at once. It fails closed: a record that
 * claims another kind than the one asked for, a fact the asked kind carries that the record
 * leaves out, nulls or garbles, and a mock state the service does not give, are refusals, never
 * passes. Every adapter (CLI, action, bucket) gates through here.
 */
import { serviceLine, visibleName } from '../core/service-text.ts'
import { bytes32Text } from '../pie/shared/index.ts'
import type { FactCheckResult, FactField } from '../pie/index.ts'
import { KNOWN_STEPS, RESULTS } from '../schemas/proving-constants.ts'
import { KNOWN_PROVER_NAMES, readProver } from './prover.ts'

/**
 * What the request asked the service for, never what its answer says: the result kinds a record
 * of this query may claim. The gate judges the record against it (its `result` and `step` must
 * not claim anything else; a null or absent `result` claims nothing, production may null it),
 * and asks for the facts the expected kind carries.
 */
export type ExpectedResult = {
  /** The `result` values the request can produce. */
  kinds: readonly string[]
  /** Also a kind this version does not know, of this form (enumerations grow). */
  newKinds?: RegExp | undefined
  /** How a message names it: `PROOF_VERIFICATION_ON_L2`, "a proof (...)". */
  label: string
}

/** The one kind an expectation names (what `--expect-result` / `expected-result` would say), if it names one. */
export function singleKind(expected: ExpectedResult): string | undefined {
  return expected.kinds.length === 1 && expected.newKinds === undefined ? expected.kinds[0] : undefined
}

export type GateOptions = {
  /** A mocked fact (no real on-chain verification), or one whose mock state is unknown, passes only when allowed. */
  allowMockedFact: boolean
  /** The program hash the query must have proved (0x hex); any value when absent. */
  expectedProgramHash?: string | undefined
  /** What the request asked for (`expectResult`, `ANY_PROOF`): the record is judged against it. */
  expected: ExpectedResult
  /** Why a mocked fact was not allowed, in the caller's words (default: "`allow-mocked-fact` is false"). */
  notAllowed?: string | undefined
  /**
   * The bucket whose listing names the query (the bucket gate): the query's own record must say
   * it is in that bucket (`bucketId`, compared exactly, ids being opaque); one that names another
   * bucket, or none, is refused. Not judged when absent.
   */
  bucketId?: string | undefined
}

/**
 * The record as the gate reads it. The fields are typed as the schemas give them, but the gate
 * reads each as `unknown` could be (a value of another type, an odd spelling): what it cannot
 * read is a refusal, never a pass and never a throw.
 */
export type GateRecord = {
  status: string
  programHash?: string | null | undefined
  sharpFactHash?: string | null | undefined
  integrityFactHash?: string | null | undefined
  isFactMocked?: boolean | null | undefined
  errorReason?: string | null | undefined
  result?: string | null | undefined
  step?: string | null | undefined
  sharpProver?: string | null | undefined
  bucketId?: string | null | undefined
}

/**
 * One reason the release gate refused a result: its `kind` (failed, mocked fact, wrong program, fact
 * missing, ...) and a `message` for a person.
 */
export type GateRefusal = {
  kind:
    | 'failed'
    | 'not-done'
    | 'wrong-kind'
    | 'mocked-fact'
    | 'mock-state-unknown'
    | 'fact-missing'
    | 'fact-malformed'
    | 'program-hash'
    | 'fact-mismatch'
    | 'not-on-chain'
    | 'other-bucket'
    | 'unknown-prover'
  message: string
}

/** The result kinds that generate a trace, not a proof: nothing is proved, so there is no fact. */
const TRACE_RESULTS: readonly string[] = ['TRACE_GENERATION', 'TRACE_AND_METADATA_GENERATION']

/** Whether a query of this result kind proves something (a missing kind is taken to: fail closed). */
export function resultHasFact(result: string | null | undefined): boolean {
  return typeof result !== 'string' || !TRACE_RESULTS.includes(result)
}

/** Every result kind that proves (the service's enumeration less the traces). */
export const PROOF_RESULTS: readonly string[] = RESULTS.filter((result) => resultHasFact(result))

/**
 * A proof of any kind: what `query wait` expects unless told, and every query of a bucket. A
 * verification on a chain this version does not know yet (`PROOF_VERIFICATION_ON_<CHAIN>`, as
 * WORLD_CHAIN was added) is a proof too; its facts are a proof's (the program hash and a fact).
 */
export const ANY_PROOF: ExpectedResult = {
  kinds: PROOF_RESULTS,
  newKinds: /^PROOF_VERIFICATION_ON_[A-Z0-9]+(?:_[A-Z0-9]+)*$/,
  label: 'a proof (PROOF_GENERATION or PROOF_VERIFICATION_ON_*)',
}

/** Whether a record's `result` is one the request may produce. */
function isExpectedKind(result: string, expected: ExpectedResult): boolean {
  return expected.kinds.includes(result) || expected.newKinds?.test(result) === true
}

/**
 * What the gate expects of a query asked for exactly one result kind.
 *
 * @param result The kind asked for (`PROOF_VERIFICATION_ON_L2`, ...).
 * @returns The expectation to give `followQuery` and `retryAndFollow` as `expected`.
 * @example
 * ```ts
 * import { expectResult, followQuery, ProvingClient, silentLogger } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const expected = expectResult('PROOF_VERIFICATION_ON_L1')
 * const judgement = await followQuery(
 *   client,
 *   { queryId: 'a1b2c3', expected, gate: { allowMockedFact: false, verifyFacts: false }, timeoutMs: 3_600_000 },
 *   { logger: silentLogger },
 * )
 * ```
 */
export function expectResult(result: string): ExpectedResult {
  return { kinds: [result], label: result }
}

/** Whether what was asked for is a proof (every kind it allows carries a fact). */
export function expectsProof(expected: ExpectedResult): boolean {
  return expected.kinds.length > 0 && expected.kinds.every((kind) => resultHasFact(kind))
}

/**
 * The kind whose facts a DONE record must carry: the one asked for; of several allowed, the one
 * the record names when it is among them; else none in particular (`requiredFacts` then asks
 * for the program hash and a fact that binds the output).
 */
export function judgedKind(record: Pick<GateRecord, 'result'>, expected: ExpectedResult): string | undefined {
  if (expected.kinds.length === 1) return expected.kinds[0]
  const claimed: unknown = record.result
  return typeof claimed === 'string' && expected.kinds.includes(claimed) ? claimed : undefined
}

/** What a gate must find in a DONE record of some result kind: every field of `all`, and one of `oneOf` at least. */
export type FactRequirement = { all: FactField[]; oneOf: FactField[] }

/**
 * Which fact fields a DONE query of this kind must carry (docs/action.md, "What the gate
 * refuses"). A trace carries none. A proof always carries its program hash, and at least one
 * fact that binds the output (the program hash alone is shared by every run of the program);
 * where the result names the registry the fact is verified in, that one: the SHARP fact for
 * L1, and for L2 the Integrity fact with Stone or the bridged SHARP fact with Stwo. `kind` is what
 * was asked for (`judgedKind`),
 * never the record's word; the prover is the record's, read as a known name only (prover.ts):
 * it narrows which fact is required, and one this version does not know is a refusal of its
 * own where it would decide (`proverRefusals`), its requirement an absent prover's.
 */
export function requiredFacts(kind: string | undefined, sharpProver?: unknown): FactRequirement {
  if (!resultHasFact(kind)) return { all: [], oneOf: [] }
  const prover = readProver(sharpProver)
  let registered: FactField | undefined
  if (kind === 'PROOF_VERIFICATION_ON_L1') registered = 'sharpFactHash'
  else if (kind === 'PROOF_VERIFICATION_ON_L2' && prover.kind === 'known') registered = prover.l2Fact
  return registered
    ? { all: ['programHash', registered], oneOf: [] }
    : { all: ['programHash'], oneOf: ['sharpFactHash', 'integrityFactHash'] }
}

/** The result kinds whose required fact the prover decides (`requiredFacts`). */
const PROVER_DECIDES: readonly string[] = ['PROOF_VERIFICATION_ON_L2']

/**
 * A prover the record names that this version does not know, where the prover decides which
 * fact binds the output: a lookalike (`stоne`, a Cyrillic о) read as no prover would let either
 * fact pass where Stone's Integrity fact is required. Named as sent, every character outside
 * printable ASCII escaped. An absent prover is no refusal (records L and D carry none).
 */
function proverRefusals(kind: string | undefined, sharpProver: unknown): GateRefusal[] {
  if (kind === undefined || !PROVER_DECIDES.includes(kind)) return []
  const prover = readProver(sharpProver)
  if (prover.kind !== 'unknown') return []
  const named =
    typeof prover.value === 'string'
      ? `names its prover ${visibleName(prover.value)}`
      : `gives its prover (sharpProver) as ${serviceLine(textOf(prover.value), 80)}, not text`
  return [
    {
      kind: 'unknown-prover',
      message: `The record ${named}, not a prover this version knows (${KNOWN_PROVER_NAMES}, in any letter case): which fact binds the output (Stone's Integrity, Stwo's SHARP) cannot be told.`,
    },
  ]
}

/** Steps that generate a trace (KNOWN_STEPS): a DONE proof's record never stops there. */
const TRACE_STEPS: readonly string[] = ['TRACE_GENERATION', 'TRACE_AND_METADATA_GENERATION']
/** Steps past the trace: a trace's record never reaches them. */
const PROOF_STEPS: readonly string[] = KNOWN_STEPS.filter((step) => !TRACE_STEPS.includes(step))

const FACT_FIELDS: readonly FactField[] = ['programHash', 'sharpFactHash', 'integrityFactHash']
/** What a hash the gate compares must look like (the service's records use this form). */
const HASH_FORM = /^0x[0-9a-fA-F]{1,64}$/

/** Whether the service's value is a hash the gate can compare: 0x hex, at most 256 bits. */
export function isWellFormedHash(value: unknown): value is string {
  return typeof value === 'string' && HASH_FORM.test(value)
}

/**
 * Every reason to refuse the record, none when it passes: DONE, of the kind asked for (its
 * `result` and `step` claim nothing else), carrying every fact that kind carries, well formed,
 * equal to the local computation when one was made (`factCheck`), with a mock state that is
 * false (or allowed), and the expected program hash when one is given. The on-chain check, when
 * one is asked for, comes after (`afterOnChainCheck`).
 */
export function evaluateGate(
  record: GateRecord,
  factCheck: FactCheckResult | undefined,
  options: GateOptions,
): GateRefusal[] {
  // Whose query it is holds in every state: one of another bucket is not this bucket's.
  const membership = options.bucketId === undefined ? [] : bucketRefusals(record, options.bucketId)
  const status: unknown = record.status
  if (status === 'FAILED') {
    const reason: unknown = record.errorReason
    return [
      {
        kind: 'failed',
        // The service's reason is data: one line, whatever it holds (core/service-text.ts).
        message: `The query FAILED: ${serviceLine((typeof reason === 'string' && reason.trim()) || 'the service gave no reason')}.`,
      },
      ...membership,
    ]
  }
  if (status !== 'DONE') {
    return [
      {
        kind: 'not-done',
        message: `The query is ${typeof status === 'string' ? serviceLine(status, 200) : showValue(status)}, not DONE.`,
      },
      ...membership,
    ]
  }
  const refusals: GateRefusal[] = [...membership, ...kindRefusals(record, options.expected)]
  // Whether facts are due is the request's to say: a record claiming a trace carries none, and
  // is refused above; its missing facts are refused as well.
  const proves = expectsProof(options.expected)
  const mocked: unknown = record.isFactMocked
  if (mocked === true && !options.allowMockedFact) {
    refusals.push({
      kind: 'mocked-fact',
      message: `The fact is mocked: nothing was verified on chain, and ${options.notAllowed ?? '`allow-mocked-fact` is false'}.`,
    })
  } else if (proves && typeof mocked !== 'boolean' && !options.allowMockedFact) {
    const said = mocked === null ? 'null' : mocked === undefined ? 'absent' : showValue(mocked)
    refusals.push({
      kind: 'mock-state-unknown',
      message: `The service did not say whether the fact is mocked (isFactMocked is ${said}), so it may not be verified on chain, and ${options.notAllowed ?? '`allow-mocked-fact` is false'}.`,
    })
  }
  if (proves) refusals.push(...factFieldRefusals(record, options.expected))
  if (options.expectedProgramHash !== undefined) {
    const reported: unknown = record.programHash
    if (reported === null || reported === undefined || reported === '') {
      refusals.push({
        kind: 'program-hash',
        message: `The service reported no program hash, so it cannot be checked against the expected ${options.expectedProgramHash}.`,
      })
    } else if (typeof reported !== 'string' || !sameFelt(reported, options.expectedProgramHash)) {
      refusals.push({
        kind: 'program-hash',
        message: `The program hash is ${showValue(reported)}, not the expected ${options.expectedProgramHash}.`,
      })
    }
  }
  if (factCheck && !factCheck.ok) {
    if (factCheck.mismatches.length) {
      const lines = factCheck.mismatches.map(
        (mismatch) =>
          `${mismatch.field}: the service says ${showValue(mismatch.actual)}, the PIE gives ${mismatch.expected}`,
      )
      refusals.push({
        kind: 'fact-mismatch',
        message: `What the service says it proved differs from the PIE: ${lines.join('; ')}.`,
      })
    } else if (!refusals.some((refusal) => refusal.kind === 'fact-missing' || refusal.kind === 'fact-malformed')) {
      // Nothing that binds the output was compared: matching nothing is not matching.
      refusals.push({
        kind: 'fact-missing',
        message:
          'The service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent).',
      })
    }
  }
  return refusals
}

/**
 * The gate once the on-chain check has run (the root action's `verify-onchain`): its refusals
 * are added, and an unknown mock state is what a registration in the real registry settles
 * (`registered`), every other refusal standing. Without a check (`registered` false, no
 * refusals), the gate's refusals are returned as they are.
 */
export function afterOnChainCheck(
  gated: readonly GateRefusal[],
  onChain: { refusals: readonly GateRefusal[]; registered: boolean },
): GateRefusal[] {
  const settled = onChain.refusals.length === 0 && onChain.registered
  return [...(settled ? gated.filter((refusal) => refusal.kind !== 'mock-state-unknown') : gated), ...onChain.refusals]
}

/**
 * The record's `result` and `step` against what was asked: a `result` that is not one of the
 * kinds asked for (another kind, an odd spelling, a value of another type), a trace's step on a
 * proof or a proof's step on a trace, is a refusal naming both. A null or absent field claims
 * nothing; a step this version does not know is not judged (steps grow).
 */
function kindRefusals(record: GateRecord, expected: ExpectedResult): GateRefusal[] {
  const refusals: GateRefusal[] = []
  const result: unknown = record.result
  if (result !== null && result !== undefined && !(typeof result === 'string' && isExpectedKind(result, expected))) {
    refusals.push({
      kind: 'wrong-kind',
      message: `The query was asked for ${expected.label}, but its record says its result is ${claimText(result)}: the gate judges what was asked, not the service's word for it.`,
    })
  }
  const step: unknown = record.step
  if (step === null || step === undefined) return refusals
  const proves = expectsProof(expected)
  const known = typeof step === 'string' ? step.trim().toUpperCase() : undefined
  if (known === undefined || (proves ? TRACE_STEPS : PROOF_STEPS).includes(known)) {
    const why = known === undefined ? ' (not text)' : proves ? ', a trace, not a proof' : ', past a trace'
    refusals.push({
      kind: 'wrong-kind',
      message: `The query was asked for ${expected.label}, but its record says its step is ${claimText(step)}${why}.`,
    })
  }
  return refusals
}

/**
 * The record's own word on its bucket against the bucket whose listing names it: the listing is
 * the bucket's claim about its queries, the record the query's, and a query is judged as one of
 * the bucket's leaves only when its record says so. A listing that names another bucket's query
 * (or one in no bucket) would pass that query's proof off as this bucket's.
 */
function bucketRefusals(record: GateRecord, bucketId: string): GateRefusal[] {
  const named: unknown = record.bucketId
  if (named === bucketId) return []
  const where =
    typeof named === 'string'
      ? `in bucket ${/^[\x21-\x7e]+$/.test(named) ? serviceLine(named, 120) : visibleName(named)}`
      : `in no bucket (bucketId is ${named === null ? 'null' : named === undefined ? 'absent' : `${serviceLine(textOf(named), 80)}, not text`})`
  return [
    {
      kind: 'other-bucket',
      message: `The query is ${where} by its own record, not in bucket ${serviceLine(bucketId, 120)}, whose listing names it: the gate trusts the query's record, not the listing.`,
    },
  ]
}

/** A value the service claimed, for a message: quoted, one line, cut short. */
function claimText(value: unknown): string {
  const text = typeof value === 'string' ? value : textOf(value)
  return serviceLine(JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text), 200)
}

/** The fact fields of a DONE proof: each required one present, none malformed. */
function factFieldRefusals(record: GateRecord, expected: ExpectedResult): GateRefusal[] {
  const refusals: GateRefusal[] = []
  const kind = judgedKind(record, expected)
  const requirement = requiredFacts(kind, record.sharpProver)
  const label = kind === undefined ? expected.label : kindLabel(kind, record.sharpProver)
  refusals.push(...proverRefusals(kind, record.sharpProver))
  const value = (field: FactField): unknown => record[field]
  const absent = (field: FactField) => (value(field) === null ? 'null' : 'absent')
  for (const field of FACT_FIELDS) {
    const given = value(field)
    if (given === null || given === undefined) {
      if (requirement.all.includes(field)) {
        refusals.push({
          kind: 'fact-missing',
          message: `The service reported no ${field} (${absent(field)}) for a DONE ${label} result, so there is nothing to check it against.`,
        })
      }
    } else if (!isWellFormedHash(given)) {
      refusals.push({
        kind: 'fact-malformed',
        message: `The service's ${field} is not a 0x hex hash of at most 64 digits (it says ${showValue(given)}), so it cannot be compared.`,
      })
    }
  }
  if (
    requirement.oneOf.length &&
    requirement.oneOf.every((field) => value(field) === null || value(field) === undefined)
  ) {
    refusals.push({
      kind: 'fact-missing',
      message: `The service reported neither ${requirement.oneOf.join(' nor ')} for a DONE ${label} result: no fact binds the program's output, so nothing shows what was proved.`,
    })
  }
  return refusals
}

/**
 * The result kind and prover as the service named them (open enums: any text), one line, cut
 * short; a prover this version does not know with its characters outside printable ASCII escaped.
 */
function kindLabel(result: string, prover: unknown): string {
  if (typeof prover !== 'string' || !prover) return serviceLine(result, 80)
  return `${serviceLine(result, 80)} (${readProver(prover).kind === 'known' ? serviceLine(prover, 80) : visibleName(prover)})`
}

/**
 * A hash the service sent, for a message or a table: as it is when well formed, else quoted
 * (control characters escaped) and cut short, so its text stays data, never markup or a
 * terminal escape.
 */
export function showValue(value: unknown): string {
  if (isWellFormedHash(value)) return value
  const text = textOf(value)
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text)
}

/** Any value as text, for a message: JSON where it has one, else String(); never a throw. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return typeof value === 'object' && value !== null
      ? (JSON.stringify(value) ?? Object.prototype.toString.call(value))
      : String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
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

/** The hashes a record reports, as every output gives them (rows, facts.json). */
export type OutputFacts = { programHash: string | null; sharpFactHash: string | null; integrityFactHash: string | null }

/**
 * A record's hashes for an output: the program hash and the Integrity fact as the service wrote
 * them, the SHARP fact as on chain (`0x` and 64 hex digits, bytes32Text); null when absent or not
 * text. What the gate compared is another matter: this only shows.
 */
export function outputFacts(
  record: { programHash?: unknown; sharpFactHash?: unknown; integrityFactHash?: unknown } | null | undefined,
): OutputFacts {
  const text = (value: unknown) => (typeof value === 'string' ? value : null)
  const sharp = text(record?.sharpFactHash)
  return {
    programHash: text(record?.programHash),
    sharpFactHash: sharp === null ? null : bytes32Text(sharp),
    integrityFactHash: text(record?.integrityFactHash),
  }
}
