import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { checkFactOnEthereum } from '../../src/chain/ethereum.ts'
import { main } from '../../src/cli/main.ts'
import type { CliIO } from '../../src/cli/context.ts'
import { ChainError, InvalidInputError } from '../../src/core/errors.ts'
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { FIXTURE_PIE, runAction } from '../helpers/run-action.ts'

/**
 * Issue 24 (service text, profiles, chain URLs): what a service sends is data. A hostile
 * `errorReason`, `step` or query id planted in the emulator goes through the action (its sources,
 * the real @actions/core, stdout read line by line as the runner reads it) and through the CLI on
 * a TTY-like stream; neither may carry a workflow command, Markdown structure or a terminal
 * escape out of it. Then the profiles' lookups and warnings, and the plain-http rule for RPC URLs.
 */

const API_KEY = 'pk_service_text_4d2a9c7e1b'
const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
const ESC = '\u001b'

const HOSTILE_REASON = [
  'prover crashed',
  '::add-mask::proving-kit',
  '::warning file=action.yml,line=1::pwned by the service',
  '::stop-commands::hostile-token',
  '##[error]old form',
  '',
  '### ✅ Prove: passed',
  '',
  'All good: [release notes](https://evil.example) <img src=x onerror=alert(1)>',
  `${ESC}[2K${ESC}[1Gstatus          DONE`,
  `${ESC}]8;;https://evil.example${ESC}\\click here${ESC}]8;;${ESC}\\`,
  '\u009b2Jcleared by an 8-bit CSI',
].join('\n')

let emulator: TestEmulator
beforeAll(async () => {
  emulator = await startTestEmulator({ timing: { receivedMs: 0, stepMs: 30 } })
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(async () => {
  await emulator.control('DELETE', '/faults')
})

const fault = (spec: Record<string, unknown>) => emulator.control('POST', '/faults', spec)

// --- The runner's view of a step's stdout ----------------------------------------------------

type Command = { name: string; properties: string; data: string }

/**
 * The workflow commands in a step's stdout, by the rules of actions/runner's ActionCommand:
 * lines end at \n, \r or \r\n; `TryParseV2` trims leading white space and wants `::name
 * props::data`; the old `TryParse` finds `##[name]` anywhere in the line.
 */
function workflowCommands(stdout: string): Command[] {
  const commands: Command[] = []
  for (const line of stdout.split(/\r\n|\r|\n/)) {
    const trimmed = line.replace(/^[\s\u0085]+/u, '')
    if (trimmed.startsWith('::')) {
      const end = trimmed.indexOf('::', 2)
      if (end >= 0) {
        const info = trimmed.slice(2, end)
        const space = info.indexOf(' ')
        commands.push({
          name: space < 0 ? info : info.slice(0, space),
          properties: space < 0 ? '' : info.slice(space + 1),
          data: trimmed
            .slice(end + 2)
            .replace(/%0A/g, '\n')
            .replace(/%0D/g, '\r')
            .replace(/%25/g, '%'),
        })
        continue
      }
    }
    const old = line.indexOf('##[')
    const close = old < 0 ? -1 : line.indexOf(']', old)
    if (close > old)
      commands.push({ name: line.slice(old + 3, close).split(' ')[0]!, properties: '', data: line.slice(close + 1) })
  }
  return commands
}

/**
 * What no run may show the runner: commands the service wrote, or raw escapes. The service's text
 * may be quoted inside our own commands (a debug line, the failure annotation: their data is
 * escaped), so a command of the service's is one whose data starts with the payload.
 */
function expectNoServiceCommands(stdout: string, payload: RegExp): Command[] {
  const commands = workflowCommands(stdout)
  expect(commands.filter((command) => command.name === 'stop-commands')).toEqual([])
  expect(commands.filter((command) => command.name === 'add-mask' && command.data === 'proving-kit')).toEqual([])
  expect(commands.filter((command) => /action\.yml/.test(command.properties))).toEqual([])
  expect(commands.filter((command) => payload.test(command.data))).toEqual([])
  expect(
    commands.filter(
      (command) => !['add-mask', 'group', 'endgroup', 'error', 'warning', 'debug', 'notice'].includes(command.name),
    ),
  ).toEqual([])
  expect(stdout).not.toMatch(/[\u001b\u009b\u009d]/)
  return commands
}

/** The root action from its sources (src/action/index.ts) through the real @actions/core, as the bundle runs. */
const prove = (inputs: Record<string, string> = {}) =>
  runAction('', {
    fromSource: true,
    inputs: {
      pie: FIXTURE_PIE,
      'api-key': API_KEY,
      'base-url': emulator.url,
      'timeout-minutes': '2',
      reuse: 'never',
      ...inputs,
    },
  })

/** The summary's Markdown may show the hostile text, never be shaped by it. */
function expectInertSummary(summary: string): void {
  expect(summary).not.toMatch(/^\s*#{1,6} .*✅/m)
  expect(summary).not.toMatch(/(?<!\\)\]\(https:\/\/evil/)
  expect(summary).not.toMatch(/https?:\/\/evil/)
  expect(summary).not.toContain('<img')
  expect(summary).not.toMatch(/[\u001b\u009b\u009d]/)
}

// --- 4. Service text becomes workflow commands and Markdown -----------------------------------

describe('the action: service text is data in the log, the annotations and the summary', () => {
  it('a FAILED query whose errorReason holds workflow commands, Markdown and escapes', async () => {
    await emulator.control('POST', '/next-query', { outcome: 'fail', reason: HOSTILE_REASON })
    const run = await prove()
    expect(run.code, run.stderr).toBe(1)
    const commands = expectNoServiceCommands(run.stdout, /^(pwned|hostile-token|old form)/)
    // The reason is in the failure annotation, on one line, as the characters the service sent.
    const failure = commands.find((command) => command.name === 'error' && command.data.includes('prover crashed'))
    expect(failure?.data).toContain('::warning file=action.yml,line=1::pwned by the service')
    expect(failure?.data).not.toMatch(/[\n\r]/)
    expect(run.summary).toMatch(/^### ❌ Prove: failed/)
    expectInertSummary(run.summary)
    expect(run.summary).toContain('\\[release notes\\]')
    expect(run.summary).toContain('&lt;img src=x onerror=alert(1)&gt;')
    // The output is data for the next step: the reason's lines as sent (URLs go through the redaction).
    expect(run.outputs['error-reason']).toContain(
      'prover crashed\n::add-mask::proving-kit\n::warning file=action.yml,line=1::pwned by the service',
    )
  }, 90_000)

  it('a step name holding a line break and a command is logged on one line, not run', async () => {
    await fault({
      method: 'GET',
      path: '/docs/proving-query/:id',
      kind: 'status',
      status: 200,
      body: {
        provingQuery: { id: 'ignored', status: 'IN_PROGRESS', step: `PIE_VALIDATION\n::warning::pwned step${ESC}[31m` },
        metadataUrls: [],
      },
    })
    const run = await prove()
    expect(run.code, run.stderr).toBe(0)
    expectNoServiceCommands(run.stdout, /^pwned/)
    expect(run.stdout).toMatch(/IN_PROGRESS {2}step PIE_VALIDATION\\n::warning::pwned step\n/)
  }, 90_000)

  it('a query id that is not one: refused before it is logged or used, and the workflow file is not blamed', async () => {
    await fault({
      method: 'POST',
      path: L2_PIE,
      kind: 'status',
      status: 200,
      body: { provingQueryId: 'q-1`\n::warning::pwned id\n| x |' },
    })
    const run = await prove()
    expect(run.code, run.stderr).toBe(1)
    expectNoServiceCommands(run.stdout, /^pwned/)
    expect(run.outputs['query-id']).toBeUndefined()
    expect(run.stdout).toContain(
      'The query id the proving service returned holds a control character, so it was not used.',
    )
    expect(run.summary).toContain('proving query list')
    expect(run.summary).not.toContain('workflow file')
    expectInertSummary(run.summary)
  }, 90_000)
})

// --- 5. Terminal escapes -----------------------------------------------------------------------

type CliRun = { code: number; stdout: string; stderr: string }

/** `proving ...` in this process, writing to a stream that says it is a terminal. */
async function onTerminal(args: string[], env: Record<string, string | undefined> = {}): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const io: CliIO = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: {
      PROVING_JOURNAL_DIR: mkdtempSync(join(tmpdir(), 'service-text-journal-')),
      PROVING_API_KEY: API_KEY,
      PROVING_REUSE: 'never',
      ...env,
    },
    isTTY: true,
  }
  const code = await main(args, { io, signal: new AbortController().signal })
  return { code, stdout, stderr }
}

/** A query that FAILED with the hostile reason, created through the emulator. */
async function failedQuery(): Promise<string> {
  await emulator.control('POST', '/next-query', { outcome: 'fail', reason: HOSTILE_REASON })
  const client = emulator.client(API_KEY)
  const { provingQueryId } = await client.submitPie({ pieZip: FIXTURE_PIE })
  await client.waitForQuery(provingQueryId, { timeoutMs: 30_000 }).catch(() => undefined)
  return provingQueryId
}

function expectCleanTerminal(text: string): void {
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
  // No line but our own begins with "status": the forged "status DONE" stays inside the reason's line.
  expect(text.split('\n').filter((line) => /^\s*status\s+DONE/.test(line))).toEqual([])
}

describe('the CLI on a terminal: escape sequences and forged lines never reach it', () => {
  it('`query get` of a FAILED query: the reason on its row, one line, no escapes', async () => {
    const id = await failedQuery()
    const run = await onTerminal(['query', 'get', id, '--base-url', emulator.url])
    expect(run.code, run.stderr).toBe(0)
    expectCleanTerminal(run.stdout)
    const errorRow = run.stdout.split('\n').find((line) => line.startsWith('error'))
    expect(errorRow).toContain('prover crashed\\n::add-mask::proving-kit')
    expect(errorRow).toContain('click here')
    expect(run.stdout).not.toContain(']8;;')
  }, 60_000)

  it('`query wait` ending FAILED: the error on stderr is one line per message, no escapes', async () => {
    const id = await failedQuery()
    const run = await onTerminal(['query', 'wait', id, '--base-url', emulator.url])
    expect(run.code).toBe(1)
    expectCleanTerminal(run.stderr)
    expectCleanTerminal(run.stdout)
    expect(run.stdout).toContain('prover crashed\\n::add-mask::proving-kit')
  }, 60_000)

  it('a status the toolkit does not know, holding a line break: the error names it on one line', async () => {
    const client = emulator.client(API_KEY)
    const { provingQueryId } = await client.submitPie({ pieZip: FIXTURE_PIE })
    await fault({
      method: 'GET',
      path: '/docs/proving-query/:id',
      kind: 'status',
      status: 200,
      times: 100,
      body: {
        provingQuery: { id: provingQueryId, status: `WEIRD\nstatus          DONE${ESC}]0;title\u0007` },
        metadataUrls: [],
      },
    })
    const run = await onTerminal(['query', 'wait', provingQueryId, '--base-url', emulator.url, '--read-paths', 'docs'])
    expect(run.code, run.stderr).not.toBe(0)
    expectCleanTerminal(run.stderr)
    expect(run.stderr).toContain('reports status "WEIRD\\nstatus          DONE"')
  }, 60_000)

  it('--json keeps the reason exactly, as JSON escapes', async () => {
    const id = await failedQuery()
    const run = await onTerminal(['query', 'get', id, '--base-url', emulator.url, '--json'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).not.toMatch(/[\u001b\u009b]/)
    // The same JSON value: the escapes are in the data, not on the screen.
    const reason = JSON.parse(run.stdout).provingQuery.errorReason as string
    expect(reason).toContain(`prover crashed\n::add-mask::proving-kit`)
    expect(reason).toContain(`${ESC}[2K${ESC}[1Gstatus          DONE`)
  }, 60_000)
})

// --- 7. Profiles ---------------------------------------------------------------------------------

describe('profiles: own properties only, and an override of --profile is said', () => {
  const configFile = (config: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'service-text-config-')), 'config.json')
    writeFileSync(file, JSON.stringify(config))
    return file
  }

  it('PROVING_BASE_URL over `--profile staging`: a warning on stderr naming the variable', async () => {
    const PROVING_CONFIG = configFile({ profiles: { staging: { baseUrl: 'https://staging.proving.example' } } })
    const run = await onTerminal(['query', 'list', '--profile', 'staging'], {
      PROVING_CONFIG,
      PROVING_BASE_URL: emulator.url,
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(
      'warning: PROVING_BASE_URL overrides the proving service address of profile staging (--profile staging)',
    )
    expect(run.stderr).toContain('https://staging.proving.example')
    // Chosen by PROVING_PROFILE (not on the command line), the documented precedence holds quietly.
    const quiet = await onTerminal(['query', 'list'], {
      PROVING_CONFIG,
      PROVING_PROFILE: 'staging',
      PROVING_BASE_URL: emulator.url,
    })
    expect(quiet.code, quiet.stderr).toBe(0)
    expect(quiet.stderr).not.toContain('overrides')
  }, 30_000)

  it.each(['constructor', 'toString', '__proto__', 'hasOwnProperty'])(
    '`--profile %s` is no profile (exit 2, the known ones listed)',
    async (name) => {
      const PROVING_CONFIG = configFile({ profiles: { staging: { baseUrl: 'https://staging.proving.example' } } })
      const run = await onTerminal(['query', 'list', '--profile', name], { PROVING_CONFIG })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(`No profile "${name}" (from --profile): known profiles are local, staging`)
    },
  )

  it('a config file cannot define constructor as a profile, and its __proto__ is none', async () => {
    const PROVING_CONFIG = configFile({ profiles: { constructor: { baseUrl: 'https://evil.example' } } })
    const run = await onTerminal(['query', 'list', '--profile', 'constructor'], { PROVING_CONFIG })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('profiles.constructor: a profile cannot be named __proto__, constructor, prototype')
    const proto = join(mkdtempSync(join(tmpdir(), 'service-text-config-')), 'config.json')
    writeFileSync(proto, '{ "profiles": { "__proto__": { "baseUrl": "https://evil.example" } } }')
    const again = await onTerminal(['query', 'list', '--profile', '__proto__'], { PROVING_CONFIG: proto })
    expect(again.code).toBe(2)
    expect(again.stderr).toContain('No profile "__proto__"')
  })
})

// --- 9. Chain RPC URLs under the http rule --------------------------------------------------------

describe('chain RPC URLs: plain http only to this machine unless allowed', () => {
  const REMOTE = 'http://rpc.proving-test.example/v3/rpcKEY0123456789abcdef'
  const FACT = `0x${'ab'.repeat(32)}`

  it('`proving fact check --ethereum-rpc http://<remote>`: exit 2, the URL shown by scheme and host only', async () => {
    const run = await onTerminal(['fact', 'check', FACT, '--ethereum-rpc', REMOTE])
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/--ethereum-rpc http:\/\/rpc\.proving-test\.example\/? is plain http to another machine/)
    expect(run.stderr).toContain('--allow-insecure-http')
    expect(run.stderr).not.toContain('rpcKEY0123456789abcdef')
  })

  it('the library refuses it too; this machine and allowInsecureHttp pass the rule', async () => {
    await expect(checkFactOnEthereum({ rpcUrl: REMOTE, fact: FACT })).rejects.toBeInstanceOf(InvalidInputError)
    // Past the rule, these fail only on the connection: nothing listens there.
    const closed = 'http://127.0.0.1:9/rpc'
    await expect(checkFactOnEthereum({ rpcUrl: closed, fact: FACT, requestTimeoutMs: 2_000 })).rejects.toBeInstanceOf(
      ChainError,
    )
  }, 30_000)

  it('the action refuses an http `ethereum-rpc-url` with the other inputs: nothing is submitted', async () => {
    const before = (await emulator.call('GET', '/_emulator/state')).body
    const run = await prove({ 'verify-onchain': 'ethereum', 'ethereum-rpc-url': REMOTE })
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('`ethereum-rpc-url` is plain http to another machine')
    // Masked first (the runner consumes ::add-mask::), never shown.
    expect(
      run.stdout
        .split('\n')
        .filter((line) => !line.startsWith('::add-mask::'))
        .join('\n'),
    ).not.toContain('rpcKEY0123456789abcdef')
    const after = (await emulator.call('GET', '/_emulator/state')).body
    expect(Object.keys(after.queries ?? {}).length).toBe(Object.keys(before.queries ?? {}).length)
  }, 60_000)
})
