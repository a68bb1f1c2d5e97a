/** The account client's options and what its methods take and give. */
import type { ConnectionOptions } from '../../core/http.ts'
import type { SecretRedactor } from '../../core/redact.ts'
import type { ChallengeResponse } from '../../schemas/account.ts'
import type { SignInExpectation } from '../sign-in-check.ts'
import type { TypedDataSigner } from './signer.ts'

/** Returns the API key to use for the next request; asked before each one. */
export type ApiKeyProvider = (options?: { signal?: AbortSignal | undefined }) => Promise<string>

/** How {@link AccountClient} reaches the account service, and the wallet it signs in with. */
export type AccountClientOptions = ConnectionOptions & {
  /** The wallet's private key (0x + 64 hex digits). Kept in memory only; never logged. */
  privateKey?: string | undefined
  /** Instead of a private key: a signer that holds it (a viem account, a KMS adapter, ...). */
  signer?: TypedDataSigner | undefined
  /** Shared with the caller so its own logs mask the same secrets; a new one when omitted. */
  redactor?: SecretRedactor | undefined
  /**
   * Refresh the session this long before `expiresAt` at most (never more than a quarter of its lifetime).
   * @default 60_000
   */
  refreshMarginMs?: number | undefined
  /**
   * The sign-in domain the client accepts (name and chainId); the service's documented values
   * by default. Any challenge that is not a plain sign-in for this wallet is refused unsigned.
   */
  signIn?: SignInExpectation | undefined
}

/** A sign-in challenge as fetched, and whether the client would sign it (`problems` empty). */
export type ChallengePreview = { wallet: string; challenge: ChallengeResponse; problems: string[] }

/** A signed-in session, without its tokens. */
export type SessionInfo = {
  wallet: string
  projectId: string | undefined
  /** When the access token expires, ms since the epoch (by the service's `expiresAt`). */
  expiresAt: number
}

/** The key {@link AccountClient.createApiKey} mints. */
export type CreateApiKeyOptions = {
  /** The key's name (at most 100 characters). */
  name: string
  /**
   * Shown in the console beside the key's name.
   * @default DEFAULT_KEY_COLOR
   */
  color?: string | undefined
  /** The project the key belongs to. Default: the session's selected project. */
  projectId?: string | undefined
  /** Cancels the requests (the promise rejects with AbortedError). */
  signal?: AbortSignal | undefined
}

/** Which page of API keys {@link AccountClient.listApiKeys} reads. */
export type ListApiKeysOptions = {
  /** The project whose keys to list. Default: the session's. */
  projectId?: string | undefined
  /** Keys per page, 1 to 100 (the service's default when omitted). */
  limit?: number | undefined
  /**
   * How many keys to skip.
   * @default 0
   */
  offset?: number | undefined
  /** Cancels the requests (the promise rejects with AbortedError). */
  signal?: AbortSignal | undefined
}
