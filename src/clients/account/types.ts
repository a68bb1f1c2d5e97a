/** The account client's options and what its methods take and give. */
import type { ConnectionOptions } from '../../core/http.ts'
import type { SecretRedactor } from '../../core/redact.ts'
import type { ChallengeResponse } from '../../schemas/account.ts'
import type { SignInExpectation } from '../sign-in-check.ts'
import type { TypedDataSigner } from './signer.ts'

/** Returns the API key to use for the next request; asked before each one. */
export type ApiKeyProvider = (options?: { signal?: AbortSignal | undefined }) => Promise<string>

export type AccountClientOptions = ConnectionOptions & {
  /** The wallet's private key (0x + 64 hex digits). Kept in memory only; never logged. */
  privateKey?: string | undefined
  /** Instead of a private key: a signer that holds it (a viem account, a KMS adapter, ...). */
  signer?: TypedDataSigner | undefined
  /** Shared with the caller so its own logs mask the same secrets; a new one when omitted. */
  redactor?: SecretRedactor | undefined
  /** Refresh this long before `expiresAt` at most (default 60 s; never more than a quarter of the lifetime). */
  refreshMarginMs?: number | undefined
  /**
   * The sign-in domain the client accepts (name and chainId); the service's documented values
   * by default. Any challenge that is not a plain sign-in for this wallet is refused unsigned.
   */
  signIn?: SignInExpectation | undefined
}

/** A challenge as fetched, and whether the client would sign it (for `auth login --show-challenge`). */
export type ChallengePreview = { wallet: string; challenge: ChallengeResponse; problems: string[] }

/** A signed-in session, without its tokens. */
export type SessionInfo = {
  wallet: string
  projectId: string | undefined
  /** When the access token expires, ms since the epoch (by the service's `expiresAt`). */
  expiresAt: number
}

export type CreateApiKeyOptions = {
  name: string
  /** Shown in the console beside the key's name. */
  color?: string | undefined
  /** Defaults to the session's selected project. */
  projectId?: string | undefined
  signal?: AbortSignal | undefined
}

export type ListApiKeysOptions = {
  projectId?: string | undefined
  limit?: number | undefined
  offset?: number | undefined
  signal?: AbortSignal | undefined
}
