import { openAsBlob } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Agent, FormData, request } from 'undici'
import { afterEach, beforeEach } from 'vitest'
import { ProvingClient, type ClientOptions } from '../../src/clients/proving.ts'
import { type EmulatorOptions, type RunningEmulator, startEmulator } from '../../src/emulator/index.ts'
import { CONTROL_HEADER } from '../../src/emulator/router.ts'

/**
 * Starts an emulator on 127.0.0.1, port 0, for a test and closes it after. Requests go over
 * real HTTP through a dedicated undici Agent (closed with the emulator), either raw (`call`, to
 * check exact statuses and bodies) or through the ProvingClient the product ships (`client`).
 */

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
/** The committed example pie.zip (test/helpers/example-pie.ts: output [11, 89], 73 steps). */
export const FIXTURE_PIE = resolve(repoRoot, 'examples/fib/pie.zip')

export const KEY = 'test-key-alice-0001'
export const OTHER_KEY = 'test-key-bob-0002'

export type Answer = { status: number; body: any; headers: Record<string, string | string[] | undefined> }

export type CallOptions = {
  headers?: Record<string, string>
  query?: Record<string, string | number | undefined>
  json?: unknown
  /** A raw body (sent as is, with the given headers). */
  body?: string | Buffer
  form?: FormData
}

export type TestEmulator = RunningEmulator & {
  agent: Agent
  call(method: string, path: string, options?: CallOptions): Promise<Answer>
  /** A control-API call that must succeed; returns its body. */
  control(method: string, path: string, json?: unknown): Promise<any>
  client(apiKey?: string, options?: Partial<ClientOptions>): ProvingClient
}

export async function startTestEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 }, ...options })
  const agent = new Agent({ keepAliveTimeout: 4_000, connections: 8 })
  const call = async (method: string, path: string, callOptions: CallOptions = {}): Promise<Answer> => {
    const url = new URL(emulator.url + path)
    for (const [key, value] of Object.entries(callOptions.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value))
    }
    const headers: Record<string, string> = { ...callOptions.headers }
    let body: string | Buffer | FormData | undefined = callOptions.body ?? callOptions.form
    if (callOptions.json !== undefined) {
      body = JSON.stringify(callOptions.json)
      headers['content-type'] = 'application/json'
    } else if (body === undefined && path.startsWith('/_emulator/') && method !== 'GET') {
      // A control call without a body: marked, as the control API asks of it (not a web page's).
      headers[CONTROL_HEADER] ??= '1'
    }
    const response = await request(url, { method: method as 'GET', headers, body, dispatcher: agent })
    const text = await response.body.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {
      // Not JSON: keep the text.
    }
    return { status: response.statusCode, body: parsed, headers: response.headers }
  }
  const control = async (method: string, path: string, json?: unknown) => {
    const answer = await call(method, `/_emulator${path}`, json === undefined ? {} : { json })
    if (answer.status >= 300)
      throw new Error(`control ${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
    return answer.body
  }
  const close = emulator.close
  return Object.assign(emulator, {
    agent,
    call,
    control,
    client: (apiKey: string | undefined = KEY, clientOptions: Partial<ClientOptions> = {}) =>
      new ProvingClient({
        baseUrl: emulator.url,
        apiKey,
        dispatcher: agent,
        retry: { maxAttempts: 1 },
        ...clientOptions,
      }),
    close: async () => {
      await close()
      await agent.close()
    },
  })
}

/** Registers beforeEach/afterEach hooks; the returned function gives the current test's emulator. */
export function useEmulator(options: EmulatorOptions = {}): () => TestEmulator {
  let current: TestEmulator | undefined
  beforeEach(async () => {
    current = await startTestEmulator(options)
  })
  afterEach(async () => {
    await current?.close()
    current = undefined
  })
  return () => {
    if (!current) throw new Error('useEmulator: no emulator outside a test')
    return current
  }
}

/** The multipart form of the L2 PIE endpoint; `omit`/`set` make it wrong on purpose. */
export async function pieForm(
  fields: Record<string, string> = {},
  options: { omit?: string[]; pie?: string | Blob | null } = {},
): Promise<FormData> {
  const form = new FormData()
  const values: Record<string, string> = { mockFactHash: 'false', prover: 'svc_sharp', layout: 'auto', ...fields }
  for (const [name, value] of Object.entries(values)) if (!options.omit?.includes(name)) form.append(name, value)
  if (options.pie !== null && !options.omit?.includes('pieFile')) {
    const pie =
      typeof options.pie === 'string' || options.pie === undefined
        ? await openAsBlob(options.pie ?? FIXTURE_PIE)
        : options.pie
    form.append('pieFile', pie, 'pie.zip')
  }
  return form
}

/** The multipart form of the general submission (POST /proving-query). */
export async function queryForm(
  fields: Record<string, string> = {},
  options: { pie?: boolean } = {},
): Promise<FormData> {
  const form = new FormData()
  for (const [name, value] of Object.entries({ declaredJobSize: 'XS', ...fields })) form.append(name, value)
  if (options.pie ?? true) form.append('pieFile', await openAsBlob(FIXTURE_PIE), 'pie.zip')
  return form
}

/** Submits the example PIE through the L2 endpoint; returns the query id. */
export async function submitFixturePie(
  emulator: TestEmulator,
  apiKey = KEY,
  fields: Record<string, string> = {},
): Promise<string> {
  const answer = await emulator.call('POST', '/v1/l2/proving-query/proof-generation-verification', {
    query: { apiKey },
    form: await pieForm(fields),
  })
  if (answer.status !== 201) throw new Error(`submission failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body.provingQueryId as string
}
