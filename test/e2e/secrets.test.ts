import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { AccountClient } from '../../src/clients/account.ts'
import type { Logger } from '../../src/core/runtime.ts'
import { findSecret, useCatalogue } from '../helpers/catalogue.ts'
import { NODE, runCli, TEST_COMPILE_CACHE } from '../helpers/cli.ts'
import { FIXTURE_PIE, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { readStateDir } from '../../src/emulator/state.ts'
import { inputVariable, parseFileCommand, readAction, REPO_ROOT } from '../helpers/run-action.ts'
import { dpOutput, taskBody } from '../helpers/tasks.ts'

/**
 * Secrets suite: every command and action path (success, each failure, each fault) runs with
 * distinctive secret values (an API key, a wallet's private key, the access, refresh and
 * challenge tokens the account service hands out, the keys it mints, an RPC URL with a key in
 * it), with debug logging on (--debug, PROVING_DEBUG=1, RUNNER_DEBUG=1), and none of them may
 * appear in stdout, stderr, the job summary, the output and state files, an error message, or
 * the emulator's logs, request log and state file.
 *
 * Every request goes through a recording proxy in front of the emulator: it learns the tokens
 * and keys that crossed the wire (so they can be looked for), and checks that the API key only
 * ever travels in a header, except on the two L2 endpoints, where the spec puts it in the query
 * string (`apiKey`, masked in every URL that is logged).
 *
 * The action runs from its sources through its one entry (src/action/index.ts), with
 * the real @actions/core, as the bundle does.
 */

const { catalogue, row } = useCatalogue('secrets')

const API_KEY = 'pk_SECRETSUITE_api_7f3a9c2e51d4'
const PRIVATE_KEY = `0x${'c0ffee'.repeat(10)}5ec7`
const RPC_KEY = 'rpcSECRETkey0a1b2c3d4e5f'
const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
const L2_PROOF = '/v1/l2/proving-query/proof-verification'

let emulator: TestEmulator
let stateDir: string
let work: string
let proxy: Server
let proxyUrl: string
const emulatorLog: string[] = []
const emulatorLogger: Logger = {
  debug: (message) => void emulatorLog.push(message),
  info: (message) => void emulatorLog.push(message),
  warn: (message) => void emulatorLog.push(message),
  error: (message) => void emulatorLog.push(message),
}

type WireRequest = { method: string; url: string; headers: Record<string, string | string[] | undefined> }
const wireRequests: WireRequest[] = []
const wireSecrets = new Set<string>()

/** The secrets a row must not show: ours, and every token or key that crossed the wire so far. */
function secrets(allowed: string[] = []): string[] {
  return [API_KEY, PRIVATE_KEY, PRIVATE_KEY.slice(2), RPC_KEY, ...wireSecrets].filter(
    (secret) => !allowed.includes(secret),
  )
}

function learnSecrets(text: string): void {
  for (const match of text.matchAll(/"(accessToken|refreshToken|challengeToken|apiKey)"\s*:\s*"([^"]+)"/g))
    wireSecrets.add(match[2]!)
  for (const match of text.matchAll(/(?:access_token|refresh_token)=([^;\s]+)/g)) wireSecrets.add(match[1]!)
}

function scan(name: string, places: Record<string, string>, allowed: string[] = []): void {
  const found = findSecret(places, secrets(allowed))
  if (found) catalogue.leak(name, found)
}

beforeAll(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'secrets-state-'))
  work = await mkdtemp(join(tmpdir(), 'secrets-work-'))
  emulator = await startTestEmulator({
    apiKeys: [API_KEY],
    stateDir,
    logger: emulatorLogger,
    timing: { receivedMs: 0, stepMs: 40 },
  })
  await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 200 })
  await emulator.control('PUT', '/tasks/timing', { receivedMs: 0, stageMs: 20, handoffMs: 0 })
  proxy = createServer((req, res) => {
    wireRequests.push({ method: req.method ?? 'GET', url: req.url ?? '/', headers: { ...req.headers } })
    const authorization = req.headers.authorization
    if (typeof authorization === 'string' && authorization.startsWith('Bearer '))
      wireSecrets.add(authorization.slice(7))
    const upstream = httpRequest(
      { host: '127.0.0.1', port: emulator.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        const chunks: Buffer[] = []
        answer.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          res.write(chunk)
        })
        answer.on('end', () => {
          learnSecrets(Buffer.concat(chunks).toString('utf8'))
          for (const cookie of [answer.headers['set-cookie'] ?? []].flat()) learnSecrets(cookie)
          res.end()
        })
        // A fault that cuts the answer cuts it for the client too.
        answer.on('aborted', () => res.destroy())
        answer.on('error', () => res.destroy())
      },
    )
    // A fault that drops the connection drops the client's too.
    upstream.on('error', () => {
      res.destroy()
      req.socket.destroy()
    })
    req.pipe(upstream)
  })
  await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done))
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((done) => {
    proxy?.close(() => done())
    proxy?.closeAllConnections()
  })
  await emulator?.close()
  await rm(stateDir, { recursive: true, force: true })
  await rm(work, { recursive: true, force: true })
})

const rpcUrl = () => `${proxyUrl}/starknet-rpc?apikey=${RPC_KEY}`
const fault = (spec: Record<string, unknown>) => emulator.control('POST', '/faults', spec)
const clearFaults = () => emulator.control('DELETE', '/faults')

// --- CLI -------------------------------------------------------------------------------------

const cliEnv = (debug: 'flag' | 'env') => ({
  PROVING_BASE_URL: proxyUrl,
  PROVING_API_KEY: API_KEY,
  PROVING_REUSE: 'never',
  PROVING_TASKS_URL: proxyUrl,
  PROVING_STORAGE_PROOF_URL: proxyUrl,
  PROVING_AUTH_URL: proxyUrl,
  ...(debug === 'env' ? { PROVING_DEBUG: '1' } : {}),
})

type CliPath = {
  name: string
  args: () => string[] | Promise<string[]>
  before?: () => Promise<unknown>
  env?: () => Record<string, string | undefined>
  stdin?: string
  /** The exit code the path ends with. */
  code: number
  /** Secrets this path prints on purpose (auth ... --json prints the project's key). */
  allowed?: (stdout: string) => string[]
  /** Cancels the command once this holds (checked on each output and each 5 ms): an event, never a fixed delay. */
  abortWhen?: (output: { stdout: string; stderr: string }) => boolean
  /** The path logs at debug level (retries): the scan covers those lines. */
  debugLines?: boolean
}

/** The emulator has answered a poll of a query: the command is waiting. */
const polling = () => emulator.requests().some((request) => request.path.startsWith('/docs/proving-query/'))

/** Resolves once `condition` holds, checked every 5 ms. */
async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the moment to cancel never came')
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

let doneQuery: { id: string; integrityFact: string } | undefined
async function finishedQuery(): Promise<{ id: string; integrityFact: string }> {
  if (doneQuery) return doneQuery
  const result = await runCli(['prove', FIXTURE_PIE, '--wait', '--json'], { env: cliEnv('flag') })
  const record = JSON.parse(result.stdout).provingQuery
  doneQuery = { id: record.id, integrityFact: record.integrityFactHash }
  return doneQuery
}

const files = {
  task: () => join(work, 'task.json'),
  dpOutput: () => join(work, 'dp-output.json'),
  query: () => join(work, 'batch-query.json'),
  proof: () => join(work, 'proof.json'),
}
const BATCH_QUERY = {
  destinationChainId: '11155111',
  fee: '0',
  data: {
    '11155111': {
      'block:5382810': {
        accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
      },
    },
  },
}
const echoKey = (status: number) => ({
  kind: 'status',
  status,
  body: { error: `Invalid API key ${API_KEY}`, message: `key ${API_KEY} refused` },
})
const gatewayPage = () =>
  `<html><body><h1>502 Bad Gateway</h1><p>upstream ${proxyUrl}${L2_PIE}?apiKey=${API_KEY} failed; key ${API_KEY}</p></body></html>`

const cliPaths: CliPath[] = [
  { name: 'prove --wait: success', args: () => ['prove', FIXTURE_PIE, '--wait'], code: 0 },
  { name: 'prove --wait --json: success', args: () => ['prove', FIXTURE_PIE, '--wait', '--json'], code: 0 },
  {
    name: 'prove with --api-key on the command line',
    args: () => ['prove', FIXTURE_PIE, '--api-key', API_KEY],
    env: () => ({ PROVING_API_KEY: undefined }),
    code: 0,
  },
  {
    name: 'prove: the service refuses the key and echoes it (401)',
    before: () => fault({ method: 'POST', path: L2_PIE, ...echoKey(401) }),
    args: () => ['prove', FIXTURE_PIE],
    code: 2,
  },
  {
    name: 'prove: answer lost (drop-after)',
    before: () => fault({ method: 'POST', path: L2_PIE, kind: 'drop-after' }),
    args: () => ['prove', FIXTURE_PIE],
    code: 3,
  },
  {
    name: "prove: a gateway's HTML 502 quoting the URL with apiKey",
    before: () =>
      fault({
        method: 'POST',
        path: L2_PIE,
        kind: 'status',
        status: 502,
        body: gatewayPage(),
        contentType: 'text/html',
      }),
    args: () => ['prove', FIXTURE_PIE],
    code: 3,
  },
  {
    name: 'prove: 503 burst with Retry-After, then success',
    before: () =>
      fault({ method: 'POST', path: L2_PIE, kind: 'status', status: 503, headers: { 'retry-after': '0' }, times: 2 }),
    args: () => ['prove', FIXTURE_PIE],
    code: 0,
    debugLines: true,
  },
  {
    name: 'prove: reads reset during the wait, then success',
    before: () => fault({ method: 'GET', path: '/docs/proving-query/:id', kind: 'drop', times: 2 }),
    args: () => ['prove', FIXTURE_PIE, '--wait'],
    code: 0,
    debugLines: true,
  },
  {
    name: 'prove: cancelled mid-wait',
    before: () => emulator.control('PUT', '/timing', { stepMs: 60_000 }),
    args: () => ['prove', FIXTURE_PIE, '--wait'],
    abortWhen: polling,
    code: 130,
  },
  {
    name: 'prove --emulator (in-process emulator)',
    before: () => emulator.control('PUT', '/timing', { stepMs: 40 }),
    args: () => ['prove', FIXTURE_PIE, '--emulator', '--wait'],
    env: () => ({ PROVING_BASE_URL: undefined }),
    code: 0,
  },
  {
    name: 'verify-proof --wait',
    args: () => [
      'verify-proof',
      files.proof(),
      '--stone-version',
      'stone6',
      '--memory-verification',
      'relaxed',
      '--wait',
    ],
    code: 0,
  },
  { name: 'query get', args: async () => ['query', 'get', (await finishedQuery()).id], code: 0 },
  { name: 'query wait', args: async () => ['query', 'wait', (await finishedQuery()).id], code: 0 },
  { name: 'query list', args: () => ['query', 'list', '--all'], code: 0 },
  {
    name: 'query retry on a DONE query: 409',
    args: async () => ['query', 'retry', (await finishedQuery()).id],
    code: 2,
  },
  {
    name: 'query wait: timed out',
    before: async () => emulator.control('PUT', '/timing', { stepMs: 60_000 }),
    args: async () => [
      'query',
      'wait',
      (await runCliJson(['prove', FIXTURE_PIE, '--json'])).provingQueryId,
      '--timeout',
      '1s',
    ],
    code: 4,
  },
  {
    name: 'bucket create',
    before: () => emulator.control('PUT', '/timing', { stepMs: 40 }),
    args: () => ['bucket', 'create', '--aggregator-version', 'v1', '--mock-proof'],
    code: 0,
  },
  {
    name: 'bucket close of an unknown bucket: 404',
    args: () => ['bucket', 'close', '00000000-0000-4000-8000-000000000000'],
    code: 2,
  },
  { name: 'task submit --wait', args: () => ['task', 'submit', files.task(), '--wait'], code: 0 },
  {
    name: 'task submit: X-API-KEY refused and echoed',
    before: () => fault({ method: 'POST', path: '/tasks', ...echoKey(401) }),
    args: () => ['task', 'submit', files.task()],
    code: 2,
  },
  {
    name: 'task submit: answer lost',
    before: () => fault({ method: 'POST', path: '/tasks', kind: 'drop-after' }),
    args: () => ['task', 'submit', files.task()],
    code: 3,
  },
  {
    name: 'task decommit --wait',
    args: async () => [
      'task',
      'decommit',
      '--proving-query-id',
      (await finishedQuery()).id,
      '--destination-chain-id',
      '0xaa36a7',
      '--dp-output',
      files.dpOutput(),
      '--wait',
    ],
    code: 0,
  },
  { name: 'task list', args: () => ['task', 'list', '--all'], code: 0 },
  { name: 'storage query --wait', args: () => ['storage', 'query', files.query(), '--wait'], code: 0 },
  {
    name: 'storage query: the service echoes the key (401)',
    before: () => fault({ method: 'POST', path: '/batch-query', ...echoKey(401) }),
    args: () => ['storage', 'query', files.query()],
    code: 2,
  },
  {
    name: 'storage query: reset before the answer',
    before: () => fault({ method: 'POST', path: '/batch-query', kind: 'drop' }),
    args: () => ['storage', 'query', files.query()],
    code: 3,
  },
  { name: 'storage status of an unknown id: 404', args: () => ['storage', 'status', 'no-such-batch-query'], code: 2 },
  {
    name: 'fact check on Starknet: registered',
    args: async () => ['fact', 'check', (await finishedQuery()).integrityFact, '--starknet-rpc', rpcUrl()],
    code: 0,
  },
  {
    name: 'fact check on Starknet: RPC failing (503)',
    before: () => fault({ path: '/starknet-rpc', kind: 'status', status: 503, times: 20 }),
    args: () => ['fact', 'check', '0x1', '--starknet-rpc', rpcUrl()],
    code: 3,
  },
  {
    name: 'fact check: the RPC URL from the environment',
    args: () => ['fact', 'check', '0x1'],
    env: () => ({ PROVING_STARKNET_RPC_URL: `${proxyUrl}/starknet-rpc?apikey=${RPC_KEY}` }),
    code: 1,
  },
  {
    name: 'fact check: an RPC URL with a key but the wrong scheme',
    args: () => ['fact', 'check', '0x1', '--starknet-rpc', `ftp://rpc.example.com/v2/${RPC_KEY}?apikey=${RPC_KEY}`],
    code: 2,
  },
  {
    name: 'auth login (human)',
    args: () => ['auth', 'login'],
    env: () => ({ PROVING_PRIVATE_KEY: PRIVATE_KEY }),
    code: 0,
  },
  {
    name: 'auth login --json (prints the project key, on purpose)',
    args: () => ['auth', 'login', '--json'],
    env: () => ({ PROVING_PRIVATE_KEY: PRIVATE_KEY }),
    code: 0,
    allowed: (stdout) => [JSON.parse(stdout).apiKey],
  },
  {
    name: 'auth login with the key on stdin',
    args: () => ['auth', 'login'],
    env: () => ({ PROVING_PRIVATE_KEY: undefined }),
    stdin: `${PRIVATE_KEY}\n`,
    code: 0,
  },
  {
    name: 'auth create-key --json',
    args: () => ['auth', 'create-key', '--name', 'ci', '--json'],
    env: () => ({ PROVING_PRIVATE_KEY: PRIVATE_KEY }),
    code: 0,
    allowed: (stdout) => [JSON.parse(stdout).apiKey],
  },
  {
    name: 'auth login: session refused (401)',
    before: () =>
      fault({ method: 'POST', path: '/auth/web3/session', status: 401, body: { error: 'INVALID_SIGNATURE' } }),
    args: () => ['auth', 'login'],
    env: () => ({ PROVING_PRIVATE_KEY: PRIVATE_KEY }),
    code: 2,
  },
  { name: 'auth login: --private-key refused', args: () => ['auth', 'login', '--private-key', PRIVATE_KEY], code: 2 },
  {
    name: 'auth login: a malformed private key',
    args: () => ['auth', 'login'],
    env: () => ({ PROVING_PRIVATE_KEY: `${PRIVATE_KEY}zz` }),
    code: 2,
  },
  {
    name: 'emulator with an allow-list, stopped',
    args: () => ['emulator', '--port', '0', '--api-keys', `${API_KEY},another-secret-key-123`],
    abortWhen: ({ stdout, stderr }) => /listening on/.test(stdout + stderr),
    code: 0,
  },
]

async function runCliJson(args: string[]): Promise<any> {
  const result = await runCli(args, { env: cliEnv('flag') })
  return JSON.parse(result.stdout)
}

describe('CLI, with --debug or PROVING_DEBUG=1', () => {
  beforeAll(async () => {
    await writeFile(files.task(), JSON.stringify(taskBody()))
    await writeFile(files.dpOutput(), JSON.stringify(dpOutput()))
    await writeFile(files.query(), JSON.stringify(BATCH_QUERY))
    await writeFile(files.proof(), JSON.stringify({ proof: 'emulated' }))
  })

  cliPaths.forEach((path, index) => {
    const debug = index % 2 === 0 ? 'flag' : 'env'
    const name = `CLI ${path.name} (${debug === 'flag' ? '--debug' : 'PROVING_DEBUG=1'})`
    row(
      name,
      async () => {
        await clearFaults()
        await path.before?.()
        const args = await path.args()
        const controller = new AbortController()
        let output = { stdout: '', stderr: '' }
        const abortWhen = path.abortWhen
        // The request log starts empty, so a poll seen is this command's.
        if (abortWhen) await emulator.control('DELETE', '/requests')
        const trigger = abortWhen
          ? until(() => abortWhen(output)).then(() => controller.abort(new Error('cancelled by the test')))
          : undefined
        const env = { ...cliEnv(debug), ...path.env?.() }
        const result = await runCli(debug === 'flag' ? [...args, '--debug'] : args, {
          env,
          onOutput: (seen) => (output = seen),
          signal: controller.signal,
          stdin: path.stdin === undefined ? undefined : Readable.from([Buffer.from(path.stdin)]),
        })
        await trigger
        await clearFaults()
        expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(path.code)
        if (path.debugLines) expect(result.stderr).toMatch(/^debug: /m)
        scan(name, { stdout: result.stdout, stderr: result.stderr }, path.allowed?.(result.stdout) ?? [])
      },
      30_000,
    )
  })
})

// --- Library ---------------------------------------------------------------------------------

describe('library, with a debug logger', () => {
  row(
    'library: a wallet session refreshed during a long wait, keys minted and listed',
    async () => {
      const lines: string[] = []
      const logger: Logger = {
        debug: (message) => void lines.push(message),
        info: (message) => void lines.push(message),
        warn: (message) => void lines.push(message),
        error: (message) => void lines.push(message),
      }
      await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 1_000 })
      await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 2_500 })
      try {
        const account = new AccountClient({ baseUrl: proxyUrl, privateKey: PRIVATE_KEY, logger })
        const storage = new StorageProofClient({
          baseUrl: proxyUrl,
          apiKey: account.apiKeyProvider(),
          logger,
          redactor: account.http.redactor,
        })
        const { internalId } = await storage.submitBatchQuery(BATCH_QUERY)
        await storage.waitForBatchQuery(internalId, { schedule: { minIntervalMs: 200, maxIntervalMs: 400 } })
        await account.createApiKey({ name: 'minted-in-the-suite' })
        expect(account.stats.refreshes).toBeGreaterThanOrEqual(1)
        // A refused refresh token: the error must not carry it.
        const error = await account.refreshSession('rt_not-a-real-refresh-token-123').then(
          () => undefined,
          (caught: Error) => caught,
        )
        scan('library: a wallet session refreshed during a long wait', {
          logs: lines.join('\n'),
          error: String(error?.message),
        })
      } finally {
        await emulator.control('PUT', '/account/config', { accessTokenTtlMs: 15 * 60_000 })
        await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 0, inProgressMs: 200 })
      }
    },
    30_000,
  )
})

// --- Action ----------------------------------------------------------------------------------

type ActionRun = {
  code: number | null
  stdout: string
  stderr: string
  outputs: Record<string, string>
  raw: { output: string; state: string; summary: string }
}

/**
 * Runs one step of an action from the sources, as the bundle runs it (the runner's environment
 * and file commands, the real @actions/core), with RUNNER_DEBUG=1 so the debug log is printed.
 */
function runSourceAction(
  name: string,
  step: string,
  inputs: Record<string, string>,
  options: { interruptWhen?: () => boolean; state?: Record<string, string> } = {},
): Promise<ActionRun> {
  const action = readAction(name)
  const dir = mkdtempSync(join(work, `action-${step}-`))
  const files = { output: join(dir, 'output'), state: join(dir, 'state'), summary: join(dir, 'summary') }
  for (const file of Object.values(files)) writeFileSync(file, '')
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    GITHUB_ACTIONS: 'true',
    RUNNER_DEBUG: '1',
    GITHUB_OUTPUT: files.output,
    GITHUB_STATE: files.state,
    GITHUB_STEP_SUMMARY: files.summary,
    RUNNER_TEMP: mkdtempSync(join(dir, 'temp-')),
    GITHUB_WORKSPACE: REPO_ROOT,
    GITHUB_REPOSITORY: 'proving-kit/proving-kit',
    GITHUB_RUN_ID: '4242',
    GITHUB_SERVER_URL: 'https://github.com',
    NODE_COMPILE_CACHE: TEST_COMPILE_CACHE,
  }
  if (step !== 'post') {
    for (const [input, spec] of Object.entries(action.inputs))
      if (spec.default !== undefined) env[inputVariable(input)] = spec.default
    for (const [input, value] of Object.entries(inputs)) env[inputVariable(input)] = value
  }
  for (const [key, value] of Object.entries(options.state ?? {})) env[`STATE_${key}`] = value
  const entry = resolve(REPO_ROOT, 'src/action/index.ts')
  const script = `import(${JSON.stringify(entry)}).then((entry) => entry.runAction(${JSON.stringify(step)}))`
  const child = spawn(NODE, ['--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const interruptWhen = options.interruptWhen
  if (interruptWhen) void until(interruptWhen).then(() => child.kill('SIGINT'))
  return new Promise((done, fail) => {
    child.on('error', fail)
    child.on('close', (code) => {
      const raw = {
        output: readFileSync(files.output, 'utf8'),
        state: readFileSync(files.state, 'utf8'),
        summary: readFileSync(files.summary, 'utf8'),
      }
      done({ code, stdout, stderr, outputs: parseFileCommand(raw.output), raw })
    })
  })
}

type ActionPath = {
  name: string
  action: string
  step?: string
  inputs: () => Record<string, string> | Promise<Record<string, string>>
  before?: () => Promise<unknown>
  failed: boolean
  /** Sends SIGINT once this holds (an event, never a fixed delay). */
  interruptWhen?: () => boolean
  /** Outputs that are secrets handed to the next step on purpose (`api-key` of the api-key action). */
  secretOutputs?: string[]
  /** The path logs at debug level (retries): the scan covers those lines. */
  debugLines?: boolean
}

const service = () => ({ 'api-key': API_KEY, 'base-url': proxyUrl, reuse: 'never' })
const actionPaths: ActionPath[] = [
  {
    name: 'prove: success, checked on Starknet through an RPC URL with a key',
    action: '',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'verify-onchain': 'starknet', 'starknet-rpc-url': rpcUrl() }),
    failed: false,
  },
  {
    name: 'prove: the service refuses the key and echoes it',
    action: '',
    before: () => fault({ method: 'POST', path: L2_PIE, ...echoKey(401) }),
    inputs: () => ({ pie: FIXTURE_PIE, ...service() }),
    failed: true,
  },
  {
    name: 'prove: answer lost (drop-after)',
    action: '',
    before: () => fault({ method: 'POST', path: L2_PIE, kind: 'drop-after' }),
    inputs: () => ({ pie: FIXTURE_PIE, ...service() }),
    failed: true,
  },
  {
    name: "prove: a gateway's HTML 502 quoting the URL with apiKey",
    action: '',
    before: () =>
      fault({
        method: 'POST',
        path: L2_PIE,
        kind: 'status',
        status: 502,
        body: gatewayPage(),
        contentType: 'text/html',
      }),
    inputs: () => ({ pie: FIXTURE_PIE, ...service() }),
    failed: true,
  },
  {
    name: 'prove: a 503 burst on the submission and resets on the reads, then DONE',
    action: '',
    before: async () => {
      await fault({
        method: 'POST',
        path: L2_PIE,
        kind: 'status',
        status: 503,
        headers: { 'retry-after': '0' },
        times: 2,
      })
      await fault({ method: 'GET', path: '/docs/proving-query/:id', kind: 'drop', times: 2 })
    },
    inputs: () => ({ pie: FIXTURE_PIE, ...service() }),
    failed: false,
    debugLines: true,
  },
  {
    name: 'prove: a bad input beside the key',
    action: '',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), layout: API_KEY }),
    failed: true,
  },
  {
    name: 'prove on the built-in emulator with a key given',
    action: '',
    inputs: () => ({ pie: FIXTURE_PIE, emulator: 'true', 'api-key': API_KEY }),
    failed: false,
  },
  {
    name: 'prove: cancelled mid-wait (SIGINT)',
    action: '',
    before: () => emulator.control('PUT', '/timing', { stepMs: 60_000 }),
    inputs: () => ({ pie: FIXTURE_PIE, ...service() }),
    failed: true,
    interruptWhen: polling,
  },
  {
    name: 'wait: success',
    action: 'wait',
    before: () => emulator.control('PUT', '/timing', { stepMs: 40 }),
    inputs: async () => ({ 'query-id': (await finishedQuery()).id, ...service() }),
    failed: false,
  },
  {
    name: 'wait: timed out',
    action: 'wait',
    before: () => emulator.control('PUT', '/timing', { stepMs: 60_000 }),
    inputs: async () => ({
      'query-id': (await runCliJson(['prove', FIXTURE_PIE, '--json'])).provingQueryId,
      ...service(),
      'timeout-minutes': '0.02',
    }),
    failed: true,
  },
  {
    name: 'verify-proof: success',
    action: 'verify-proof',
    before: () => emulator.control('PUT', '/timing', { stepMs: 40 }),
    inputs: () => ({ proof: files.proof(), ...service() }),
    failed: false,
  },
  {
    name: 'retry: a DONE query (409)',
    action: 'retry',
    inputs: async () => ({ 'query-id': (await finishedQuery()).id, ...service() }),
    failed: true,
  },
  {
    name: 'bucket-close: unknown bucket (404)',
    action: 'bucket-close',
    inputs: () => ({ 'bucket-id': '00000000-0000-4000-8000-000000000000', ...service() }),
    failed: true,
  },
  {
    name: 'task: success',
    action: 'task',
    inputs: () => ({ task: files.task(), 'api-key': API_KEY, 'tasks-url': proxyUrl }),
    failed: false,
  },
  {
    name: 'task: X-API-KEY refused and echoed',
    action: 'task',
    before: () => fault({ method: 'POST', path: '/tasks', ...echoKey(401) }),
    inputs: () => ({ task: files.task(), 'api-key': API_KEY, 'tasks-url': proxyUrl }),
    failed: true,
  },
  {
    name: 'decommit: success',
    action: 'decommit',
    inputs: async () => ({
      'proving-query-id': (await finishedQuery()).id,
      'destination-chain-id': '0xaa36a7',
      'api-key': API_KEY,
      'tasks-url': proxyUrl,
    }),
    failed: false,
  },
  {
    name: 'storage-query: success',
    action: 'storage-query',
    inputs: () => ({ query: files.query(), 'api-key': API_KEY, 'storage-proof-url': proxyUrl }),
    failed: false,
  },
  {
    name: 'storage-query: answer lost',
    action: 'storage-query',
    before: () => fault({ method: 'POST', path: '/batch-query', kind: 'drop-after' }),
    inputs: () => ({ query: files.query(), 'api-key': API_KEY, 'storage-proof-url': proxyUrl }),
    failed: true,
  },
  {
    name: 'api-key: signs in and hands the key on (a secret output)',
    action: 'api-key',
    inputs: () => ({ 'private-key': PRIVATE_KEY, 'auth-url': proxyUrl, 'create-key': 'ci-suite' }),
    failed: false,
    secretOutputs: ['api-key'],
  },
  {
    name: 'api-key: session refused',
    action: 'api-key',
    before: () =>
      fault({ method: 'POST', path: '/auth/web3/session', status: 401, body: { error: 'INVALID_SIGNATURE' } }),
    inputs: () => ({ 'private-key': PRIVATE_KEY, 'auth-url': proxyUrl }),
    failed: true,
  },
]

describe('action steps from the sources, with RUNNER_DEBUG=1', () => {
  for (const path of actionPaths) {
    const name = `action ${path.action || 'prove'}: ${path.name}`
    row(
      name,
      async () => {
        await clearFaults()
        await path.before?.()
        if (path.interruptWhen) await emulator.control('DELETE', '/requests')
        const run = await runSourceAction(
          path.action,
          path.step ?? (path.action === '' ? 'main' : path.action),
          await path.inputs(),
          { interruptWhen: path.interruptWhen },
        )
        await clearFaults()
        await emulator.control('PUT', '/timing', { stepMs: 40 })
        if (path.failed) expect(run.stdout, run.stdout).toMatch(/^::error::/m)
        else expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
        // The debug log was on: ::debug:: lines are part of what is scanned.
        if (path.debugLines) expect(run.stdout).toMatch(/^::debug::/m)
        const allowed = (path.secretOutputs ?? []).map((output) => run.outputs[output]!).filter(Boolean)
        const outputs = { ...run.outputs }
        for (const output of path.secretOutputs ?? []) delete outputs[output]
        scan(
          name,
          {
            // The runner consumes ::add-mask:: and never shows it.
            stdout: run.stdout
              .split('\n')
              .filter((line) => !line.startsWith('::add-mask::'))
              .join('\n'),
            stderr: run.stderr,
            outputs: JSON.stringify(outputs),
            state: run.raw.state,
            summary: run.raw.summary,
          },
          [],
        )
        // A secret output is masked in the log before it is written.
        for (const value of allowed) expect(run.stdout).toContain(`::add-mask::${value}`)
      },
      30_000,
    )
  }
})

// --- Where the secrets travel, and what the emulator kept ----------------------------------------

describe('on the wire and in the emulator', () => {
  row(
    'the API key travels in a header everywhere but the two L2 endpoints; there it is apiKey in the query, masked in every logged URL',
    async () => {
      const carrying = wireRequests.filter((request) => JSON.stringify(request).includes(API_KEY))
      expect(carrying.length).toBeGreaterThan(20)
      for (const request of carrying) {
        const [path] = request.url.split('?')
        if (request.url.includes(API_KEY)) {
          expect([L2_PIE, L2_PROOF], `${request.method} ${request.url}`).toContain(path)
          expect(new URL(request.url, proxyUrl).searchParams.get('apiKey')).toBe(API_KEY)
        } else {
          expect([request.headers['api-key'], request.headers['x-api-key']], `${request.method} ${path}`).toContain(
            API_KEY,
          )
        }
      }
      // The request log shows those URLs masked.
      const l2 = emulator.requests().filter((request) => request.path.startsWith(L2_PIE))
      expect(l2.length).toBeGreaterThan(0)
      for (const request of l2) expect(request.path).toBe(`${L2_PIE}?apiKey=***`)
    },
  )

  row("the emulator's log, request log and state file hold none of the secrets", async () => {
    scan("the emulator's log, request log and state file", {
      log: emulatorLog.join('\n'),
      requestLog: JSON.stringify(emulator.requests()),
      controlState: JSON.stringify(await emulator.control('GET', '/state')),
      stateFile: await readFile(join(stateDir, 'state.json'), 'utf8'),
      // The state as a restart would read it (state.json and the changes logged since). The log
      // itself also keeps the control API's past input until it is folded in (the faults this
      // suite planted, whose bodies quote the key as a hostile service would): the test's words,
      // not something the emulator learned from a client.
      stateNow: JSON.stringify(readStateDir(stateDir)),
    })
    expect(wireSecrets.size).toBeGreaterThan(5)
  })
})
