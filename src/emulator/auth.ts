import { createHash } from 'node:crypto'
import type { RouteContext } from './router.ts'
import type { Owner } from './state.ts'

/**
 * API keys. Any non-empty key is accepted unless the emulator was started with an allow-list.
 * A key is known to the emulator only by a digest (`keyId`): ownership is checked on the
 * digest, and neither the state file nor the control API ever holds the key itself.
 */
export class ApiKeys {
  readonly #allowed: Set<string> | undefined

  constructor(allowList?: readonly string[]) {
    this.#allowed = allowList ? new Set(allowList.map((key) => key.trim()).filter(Boolean)) : undefined
  }

  /**
   * Accepts `key` from now on: keys minted by the emulated account service. Without an
   * allow-list every non-empty key is accepted already, so there is nothing to add.
   */
  allow(key: string): void {
    this.#allowed?.add(key.trim())
  }

  /** The keyIds of the accepted keys (minted ones included); null when any non-empty key is accepted. */
  allowedKeyIds(): string[] | null {
    return this.#allowed ? [...this.#allowed].map((key) => ownerOf(key).keyId) : null
  }

  /** The caller behind a key, or null when the key is missing, empty or not allowed. */
  identify(key: string | null | undefined): Owner | null {
    const value = key?.trim()
    if (!value) return null
    if (this.#allowed && !this.#allowed.has(value)) return null
    return ownerOf(value)
  }

  /** The caller of a request that carries its key in the `api-key` header. */
  fromHeader(ctx: RouteContext): Owner | null {
    return this.identify(ctx.header('api-key'))
  }

  /**
   * The caller of a proving-service request: the `api-key` header, or the `apiKey` query
   * parameter, production's documented carrier.
   */
  fromHeaderOrQuery(ctx: RouteContext): Owner | null {
    return this.identify(ctx.header('api-key') ?? ctx.query.get('apiKey'))
  }

  /** The caller of a request that carries its key in the `apiKey` query parameter. */
  fromQuery(ctx: RouteContext): Owner | null {
    return this.identify(ctx.query.get('apiKey'))
  }
}

export function ownerOf(key: string): Owner {
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 16)
  return { keyId, projectId: `project-${keyId}`, clientId: `client-${keyId}` }
}

export function sameOwner(a: Owner, b: Owner): boolean {
  return a.keyId === b.keyId
}

/**
 * The `client` object of records D and L: who submitted the query. In production's shape the
 * submitter is a wallet sign-up: no email, no image (null), as production answers.
 */
export function clientObject(owner: Owner, shape: 'interface' | 'production' = 'interface') {
  return {
    clientId: owner.clientId,
    name: `Emulated client ${owner.keyId.slice(0, 6)}`,
    email: shape === 'production' ? null : `${owner.clientId}@emulator.invalid`,
    isEmailVerified: true,
    image: shape === 'production' ? null : '',
  }
}
