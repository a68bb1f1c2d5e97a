/**
 * proving-kit: the library's main entry. The clients of the proving, task, storage-proof and
 * account services, the records they answer with, the request bodies they take, the typed
 * errors, the PIE toolkit, and the HTTP and polling building blocks. Nothing here imports
 * @actions/*, the emulator (busboy), viem or zod.
 *
 * The other entries: `proving-kit/schemas` (the zod schemas of the records and request bodies,
 * and the checks that list a body's problems: zod loads with it, and with a client's first
 * request, not with this entry), `proving-kit/pie` (the PIE toolkit alone, no HTTP), `proving-kit/chain`
 * (fact checks on Ethereum and Starknet; viem loads when a check runs), `proving-kit/emulator`
 * (the built-in emulator of the four services) and `proving-kit/testing` (clocks for tests).
 */

import type { ProvingClient } from './clients/proving.ts'
import type { RetryResponse } from './schemas/proving.ts'

// --- Errors: one hierarchy; the CLI maps kinds to exit codes -------------------------------------
export {
  AbortedError,
  AmbiguousSubmissionError,
  SubmissionOutcomeUnknownError,
  ChainError,
  FactMismatchError,
  GateError,
  InvalidInputError,
  InvalidPieError,
  InvalidResponseError,
  isNoRoute,
  isProvingKitError,
  NetworkError,
  type NextStep,
  nextStepOf,
  ProvingKitError,
  type ProvingKitErrorOptions,
  RemoteFailureError,
  RequestTimeoutError,
  ServiceError,
  UnknownStatusError,
  WaitTimeoutError,
} from './core/errors.ts'

// --- Building blocks: HTTP, polling, redaction, time and logs ------------------------------------
export {
  type ConnectionOptions,
  connectionOf,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUTS,
  HttpClient,
  type HttpClientConfig,
  type HttpTimeouts,
  type RetryPolicy,
} from './core/http.ts'
export { defaultDispatcher } from './core/dispatcher.ts'
export { DEFAULT_POLL_SCHEDULE, nextPollDelay, type PollSchedule, pollUntil } from './core/poll.ts'
export { DEFAULT_MAX_REQUESTS_PER_SECOND, RequestBudget, requestBudgetFor, type TakeOptions } from './core/budget.ts'
export { REDACTED, redact, redactUrl, SecretRedactor } from './core/redact.ts'
export { type Clock, type Logger, silentLogger, systemClock } from './core/runtime.ts'
export { VERSION } from './core/version.ts'

// --- The proving service -------------------------------------------------------------------------
export {
  type ClientOptions,
  type CreateBucketOptions,
  deriveDedupId,
  type FailedQueryRetry,
  type ListQueriesOptions,
  ProvingClient,
  type QueryProgress,
  type QueryResult,
  type ReadPaths,
  type RetriedQuery,
  type SubmitPieOptions,
  type SubmitProofOptions,
  type SubmitQueryOptions,
  type WaitForQueryOptions,
} from './clients/proving.ts'
export type {
  BucketDetailsResponse,
  BucketRecord,
  ClientObject,
  DocsQueryListResponse,
  DocsQueryResponse,
  QueryListResponse,
  QueryRecord,
  QueryRecordD,
  QueryRecordL,
  QueryRecordR,
  QueryRecordWithStatus,
  QueryResponse,
  RetryResponse,
} from './schemas/proving.ts'
export {
  BUCKET_STATUSES,
  BUCKET_TYPES,
  CAIRO_VERSIONS,
  CAIRO_VMS,
  type CairoVersion,
  type CairoVm,
  CHAINS,
  type Hint,
  HINTS,
  JOB_SIZES,
  type JobSize,
  KNOWN_STEPS,
  type L2Layout,
  L2_LAYOUTS,
  type Layout,
  LAYOUTS,
  MEMORY_VERIFICATIONS,
  type MemoryVerification,
  NETWORKS,
  type ProvingNetwork,
  QUERY_STATUSES,
  type QueryStatus,
  RESULTS,
  type ResultKind,
  RETRY_ERROR_CODES,
  SHARP_PROVERS,
  type SharpProver,
  STONE_VERSIONS,
  type StoneVersion,
  TERMINAL_QUERY_STATUSES,
} from './schemas/proving-constants.ts'

// --- Proving statements: the gate, reuse, the journal and the waits, as the CLI and the action use them
export type {
  Decision,
  FactsVerdict,
  FollowInput,
  GatePolicy,
  GeneralFields,
  JournalPolicy,
  Judgement,
  ReusePolicy,
  RunContext,
  StatementEndpoint,
  StatementEnding,
  StatementEvent,
  StatementHooks,
  StatementOutcome,
  StatementPolicy,
  StatementRequest,
  StatementSubject,
  Submitted,
} from './pipeline/statement/index.ts'
export type { OnchainMode, OnchainOutcome, OnchainPolicy, OnchainVerdict } from './pipeline/onchain.ts'
export type { ExpectedResult, GateRefusal } from './pipeline/gate.ts'

/**
 * Proves one statement or many (PIEs, a program, a program hash, a proof) end to end: each PIE
 * validated before anything is uploaded, the wrong program refused before paying, a query that
 * already proves it reused, an interrupted submission followed instead of paid twice (with
 * `policy.journal`), at most `policy.concurrency` uploads at once, one wait per query, and each
 * result judged by the release gate against what was asked for (the facts compared with the PIE's,
 * on chain too with `policy.onchain`). One statement's failure is its outcome, never a throw.
 *
 * @param request What to prove: `subjects`, the `endpoint` and its settings, and the `policy`.
 * @param context The proving client, a logger, the abort signal, and optional `hooks` for progress.
 * @returns One outcome per subject, in order: its `ending`, `passed`, the `judgement`, the `refusals`.
 * @throws {InvalidInputError} When the request cannot mean anything (several PIEs with one dedup id, a wait on a bucket's query).
 * @example
 * ```ts
 * import { ProvingClient, proveStatements, silentLogger } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const [outcome] = await proveStatements(
 *   {
 *     subjects: [{ kind: 'pie', path: 'build/pie.zip' }],
 *     endpoint: { kind: 'l2', layout: 'auto', prover: 'svc_sharp', mockFactHash: false },
 *     policy: {
 *       wait: true,
 *       timeoutMs: 2 * 3_600_000,
 *       concurrency: 4,
 *       gate: { allowMockedFact: false, verifyFacts: true },
 *       reuse: { mode: 'auto' },
 *       journal: { dir: '.proving-journal', forceNew: false },
 *     },
 *   },
 *   { client, logger: silentLogger },
 * )
 * if (!outcome?.passed) throw new Error(outcome?.refusals.map((refusal) => refusal.message).join('\n'))
 * ```
 */
export async function proveStatements(
  request: import('./pipeline/statement/index.ts').StatementRequest,
  context: import('./pipeline/statement/index.ts').RunContext,
): Promise<import('./pipeline/statement/index.ts').StatementOutcome[]> {
  // Loaded on first use: the entry stays as light as the clients.
  return (await import('./pipeline/statement/index.ts')).proveStatements(request, context)
}

/**
 * Follows a query that already exists (submitted earlier, by another job, before a
 * cancellation) to its end, and judges it as a new one is judged: the facts against `pie` when
 * one is given, the gate against `expected` (what the query was asked for, never its record's
 * word), the chain with `onchain`.
 *
 * @param client The proving client.
 * @param input The query, what it was asked for, the gate's allowance, the PIE, the timeout.
 * @param context A logger, the abort signal, and an optional wrapper of the wait for progress.
 * @returns The judgement: `passed`, the `refusals`, the `result` record, the fact comparison.
 * @throws {WaitTimeoutError} When the query has not ended within `input.timeoutMs`.
 * @example
 * ```ts
 * import { followQuery, expectResult, ProvingClient, silentLogger } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const judgement = await followQuery(
 *   client,
 *   {
 *     queryId: 'a1b2',
 *     expected: expectResult('PROOF_VERIFICATION_ON_L2'),
 *     gate: { allowMockedFact: false, verifyFacts: true },
 *     timeoutMs: 3_600_000,
 *   },
 *   { logger: silentLogger },
 * )
 * console.log(judgement.passed ? 'proven' : judgement.refusals)
 * ```
 */
export async function followQuery(
  client: ProvingClient,
  input: import('./pipeline/statement/index.ts').FollowInput,
  context: import('./pipeline/statement/follow.ts').FollowContext,
): Promise<import('./pipeline/statement/index.ts').Judgement> {
  return (await import('./pipeline/statement/index.ts')).followQuery(client, input, context)
}

/**
 * Sends a FAILED, retriable query back to the service and, with `input.wait`, follows and judges
 * it as `followQuery` does.
 *
 * @param client The proving client.
 * @param input As for `followQuery`, and `wait`: whether to follow the retried query.
 * @param context As for `followQuery`, and `onRetried`, called with the service's answer.
 * @returns The retry's answer, and the judgement when `wait` was set.
 * @throws {ServiceError} When the service refuses the retry (`QUERY_NOT_RETRIABLE`, `MAX_RETRIES_REACHED`).
 * @example
 * ```ts
 * import { retryAndFollow, ANY_PROOF, ProvingClient, silentLogger } from 'proving-kit'
 *
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: process.env.PROVING_API_KEY })
 * const { judgement } = await retryAndFollow(
 *   client,
 *   {
 *     queryId: 'a1b2',
 *     expected: ANY_PROOF,
 *     gate: { allowMockedFact: false, verifyFacts: false },
 *     timeoutMs: 3_600_000,
 *     wait: true,
 *   },
 *   { logger: silentLogger },
 * )
 * ```
 */
export async function retryAndFollow(
  client: ProvingClient,
  input: import('./pipeline/statement/index.ts').FollowInput & { wait: boolean },
  context: import('./pipeline/statement/follow.ts').FollowContext,
): Promise<{ retried: RetryResponse; judgement: import('./pipeline/statement/index.ts').Judgement | undefined }> {
  return (await import('./pipeline/statement/index.ts')).retryAndFollow(client, input, context)
}

/**
 * What a query was asked for, as the gate expects it: one kind
 * (`expectResult('PROOF_VERIFICATION_ON_L2')`), or a proof of any kind (`ANY_PROOF`).
 */
/** What a query was asked for, as the gate expects it: one kind (`expectResult('PROOF_VERIFICATION_ON_L2')`), or a proof of any kind (`ANY_PROOF`). */
export { ANY_PROOF, expectResult } from './pipeline/gate.ts'

// --- The data-processor task service -------------------------------------------------------------
export {
  type ListTasksOptions,
  TaskClient,
  type TaskClientOptions,
  type TaskProgress,
  type WaitForTaskOptions,
} from './clients/tasks.ts'
export type {
  CompiledClass,
  DecommitmentBody,
  DecommitmentBodyInput,
  DpOutput,
  EntryPoint,
  KeccakMmrMeta,
  MmrMeta,
  PoseidonMmrMeta,
  TaskBody,
  TaskBodyInput,
  TaskGeneralErrorBody,
  TaskListResponse,
  TaskMmrsResponse,
  TaskQueuedResponse,
  TaskShortErrorBody,
  TaskStatusRecord,
  TaskSummary,
  TaskWebhookFailure,
  TaskWebhookPayload,
  TaskWebhookSuccess,
  UsedMmrRecord,
} from './schemas/tasks.ts'
export {
  DECOMMITMENT_QUEUED_MESSAGE,
  isTerminalTaskStatus,
  MMR_HASHING_FUNCTIONS,
  TASK_FAILED_STATUSES,
  TASK_LIST_DEFAULT_PER_PAGE,
  TASK_LIST_MAX_PER_PAGE,
  TASK_QUEUED_MESSAGE,
  TASK_STAGES,
  TASK_STATUSES,
  TASK_SUCCESS_STATUS,
  type TaskStage,
  taskStageLabel,
  taskStageOf,
  type TaskStatus,
  TERMINAL_TASK_STATUSES,
} from './schemas/tasks-constants.ts'

// --- The storage-proof service (batch queries) ---------------------------------------------------
export {
  type BatchQueryProgress,
  type BatchQueryResult,
  StorageProofClient,
  type StorageProofClientOptions,
  type WaitForBatchQueryOptions,
} from './clients/storage-proof.ts'
export type {
  AccountRequest,
  BatchQueryBody,
  BatchQueryResponse,
  BatchQueryStatusResponse,
  BlockRequest,
} from './schemas/storage-proof.ts'
export {
  BATCH_QUERY_STATUSES,
  type BatchQueryStatus,
  KNOWN_ACCOUNT_PROPS,
  KNOWN_HEADER_PROPS,
  TERMINAL_BATCH_QUERY_STATUSES,
} from './schemas/storage-proof-constants.ts'

// --- The account service (wallet sign-in, API keys) ----------------------------------------------
export {
  AccountClient,
  type AccountClientOptions,
  type ApiKeyProvider,
  type ChallengePreview,
  type CreateApiKeyOptions,
  DEFAULT_KEY_COLOR,
  type ListApiKeysOptions,
  localSigner,
  normalizePrivateKey,
  type SessionInfo,
  type TypedDataSigner,
} from './clients/account.ts'
export {
  DEFAULT_SIGN_IN_DOMAIN,
  type SignInExpectation,
  UnsafeChallengeError,
} from './clients/sign-in-check.ts'
export type {
  ApiKeyListResponse,
  ApiKeyRecord,
  ChallengeResponse,
  CreateApiKeyBody,
  Eip712TypedData,
  RefreshResponse,
  SessionResponse,
  TypedDataField,
} from './schemas/account.ts'

// --- The PIE toolkit (also alone, without the clients: proving-kit/pie) --------------------------
export {
  assertQueryFacts,
  assertValidPie,
  BOOTLOADER_PROGRAM_HASH,
  canonicalZipDigest,
  checkQueryFacts,
  compareQueryFacts,
  computeIntegrityFact,
  computeOutputRoot,
  computeProgramHash,
  computeProgramHashes,
  computeSharpFact,
  computeVerificationHash,
  type FactCheckResult,
  type FactField,
  type FactMismatch,
  type FactTopology,
  inspectPie,
  type InspectPieOptions,
  jobSizeForSteps,
  packPie,
  type PackPieOptions,
  type PackPieResult,
  type PieInput,
  type PieInspection,
  type PieRefusal,
  type PieSummary,
  type PieValidationResult,
  PROGRAM_HASH_VARIANTS,
  type ProgramHashVariant,
  type QueryFacts,
  type RefusalReason,
  validatePie,
  type ValidatePieOptions,
  type VerifierSettings,
} from './pie/index.ts'
