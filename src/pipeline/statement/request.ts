/**
 * A statement request: what a run asks to prove and under which policies, in no host's words.
 * The CLI turns its flags into one, the action its inputs, a script writes one directly; the
 * statement pipeline (./run.ts) decides everything from it, the same way for every host, one
 * statement or many.
 */
import { inputNames } from '../../core/checks.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { type ExpectedResult, expectResult } from '../gate.ts'
import type { OnchainPolicy } from '../onchain.ts'
import type { ReuseMode } from '../reuse.ts'
import type {
  CairoVersion,
  CairoVm,
  Hint,
  JobSize,
  L2Layout,
  Layout,
  MemoryVerification,
  ProvingNetwork,
  ResultKind,
  SharpProver,
  StoneVersion,
} from '../../schemas/proving-constants.ts'

/** What one statement proves: a PIE (a pie.zip or a PIE directory), a program with its input, a program hash, or a proof to verify. */
export type StatementSubject = (
  | { kind: 'pie'; path: string }
  | { kind: 'program'; programFile: string; inputFile?: string | undefined }
  | { kind: 'program-hash'; programHash: string }
  | { kind: 'proof'; path: string }
) & {
  /** How lines name it when a run has several (the path as the user gave it); its path or hash otherwise. */
  label?: string | undefined
}

/** How lines name a statement: its label, else its path, program or hash. */
export function labelOf(subject: StatementSubject): string {
  if (subject.label !== undefined) return subject.label
  if (subject.kind === 'program') return subject.programFile
  if (subject.kind === 'program-hash') return subject.programHash
  return subject.path
}

/** The general submission's fields (see `SubmitQueryOptions`), the source and the layout aside. */
export type GeneralFields = {
  result?: ResultKind | undefined
  cairoVersion?: CairoVersion | undefined
  cairoVm?: CairoVm | undefined
  network?: ProvingNetwork | undefined
  externalId?: string | undefined
  hints?: Hint | (string & {}) | undefined
  sharpProver?: SharpProver | (string & {}) | undefined
  bucketId?: string | undefined
  bucketJobIndex?: number | undefined
  declaredJobSize?: JobSize | undefined
  /** A given dedup id: it names one query (one statement only). */
  dedupId?: string | undefined
}

/** Which endpoint each statement is sent to, with its settings. */
export type StatementEndpoint =
  | { kind: 'l2'; layout: L2Layout; prover: string; mockFactHash: boolean }
  | {
      kind: 'general'
      layout: Layout
      mockFactHash: boolean
      fields: GeneralFields
      /**
       * Derives the first dedup id of a statement's chain from what it proves (`pie:<sha256>`,
       * `program:<sha256>`, `hash:<hash>`) and its settings, so that a re-run finds the query it
       * paid for (the action: the run and job it runs in). Absent: the client derives one from
       * the files and fields.
       */
      deriveDedupId?: ((subject: string, settings: Record<string, unknown>) => string) | undefined
    }
  | { kind: 'proof'; stoneVersion: StoneVersion; memoryVerification: MemoryVerification; mockFactHash: boolean }

/** What the release gate lets pass: a mocked fact or not, which program, whether the facts are compared. */
export type GatePolicy = {
  /** A mocked fact, or one whose mock state is unknown, may pass. */
  allowMockedFact: boolean
  /** The program hash the PIE and the query must have; refused before paying when the PIE has another. */
  expectedProgramHash?: string | undefined
  /** Compare the query's facts with the PIE's (a reused query's always are). */
  verifyFacts: boolean
  /** Why a mocked fact was not allowed, in the host's words ("--allow-mocked-fact was not given"). */
  notAllowed?: string | undefined
}

/** Whether a query that already proves a statement is reused instead of paid for again. */
export type ReusePolicy = {
  /**
   * `auto`: a DONE query of this key that proves the same PIE with the same settings is reused; `never`: always submit.
   */
  mode: ReuseMode
  /**
   * This run is a re-run of one whose record of its submissions is gone (a new attempt of a CI
   * job): queries of this key still running with this statement's settings, created within
   * `sinceMs`, are followed and judged before anything is paid for again. `known`: the PIEs
   * (SHA-256 of pie.zip) whose earlier attempt's journal was read back whole: the journal follows
   * what it left of them, and nothing running is looked up for them.
   */
  rerun?: { sinceMs: number; known?: ReadonlySet<string> | undefined } | undefined
  /** A PIE whose fact is registered on chain already is not proven again (with an on-chain policy; default true). */
  chain?: boolean | undefined
}

/** The local journal of submissions: an interrupted run followed, never paid for twice. */
export type JournalPolicy = {
  /** The folder the journal is kept in (one file per submission). */
  dir: string
  /** Submit whatever the journal says (a second, paid query). */
  forceNew: boolean
  /** How your tool lets a person force a new query (say, "Pass --force to submit it again."), added to the messages about an earlier query. */
  forceNewHint?: string | undefined
  /** @deprecated Renamed {@link JournalPolicy.forceNewHint}; read when that is absent, and goes in the next minor release. */
  submitAnew?: string | undefined
}

/**
 * How a run proves its statements: whether it waits, its deadline and concurrency, the gate, reuse,
 * the journal and the on-chain check.
 */
export type StatementPolicy = {
  /** Wait for each query to end, then judge it; without it the run ends once each is submitted. */
  wait: boolean
  /** One deadline for every wait of the run (the reuse lookup's candidates, the queries). */
  timeoutMs: number
  /** How many statements are packed, validated and uploaded at once. */
  concurrency: number
  /** What the release gate lets pass. */
  gate: GatePolicy
  /** Whether an existing query is reused. */
  reuse: ReusePolicy
  /** Absent: no journal (a service that forgets, such as an emulator started for the run). */
  journal?: JournalPolicy | undefined
  /** Absent: the fact is not checked on chain. */
  onchain?: OnchainPolicy | undefined
  /** Where each packed PIE directory's pie.zip is written (kept); a temporary folder, removed after, when absent. */
  packDir?: (() => string) | undefined
  /** A single PIE directory to the L2 endpoint is uploaded while it is packed (one pass). */
  streamDirectory?: boolean | undefined
  /** The built-in emulator's address, when the run talks to one (its Starknet RPC serves the on-chain check). */
  emulatorUrl?: string | undefined
}

/** What {@link proveStatements} proves, where, and under which policy. */
export type StatementRequest = {
  /** The statements, proved in parallel (within `policy.concurrency`). */
  subjects: StatementSubject[]
  /** The endpoint every statement is sent to, with its settings. */
  endpoint: StatementEndpoint
  /** The run's policy. */
  policy: StatementPolicy
  /**
   * How messages name the PIE a statement reads.
   * @default 'pie'
   */
  pieInput?: string | undefined
}

/** What the request asks for, so what the gate expects of each query: never the record's word for it. */
export function expectedOf(endpoint: StatementEndpoint): ExpectedResult {
  if (endpoint.kind === 'general') return expectResult(resultOf(endpoint))
  return expectResult('PROOF_VERIFICATION_ON_L2')
}

/** The general submission's result kind: given, else the service's default (PROOF_GENERATION). */
export function resultOf(endpoint: Extract<StatementEndpoint, { kind: 'general' }>): string {
  return endpoint.fields.result ?? 'PROOF_GENERATION'
}

/** The host's words for forcing a new query: `forceNewHint`, else the deprecated `submitAnew` a caller may still give. */
export function forceNewHintOf(journal: JournalPolicy): string | undefined {
  return journal.forceNewHint ?? journal.submitAnew
}

/** Whether statements of this request end with a bucket rather than a wait. */
export function inBucket(endpoint: StatementEndpoint): boolean {
  return endpoint.kind === 'general' && endpoint.fields.bucketId !== undefined
}

/**
 * What the request cannot mean, refused before anything is read or sent, each problem named in
 * every host's spelling: a position or a dedup id given for several statements, a wait on a
 * bucket's query, a subject the endpoint does not take.
 */
export function checkRequest(request: StatementRequest): void {
  const { subjects, endpoint, policy } = request
  if (subjects.length === 0)
    throw new InvalidInputError('Nothing to prove: give a PIE, a program or a program hash.', { input: 'pie' })
  const several = subjects.length > 1
  if (endpoint.kind === 'general') {
    if (several && endpoint.fields.bucketJobIndex !== undefined) {
      throw new InvalidInputError(
        `A bucket job index names one position: with several PIEs, omit it (${inputNames('bucket-job-index', 'fields.bucketJobIndex')}); each gets the next free index.`,
        { input: 'bucket-job-index' },
      )
    }
    if (several && endpoint.fields.dedupId !== undefined) {
      throw new InvalidInputError(
        `A dedup id identifies one query: with several PIEs, omit it (${inputNames('dedup-id', 'fields.dedupId')}); each PIE gets its own, derived from its digest.`,
        { input: 'dedup-id' },
      )
    }
    if (endpoint.fields.bucketId !== undefined && policy.wait) {
      throw new InvalidInputError(
        `Waiting for a query in bucket ${endpoint.fields.bucketId} would wait forever: submit without waiting (${inputNames('wait', 'policy.wait')}).`,
        {
          input: 'wait',
          metaMessages: ['A query in a bucket ends when the bucket is closed: close the bucket, then wait for it.'],
        },
      )
    }
  }
  const wrong = subjects.find(
    (subject) =>
      (endpoint.kind === 'proof') !== (subject.kind === 'proof') || (endpoint.kind === 'l2' && subject.kind !== 'pie'),
  )
  if (wrong) {
    throw new InvalidInputError(`A ${wrong.kind} cannot be sent to the ${endpoint.kind} endpoint.`, {
      input: wrong.kind,
    })
  }
}
