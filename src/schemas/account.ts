import { z } from 'zod'
import { WALLET_ADDRESS_PATTERN } from './account-constants.ts'

/**
 * The account service: the programmatic wallet flow (challenge, session,
 * refresh) and the API-key list and mint. Responses are tolerant: extra fields pass, and the
 * typed data of a challenge is kept exactly as received, since the client must sign those
 * fields and not a rebuilt copy.
 */

export const walletAddress = z.string().regex(WALLET_ADDRESS_PATTERN, 'must be a 20-byte 0x-prefixed hex address')

/** One field of an EIP-712 struct type. */
export const typedDataField = z.looseObject({ name: z.string(), type: z.string() })

/**
 * The `eip712` object of a challenge. Domain and message values are left as JSON (`unknown`):
 * their types are given by `types`, and viem checks them against it when signing.
 */
export const eip712TypedData = z.looseObject({
  domain: z.record(z.string(), z.unknown()),
  types: z.record(z.string(), z.array(typedDataField)),
  primaryType: z.string().min(1),
  message: z.record(z.string(), z.unknown()),
})

/** The answer of `GET /auth/web3/challenge`: the one-time `challengeToken` and the `eip712` typed data to sign. */
export const challengeResponse = z.looseObject({
  challengeToken: z.string().min(1),
  nonce: z.string().optional(),
  issuedAt: z.union([z.string(), z.number()]).optional(),
  expiresAt: z.union([z.string(), z.number()]).optional(),
  statement: z.string().optional(),
  eip712: eip712TypedData,
})

/**
 * `expiresAt` is unix seconds as documented. A value that is plainly milliseconds, a numeric
 * string or an ISO date is read too rather than taken for a token that expired in 1970.
 */
export const expiresAtField = z.union([z.number(), z.string()])

/** The project a session is scoped to: an id, or an object that carries one. */
export const selectedProject = z.union([
  z.string(),
  z.looseObject({ id: z.string(), name: z.string().optional() }),
  z.looseObject({ projectId: z.string(), name: z.string().optional() }),
])

/** The answer of `POST /auth/web3/session`: the token pair, when it expires, and the project it is scoped to. */
export const sessionResponse = z.looseObject({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  expiresAt: expiresAtField,
  selectedProject: selectedProject.nullable().optional(),
})

/** The answer of `POST /auth/refresh-token`: a new token pair and when it expires. */
export const refreshResponse = z.looseObject({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  expiresAt: expiresAtField,
})

/** An API key of a project, as the account service lists or mints it. */
export const apiKeyRecord = z.looseObject({
  apiKey: z.string().min(1),
  name: z.string().nullable().optional(),
  projectId: z.string().nullable().optional(),
  createdAt: z.string().nullable().optional(),
})

/** The answer of `GET /api-keys`: one page of a project's keys. */
export const apiKeyListResponse = z.looseObject({
  data: z.array(apiKeyRecord),
  total: z.number().int().nonnegative().optional(),
})

/** The body of `POST /api-keys` (strict): the project, and the key's name and color. */
export const createApiKeyBody = z.strictObject({
  projectId: z.string().min(1),
  type: z.strictObject({ name: z.string().min(1).max(100), color: z.string().min(1).max(32) }),
})

/** One field of an EIP-712 struct type. */
export type TypedDataField = z.infer<typeof typedDataField>
/** The EIP-712 typed data of a sign-in challenge, exactly as received. */
export type Eip712TypedData = z.infer<typeof eip712TypedData>
/** A sign-in challenge: its one-time token and the typed data to sign. */
export type ChallengeResponse = z.infer<typeof challengeResponse>
/** A new session: its token pair, when it expires, and its project. */
export type SessionResponse = z.infer<typeof sessionResponse>
/** A refreshed token pair and when it expires. */
export type RefreshResponse = z.infer<typeof refreshResponse>
/** An API key of a project, with its name and creation time. */
export type ApiKeyRecord = z.infer<typeof apiKeyRecord>
/** One page of a project's API keys. */
export type ApiKeyListResponse = z.infer<typeof apiKeyListResponse>
/** The body that mints an API key. */
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>
