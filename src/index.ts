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

// --- Errors: one hierarchy; the CLI maps kinds to exit codes -------------------------------------
export {
  AbortedError,
  AmbiguousSubmissionError,
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
  CHAINS,
  HINTS,
  JOB_SIZES,
  type JobSize,
  KNOWN_STEPS,
  L2_LAYOUTS,
  type Layout,
  LAYOUTS,
  MEMORY_VERIFICATIONS,
  type MemoryVerification,
  NETWORKS,
  QUERY_STATUSES,
  type QueryStatus,
  RESULTS,
  RETRY_ERROR_CODES,
  SHARP_PROVERS,
  STONE_VERSIONS,
  type StoneVersion,
  TERMINAL_QUERY_STATUSES,
} from './schemas/proving-constants.ts'

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
