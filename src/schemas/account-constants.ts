/**
 * The account service's plain values and readers, with no zod: the main entry loads without the
 * schemas, and the account client loads schemas/account.ts on its first request.
 */

/** A wallet: 20 bytes of hex, 0x-prefixed. */
export const WALLET_ADDRESS_PATTERN = /^0x[0-9a-fA-F]{40}$/

/** `selectedProject` as a project id, whatever shape the service sent. */
export function projectIdOf(project: unknown): string | undefined {
  if (typeof project === 'string') return project || undefined
  if (project === null || typeof project !== 'object') return undefined
  if ('id' in project && typeof project.id === 'string') return project.id
  if ('projectId' in project && typeof project.projectId === 'string') return project.projectId
  return undefined
}

/** `expiresAt` in milliseconds since the epoch, or undefined when it cannot be read. */
export function expiresAtMs(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? toMs(value) : undefined
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return toMs(Number(text))
  const parsed = Date.parse(text)
  return Number.isNaN(parsed) ? undefined : parsed
}

/** Seconds unless the number is too large to be seconds (after year 5138). */
function toMs(value: number): number {
  return value > 1e11 ? Math.round(value) : Math.round(value * 1000)
}
