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

export const sessionResponse = z.looseObject({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  expiresAt: expiresAtField,
  selectedProject: selectedProject.nullable().optional(),
})

export const refreshResponse = z.looseObject({
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1),
  expiresAt: expiresAtField,
})

export const apiKeyRecord = z.looseObject({
  apiKey: z.string().min(1),
  name: z.string().nullable().optional(),
  projectId: z.string().nullable().optional(),
  createdAt: z.string().nullable().optional(),
})

export const apiKeyListResponse = z.looseObject({
  data: z.array(apiKeyRecord),
  total: z.number().int().nonnegative().optional(),
})

export const createApiKeyBody = z.strictObject({
  projectId: z.string().min(1),
  type: z.strictObject({ name: z.string().min(1).max(100), color: z.string().min(1).max(32) }),
})

export type TypedDataField = z.infer<typeof typedDataField>
export type Eip712TypedData = z.infer<typeof eip712TypedData>
export type ChallengeResponse = z.infer<typeof challengeResponse>
export type SessionResponse = z.infer<typeof sessionResponse>
export type RefreshResponse = z.infer<typeof refreshResponse>
export type ApiKeyRecord = z.infer<typeof apiKeyRecord>
export type ApiKeyListResponse = z.infer<typeof apiKeyListResponse>
export type CreateApiKeyBody = z.infer<typeof createApiKeyBody>
