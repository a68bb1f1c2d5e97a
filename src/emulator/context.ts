import { join } from 'node:path'
import type { Logger } from '../core/runtime.ts'
import type { ApiKeys } from './auth.ts'
import type { EmulatorClock } from './clock.ts'
import type { Timing } from './proving/lifecycle.ts'
import type { RequestLog } from './request-log.ts'
import type { RouteContext } from './router.ts'
import type { StateStore } from './state.ts'

/**
 * Which records the emulator answers with: the service's documented ones (`interface`) or production's (`production`).
 */
export type EmulatorShape = 'interface' | 'production'

/** What every route table of the emulator works with: one per running emulator. */
export type EmulatorContext = {
  store: StateStore
  clock: EmulatorClock
  keys: ApiKeys
  logger: Logger
  requestLog: RequestLog
  /** Uploaded files live under `<uploadsDir>/<queryId>/`. */
  uploadsDir: string
  /** The timing the emulator was started with (what a reset returns to). */
  initialTiming: Timing
  maxUploadBytes: number
  /** Hosts webhooks may be sent to besides this machine (`*`: any). */
  webhookHosts: readonly string[]
  /**
   * Which records the proving service answers with: the documented (default), or production's
   * (production's: status in GET /proving-query/{id}, optional fields omitted, client email
   * and image null, no /docs/ routes).
   */
  shape: EmulatorShape
  /** The emulator's URL as it listens (`http://127.0.0.1:port`). */
  url(): string
  /**
   * Stops listening and drops every connection, reloads the state from disk (with a
   * stateDir), stays down `downMs`, then listens again on the same port (POST /_emulator/restart).
   */
  restart?(downMs: number): Promise<void>
}

export function incomingDir(emulator: EmulatorContext): string {
  return join(emulator.uploadsDir, '.incoming')
}

/** The URL the caller reached the emulator by, so artifact URLs work through a proxy too. */
export function publicBaseUrl(emulator: EmulatorContext, ctx: RouteContext): string {
  const host = ctx.header('host')
  return host && /^[\w.:[\]-]+$/.test(host) ? `http://${host}` : emulator.url()
}
