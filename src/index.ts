/**
 * proving-kit: the library. Clients of the proving, task, storage-proof and account services,
 * the PIE toolkit (validate, pack, inspect, program hashes and facts), the polling helpers, the
 * typed errors, and the built-in emulator. Nothing here imports @actions/*.
 */

export * from './core/errors.ts'
export { redact, redactUrl, SecretRedactor, REDACTED } from './core/redact.ts'
export { type Clock, type Logger, silentLogger, systemClock } from './core/runtime.ts'
export {
  HttpClient,
  type ConnectionOptions,
  connectionOf,
  type HttpClientConfig,
  type HttpTimeouts,
  type RetryPolicy,
  DEFAULT_RETRY,
  DEFAULT_TIMEOUTS,
  defaultDispatcher,
} from './core/http.ts'
export { DEFAULT_POLL_SCHEDULE, nextPollDelay, pollUntil, type PollSchedule } from './core/poll.ts'
export { VERSION } from './core/version.ts'
export { checkEnum, checkInteger, checkOpenEnum } from './core/checks.ts'

export * from './schemas/proving.ts'
export {
  ProvingClient,
  deriveDedupId,
  type ClientOptions,
  type CreateBucketOptions,
  type ListQueriesOptions,
  type QueryProgress,
  type QueryResult,
  type ReadPaths,
  isNoRoute,
  type SubmitPieOptions,
  type SubmitProofOptions,
  type SubmitQueryOptions,
  type WaitForQueryOptions,
} from './clients/proving.ts'

export * from './pie/index.ts'
export { startEmulator, type EmulatorOptions, type RunningEmulator } from './emulator/index.ts'

// On-chain fact checks (Ethereum fact registry, Starknet Integrity); viem loads only when called.
export * from './chain/index.ts'

// The data-processor task service.
export * from './schemas/tasks.ts'
export {
  TaskClient,
  type ListTasksOptions,
  type TaskClientOptions,
  type TaskProgress,
  type WaitForTaskOptions,
} from './clients/tasks.ts'

// The storage-proof service (batch queries) and the account service (wallet sign-in, API keys).
export * from './schemas/storage-proof.ts'
export {
  StorageProofClient,
  checkBatchQueryBody,
  type BatchQueryProgress,
  type BatchQueryResult,
  type StorageProofClientOptions,
  type WaitForBatchQueryOptions,
} from './clients/storage-proof.ts'
export * from './schemas/account.ts'
export {
  AccountClient,
  DEFAULT_KEY_COLOR,
  localSigner,
  normalizePrivateKey,
  type AccountClientOptions,
  type ApiKeyProvider,
  type CreateApiKeyOptions,
  type ListApiKeysOptions,
  type SessionInfo,
  type TypedDataSigner,
} from './clients/account.ts'
