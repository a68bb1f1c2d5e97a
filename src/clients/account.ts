import { checkInteger } from '../core/checks.ts'
import { InvalidInputError, InvalidResponseError, ProvingKitError, ServiceError } from '../core/errors.ts'
import { connectionOf, HttpClient } from '../core/http.ts'
import { SecretRedactor } from '../core/redact.ts'
import type {
  ApiKeyListResponse,
  ApiKeyRecord,
  ChallengeResponse,
  RefreshResponse,
  SessionResponse,
} from '../schemas/account.ts'
import { expiresAtMs, projectIdOf } from '../schemas/account-constants.ts'
import { abortable, checkWallet, localSigner, normalizePrivateKey, type TypedDataSigner } from './account/signer.ts'
import type {
  AccountClientOptions,
  ApiKeyProvider,
  ChallengePreview,
  CreateApiKeyOptions,
  ListApiKeysOptions,
  SessionInfo,
} from './account/types.ts'
import { assertSignInOnly, MAX_CHALLENGE_BYTES, type SignInExpectation, signInProblems } from './sign-in-check.ts'

export { localSigner, normalizePrivateKey, type TypedDataSigner } from './account/signer.ts'
export type {
  AccountClientOptions,
  ApiKeyProvider,
  ChallengePreview,
  CreateApiKeyOptions,
  ListApiKeysOptions,
  SessionInfo,
} from './account/types.ts'

/** The schemas load with the first request, not with the client: zod stays off the import path (bench figure 8). */
const accountSchemas = () => import('../schemas/account.ts')

/**
 * The account service's programmatic wallet flow:
 * challenge -> EIP-712 signature -> bearer session -> API keys, and the refresh of the session
 * before it expires.
 *
 * Secrets: the private key, both tokens, the challenge token and every API key seen are added
 * to the redactor the moment they are known, so no message or log line built from the HTTP
 * layer can carry them.
 *
 * viem costs ~400 ms to import in full; only `viem/accounts` is loaded, and only when a
 * signature is actually made.
 */

type Session = {
  wallet: string
  accessToken: string
  /** Null once it has been sent to the refresh endpoint: a refresh token is spent on first use. */
  refreshToken: string | null
  expiresAt: number
  refreshAt: number
  projectId: string | undefined
}

/** The color a new API key is shown with when none is given. */
export const DEFAULT_KEY_COLOR = '#3b82f6'
const DEFAULT_REFRESH_MARGIN_MS = 60_000
/** When `expiresAt` cannot be read, or lies in the past by our clock (skew): assume this. */
const ASSUMED_LIFETIME_MS = 60_000

/**
 * A client of the account service's wallet sign-in: a challenge, signed as EIP-712 typed data,
 * is exchanged for a bearer session, which is refreshed before it expires; with it the client
 * lists and mints API keys. Only a plain sign-in for this wallet is ever signed.
 *
 * The private key, both tokens, the challenge token and every API key seen are kept out of every
 * message and log line. viem's `viem/accounts` loads only when a signature is made.
 *
 * @example
 * ```ts
 * import { AccountClient, ProvingClient } from 'proving-kit'
 *
 * const account = new AccountClient({
 *   baseUrl: process.env.ACCOUNT_BASE_URL!,
 *   privateKey: process.env.WALLET_PRIVATE_KEY,
 * })
 * const client = new ProvingClient({ baseUrl: process.env.PROVING_BASE_URL!, apiKey: await account.getApiKey() })
 * ```
 */
export class AccountClient {
  /** The HTTP client every request of this client goes through. */
  readonly http: HttpClient
  readonly #privateKey: `0x${string}` | undefined
  #signer: TypedDataSigner | undefined
  readonly #refreshMarginMs: number
  readonly #signInExpectation: SignInExpectation
  #session: Session | undefined
  /** The sign-in or refresh in flight, shared by every caller that needs a token meanwhile. */
  #pending: Promise<Session> | undefined
  readonly #apiKeys = new Map<string, string>()
  readonly #stats = { signIns: 0, refreshes: 0 }

  constructor(options: AccountClientOptions) {
    const redactor = options.redactor ?? new SecretRedactor()
    if (options.privateKey !== undefined) {
      this.#privateKey = normalizePrivateKey(options.privateKey)
      redactor.add(this.#privateKey).add(this.#privateKey.slice(2))
    }
    this.#signer = options.signer
    this.#refreshMarginMs = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS
    this.#signInExpectation = { ...options.signIn }
    this.http = new HttpClient({
      ...connectionOf(options),
      serviceName: 'account service',
      redactor,
    })
  }

  /** How many sign-ins and refreshes this client has made. */
  get stats(): Readonly<{ signIns: number; refreshes: number }> {
    return { ...this.#stats }
  }

  /** The current session without its tokens; undefined before the first sign-in. */
  get session(): SessionInfo | undefined {
    const session = this.#session
    return session && { wallet: session.wallet, projectId: session.projectId, expiresAt: session.expiresAt }
  }

  /**
   * The wallet address of the signer (derived from the private key when needed).
   *
   * @returns The 0x address.
   * @throws {InvalidInputError} When the client has neither a private key nor a signer.
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * console.log(await account.getWallet())
   * ```
   */
  async getWallet(): Promise<string> {
    return (await this.#getSigner()).address
  }

  // --- The calls of contract.md, one each ------------------------------------------------------

  /**
   * Fetches a sign-in challenge for a wallet (`GET /auth/web3/challenge`): the typed data to sign
   * and its one-time token. {@link AccountClient.signIn} does this, checks and signs it.
   *
   * @param wallet The wallet's 0x address (20 bytes).
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ eip712, challengeToken, ... }`.
   * @throws {InvalidInputError} When `wallet` is not an address.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const { eip712 } = await account.getChallenge(await account.getWallet())
   * console.log(eip712.primaryType)
   * ```
   */
  async getChallenge(wallet: string, options: { signal?: AbortSignal | undefined } = {}): Promise<ChallengeResponse> {
    const address = checkWallet(wallet)
    const { data } = await this.http.request({
      method: 'GET',
      path: '/auth/web3/challenge',
      query: { wallet: address },
      schema: (await accountSchemas()).challengeResponse,
      operation: 'get a sign-in challenge',
      signal: options.signal,
      // A sign-in challenge is a few hundred bytes; a huge one is refused before it is parsed.
      maxBodyBytes: MAX_CHALLENGE_BYTES,
    })
    this.http.redactor.add(data.challengeToken)
    return data
  }

  /**
   * Exchanges a signed challenge for a bearer session (`POST /auth/web3/session`). {@link
   * AccountClient.signIn} does this.
   *
   * @param request The wallet, the challenge's token and the signature of its typed data.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ accessToken, refreshToken, expiresAt, selectedProject, ... }`.
   * @throws {InvalidInputError} When `request.wallet` is not an address.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient, localSigner } from 'proving-kit'
   *
   * const account = new AccountClient({ baseUrl: process.env.ACCOUNT_BASE_URL! })
   * const signer = await localSigner(process.env.WALLET_PRIVATE_KEY!)
   * const challenge = await account.getChallenge(signer.address)
   * const signature = await signer.signTypedData(challenge.eip712)
   * const session = await account.createSession({
   *   wallet: signer.address,
   *   challengeToken: challenge.challengeToken,
   *   signature,
   * })
   * ```
   */
  async createSession(
    request: { wallet: string; challengeToken: string; signature: string },
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<SessionResponse> {
    const { data } = await this.http.request({
      method: 'POST',
      path: '/auth/web3/session',
      json: {
        wallet: checkWallet(request.wallet),
        challengeToken: request.challengeToken,
        signature: request.signature,
        channel: 'bearer',
      },
      schema: (await accountSchemas()).sessionResponse,
      operation: 'exchange the signature for a session',
      signal: options.signal,
    })
    this.http.redactor.add(data.accessToken).add(data.refreshToken)
    return data
  }

  /**
   * Exchanges a refresh token for a new token pair (`POST /auth/refresh-token`). The token given is
   * spent by this call whatever its outcome: the service refuses it from then on (401).
   * {@link AccountClient.getAccessToken} refreshes by itself.
   *
   * @param refreshToken The refresh token of the current session.
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ accessToken, refreshToken, expiresAt }`.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const pair = await account.refreshSession(process.env.REFRESH_TOKEN!)
   * ```
   */
  async refreshSession(
    refreshToken: string,
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<RefreshResponse> {
    this.http.redactor.add(refreshToken)
    const { data } = await this.http.request({
      method: 'POST',
      path: '/auth/refresh-token',
      headers: { authorization: `Bearer ${refreshToken}` },
      json: {},
      schema: (await accountSchemas()).refreshResponse,
      operation: 'refresh the session',
      signal: options.signal,
    })
    this.http.redactor.add(data.accessToken).add(data.refreshToken)
    return data
  }

  /**
   * Lists one page of the API keys of a project (`GET /api-keys`), signing in first when needed.
   *
   * @param options The project (the session's by default) and the page.
   * @returns `{ data }`: the keys' records, each with its `apiKey`.
   * @throws {InvalidInputError} When `limit` or `offset` is out of range, or the client cannot sign in (no wallet).
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const { data } = await account.listApiKeys({ limit: 10 })
   * for (const key of data) console.log(key.id)
   * ```
   */
  async listApiKeys(options: ListApiKeysOptions = {}): Promise<ApiKeyListResponse> {
    if (options.limit !== undefined) checkInteger(options.limit, 'limit', 1, 100)
    if (options.offset !== undefined) checkInteger(options.offset, 'offset', 0, Number.MAX_SAFE_INTEGER)
    const data = await this.#withAccessToken(options.signal, async (token) => {
      const { data } = await this.http.request({
        method: 'GET',
        path: '/api-keys',
        headers: { authorization: `Bearer ${token}` },
        query: {
          projectId: options.projectId ?? this.#session?.projectId,
          limit: options.limit,
          offset: options.offset,
        },
        schema: (await accountSchemas()).apiKeyListResponse,
        operation: 'list API keys',
        signal: options.signal,
      })
      return data
    })
    for (const record of data.data) this.http.redactor.add(record.apiKey)
    return data
  }

  /**
   * Mints another API key in a project (`POST /api-keys`), signing in first when needed.
   *
   * @param options The key's name and color, and the project (the session's by default).
   * @returns The new key's record, with its `apiKey`.
   * @throws {InvalidInputError} When the name is empty or longer than 100 characters, or no project is known.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const { apiKey } = await account.createApiKey({ name: 'ci' })
   * ```
   */
  async createApiKey(options: CreateApiKeyOptions): Promise<ApiKeyRecord> {
    const name = options.name?.trim()
    if (!name) throw new InvalidInputError('A new API key needs a name.', { input: 'name' })
    if (name.length > 100)
      throw new InvalidInputError('The API key name is longer than 100 characters.', { input: 'name' })
    const color = options.color?.trim() || DEFAULT_KEY_COLOR
    const record = await this.#withAccessToken(options.signal, async (token) => {
      const projectId = options.projectId ?? this.#session?.projectId
      if (!projectId) {
        throw new InvalidInputError('The session names no project; give projectId to create a key.', {
          input: 'projectId',
        })
      }
      const { data } = await this.http.request({
        method: 'POST',
        path: '/api-keys',
        headers: { authorization: `Bearer ${token}` },
        json: { projectId, type: { name, color } },
        schema: (await accountSchemas()).apiKeyRecord,
        operation: 'create an API key',
        signal: options.signal,
      })
      return data
    })
    this.http.redactor.add(record.apiKey)
    return record
  }

  /**
   * Fetches a challenge for this wallet and says whether it would be signed, without signing or sending anything else.
   *
   * @param options.signal Cancels the request (the promise rejects with AbortedError).
   * @returns `{ wallet, challenge, problems }`: `problems` lists why it would be refused (empty: it would be signed).
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const { problems } = await account.previewChallenge()
   * if (problems.length) console.log('would not sign:', problems)
   * ```
   */
  async previewChallenge(options: { signal?: AbortSignal | undefined } = {}): Promise<ChallengePreview> {
    const wallet = (await this.#getSigner()).address
    const challenge = await this.getChallenge(wallet, options)
    return { wallet, challenge, problems: signInProblems(challenge, wallet, this.#signInExpectation) }
  }

  // --- The flow ------------------------------------------------------------------------------

  /**
   * Signs in: fetches a challenge for the wallet, checks that it is a plain sign-in for this wallet,
   * signs exactly its typed data, and exchanges the signature for a session, which replaces the
   * current one. A sign-in or refresh already in flight is joined instead.
   *
   * @param options.signal Stops waiting for the sign-in (the promise rejects with AbortedError).
   * @returns The session without its tokens: the wallet, the project and when it expires.
   * @throws {UnsafeChallengeError} When the challenge is anything but a plain sign-in for this wallet
   * (nothing is signed).
   * @throws {InvalidInputError} When the client has neither a private key nor a signer.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const { wallet, projectId, expiresAt } = await account.signIn()
   * ```
   */
  async signIn(options: { signal?: AbortSignal | undefined } = {}): Promise<SessionInfo> {
    const session = await this.#shared(() => this.#signIn(), options.signal)
    return { wallet: session.wallet, projectId: session.projectId, expiresAt: session.expiresAt }
  }

  /**
   * A valid access token: signs in on first use, refreshes when `expiresAt` is near. Concurrent
   * callers share one refresh (a refresh token can be spent once).
   *
   * @param options.signal Stops waiting for the token (the promise rejects with AbortedError).
   * @returns The bearer token.
   * @throws {UnsafeChallengeError} When a sign-in's challenge is refused.
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const token = await account.getAccessToken()
   * ```
   */
  async getAccessToken(options: { signal?: AbortSignal | undefined } = {}): Promise<string> {
    const session = this.#session
    if (session && !this.#pending && this.http.clock.now() < session.refreshAt) return session.accessToken
    const fresh = await this.#shared(() => this.#renew(), options.signal)
    return fresh.accessToken
  }

  /**
   * The API key of a project (the first of its key list; a first-time wallet has exactly one),
   * fetched once and remembered.
   *
   * @param options.projectId The project. Default: the session's.
   * @param options.signal Cancels the requests (the promise rejects with AbortedError).
   * @returns The API key.
   * @throws {ProvingKitError} When the project has no API key (`nextStep`: create one).
   * @throws {NetworkError} When no answer came (after the retries a read is allowed).
   * @throws {ServiceError} When the service refuses the request (`status` and `code` say why).
   * @example
   * ```ts
   * import { AccountClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const apiKey = await account.getApiKey()
   * ```
   */
  async getApiKey(options: { projectId?: string | undefined; signal?: AbortSignal | undefined } = {}): Promise<string> {
    await this.getAccessToken(options)
    const projectId = options.projectId ?? this.#session?.projectId ?? ''
    const known = this.#apiKeys.get(projectId)
    if (known) return known
    const page = await this.listApiKeys({
      projectId: projectId || undefined,
      limit: 10,
      offset: 0,
      signal: options.signal,
    })
    const key = page.data[0]?.apiKey
    if (!key) {
      throw new ProvingKitError(
        `The account service lists no API key for project ${projectId || '(the default)'}; create one (AccountClient.createApiKey).`,
        { nextStep: { kind: 'create-api-key' } },
      )
    }
    this.#apiKeys.set(projectId, key)
    return key
  }

  /**
   * An `ApiKeyProvider` for the other clients: asked before each of their requests, it keeps
   * the session alive (refreshing it before it expires), so a process that waits for hours still
   * has a valid key at the end.
   *
   * @param options.projectId The project whose key it gives. Default: the session's.
   * @returns The provider.
   * @example
   * ```ts
   * import { AccountClient, StorageProofClient } from 'proving-kit'
   *
   * const account = new AccountClient({
   *   baseUrl: process.env.ACCOUNT_BASE_URL!,
   *   privateKey: process.env.WALLET_PRIVATE_KEY,
   * })
   * const storage = new StorageProofClient({
   *   baseUrl: process.env.STORAGE_PROOF_BASE_URL!,
   *   apiKey: account.apiKeyProvider(),
   * })
   * ```
   */
  apiKeyProvider(options: { projectId?: string | undefined } = {}): ApiKeyProvider {
    return async (call = {}) => {
      await this.getAccessToken({ signal: call.signal })
      return this.getApiKey({ projectId: options.projectId, signal: call.signal })
    }
  }

  // --- Internals -----------------------------------------------------------------------------

  /**
   * Runs `operation` as the one sign-in or refresh in flight. It runs without any caller's
   * signal, so one caller giving up does not fail the others; each caller stops waiting on
   * its own signal.
   */
  async #shared(operation: () => Promise<Session>, signal: AbortSignal | undefined): Promise<Session> {
    this.#pending ??= operation().finally(() => {
      this.#pending = undefined
    })
    return abortable(this.#pending, signal)
  }

  /** Refresh when there is a refresh token to spend, else sign in. */
  async #renew(): Promise<Session> {
    const current = this.#session
    if (current && this.http.clock.now() < current.refreshAt) return current
    const refreshToken = current?.refreshToken
    if (!current || !refreshToken) return this.#signIn()
    // Spent from here on, whatever happens: a second use would be refused, and a service that
    // detects reuse may revoke the whole session.
    current.refreshToken = null
    try {
      const pair = await this.refreshSession(refreshToken)
      this.#stats.refreshes++
      this.#session = this.#toSession(
        current.wallet,
        pair.accessToken,
        pair.refreshToken,
        pair.expiresAt,
        current.projectId,
      )
      this.http.logger.debug(`Refreshed the account session of ${current.wallet}.`)
      return this.#session
    } catch (error) {
      // The old token may or may not have been spent on the service; never send it again.
      // The client holds the signer (a session only comes from signing in), so sign in again.
      this.http.logger.warn(
        `Could not refresh the account session (${error instanceof ProvingKitError ? error.shortMessage : String(error)}); signing in again.`,
      )
      return this.#signIn()
    }
  }

  async #signIn(): Promise<Session> {
    const signer = await this.#getSigner()
    const wallet = signer.address
    const challenge = await this.getChallenge(wallet)
    assertSignInOnly(challenge, wallet, this.#signInExpectation)
    let signature: string
    try {
      signature = await signer.signTypedData(challenge.eip712)
    } catch (error) {
      throw new InvalidResponseError('The typed data of the sign-in challenge cannot be signed as EIP-712.', {
        cause: error,
        details: this.http.redactor.redact(
          error instanceof Error ? ((error as { shortMessage?: string }).shortMessage ?? error.message) : String(error),
        ),
      })
    }
    const response = await this.createSession({ wallet, challengeToken: challenge.challengeToken, signature })
    this.#stats.signIns++
    const projectId = projectIdOf(response.selectedProject)
    this.#session = this.#toSession(wallet, response.accessToken, response.refreshToken, response.expiresAt, projectId)
    this.http.logger.debug(
      `Signed in to the account service as ${wallet}${projectId ? ` (project ${projectId})` : ''}.`,
    )
    return this.#session
  }

  #toSession(
    wallet: string,
    accessToken: string,
    refreshToken: string,
    expiresAt: number | string,
    projectId: string | undefined,
  ): Session {
    const now = this.http.clock.now()
    const expires = expiresAtMs(expiresAt)
    let lifetime = expires === undefined ? ASSUMED_LIFETIME_MS : expires - now
    if (lifetime <= 0) {
      this.http.logger.warn(
        "The access token expires before it was received by this machine's clock; is the clock right? Refreshing early.",
      )
      lifetime = ASSUMED_LIFETIME_MS
    }
    const margin = Math.min(this.#refreshMarginMs, lifetime / 4)
    return {
      wallet,
      accessToken,
      refreshToken,
      expiresAt: expires ?? now + lifetime,
      refreshAt: now + lifetime - margin,
      projectId,
    }
  }

  /**
   * Calls `request` with a valid access token. A 401 means the token died early (revoked, or
   * the clocks disagree): renew once and try again.
   */
  async #withAccessToken<T>(signal: AbortSignal | undefined, request: (token: string) => Promise<T>): Promise<T> {
    const token = await this.getAccessToken({ signal })
    try {
      return await request(token)
    } catch (error) {
      if (!(error instanceof ServiceError) || error.status !== 401) throw error
      const session = this.#session
      if (session && session.accessToken === token) session.refreshAt = Number.NEGATIVE_INFINITY
      return request(await this.getAccessToken({ signal }))
    }
  }

  async #getSigner(): Promise<TypedDataSigner> {
    if (this.#signer) return this.#signer
    if (!this.#privateKey) {
      throw new InvalidInputError('Signing in needs the wallet: pass privateKey (or signer) to the AccountClient.', {
        input: 'privateKey',
      })
    }
    this.#signer = await localSigner(this.#privateKey)
    return this.#signer
  }
}
