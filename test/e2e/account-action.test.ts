import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generatePrivateKey } from 'viem/accounts'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { run } from '../../src/action/actions/api-key.ts'
import { API_KEY_INPUTS } from '../../src/action/steps/inputs.ts'
import { API_KEY_OUTPUTS } from '../../src/action/steps/outputs.ts'
import { coreIO } from '../../src/action/steps/io.ts'
import { run as runStorageQuery } from '../../src/action/actions/storage-query.ts'
import { AccountClient } from '../../src/clients/account.ts'
import { leakedSecret, readAction, runAction } from '../helpers/run-action.ts'
import { startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { RecordingIO } from '../helpers/recording-io.ts'
import type { InputSpec } from '../../src/action/types.ts'

/** The `api-key/` sub-action: run() with a recording ActionIO against the emulator over real HTTP. */

let emulator: TestEmulator

beforeAll(async () => {
  // An allow-list that no minted key is on: a key that works was accepted because it was minted.
  emulator = await startTestEmulator({ apiKeys: ['pk_preconfigured_only'] })
})
afterAll(async () => {
  await emulator.close()
})
beforeEach(async () => {
  await emulator.control('PUT', '/storage-proof/timing', { receivedMs: 20, inProgressMs: 50 })
})

describe('api-key/', () => {
  it("signs in and outputs the project's key: the private key masked first, the key masked before it is set", async () => {
    const privateKey = generatePrivateKey()
    const io = new RecordingIO({ 'private-key': privateKey, 'auth-url': emulator.url })
    await run(io)
    expect(io.failed).toBeUndefined()
    const apiKey = io.outputs['api-key']!
    expect(apiKey).toMatch(/^pk_emu_/)
    expect(io.outputs).toMatchObject({
      wallet: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
      'project-id': expect.any(String),
    })
    expect(io.calls[0]).toBe(`secret:${privateKey}`)
    expect(io.calls).toContain(`secret:${privateKey.slice(2)}`)
    const masked = io.calls.indexOf(`secret:${apiKey}`)
    expect(masked).toBeGreaterThan(0)
    expect(io.calls.indexOf('output:api-key:secret')).toBe(masked + 1)
    const visible = [...io.logs, io.summary].join('\n')
    for (const secret of [privateKey, privateKey.slice(2), apiKey]) expect(visible).not.toContain(secret)
    expect(io.summary).toMatch(/API key: passed/)

    // The same key as the wallet's own first key.
    const account = new AccountClient({ baseUrl: emulator.url, privateKey })
    expect(await account.getApiKey()).toBe(apiKey)
  })

  it('its output feeds storage-query/: a wallet to a DONE batch query in two steps', async () => {
    const keyStep = new RecordingIO({ 'private-key': generatePrivateKey(), 'auth-url': emulator.url })
    await run(keyStep)
    const query = {
      destinationChainId: '1',
      fee: '0',
      data: {
        '1': {
          'block:100': {
            accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
          },
        },
      },
    }
    const queryStep = new RecordingIO({
      query: JSON.stringify(query),
      'storage-proof-url': emulator.url,
      'api-key': keyStep.outputs['api-key']!,
    })
    await runStorageQuery(queryStep)
    expect(queryStep.failed).toBeUndefined()
    expect(queryStep.outputs['query-status']).toBe('DONE')
  })

  it('the committed bundles, as the runner runs them: api-key/ then storage-query/ with its output, the key never shown', async () => {
    const privateKey = generatePrivateKey()
    const keyStep = await runAction('api-key', { inputs: { 'private-key': privateKey, 'auth-url': emulator.url } })
    expect(keyStep.code, keyStep.stdout + keyStep.stderr).toBe(0)
    const apiKey = keyStep.outputs['api-key']!
    expect(apiKey).toMatch(/\S{8,}/)
    expect(keyStep.stdout).toContain(`::add-mask::${apiKey}`)
    expect(leakedSecret(keyStep, privateKey)).toBeUndefined()
    expect(keyStep.summary).toMatch(/^### ✅ API key: passed/)
    const query = {
      destinationChainId: '1',
      fee: '0',
      data: {
        '1': {
          'block:100': {
            accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
          },
        },
      },
    }
    const queryStep = await runAction('storage-query', {
      inputs: { query: JSON.stringify(query), 'storage-proof-url': emulator.url, 'api-key': apiKey },
    })
    expect(queryStep.code, queryStep.stdout + queryStep.stderr).toBe(0)
    expect(queryStep.outputs['query-status']).toBe('DONE')
    expect(queryStep.outputs['internal-id']).toMatch(/\S/)
    expect(leakedSecret(queryStep, apiKey)).toBeUndefined()
  })

  it('create-key mints a new key and outputs that one', async () => {
    const privateKey = generatePrivateKey()
    const first = new RecordingIO({ 'private-key': privateKey, 'auth-url': emulator.url })
    await run(first)
    const minted = new RecordingIO({
      'private-key': privateKey,
      'auth-url': emulator.url,
      'create-key': `ci-${Date.now()}`,
    })
    await run(minted)
    expect(minted.failed).toBeUndefined()
    expect(minted.outputs['api-key']).not.toBe(first.outputs['api-key'])
    expect(minted.outputs['project-id']).toBe(first.outputs['project-id'])
    expect(minted.summary).toMatch(/Minted API key/)
    const keys = await new AccountClient({ baseUrl: emulator.url, privateKey }).listApiKeys()
    expect(keys.data.map((key) => key.apiKey)).toEqual([first.outputs['api-key'], minted.outputs['api-key']])
  })

  it('missing inputs: every problem at once, nothing sent', async () => {
    const before = emulator.requests().length
    const io = new RecordingIO({})
    await run(io)
    expect(io.failed).toMatch(/2 inputs need fixing/)
    expect(io.failed).toMatch(/`private-key` is required/)
    expect(io.failed).toMatch(/`auth-url` is required/)
    expect(emulator.requests().length).toBe(before)
  })

  it('a malformed private key fails naming the input, without quoting it', async () => {
    const io = new RecordingIO({ 'private-key': '0xdeadbeef5ec2e7', 'auth-url': emulator.url })
    await run(io)
    expect(io.failed).toMatch(/`private-key` must be 32 bytes of hex/)
    expect([io.failed, io.summary, ...io.logs].join('\n')).not.toContain('deadbeef5ec2e7')
  })

  it('a refused sign-in fails with what to check', async () => {
    await emulator.control('POST', '/faults', {
      method: 'POST',
      path: '/auth/web3/session',
      status: 401,
      body: { error: 'INVALID_SIGNATURE' },
    })
    const io = new RecordingIO({ 'private-key': generatePrivateKey(), 'auth-url': emulator.url })
    await run(io)
    expect(io.failed).toMatch(/401 INVALID_SIGNATURE/)
    expect(io.summary).toMatch(/check that `private-key` is the wallet's key/)
    expect(io.outputs['api-key']).toBeUndefined()
  })

  it("another wallet's project-id: 403, fails naming project-id", async () => {
    const other = new RecordingIO({ 'private-key': generatePrivateKey(), 'auth-url': emulator.url })
    await run(other)
    const io = new RecordingIO({
      'private-key': generatePrivateKey(),
      'auth-url': emulator.url,
      'project-id': other.outputs['project-id']!,
    })
    await run(io)
    expect(io.failed).toMatch(/403/)
    expect(io.summary).toMatch(/Check `project-id`/)
    expect(io.outputs['api-key']).toBeUndefined()
  })
})

describe('coreIO: a secret output', () => {
  let dir: string
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'api-key-core-io-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('is masked (::add-mask::) before it is written, and written unmasked to GITHUB_OUTPUT', async () => {
    const outputFile = join(dir, 'output')
    await writeFile(outputFile, '')
    const previous = process.env.GITHUB_OUTPUT
    process.env.GITHUB_OUTPUT = outputFile
    const events: string[] = []
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      events.push(`stdout:${String(chunk).trim()}`)
      return true
    })
    try {
      const io = coreIO()
      const key = 'pk_emu_secret_output_value'
      io.setSecret(key)
      io.setOutput('api-key', key, { secret: true })
      events.push(`file:${await readFile(outputFile, 'utf8')}`)
      io.setOutput('note', `the key is ${key}`)
      const file = await readFile(outputFile, 'utf8')
      expect(events[0]).toBe(`stdout:::add-mask::${key}`)
      expect(file).toContain(key)
      // Any other output that merely contains the key is scrubbed.
      expect(file).toContain('the key is ***')
    } finally {
      write.mockRestore()
      if (previous === undefined) delete process.env.GITHUB_OUTPUT
      else process.env.GITHUB_OUTPUT = previous
    }
  })
})

describe('api-key/action.yml', () => {
  const action = readAction('api-key')

  it('declares exactly the inputs run() reads, with the same defaults; the ones it needs are required', () => {
    expect(Object.keys(action.inputs)).toEqual(Object.keys(API_KEY_INPUTS))
    for (const [input, spec] of Object.entries(API_KEY_INPUTS) as [string, InputSpec][]) {
      const declared = action.inputs[input]!
      expect(declared.default, `default of ${input}`).toBe(spec.kind === 'default' ? spec.default : undefined)
      expect(declared.required, `required of ${input}`).toBe(['private-key', 'auth-url'].includes(input))
      if (declared.required !== true) expect(declared.description, input).toMatch(/omitted/)
    }
  })

  it('declares exactly the outputs run() sets, and runs the bundle on node24', () => {
    expect(Object.keys(action.outputs)).toEqual([...API_KEY_OUTPUTS])
    expect(action.runs).toMatchObject({ using: 'node24', main: '../dist/api-key/index.js' })
    expect(action.yaml.branding).toMatchObject({ icon: expect.any(String), color: expect.any(String) })
  })
})
