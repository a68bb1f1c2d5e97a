import { checkInteger } from '../core/checks.ts'
import {
  InvalidInputError,
  InvalidResponseError,
  ProvingKitError,
  ServiceError,
} from '../core/errors.ts'
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
export type { AccountClientOptions, ApiKeyProvider, ChallengePreview, CreateApiKeyOptions, ListApiKeysOptions, SessionInfo } from './account/types.ts'

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

export const DEFAULT_KEY_COLOR = '#3b82f6'
const DEFAULT_REFRESH_MARGIN_MS = 60_000
/** When `expiresAt` cannot be read, or lies in the past by our clock (skew): assume this. */
const ASSUMED_LIFETIME_MS = 60_000

export class AccountClient {
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

  /** How many sign-ins and refreshes this client has made (for logs and tests). */
  get stats(): Readonly<{ signIns: number; refreshes: number }> {
    return { ...this.#stats }
  }

  /** The current session without its tokens; undefined before the first sign-in. */
  get session(): SessionInfo | undefined {
    const session = this.#session
    return session && { wallet: session.wallet, projectId: session.projectId, expiresAt: session.expiresAt }
  }

  /** The wallet address of the signer (derives it from the private key when needed). */
  async getWallet(): Promise<string> {
    return (await this.#getSigner()).address
  }

  // --- The calls of contract.md, one each ------------------------------------------------------

  /** GET /auth/web3/challenge?wallet=: typed data to sign, and its one-time token. */
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

  /** POST /auth/web3/session with `channel: "bearer"`: the signature for a token pair. */
  async createSession(
    request: { wallet: string; challengeToken: string; signature: string },
    options: { signal?: AbortSignal | undefined } = {},
  ): Promise<SessionResponse> {
    const { data } = await this.http.request({
      method: 'POST',
      path: '/auth/web3/session',
      json: { wallet: checkWallet(request.wallet), challengeToken: request.challengeToken, signature: request.signature, channel: 'bearer' },
      schema: (await accountSchemas()).sessionResponse,
      operation: 'exchange the signature for a session',
      signal: options.signal,
    })
    this.http.redactor.add(data.accessToken).add(data.refreshToken)
    return data
  }

  /**
   * POST /auth/refresh-token with the refresh token as bearer: a new pair. The token given is
   * spent by this call whatever its outcome; the service refuses it from then on (401).
   */
  async refreshSession(refreshToken: string, options: { signal?: AbortSignal | undefined } = {}): Promise<RefreshResponse> {
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

  /** GET /api-keys: one page of the keys of a project (the session's project by default). */
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

  /** POST /api-keys: mints another key in a project (the session's project by default). */
  async createApiKey(options: CreateApiKeyOptions): Promise<ApiKeyRecord> {
    const name = options.name?.trim()
    if (!name) throw new InvalidInputError('A new API key needs a name.', { input: 'name' })
    if (name.length > 100) throw new InvalidInputError('The API key name is longer than 100 characters.', { input: 'name' })
    const color = options.color?.trim() || DEFAULT_KEY_COLOR
    const record = await this.#withAccessToken(options.signal, async (token) => {
      const projectId = options.projectId ?? this.#session?.projectId
      if (!projectId) {
        throw new InvalidInputError('The session names no project; give projectId to create a key.', { input: 'projectId' })
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
   * Fetches a challenge for this wallet and says whether it would be signed, without signing
   * or sending anything else.
   */
  async previewChallenge(options: { signal?: AbortSignal | undefined } = {}): Promise<ChallengePreview> {
    const wallet = (await this.#getSigner()).address
    const challenge = await this.getChallenge(wallet, options)
    return { wallet, challenge, problems: signInProblems(challenge, wallet, this.#signInExpectation) }
  }

  // --- The flow ------------------------------------------------------------------------------

  /**
   * Signs in: fetches a challenge for the wallet, signs exactly its `eip712` object, and
   * exchanges the signature for a bearer session, which replaces the current one. A sign-in or
   * refresh already in flight is joined instead of starting another.
   */
  async signIn(options: { signal?: AbortSignal | undefined } = {}): Promise<SessionInfo> {
    const session = await this.#shared(() => this.#signIn(), options.signal)
    return { wallet: session.wallet, projectId: session.projectId, expiresAt: session.expiresAt }
  }

  /**
   * A valid access token: signs in on first use, refreshes when `expiresAt` is near. Concurrent
   * callers share one refresh (the refresh token can only be spent once).
   */
  async getAccessToken(options: { signal?: AbortSignal | undefined } = {}): Promise<string> {
    const session = this.#session
    if (session && !this.#pending && this.http.clock.now() < session.refreshAt) return session.accessToken
    const fresh = await this.#shared(() => this.#renew(), options.signal)
    return fresh.accessToken
  }

  /**
   * The API key of the session's project (`data[0].apiKey` of the key list; a first-time
   * wallet has exactly one), fetched once and remembered.
   */
  async getApiKey(options: { projectId?: string | undefined; signal?: AbortSignal | undefined } = {}): Promise<string> {
    await this.getAccessToken(options)
    const projectId = options.projectId ?? this.#session?.projectId ?? ''
    const known = this.#apiKeys.get(projectId)
    if (known) return known
    const page = await this.listApiKeys({ projectId: projectId || undefined, limit: 10, offset: 0, signal: options.signal })
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
   * An `ApiKeyProvider` for the other clients. Every call also keeps the session alive
   * (refreshing it before it expires), so a process that waits for hours can still mint keys
   * or list projects at the end of its wait without signing in again.
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
      this.#session = this.#toSession(current.wallet, pair.accessToken, pair.refreshToken, pair.expiresAt, current.projectId)
      this.http.logger.debug(`Refreshed the account session of ${current.wallet}.`)
      return this.#session
    } catch (error) {
      // The old token may or may not have been spent on the service; never send it again.
      // The client holds the signer (a session only comes from signing in), so sign in anew.
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
        details: this.http.redactor.redact(error instanceof Error ? (error as { shortMessage?: string }).shortMessage ?? error.message : String(error)),
      })
    }
    const response = await this.createSession({ wallet, challengeToken: challenge.challengeToken, signature })
    this.#stats.signIns++
    const projectId = projectIdOf(response.selectedProject)
    this.#session = this.#toSession(wallet, response.accessToken, response.refreshToken, response.expiresAt, projectId)
    this.http.logger.debug(`Signed in to the account service as ${wallet}${projectId ? ` (project ${projectId})` : ''}.`)
    return this.#session
  }

  #toSession(wallet: string, accessToken: string, refreshToken: string, expiresAt: number | string, projectId: string | undefined): Session {
    const now = this.http.clock.now()
    const expires = expiresAtMs(expiresAt)
    let lifetime = expires === undefined ? ASSUMED_LIFETIME_MS : expires - now
    if (lifetime <= 0) {
      this.http.logger.warn('The access token expires before it was received by this machine\'s clock; is the clock right? Refreshing early.')
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
