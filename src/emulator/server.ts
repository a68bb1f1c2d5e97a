import { isLoopback } from '../core/checks.ts'
import { mkdirSync, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { InvalidInputError } from '../core/errors.ts'
import { type Logger, silentLogger } from '../core/runtime.ts'
import { artifactRoutes } from './proving/artifacts.ts'
import { ApiKeys } from './auth.ts'
import { type EmulatorClock, realClock } from './clock.ts'
import type { EmulatorContext, EmulatorShape } from './context.ts'
import { controlRoutes } from './control.ts'
import { consoleRoutes } from './console/routes.ts'
import { faultInterceptor } from './faults.ts'
import { DEFAULT_TIMING, type Timing } from './proving/lifecycle.ts'
import { provingControlRoutes } from './proving/control.ts'
import { provingRoutes } from './proving/routes.ts'
import { taskRoutes } from './tasks/routes.ts'
import { storageProofRoutes } from './storage-proof/routes.ts'
import { accountRoutes } from './account/routes.ts'
import { starknetRpcRoutes } from './starknet/routes.ts'
import { type LoggedRequest, RequestLog } from './request-log.ts'
import { type Route, Router } from './router.ts'
import { type EmulatorState, StateStore } from './state.ts'

/**
 * One HTTP server for every emulated service: the proving service now; the task, storage-proof
 * and account services add their route tables to the same list, on the same port (their paths
 * do not collide). The control API lives under /_emulator/.
 */

/**
 * How {@link startEmulator} runs the emulator: where it listens, which keys it accepts, its clock and
 * timing, where it keeps its state.
 */
export type EmulatorOptions = {
  /**
   * The address to listen on; another machine's reach needs `apiKeys`.
   * @default '127.0.0.1'
   */
  host?: string
  /** 0 (the default) picks a free port. */
  port?: number
  /** Accepted API keys; without a list any non-empty key is accepted. */
  apiKeys?: string[]
  /**
   * How long a query stays RECEIVED and each of its steps takes.
   * @default DEFAULT_TIMING
   */
  timing?: Partial<Timing>
  /** Real time by default; `simulatedClock()` lets a test move time by hand. */
  clock?: EmulatorClock
  /** Keep state and uploads here, and reload them on start. In memory and a temp dir otherwise. */
  stateDir?: string
  /**
   * Where the emulator's warnings go.
   * @default silentLogger
   */
  logger?: Logger
  /** Largest accepted upload (default 16 GiB). */
  maxUploadBytes?: number
  /** Hosts task webhooks may be sent to besides this machine (`*`: any); none by default. */
  webhookHosts?: string[]
  /**
   * `interface` (default): the documented records. `production`: the records production
   * answers with: status in GET /proving-query/{id}, optional fields omitted,
   * client email/image null, production's bucket record, no /docs/ routes.
   */
  shape?: EmulatorShape
}

/** A running emulator: its URL, clock and live state, the requests it answered, and `close`. */
export type RunningEmulator = {
  /** `http://host:port`, no trailing slash. */
  url: string
  /** The address it listens on. */
  host: string
  /** The port it listens on. */
  port: number
  /** The clock its queries progress by. */
  clock: EmulatorClock
  /** Where uploads are kept (`<stateDir>/uploads`, or a temporary folder removed on close). */
  uploadsDir: string
  /** The live state (read it, do not keep it: a reset replaces it). */
  readonly state: EmulatorState
  /** The requests answered so far, secrets masked. */
  requests(): LoggedRequest[]
  /** Every route served: the services' and the control API's (`control: true`). */
  routes(): { method: string; pattern: string; control: boolean }[]
  /** Stops the server and removes its temporary folder (a `stateDir` is kept). */
  close(): Promise<void>
}

/** Route tables by service; each takes the shared context. */
const SERVICES: ((emulator: EmulatorContext) => Route[])[] = [
  provingRoutes,
  provingControlRoutes,
  artifactRoutes,
  storageProofRoutes,
  accountRoutes,
  taskRoutes,
  starknetRpcRoutes,
  controlRoutes,
  consoleRoutes,
]

// Clients keep idle sockets for 4 s: the server must keep them longer, or a request sent on a
// socket the server is just closing fails with a reset.
const KEEP_ALIVE_TIMEOUT_MS = 10_000
// Large uploads over slow links: the whole request may take long; the emulator does not cut it.
const REQUEST_TIMEOUT_MS = 60 * 60_000

/**
 * Starts the built-in emulator of the four services (proving, task, storage-proof, account) and
 * a Starknet RPC, on one port, with a control API under `/_emulator/` to plan failures, move time
 * and inspect the requests. Queries progress through their steps by the emulator's clock; the
 * facts of an uploaded PIE are the ones the real service would report.
 *
 * @param options Where it listens, which API keys it accepts, its clock, timing and state folder.
 * @returns The running emulator; `close()` it when done.
 * @throws {InvalidInputError} When an option is refused (another machine could reach it and no
 * `apiKeys` are given, an unknown `shape`).
 * @example
 * ```ts
 * import { ProvingClient } from 'proving-kit'
 * import { startEmulator } from 'proving-kit/emulator'
 *
 * const emulator = await startEmulator({ apiKeys: ['test-key'], timing: { stepMs: 50 } })
 * try {
 *   const client = new ProvingClient({ baseUrl: emulator.url, apiKey: 'test-key' })
 *   const { provingQueryId } = await client.submitPie({ pieZip: 'build/pie.zip' })
 *   const { provingQuery } = await client.waitForQuery(provingQueryId)
 * } finally {
 *   await emulator.close()
 * }
 * ```
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = options.host ?? '127.0.0.1'
  if (options.shape !== undefined && options.shape !== 'interface' && options.shape !== 'production') {
    throw new InvalidInputError(`shape must be interface or production; got ${JSON.stringify(options.shape)}.`, {
      input: 'shape',
    })
  }
  const logger = options.logger ?? silentLogger
  if (!isLoopback(host)) {
    // Reachable from other machines: every key would be accepted without a list of keys.
    if (!options.apiKeys?.length) {
      throw new InvalidInputError(
        `The emulator would listen on ${host}, reachable from other machines, and accept any API key: give the keys it accepts (apiKeys), or listen on 127.0.0.1.`,
        { input: 'host' },
      )
    }
    logger.warn(
      `emulator: listening on ${host}: reachable from other machines on this network. Its control API answers only this machine; use 127.0.0.1 unless you need this.`,
    )
  }
  const clock = options.clock ?? realClock()
  const initialTiming: Timing = { ...DEFAULT_TIMING, ...options.timing }
  const store = StateStore.open(options.stateDir, initialTiming)
  const temporaryDir = options.stateDir ? undefined : await mkdtemp(join(tmpdir(), 'proving-emulator-'))
  const uploadsDir = options.stateDir ? join(options.stateDir, 'uploads') : join(temporaryDir!, 'uploads')
  // Uploads cut off by a previous stop are not worth keeping.
  rmSync(join(uploadsDir, '.incoming'), { recursive: true, force: true })
  mkdirSync(uploadsDir, { recursive: true })

  let url = ''
  const requestLog = new RequestLog()
  const emulator: EmulatorContext = {
    store,
    clock,
    keys: new ApiKeys(options.apiKeys),
    logger,
    requestLog,
    uploadsDir,
    initialTiming,
    maxUploadBytes: options.maxUploadBytes ?? 16 * 1024 ** 3,
    webhookHosts: options.webhookHosts ?? [],
    shape: options.shape ?? 'interface',
    url: () => url,
  }
  const router = new Router({
    logger,
    now: () => clock.now(),
    intercept: faultInterceptor(emulator),
    onCompleted: ({ method, rawUrl, status, route, fault }) => {
      if (!route?.control) requestLog.add({ at: clock.now(), method, rawUrl, status, fault })
    },
  })
  for (const routes of SERVICES) router.add(routes(emulator))

  const server = createServer(
    { keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
    router.handle,
  )
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n')
    else socket.destroy()
  })
  const port = await listen(server, host, options.port ?? 0)
  url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  // Debug: hosts (the CLI, the action) announce the URL themselves.
  logger.debug(`Emulator listening on ${url}${options.stateDir ? ` (state in ${options.stateDir})` : ''}`)

  let closing: Promise<void> | undefined
  let restarting: Promise<void> | undefined
  // A restart as a process restart looks from outside: connections dropped, the port refusing
  // for `downMs`, the state read back from disk. The request log, an instrument of the tests,
  // is kept; so is the in-memory state without a stateDir (there is nothing else to reload).
  emulator.restart = (downMs: number) => {
    restarting ??= (async () => {
      try {
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
        store.save()
        store.reload()
        if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs))
        if (!closing) await listen(server, host, port)
        logger.debug(`Emulator restarted on ${url}${store.persistent ? ' (state reloaded from disk)' : ''}`)
      } finally {
        restarting = undefined
      }
    })()
    return restarting
  }
  return {
    url,
    host,
    port,
    clock,
    uploadsDir,
    get state() {
      return store.state
    },
    requests: () => requestLog.list(),
    routes: () => router.list(),
    close() {
      closing ??= (async () => {
        await restarting?.catch(() => {})
        await new Promise<void>((resolve) => {
          server.close(() => resolve())
          server.closeAllConnections()
        })
        store.close()
        if (temporaryDir) await rm(temporaryDir, { recursive: true, force: true })
      })()
      return closing
    },
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve((server.address() as AddressInfo).port)
    })
  })
}
