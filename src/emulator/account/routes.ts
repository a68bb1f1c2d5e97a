import { createHash, randomBytes } from 'node:crypto'
import { ownerOf } from '../auth.ts'
import { z } from 'zod'
import { createApiKeyBody } from '../../schemas/account.ts'
import type { EmulatorContext } from '../context.ts'
import { millis, parseControl } from '../control-body.ts'
import { controlRoute, HttpError, type Reply, type Route, type RouteContext } from '../router.ts'

/**
 * The account service: the programmatic wallet flow and API keys.
 *
 * - A challenge is one-time and expires (`challengeTtlMs`); its EIP-712 typed data names the
 *   wallet of the challenge URL, and the session endpoint verifies the signature against that
 *   wallet with viem (loaded on the first verification only).
 * - A first-time wallet gets a "Personal" project with one key.
 * - Refresh tokens rotate: each is good once; presenting a spent one is refused (401) and, as
 *   OAuth's rotation advice has it, ends every session descended from the same sign-in.
 * - Keys minted here are added to the emulator's accepted keys, so the proving, task and
 *   storage-proof services take them even when the emulator runs with an allow-list.
 *
 * Tokens are kept as SHA-256 digests only. Everything lives in memory, tied to the current
 * `store.state` object: `POST /_emulator/reset` forgets it, and nothing secret is ever written
 * to the state file.
 */

export type AccountConfig = {
  accessTokenTtlMs: number
  refreshTokenTtlMs: number
  challengeTtlMs: number
}

export const DEFAULT_ACCOUNT_CONFIG: AccountConfig = {
  accessTokenTtlMs: 15 * 60_000,
  refreshTokenTtlMs: 30 * 24 * 3_600_000,
  challengeTtlMs: 5 * 60_000,
}

/** The EIP-712 domain of the emulated service's sign-in message. */
export const SIGN_IN_DOMAIN = { name: 'Proving Account Service', version: '1', chainId: 1 } as const

export const SIGN_IN_TYPES = {
  EIP712Domain: [
    { name: 'name', type: 'string' },
    { name: 'version', type: 'string' },
    { name: 'chainId', type: 'uint256' },
  ],
  SignIn: [
    { name: 'wallet', type: 'address' },
    { name: 'nonce', type: 'string' },
    { name: 'issuedAt', type: 'string' },
    { name: 'expiresAt', type: 'string' },
    { name: 'statement', type: 'string' },
  ],
} as const

/** Keys minted here are `pk_emu_<32 characters>`; the prefix is all the console shows of one. */
const KEY_PREFIX = 'pk_emu'
/** What stands for the secret part of a key wherever one is shown (here, and the console's allow-listed keys). */
export const MASK = '\u2022'.repeat(8)

const STATEMENT =
  'Sign in to the proving service with this wallet. Signing costs nothing and authorizes no transaction.'

type Challenge = {
  wallet: string
  nonce: string
  issuedAt: string
  expiresAt: number
  expiresAtText: string
  used: boolean
}

type ApiKey = { apiKey: string; name: string; projectId: string; createdAt: string }

type Project = { id: string; name: string; wallet: string; keys: ApiKey[] }

type TokenGrant = { wallet: string; projectId: string; family: string; expiresAt: number }

type RefreshGrant = TokenGrant & { used: boolean }

type AccountState = {
  config: AccountConfig
  counters: { projects: number; sessions: number; refreshes: number }
  /** By challenge-token digest. */
  challenges: Map<string, Challenge>
  /** By lowercase wallet: the wallet's projects, the Personal one first. */
  wallets: Map<string, string[]>
  projects: Map<string, Project>
  /** By token digest. */
  accessTokens: Map<string, TokenGrant>
  refreshTokens: Map<string, RefreshGrant>
  /** Session families ended by a reused refresh token. */
  revokedFamilies: Set<string>
}

const states = new WeakMap<object, AccountState>()

function accountState(emulator: EmulatorContext): AccountState {
  const key = emulator.store.state
  let state = states.get(key)
  if (!state) {
    state = {
      config: { ...DEFAULT_ACCOUNT_CONFIG },
      counters: { projects: 0, sessions: 0, refreshes: 0 },
      challenges: new Map(),
      wallets: new Map(),
      projects: new Map(),
      accessTokens: new Map(),
      refreshTokens: new Map(),
      revokedFamilies: new Set(),
    }
    states.set(key, state)
  }
  return state
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const SIGNATURE = /^0x[0-9a-fA-F]{130}$/

const unauthorized = (error: string): Reply => ({ status: 401, body: { error } })
const badRequest = (error: string): Reply => ({ status: 400, body: { error } })

/**
 * The keys minted by the account service, for the console: the key itself masked down to its
 * public prefix, and its `keyId` (the digest the other services know a caller by). Oldest first.
 */
export function describeMintedKeys(
  emulator: EmulatorContext,
): { keyId: string; masked: string; name: string; projectId: string; createdAt: string }[] {
  return [...accountState(emulator).projects.values()].flatMap((project) =>
    project.keys.map((key) => ({
      keyId: ownerOf(key.apiKey).keyId,
      masked: `${KEY_PREFIX}_${MASK}`,
      name: key.name,
      projectId: key.projectId,
      createdAt: key.createdAt,
    })),
  )
}

export function accountRoutes(emulator: EmulatorContext): Route[] {
  const now = () => emulator.clock.now()
  const state = () => accountState(emulator)

  return [
    { method: 'GET', pattern: '/auth/web3/challenge', handler: issueChallenge },
    { method: 'POST', pattern: '/auth/web3/session', handler: createSession },
    { method: 'POST', pattern: '/auth/refresh-token', handler: refreshSession },
    { method: 'GET', pattern: '/api-keys', handler: listApiKeys },
    { method: 'POST', pattern: '/api-keys', handler: createApiKey },
    controlRoute('GET', '/_emulator/account/config', () => ({ status: 200, body: { config: state().config } })),
    controlRoute('PUT', '/_emulator/account/config', setConfig),
    controlRoute('GET', '/_emulator/account/state', describeState),
  ]

  /** GET /auth/web3/challenge?wallet=0x... */
  function issueChallenge(ctx: RouteContext): Reply {
    const wallet = ctx.query.get('wallet')?.trim() ?? ''
    if (!ADDRESS.test(wallet)) return badRequest('wallet is required: a 0x-prefixed 20-byte hex address.')
    const at = now()
    const challengeToken = newSecret('ch')
    const challenge: Challenge = {
      wallet: wallet.toLowerCase(),
      nonce: randomBytes(16).toString('hex'),
      issuedAt: new Date(at).toISOString(),
      expiresAt: at + state().config.challengeTtlMs,
      expiresAtText: new Date(at + state().config.challengeTtlMs).toISOString(),
      used: false,
    }
    pruneChallenges(at)
    state().challenges.set(digest(challengeToken), challenge)
    return {
      status: 200,
      body: {
        challengeToken,
        nonce: challenge.nonce,
        issuedAt: challenge.issuedAt,
        expiresAt: challenge.expiresAtText,
        statement: STATEMENT,
        eip712: typedDataOf(challenge),
      },
    }
  }

  /**
   * POST /auth/web3/session. Checks in order: body (400), challenge known, unused and not
   * expired (401), wallet is the challenge's (401), signature recovers to it (401). A known
   * challenge is spent by the first attempt, good or bad.
   */
  async function createSession(ctx: RouteContext): Promise<Reply> {
    const body = await objectBody(ctx)
    const { wallet, challengeToken, signature, channel } = body
    if (typeof wallet !== 'string' || !ADDRESS.test(wallet))
      return badRequest('wallet is required: a 0x-prefixed 20-byte hex address.')
    if (typeof challengeToken !== 'string' || !challengeToken) return badRequest('challengeToken is required.')
    if (typeof signature !== 'string' || !SIGNATURE.test(signature))
      return badRequest('signature is required: 65 bytes of 0x-prefixed hex.')
    if (channel !== undefined && channel !== 'bearer' && channel !== 'cookie')
      return badRequest('channel must be "bearer" or "cookie".')
    const at = now()
    const challenge = state().challenges.get(digest(challengeToken))
    if (!challenge) return unauthorized('INVALID_CHALLENGE')
    if (challenge.used) return unauthorized('CHALLENGE_ALREADY_USED')
    challenge.used = true
    if (at >= challenge.expiresAt) return unauthorized('CHALLENGE_EXPIRED')
    if (wallet.toLowerCase() !== challenge.wallet) return unauthorized('WALLET_MISMATCH')
    if (!(await signatureIsValid(challenge, signature))) return unauthorized('INVALID_SIGNATURE')

    const project = personalProjectOf(challenge.wallet)
    const family = newSecret('fam')
    state().counters.sessions++
    const pair = issuePair({ wallet: challenge.wallet, projectId: project.id, family }, at)
    const selectedProject = { id: project.id, name: project.name }
    if (channel === 'bearer') return { status: 200, body: { ...pair, selectedProject } }
    // The browser flow: the tokens travel as cookies only.
    return {
      status: 200,
      headers: cookieHeaders(pair),
      body: { expiresAt: pair.expiresAt, selectedProject },
    }
  }

  /** POST /auth/refresh-token: bearer (or cookie) refresh token -> new pair; the old one is spent. */
  function refreshSession(ctx: RouteContext): Reply {
    const token = bearerToken(ctx) ?? cookie(ctx, 'refresh_token')
    if (!token) return unauthorized('Missing refresh token')
    const at = now()
    const grant = state().refreshTokens.get(digest(token))
    if (!grant || state().revokedFamilies.has(grant.family)) return unauthorized('INVALID_REFRESH_TOKEN')
    if (grant.used) {
      // Two holders of one refresh token: one of them is not the owner. End the whole session.
      state().revokedFamilies.add(grant.family)
      return unauthorized('REFRESH_TOKEN_REUSED')
    }
    grant.used = true
    if (at >= grant.expiresAt) return unauthorized('REFRESH_TOKEN_EXPIRED')
    state().counters.refreshes++
    const pair = issuePair({ wallet: grant.wallet, projectId: grant.projectId, family: grant.family }, at)
    return bearerToken(ctx)
      ? { status: 200, body: pair }
      : { status: 200, headers: cookieHeaders(pair), body: { expiresAt: pair.expiresAt } }
  }

  /** GET /api-keys?projectId=&limit=&offset= (Bearer access token). */
  function listApiKeys(ctx: RouteContext): Reply {
    const grant = accessGrant(ctx)
    if (!grant) return unauthorized('UNAUTHORIZED')
    const projectId = ctx.query.get('projectId') || grant.projectId
    const limit = integerParameter(ctx, 'limit', 10, 1, 100)
    const offset = integerParameter(ctx, 'offset', 0, 0, Number.MAX_SAFE_INTEGER)
    const project = ownedProject(grant, projectId)
    return {
      status: 200,
      body: { data: project.keys.slice(offset, offset + limit), total: project.keys.length },
    }
  }

  /** POST /api-keys { projectId, type: { name, color } } (Bearer access token). */
  async function createApiKey(ctx: RouteContext): Promise<Reply> {
    const grant = accessGrant(ctx)
    if (!grant) return unauthorized('UNAUTHORIZED')
    const parsed = createApiKeyBody.safeParse(await ctx.json())
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || '(body)'}: ${issue.message}`)
      return badRequest(`Invalid API key request: ${problems.join('; ')}`)
    }
    const project = ownedProject(grant, parsed.data.projectId)
    const key = mintKey(project, parsed.data.type.name)
    return { status: 201, body: key }
  }

  // --- Control -------------------------------------------------------------------------------

  async function setConfig(ctx: RouteContext): Promise<Reply> {
    const parsed = parseControl(CONFIG_BODY, await objectBody(ctx))
    if (!parsed.ok) return badRequest(parsed.message)
    const next = { ...state().config }
    for (const key of ['accessTokenTtlMs', 'refreshTokenTtlMs', 'challengeTtlMs'] as const) {
      const value = parsed.data[key]
      if (value !== undefined) next[key] = value
    }
    state().config = next
    return { status: 200, body: { config: next } }
  }

  /** For eyes and assertions: counts and ids, never a token or a key. */
  function describeState(): Reply {
    const at = now()
    const projects = [...state().projects.values()].map((project) => ({
      id: project.id,
      name: project.name,
      wallet: project.wallet,
      keys: project.keys.length,
    }))
    const liveAccess = [...state().accessTokens.values()].filter(
      (grant) => grant.expiresAt > at && !state().revokedFamilies.has(grant.family),
    )
    return {
      status: 200,
      body: {
        config: state().config,
        counters: state().counters,
        wallets: [...state().wallets.keys()],
        projects,
        liveAccessTokens: liveAccess.length,
        pendingChallenges: [...state().challenges.values()].filter(
          (challenge) => !challenge.used && challenge.expiresAt > at,
        ).length,
        revokedSessions: state().revokedFamilies.size,
      },
    }
  }

  // --- Helpers -------------------------------------------------------------------------------

  function issuePair(grant: Omit<TokenGrant, 'expiresAt'>, at: number) {
    const accessToken = newSecret('at')
    const refreshToken = newSecret('rt')
    const accessExpiresAt = at + state().config.accessTokenTtlMs
    state().accessTokens.set(digest(accessToken), { ...grant, expiresAt: accessExpiresAt })
    state().refreshTokens.set(digest(refreshToken), {
      ...grant,
      expiresAt: at + state().config.refreshTokenTtlMs,
      used: false,
    })
    // Unix seconds (contract.md), rounded down: a client never believes a token lives longer than it does.
    return { accessToken, refreshToken, expiresAt: Math.floor(accessExpiresAt / 1000) }
  }

  function accessGrant(ctx: RouteContext): TokenGrant | undefined {
    const token = bearerToken(ctx) ?? cookie(ctx, 'access_token')
    if (!token) return undefined
    const grant = state().accessTokens.get(digest(token))
    if (!grant || grant.expiresAt <= now() || state().revokedFamilies.has(grant.family)) return undefined
    return grant
  }

  function ownedProject(grant: TokenGrant, projectId: string): Project {
    const project = state().projects.get(projectId)
    if (!project) throw new HttpError(404, { error: 'PROJECT_NOT_FOUND' })
    if (project.wallet !== grant.wallet) throw new HttpError(403, { error: 'FORBIDDEN' })
    return project
  }

  /** The wallet's Personal project, created with one key on its first sign-in. */
  function personalProjectOf(wallet: string): Project {
    const known = state().wallets.get(wallet)?.[0]
    if (known) return state().projects.get(known)!
    state().counters.projects++
    const project: Project = { id: `proj_${randomBytes(8).toString('hex')}`, name: 'Personal', wallet, keys: [] }
    state().projects.set(project.id, project)
    state().wallets.set(wallet, [project.id])
    mintKey(project, 'Default')
    return project
  }

  function mintKey(project: Project, name: string): ApiKey {
    const key: ApiKey = {
      apiKey: newSecret(KEY_PREFIX),
      name,
      projectId: project.id,
      createdAt: new Date(now()).toISOString(),
    }
    project.keys.push(key)
    emulator.keys.allow(key.apiKey)
    return key
  }

  function pruneChallenges(at: number): void {
    // Spent or expired challenges are kept for a while to answer "already used" precisely.
    const horizon = at - 10 * state().config.challengeTtlMs
    for (const [token, challenge] of state().challenges)
      if (challenge.expiresAt < horizon) state().challenges.delete(token)
  }
}

/** The typed data of a challenge: what the client signs, exactly. */
export function typedDataOf(challenge: { wallet: string; nonce: string; issuedAt: string; expiresAtText: string }) {
  return {
    domain: { ...SIGN_IN_DOMAIN },
    types: SIGN_IN_TYPES,
    primaryType: 'SignIn' as const,
    message: {
      wallet: challenge.wallet,
      nonce: challenge.nonce,
      issuedAt: challenge.issuedAt,
      expiresAt: challenge.expiresAtText,
      statement: STATEMENT,
    },
  }
}

/** Verifies against the challenge's wallet (the one in the challenge URL), with viem. */
async function signatureIsValid(challenge: Challenge, signature: string): Promise<boolean> {
  const { verifyTypedData } = await import('viem/utils')
  try {
    // The JSON typed data (chainId a number) is what was signed; viem's static types want a
    // bigint there, its runtime takes either.
    const parameters = { ...typedDataOf(challenge), address: challenge.wallet, signature }
    return await verifyTypedData(parameters as unknown as Parameters<typeof verifyTypedData>[0])
  } catch {
    // A signature that does not parse or recover is simply not valid.
    return false
  }
}

function bearerToken(ctx: RouteContext): string | undefined {
  const header = ctx.header('authorization')
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
  return match?.[1]
}

function cookie(ctx: RouteContext, name: string): string | undefined {
  for (const part of (ctx.header('cookie') ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=')
    if (key === name && rest.length) return decodeURIComponent(rest.join('='))
  }
  return undefined
}

function cookieHeaders(pair: { accessToken: string; refreshToken: string }): Record<string, string> {
  const cookies = [
    `access_token=${pair.accessToken}; HttpOnly; Path=/; SameSite=Lax`,
    `refresh_token=${pair.refreshToken}; HttpOnly; Path=/auth; SameSite=Lax`,
  ]
  // Reply headers are typed as strings; Node sends an array as one Set-Cookie line per cookie,
  // which is the only correct way to set two cookies.
  return { 'set-cookie': cookies } as unknown as Record<string, string>
}

function integerParameter(ctx: RouteContext, name: string, fallback: number, min: number, max: number): number {
  const text = ctx.query.get(name)
  if (text === null || text === '') return fallback
  const value = Number(text)
  if (!/^\d+$/.test(text) || value < min || value > max) {
    throw new HttpError(400, { error: `${name} must be a whole number from ${min} to ${max}.` })
  }
  return value
}

function newSecret(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

async function objectBody(ctx: RouteContext): Promise<Record<string, unknown>> {
  const body = await ctx.json()
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, { error: 'The body must be a JSON object.' })
  return body as Record<string, unknown>
}

const CONFIG_BODY = z.object({
  accessTokenTtlMs: millis('accessTokenTtlMs', { positive: true }).optional(),
  refreshTokenTtlMs: millis('refreshTokenTtlMs', { positive: true }).optional(),
  challengeTtlMs: millis('challengeTtlMs', { positive: true }).optional(),
})
