import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { mkdir, readFile, rm, symlink, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { AccountClient } from '../../src/clients/account.ts'
import { ProvingClient } from '../../src/clients/proving.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { TaskClient } from '../../src/clients/tasks.ts'
import { InvalidInputError } from '../../src/core/errors.ts'
import { validatePie } from '../../src/pie/index.ts'
import { useCatalogue } from '../helpers/catalogue.ts'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { fakeIO, REPO_ROOT, unzipPie } from '../helpers/run-action.ts'
import { taskBody } from '../helpers/tasks.ts'

/**
 * Bad-input catalogue: wrong hex, chain ids, layouts, enum values, int32 overflow, oversize
 * strings, missing and conflicting inputs, unreadable or corrupt files, symlinks out of the PIE
 * directory, JSON bodies too deep or too large, non-UTF-8 bytes: through the CLI, the library and
 * the action, one table row each. Every row asserts
 *
 * - one error line (a PIE's problem list may follow, indented) naming the input and the fix;
 * - the documented outcome: exit code 2 (CLI), a failed step with the message and the summary
 *   (action), an InvalidInputError whose `input` names the input (library);
 * - no stack trace (unless --debug, rows of their own);
 * - no request: the emulator every service points at logged none ("leaked" otherwise).
 */

const { catalogue, row } = useCatalogue('bad-input catalogue')

const FIX =
  /\b(give|set|pass|use|check|drop|fix|omit|copy|save|choose|remove|run|pipe|must|send|flatten|name|add|raise|is required|usage)\b/i
const STACK = /\n\s+at [\w<.]|\bat .*\.ts:\d+:\d+/

let emulator: TestEmulator
// Made now: the table rows name files in it; beforeAll fills it.
const dir = mkdtempSync(join(tmpdir(), 'bad-input-'))
const file = (name: string) => join(dir, name)

beforeAll(async () => {
  emulator = await startTestEmulator()
  await writeFile(file('corrupt.zip'), Buffer.concat([Buffer.from('PK\x03\x04'), randomBytes(512)]))
  await writeFile(file('not-a-zip.zip'), 'hello, this is not a zip\n')
  await mkdir(file('a-folder'))
  // A PIE directory whose memory.bin points outside it.
  const outside = file('outside-secret.bin')
  await writeFile(outside, randomBytes(64))
  await unzipPie(FIXTURE_PIE, file('pie-symlink'))
  await unlink(file('pie-symlink/memory.bin'))
  await symlink(outside, file('pie-symlink/memory.bin'))
  // A PIE directory with a file too many, and one missing its memory.
  await unzipPie(FIXTURE_PIE, file('pie-extra'))
  await writeFile(file('pie-extra/notes.txt'), 'not part of a PIE')
  await unzipPie(FIXTURE_PIE, file('pie-incomplete'))
  await unlink(file('pie-incomplete/memory.bin'))

  const json = (value: unknown) => JSON.stringify(value)
  await writeFile(file('task-decimal-chain.json'), json(taskBody({ destination_chain_id: '11155111' })))
  await writeFile(file('task-bad-hash.json'), json(taskBody({ program_hash: '0xZZ12' })))
  await writeFile(file('task-not-json.json'), '{ "destination_chain_id": "0xaa36a7", ')
  // Valid JSON whose bytes are not UTF-8 (Latin-1 é in a string).
  await writeFile(
    file('task-latin1.json'),
    Buffer.concat([
      Buffer.from(`${json(taskBody()).slice(0, -1)},"webhook_url":"https://example.com/caf`),
      Buffer.from([0xe9]),
      Buffer.from('"}'),
    ]),
  )
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`
  await writeFile(
    file('task-deep.json'),
    `{"destination_chain_id":"0xaa36a7","program_hash":"0x1","input":{"compiled_class":{},"params":[],"injected_state":{"x":${deep(5_000)}}}}`,
  )
  await writeFile(
    file('task-huge.json'),
    json(taskBody({ input: { ...taskBody().input, injected_state: { blob: 'x'.repeat(17 * 1024 * 1024) } } })),
  )

  const account = '0x75cec1db9dceb703200eaa6595f66885c962b920'
  const query = (overrides: Record<string, unknown>) =>
    json({
      destinationChainId: '11155111',
      fee: '0',
      data: { '11155111': { 'block:5382810': { accounts: { [account]: { props: ['BALANCE'], slots: [] } } } } },
      ...overrides,
    })
  await writeFile(file('query-hex-chain.json'), query({ destinationChainId: '0xaa36a7' }))
  await writeFile(file('query-bad-fee.json'), query({ fee: 'ten' }))
  await writeFile(
    file('query-bad-address.json'),
    query({ data: { '1': { 'block:1': { accounts: { '1234': { props: ['BALANCE'], slots: [] } } } } } }),
  )
  await writeFile(file('query-huge.json'), query({ padding: 'x'.repeat(5 * 1024 * 1024) }))
  await writeFile(file('query-deep.json'), `{"destinationChainId":"1","fee":"0","data":${deep(40)}}`)
  await writeFile(
    file('query-latin1.bin'),
    Buffer.concat([Buffer.from(`${query({}).slice(0, -1)},"note":"gr`), Buffer.from([0xfc]), Buffer.from('n"}')]),
  )
  await writeFile(file('dp-output-bad.json'), json({ mmr_metas: [{ Sha256: {} }] }))
})

afterAll(async () => {
  await emulator?.close()
  await rm(dir, { recursive: true, force: true })
})

beforeEach(async () => {
  await emulator.control('DELETE', '/requests')
})

/** Nothing went out: the emulator every service points at saw no request. */
function assertNoRequest(name: string): void {
  const requests = emulator.requests()
  if (requests.length)
    catalogue.leak(
      name,
      `${requests.length} request(s): ${requests.map((request) => `${request.method} ${request.path}`).join(', ')}`,
    )
}

function assertLines(text: string, options: { input: string; fix?: RegExp; lines?: 'one' | 'headline' }): void {
  const lines = text.trimEnd().split('\n')
  expect(lines[0], text).toContain(options.input)
  expect(lines[0], text).toMatch(options.fix ?? FIX)
  if (options.lines === 'headline')
    expect(
      lines.slice(1).every((line) => /^\s+\S/.test(line)),
      text,
    ).toBe(true)
  else expect(lines, text).toHaveLength(1)
  expect(text).not.toMatch(STACK)
}

// --- CLI -------------------------------------------------------------------------------------

type CliCase = {
  name: string
  args: string[]
  /** Text the error line must contain: the flag or argument. */
  input: string
  fix?: RegExp
  env?: Record<string, string | undefined>
  lines?: 'one' | 'headline'
  stdin?: string | Buffer
}

function cliRow(spec: CliCase): void {
  row(`CLI: ${spec.name}`, async () => {
    const { Readable } = await import('node:stream')
    const result = await runCli(spec.args, {
      env: {
        PROVING_BASE_URL: emulator.url,
        PROVING_API_KEY: KEY,
        PROVING_TASKS_URL: emulator.url,
        PROVING_STORAGE_PROOF_URL: emulator.url,
        PROVING_AUTH_URL: emulator.url,
        ...spec.env,
      },
      stdin: spec.stdin === undefined ? undefined : Readable.from([Buffer.from(spec.stdin)]),
    })
    expect(result.code, result.stderr).toBe(2)
    expect(result.stdout).toBe('')
    expect(result.stderr).toMatch(/^proving: /)
    assertLines(result.stderr, spec)
    assertNoRequest(`CLI: ${spec.name}`)
  })
}

const cli: CliCase[] = [
  // prove
  {
    name: 'prove: unknown layout',
    args: ['prove', FIXTURE_PIE, '--layout', 'recursive with keccak'],
    input: '--layout',
    fix: /must be one of auto, recursive, recursive_with_poseidon, small, dex, starknet, starknet_with_keccak, dynamic; got/,
  },
  // The L2 endpoint's own list, refused before the upload (the service would refuse it after).
  {
    name: 'prove: --layout fastest',
    args: ['prove', FIXTURE_PIE, '--layout', 'fastest'],
    input: '--layout',
    fix: /must be one of auto, recursive, recursive_with_poseidon, small, dex, starknet, starknet_with_keccak, dynamic; got "fastest"\. Nothing was sent\./,
  },
  {
    name: 'prove: --layout plain on the L2 endpoint',
    args: ['prove', FIXTURE_PIE, '--layout', 'plain'],
    input: '--layout',
    fix: /\(plain is a layout of the general submission only\)/,
  },
  {
    name: 'prove: --layout fastest with a general-submission flag',
    args: ['prove', FIXTURE_PIE, '--layout', 'fastest', '--external-id', 'e-1'],
    input: '--layout',
    fix: /must be one of auto, plain, recursive, recursive_with_poseidon, recursive_large_output, all_solidity, all_cairo, dynamic, small, dex, starknet, starknet_with_keccak; got "fastest"/,
  },
  { name: 'prove: empty prover', args: ['prove', FIXTURE_PIE, '--prover', ' '], input: '--prover', fix: /omit it/ },
  { name: 'prove: missing <pie>', args: ['prove'], input: '<pie>', fix: /usage is `proving prove <pie>\.\.\.`/ },
  { name: 'prove: two positionals', args: ['prove', FIXTURE_PIE, 'extra.zip'], input: 'extra.zip' },
  {
    name: 'prove: no file at <pie>',
    args: ['prove', file('nope.zip')],
    input: '<pie>',
    fix: /give a pie\.zip or a PIE directory/,
  },
  {
    name: 'prove: corrupt zip',
    args: ['prove', file('corrupt.zip')],
    input: '<pie>',
    fix: /not a valid Cairo PIE/,
    lines: 'headline',
  },
  {
    name: 'prove: a text file as <pie>',
    args: ['prove', file('not-a-zip.zip')],
    input: '<pie>',
    fix: /not a valid Cairo PIE/,
    lines: 'headline',
  },
  {
    name: 'prove: symlink out of the PIE directory',
    args: ['prove', file('pie-symlink')],
    input: '<pie>',
    fix: /fix what is listed below/,
    lines: 'headline',
  },
  {
    name: 'prove: extra file in the PIE directory',
    args: ['prove', file('pie-extra')],
    input: '<pie>',
    fix: /fix what is listed below/,
    lines: 'headline',
  },
  {
    name: 'prove: PIE directory without memory.bin',
    args: ['prove', file('pie-incomplete')],
    input: '<pie>',
    fix: /fix what is listed below/,
    lines: 'headline',
  },
  {
    name: 'prove: --timeout not a duration',
    args: ['prove', FIXTURE_PIE, '--wait', '--timeout', 'soon'],
    input: '--timeout',
    fix: /90s, 30m or 2h/,
  },
  {
    name: 'prove: --timeout 0',
    args: ['prove', FIXTURE_PIE, '--wait', '--timeout', '0'],
    input: '--timeout',
    fix: /above 0/,
  },
  {
    name: 'prove: --timeout -5m',
    args: ['prove', FIXTURE_PIE, '--wait', '--timeout', '-5m'],
    input: '--timeout',
    fix: /must be positive: a duration such as 90s, 30m or 2h; got "-5m"/,
  },
  {
    name: 'prove: --timeout over 7 days',
    args: ['prove', FIXTURE_PIE, '--wait', '--timeout', '200h'],
    input: '--timeout',
    fix: /at most 7 days/,
  },
  {
    name: 'prove: --emulator with --base-url',
    args: ['prove', FIXTURE_PIE, '--emulator', '--base-url', 'http://127.0.0.1:9'],
    input: '--emulator',
    fix: /drop one of them/,
  },
  {
    name: 'prove: no service address',
    args: ['prove', FIXTURE_PIE],
    env: { PROVING_BASE_URL: undefined },
    input: '--base-url',
    fix: /PROVING_BASE_URL/,
  },
  {
    name: 'prove: no API key',
    args: ['prove', FIXTURE_PIE],
    env: { PROVING_API_KEY: undefined },
    input: '--api-key',
    fix: /set PROVING_API_KEY/,
  },
  {
    name: 'prove: ftp base URL',
    args: ['prove', FIXTURE_PIE, '--base-url', 'ftp://proving.example.com'],
    input: '--base-url',
    fix: /http or https/,
  },
  {
    name: 'prove: base URL not a URL',
    args: ['prove', FIXTURE_PIE, '--base-url', 'proving example com'],
    input: '--base-url',
    fix: /give an absolute http/,
  },
  { name: 'prove: misspelt flag', args: ['prove', FIXTURE_PIE, '--layuot', 'auto'], input: '--layuot', fix: /--help/ },
  // verify-proof
  {
    name: 'verify-proof: --stone-version missing',
    args: ['verify-proof', FIXTURE_PIE, '--memory-verification', 'strict'],
    input: '--stone-version',
    fix: /is required/,
  },
  {
    name: 'verify-proof: --stone-version stone7',
    args: ['verify-proof', FIXTURE_PIE, '--stone-version', 'stone7', '--memory-verification', 'strict'],
    input: '--stone-version',
    fix: /must be one of stone5, stone6/,
  },
  {
    name: 'verify-proof: --memory-verification loose',
    args: ['verify-proof', FIXTURE_PIE, '--stone-version', 'stone6', '--memory-verification', 'loose'],
    input: '--memory-verification',
    fix: /must be one of strict, relaxed, cairo1/,
  },
  {
    name: 'verify-proof: no proof file',
    args: ['verify-proof', file('proof-missing.json'), '--stone-version', 'stone6', '--memory-verification', 'strict'],
    input: 'proof',
    fix: /check the path/,
  },
  {
    name: 'verify-proof: a folder as the proof',
    args: ['verify-proof', file('a-folder'), '--stone-version', 'stone6', '--memory-verification', 'strict'],
    input: 'proof',
    fix: /give the path of a file/,
  },
  // query
  { name: 'query get: empty id', args: ['query', 'get', ''], input: 'queryId', fix: /give the identifier/ },
  {
    name: 'query get: id with a slash',
    args: ['query', 'get', 'abc/../../admin'],
    input: 'queryId',
    fix: /copy it as the service returned it/,
  },
  {
    name: 'query get: oversize id (300 characters)',
    args: ['query', 'get', 'q'.repeat(300)],
    input: 'queryId',
    fix: /copy it as the service returned it/,
  },
  { name: 'query list: --limit 0', args: ['query', 'list', '--limit', '0'], input: '--limit', fix: /from 1 to 100/ },
  {
    name: 'query list: --limit 101',
    args: ['query', 'list', '--limit', '101'],
    input: '--limit',
    fix: /from 1 to 100/,
  },
  // A negative number after a flag that takes a value is that value, refused by the flag's own check.
  {
    name: 'query list: --offset -1',
    args: ['query', 'list', '--offset', '-1'],
    input: '--offset',
    fix: /whole number from 0/,
  },
  {
    name: 'query list: --offset=-1',
    args: ['query', 'list', '--offset=-1'],
    input: '--offset',
    fix: /whole number from 0/,
  },
  {
    name: 'query list: --network DEVNET',
    args: ['query', 'list', '--network', 'DEVNET'],
    input: '--network',
    fix: /MAINNET or TESTNET/,
  },
  {
    name: 'query wait: --timeout 1w',
    args: ['query', 'wait', 'q-1', '--timeout', '1w'],
    input: '--timeout',
    fix: /90s, 30m or 2h/,
  },
  // bucket
  {
    name: 'bucket create: --aggregator-version empty',
    args: ['bucket', 'create', '--aggregator-version', ' '],
    input: '--aggregator-version',
    fix: /is required/,
  },
  {
    name: 'bucket create: --node-width 2^31 (int32 overflow)',
    args: ['bucket', 'create', '--aggregator-version', 'v1', '--node-width', '2147483648'],
    input: '--node-width',
    fix: /from 1 to 2147483647/,
  },
  {
    name: 'bucket create: --node-width 1.5',
    args: ['bucket', 'create', '--aggregator-version', 'v1', '--node-width', '1.5'],
    input: '--node-width',
    fix: /whole number/,
  },
  { name: 'bucket close: id with a space', args: ['bucket', 'close', 'my bucket'], input: 'bucketId', fix: /copy it/ },
  // task
  {
    name: 'task submit: no file',
    args: ['task', 'submit', file('task-missing.json')],
    input: '<task.json>',
    fix: /check the path/,
  },
  {
    name: 'task submit: a folder',
    args: ['task', 'submit', file('a-folder')],
    input: '<task.json>',
    fix: /give the path of a JSON file/,
  },
  {
    name: 'task submit: not JSON',
    args: ['task', 'submit', file('task-not-json.json')],
    input: '<task.json>',
    fix: /fix its syntax/,
  },
  {
    name: 'task submit: decimal destination_chain_id',
    args: ['task', 'submit', file('task-decimal-chain.json')],
    input: 'destination_chain_id',
    fix: /must be 0x-prefixed hex/,
  },
  {
    name: 'task submit: program_hash not hex',
    args: ['task', 'submit', file('task-bad-hash.json')],
    input: 'program_hash',
    fix: /must be/,
  },
  {
    name: 'task submit: non-UTF-8 bytes',
    args: ['task', 'submit', file('task-latin1.json')],
    input: '<task.json>',
    fix: /save it as UTF-8/,
  },
  {
    name: 'task submit: JSON nested 5000 deep',
    args: ['task', 'submit', file('task-deep.json')],
    input: '<task.json>',
    fix: /flatten it/,
  },
  {
    name: 'task submit: 17 MiB of JSON',
    args: ['task', 'submit', file('task-huge.json')],
    input: '<task.json>',
    fix: /send a smaller one/,
  },
  {
    name: 'task submit: non-UTF-8 on stdin',
    args: ['task', 'submit', '-'],
    stdin: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
    input: '<task.json>',
    fix: /save it as UTF-8/,
  },
  {
    name: 'task decommit: --proving-query-id missing',
    args: ['task', 'decommit', '--destination-chain-id', '0xaa36a7'],
    input: '--proving-query-id',
    fix: /is required/,
  },
  {
    name: 'task decommit: decimal chain id',
    args: ['task', 'decommit', '--proving-query-id', 'q-1', '--destination-chain-id', '11155111'],
    input: 'destination_chain_id',
    fix: /must be 0x-prefixed hex/,
  },
  {
    name: 'task decommit: --program-hash 0xZZ',
    args: [
      'task',
      'decommit',
      '--proving-query-id',
      'q-1',
      '--destination-chain-id',
      '0xaa36a7',
      '--program-hash',
      '0xZZ',
    ],
    input: 'program_hash',
    fix: /must be 0x-prefixed hex/,
  },
  {
    name: 'task decommit: --webhook-url not a URL',
    args: [
      'task',
      'decommit',
      '--proving-query-id',
      'q-1',
      '--destination-chain-id',
      '0xaa36a7',
      '--webhook-url',
      'hooks.example.com',
    ],
    input: 'webhook_url',
    fix: /must be an absolute http/,
  },
  {
    name: 'task decommit: --dp-output of the wrong shape',
    args: [
      'task',
      'decommit',
      '--proving-query-id',
      'q-1',
      '--destination-chain-id',
      '0xaa36a7',
      '--dp-output',
      file('dp-output-bad.json'),
    ],
    input: 'dp_output',
    fix: /not a known field/,
    lines: 'headline',
  },
  { name: 'task list: --limit 101', args: ['task', 'list', '--limit', '101'], input: '--limit', fix: /from 1 to 100/ },
  {
    name: 'task list: --status Done',
    args: ['task', 'list', '--status', 'Done'],
    input: '--status',
    fix: /must be one of Received/,
  },
  {
    name: 'task list: --offset -1',
    args: ['task', 'list', '--offset=-1'],
    input: '--offset',
    fix: /whole number from 0/,
  },
  { name: 'task status: empty uuid', args: ['task', 'status', ' '], input: 'uuid', fix: /give the uuid/ },
  // storage
  {
    name: 'storage query: hex destinationChainId',
    args: ['storage', 'query', file('query-hex-chain.json')],
    input: 'destinationChainId',
    lines: 'headline',
    fix: /fix it before sending/,
  },
  {
    name: 'storage query: fee not numeric',
    args: ['storage', 'query', file('query-bad-fee.json')],
    input: 'fee',
    lines: 'headline',
    fix: /fix it before sending/,
  },
  {
    name: 'storage query: account not an address',
    args: ['storage', 'query', file('query-bad-address.json')],
    input: 'accounts',
    lines: 'headline',
    fix: /fix it before sending/,
  },
  {
    name: 'storage query: 5 MiB file',
    args: ['storage', 'query', file('query-huge.json')],
    input: '<query.json>',
    fix: /send a smaller one/,
  },
  {
    name: 'storage query: nested 40 deep',
    args: ['storage', 'query', file('query-deep.json')],
    input: '<query.json>',
    fix: /flatten it/,
  },
  {
    name: 'storage query: non-UTF-8 bytes',
    args: ['storage', 'query', file('query-latin1.bin')],
    input: '<query.json>',
    fix: /save it as UTF-8/,
  },
  {
    name: 'storage query: a folder',
    args: ['storage', 'query', file('a-folder')],
    input: '<query.json>',
    fix: /give the path/,
  },
  { name: 'storage status: id with #', args: ['storage', 'status', 'abc#def'], input: 'internalId', fix: /copy it/ },
  // fact
  {
    name: 'fact check: both RPCs',
    args: ['fact', 'check', '0x1', '--ethereum-rpc', 'http://127.0.0.1:9', '--starknet-rpc', 'http://127.0.0.1:9'],
    input: '--ethereum-rpc',
    fix: /exactly one/,
  },
  {
    name: 'fact check: fact not hex',
    args: ['fact', 'check', '0xZZ', '--ethereum-rpc', 'http://127.0.0.1:9'],
    input: '<fact>',
  },
  {
    name: 'fact check: --network goerli',
    args: ['fact', 'check', '0x1', '--ethereum-rpc', 'http://127.0.0.1:9', '--network', 'goerli'],
    input: '--network',
    fix: /mainnet or sepolia/,
  },
  {
    name: 'fact check: --min-security-bits 2^32 (overflow)',
    args: ['fact', 'check', '0x1', '--starknet-rpc', 'http://127.0.0.1:9', '--min-security-bits', '4294967296'],
    input: '--min-security-bits',
    fix: /whole number from 0/,
  },
  {
    name: 'fact check: Starknet fact above the field prime',
    args: ['fact', 'check', `0x${'f'.repeat(64)}`, '--starknet-rpc', 'http://127.0.0.1:9'],
    input: '<fact>',
    fix: /check that you copied the Integrity fact hash/,
    lines: 'headline',
  },
  {
    name: 'fact check: --registry-kind sharp on Starknet',
    args: ['fact', 'check', '0x1', '--starknet-rpc', 'http://127.0.0.1:9', '--registry-kind', 'sharp'],
    input: '--registry-kind',
    fix: /integrity or satellite/,
  },
  {
    name: 'fact check: --mocked on SHARP',
    args: ['fact', 'check', '0x1', '--ethereum-rpc', 'http://127.0.0.1:9', '--registry-kind', 'sharp', '--mocked'],
    input: '--mocked',
    fix: /--registry-kind satellite/,
  },
  {
    name: 'fact check: --layout with an Ethereum RPC',
    args: ['fact', 'check', '0x1', '--ethereum-rpc', 'http://127.0.0.1:9', '--layout', 'recursive'],
    input: '--layout',
    fix: /applies to Integrity verifications on Starknet/,
  },
  // auth and the emulator
  {
    name: 'auth login: --private-key on the command line',
    args: ['auth', 'login', '--private-key', `0x${'11'.repeat(32)}`],
    input: '--private-key',
    fix: /Set PROVING_PRIVATE_KEY/,
  },
  {
    name: 'auth login: private key of the wrong length',
    args: ['auth', 'login'],
    env: { PROVING_PRIVATE_KEY: '0x1234' },
    input: 'private key',
    fix: /64 digits/,
  },
  {
    name: 'auth login: no auth URL',
    args: ['auth', 'login'],
    env: { PROVING_AUTH_URL: undefined, PROVING_PRIVATE_KEY: `0x${'11'.repeat(32)}` },
    input: '--auth-url',
    fix: /PROVING_AUTH_URL/,
  },
  {
    name: 'auth create-key: --name missing',
    args: ['auth', 'create-key'],
    env: { PROVING_PRIVATE_KEY: `0x${'11'.repeat(32)}` },
    input: '--name',
    fix: /is required/,
  },
  {
    name: 'emulator: --host 0.0.0.0 without --api-keys',
    args: ['emulator', '--host', '0.0.0.0'],
    input: '--api-keys',
    fix: /give the keys it accepts with --api-keys k1,k2/,
    lines: 'headline',
  },
  { name: 'emulator: --port 70000', args: ['emulator', '--port', '70000'], input: '--port', fix: /from 0 to 65535/ },
  { name: 'unknown command', args: ['prvoe', FIXTURE_PIE], input: 'prvoe', fix: /proving --help/ },
]

describe('CLI', () => {
  for (const spec of cli) cliRow(spec)

  row('CLI: --debug shows the stack of a bad input (and only then)', async () => {
    const plain = await runCli(['prove', FIXTURE_PIE, '--layout', 'bogus!'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY },
    })
    const debug = await runCli(['prove', FIXTURE_PIE, '--layout', 'bogus!', '--debug'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY },
    })
    const envDebug = await runCli(['prove', FIXTURE_PIE, '--layout', 'bogus!'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, PROVING_DEBUG: '1' },
    })
    expect(plain.stderr).not.toMatch(STACK)
    for (const run of [debug, envDebug]) {
      expect(run.code).toBe(2)
      expect(run.stderr).toMatch(/^proving: --layout must be one of/)
      expect(run.stderr).toMatch(/\n\s+at /)
    }
    assertNoRequest('CLI: --debug shows the stack of a bad input (and only then)')
  })
})

// --- Library ---------------------------------------------------------------------------------

type LibraryCase = { name: string; input: string; fix?: RegExp; call: () => unknown }

const proving = () => new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent })
const tasks = () => new TaskClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent })
const storage = () => new StorageProofClient({ baseUrl: emulator.url, apiKey: KEY, dispatcher: emulator.agent })
const nested = (levels: number): unknown => {
  let value: unknown = {}
  for (let level = 0; level < levels; level++) value = { next: value }
  return value
}
const batchQuery = (overrides: Record<string, unknown> = {}) => ({
  destinationChainId: '11155111',
  fee: '0',
  data: {
    '11155111': {
      'block:5382810': {
        accounts: { '0x75cec1db9dceb703200eaa6595f66885c962b920': { props: ['BALANCE'], slots: [] } },
      },
    },
  },
  ...overrides,
})

const library: LibraryCase[] = [
  {
    name: 'submitPie: layout "fast!"',
    input: 'layout',
    fix: /must be one of/,
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    call: () => proving().submitPie({ pieZip: FIXTURE_PIE, layout: 'fast!' }),
  },
  {
    name: 'submitPie: layout "plain" (the general submission\'s only)',
    input: 'layout',
    fix: /must be one of auto, recursive, .*dynamic \(plain is a layout of the general submission only\)/,
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    call: () => proving().submitPie({ pieZip: FIXTURE_PIE, layout: 'plain' }),
  },
  {
    name: 'submitQuery: layout "fastest"',
    input: 'layout',
    fix: /must be one of auto, plain, .*starknet_with_keccak; got "fastest"/,
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    call: () => proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE, layout: 'fastest' }),
  },
  {
    name: 'submitPie: empty prover',
    input: 'prover',
    call: () => proving().submitPie({ pieZip: FIXTURE_PIE, prover: '  ' }),
  },
  { name: 'submitPie: no file', input: 'pieZip', call: () => proving().submitPie({ pieZip: file('nope.zip') }) },
  {
    name: 'submitPie: a folder as pieZip',
    input: 'pieZip',
    call: () => proving().submitPie({ pieZip: file('a-folder') }),
  },
  {
    name: 'submitPie: no API key',
    input: 'apiKey',
    call: () =>
      new ProvingClient({ baseUrl: emulator.url, dispatcher: emulator.agent }).submitPie({ pieZip: FIXTURE_PIE }),
  },
  {
    name: 'submitProofVerification: stoneVersion stone7',
    input: 'stoneVersion',
    fix: /must be one of stone5, stone6/,
    call: () =>
      // @ts-expect-error a JavaScript caller's wrong value: refused at run time
      proving().submitProofVerification({ proof: FIXTURE_PIE, stoneVersion: 'stone7', memoryVerification: 'strict' }),
  },
  {
    name: 'submitProofVerification: memoryVerification lax',
    input: 'memoryVerification',
    call: () =>
      // @ts-expect-error a JavaScript caller's wrong value: refused at run time
      proving().submitProofVerification({ proof: FIXTURE_PIE, stoneVersion: 'stone6', memoryVerification: 'lax' }),
  },
  {
    name: 'submitQuery: declaredJobSize XL',
    input: 'declaredJobSize',
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    call: () => proving().submitQuery({ declaredJobSize: 'XL', pieZip: FIXTURE_PIE }),
  },
  {
    name: 'submitQuery: pieZip and programHash (conflict)',
    input: 'pieZip',
    fix: /exactly one of/,
    call: () => proving().submitQuery({ declaredJobSize: 'XS', pieZip: FIXTURE_PIE, programHash: '0x1' }),
  },
  {
    name: 'submitQuery: no program at all (missing)',
    input: 'pieZip',
    fix: /exactly one of/,
    call: () => proving().submitQuery({ declaredJobSize: 'XS' }),
  },
  {
    name: 'submitQuery: inputFile without programFile',
    input: 'inputFile',
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: '0x1', inputFile: FIXTURE_PIE }),
  },
  {
    name: 'submitQuery: bucketJobIndex 2^31 (int32 overflow)',
    input: 'bucketJobIndex',
    fix: /from 0 to 2147483647/,
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: '0x1', bucketJobIndex: 2 ** 31 }),
  },
  {
    name: 'submitQuery: bucketJobIndex -1',
    input: 'bucketJobIndex',
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: '0x1', bucketJobIndex: -1 }),
  },
  {
    name: 'submitQuery: dedupId of 200 characters (oversize)',
    input: 'dedupId',
    fix: /use a shorter identifier/,
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: '0x1', dedupId: 'd'.repeat(200) }),
  },
  {
    name: 'submitQuery: programHash "xyz" (wrong hex)',
    input: 'programHash',
    fix: /must be a 0x-prefixed hexadecimal/,
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: 'xyz' }),
  },
  {
    name: 'submitQuery: programHash of 65 digits',
    input: 'programHash',
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: `0x${'1'.repeat(65)}` }),
  },
  {
    name: 'submitQuery: network DEVNET',
    input: 'network',
    // @ts-expect-error a JavaScript caller's wrong value: refused at run time
    call: () => proving().submitQuery({ declaredJobSize: 'XS', programHash: '0x1', network: 'DEVNET' }),
  },
  {
    name: 'submitQuery: result PROOF_VERIFICATION_ON_MARS',
    input: 'result',
    call: () =>
      // @ts-expect-error a JavaScript caller's wrong value: refused at run time
      proving().submitQuery({ declaredJobSize: 'XS', programHash: '0x1', result: 'PROOF_VERIFICATION_ON_MARS' }),
  },
  {
    name: 'listQueries: limit 1000',
    input: 'limit',
    fix: /from 1 to 100/,
    call: () => proving().listQueries({ limit: 1000 }),
  },
  {
    name: 'createBucket: nodeWidth 2^31 (int32 overflow)',
    input: 'nodeWidth',
    call: () => proving().createBucket({ aggregatorVersion: 'v1', nodeWidth: 2 ** 31 }),
  },
  {
    name: 'createBucket: empty aggregatorVersion',
    input: 'aggregatorVersion',
    call: () => proving().createBucket({ aggregatorVersion: '' }),
  },
  { name: 'getQuery: empty id', input: 'queryId', call: () => proving().getQuery('') },
  { name: 'retryQuery: id with a space', input: 'queryId', call: () => proving().retryQuery('a b') },
  {
    name: 'ProvingClient: ftp baseUrl',
    input: 'baseUrl',
    fix: /give an absolute http/,
    call: () => new ProvingClient({ baseUrl: 'ftp://proving.example.com' }),
  },
  {
    name: 'TaskClient: baseUrl not a URL',
    input: 'baseUrl',
    call: () => new TaskClient({ baseUrl: 'tasks example com' }),
  },
  {
    name: 'scheduleTask: decimal destination_chain_id',
    input: 'destination_chain_id',
    fix: /must be 0x-prefixed hex/,
    call: () => tasks().scheduleTask(taskBody({ destination_chain_id: '11155111' })),
  },
  {
    name: 'scheduleTask: program_hash "0xZZ"',
    input: 'program_hash',
    call: () => tasks().scheduleTask(taskBody({ program_hash: '0xZZ' })),
  },
  {
    name: 'scheduleTask: input missing',
    input: 'input',
    fix: /is required/,
    call: () => tasks().scheduleTask({ ...taskBody(), input: undefined } as never),
  },
  {
    name: 'scheduleTask: injected_state 5000 deep',
    input: 'body',
    fix: /flatten it/,
    call: () =>
      tasks().scheduleTask(taskBody({ input: { ...taskBody().input, injected_state: { x: nested(5_000) } } })),
  },
  {
    name: 'scheduleTask: 17 MiB body',
    input: 'body',
    fix: /send a smaller one/,
    call: () =>
      tasks().scheduleTask(
        taskBody({ input: { ...taskBody().input, injected_state: { blob: 'x'.repeat(17 * 1024 * 1024) } } }),
      ),
  },
  {
    name: 'scheduleTask: a body that refers to itself',
    input: 'body',
    call: () => {
      const body = taskBody() as Record<string, unknown>
      ;(body.input as Record<string, unknown>).injected_state = { self: body }
      return tasks().scheduleTask(body as never)
    },
  },
  {
    name: 'submitDecommitment: proving_query_id missing',
    input: 'proving_query_id',
    call: () => tasks().submitDecommitment({ destination_chain_id: '0xaa36a7' } as never),
  },
  { name: 'listTasks: perPage 101', input: 'perPage', call: () => tasks().listTasks({ perPage: 101 }) },
  // @ts-expect-error a JavaScript caller's wrong value: refused at run time
  { name: 'listTasks: status "Done"', input: 'status', call: () => tasks().listTasks({ status: 'Done' }) },
  {
    name: 'submitBatchQuery: hex destinationChainId',
    input: 'body',
    fix: /fix it before sending/,
    call: () => storage().submitBatchQuery(batchQuery({ destinationChainId: '0xaa36a7' }) as never),
  },
  {
    name: 'submitBatchQuery: negative fee',
    input: 'body',
    call: () => storage().submitBatchQuery(batchQuery({ fee: '-1' }) as never),
  },
  {
    name: 'submitBatchQuery: 40 levels deep',
    input: 'body',
    fix: /flatten it/,
    call: () => storage().submitBatchQuery(batchQuery({ data: nested(40) }) as never),
  },
  { name: 'getBatchQueryStatus: empty id', input: 'internalId', call: () => storage().getBatchQueryStatus('') },
  {
    name: 'AccountClient: private key of 31 bytes',
    input: 'privateKey',
    call: () => new AccountClient({ baseUrl: emulator.url, privateKey: `0x${'ab'.repeat(31)}` }),
  },
  {
    name: 'getChallenge: wallet "0x123"',
    input: 'wallet',
    call: () => new AccountClient({ baseUrl: emulator.url, dispatcher: emulator.agent }).getChallenge('0x123'),
  },
  {
    name: 'createApiKey: name of 101 characters',
    input: 'name',
    call: () =>
      new AccountClient({
        baseUrl: emulator.url,
        privateKey: `0x${'ab'.repeat(32)}`,
        dispatcher: emulator.agent,
      }).createApiKey({ name: 'n'.repeat(101) }),
  },
]

describe('library', () => {
  for (const spec of library) {
    const name = `library: ${spec.name}`
    row(name, async () => {
      let caught: unknown
      try {
        await spec.call()
      } catch (error) {
        caught = error
      }
      expect(caught, 'no error thrown').toBeInstanceOf(InvalidInputError)
      const error = caught as InvalidInputError
      expect(error.input).toBe(spec.input)
      expect(error.shortMessage.split('\n')).toHaveLength(1)
      expect(error.shortMessage).toMatch(spec.fix ?? FIX)
      assertNoRequest(name)
    })
  }

  row('library: validatePie on a corrupt zip returns problems, never throws', async () => {
    const result = await validatePie(file('corrupt.zip'))
    expect(result.valid).toBe(false)
    expect(result.problems.length).toBeGreaterThan(0)
    assertNoRequest('library: validatePie on a corrupt zip returns problems, never throws')
  })
})

// --- Action ----------------------------------------------------------------------------------

type ActionName =
  | 'main'
  | 'pack'
  | 'wait'
  | 'verify-proof'
  | 'retry'
  | 'bucket-close'
  | 'task'
  | 'decommit'
  | 'storage-query'
  | 'api-key'
type ActionCase = {
  name: string
  action: ActionName
  inputs: () => Record<string, string>
  input: string
  fix?: RegExp
  lines?: 'one' | 'headline'
}

const actionModules: Record<ActionName, () => Promise<{ run: (io: ReturnType<typeof fakeIO>) => Promise<void> }>> = {
  main: () => import('../../src/action/actions/main.ts'),
  pack: () => import('../../src/action/actions/pack.ts'),
  wait: () => import('../../src/action/actions/wait.ts'),
  'verify-proof': () => import('../../src/action/actions/verify-proof.ts'),
  retry: () => import('../../src/action/actions/retry.ts'),
  'bucket-close': () => import('../../src/action/actions/bucket-close.ts'),
  task: () => import('../../src/action/actions/task.ts'),
  decommit: () => import('../../src/action/actions/decommit.ts'),
  'storage-query': () => import('../../src/action/actions/storage-query.ts'),
  'api-key': () => import('../../src/action/actions/api-key.ts'),
}

const service = () => ({ 'api-key': KEY, 'base-url': emulator.url })
const taskService = () => ({ 'api-key': KEY, 'tasks-url': emulator.url })

const action: ActionCase[] = [
  { name: 'prove: pie missing', action: 'main', inputs: () => ({ ...service() }), input: '`pie`', fix: /is required/ },
  {
    name: 'prove: layout "fastest?"',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), layout: 'fastest?' }),
    input: '`layout`',
    fix: /must be one of/,
  },
  {
    name: 'prove: layout "fastest"',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), layout: 'fastest' }),
    input: '`layout`',
    fix: /must be one of auto, recursive, recursive_with_poseidon, small, dex, starknet, starknet_with_keccak, dynamic; got "fastest"/,
  },
  {
    name: 'prove: layout "fastest" with a general-submission input',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), layout: 'fastest', result: 'PROOF_GENERATION' }),
    input: '`layout`',
    fix: /must be one of auto, plain, recursive, .*starknet_with_keccak; got "fastest"/,
  },
  {
    name: 'prove: timeout-minutes "ten"',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'timeout-minutes': 'ten' }),
    input: '`timeout-minutes`',
  },
  {
    name: 'prove: timeout-minutes 0',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'timeout-minutes': '0' }),
    input: '`timeout-minutes`',
  },
  {
    name: 'prove: wait "yes"',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), wait: 'yes' }),
    input: '`wait`',
    fix: /must be true or false/,
  },
  {
    name: 'prove: expected-program-hash 0xZZ',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'expected-program-hash': '0xZZ' }),
    input: '`expected-program-hash`',
  },
  {
    name: 'prove: expected-program-hash of 65 digits',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'expected-program-hash': `0x${'1'.repeat(65)}` }),
    input: '`expected-program-hash`',
  },
  {
    name: 'prove: ftp base-url',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, 'api-key': KEY, 'base-url': 'ftp://proving.example.com' }),
    input: '`base-url`',
  },
  {
    name: 'prove: emulator and base-url (conflict)',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, emulator: 'true', 'base-url': emulator.url }),
    input: '`base-url`',
    fix: /exclude each other/,
  },
  {
    name: 'prove: no api-key',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, 'base-url': emulator.url }),
    input: '`api-key`',
    fix: /is required/,
  },
  {
    name: 'prove: artifact-name with a slash',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'artifact-name': 'proof/v1' }),
    input: '`artifact-name`',
  },
  {
    name: 'prove: registry-kind "polygon"',
    action: 'main',
    inputs: () => ({
      pie: FIXTURE_PIE,
      ...service(),
      'verify-onchain': 'starknet',
      'starknet-rpc-url': 'http://127.0.0.1:9',
      'registry-kind': 'polygon',
    }),
    input: '`registry-kind`',
  },
  {
    name: 'prove: registry-kind sharp with verify-onchain starknet',
    action: 'main',
    inputs: () => ({
      pie: FIXTURE_PIE,
      ...service(),
      'verify-onchain': 'starknet',
      'starknet-rpc-url': 'http://127.0.0.1:9',
      'registry-kind': 'sharp',
    }),
    input: '`registry-kind`',
    fix: /use `satellite`/,
  },
  {
    name: 'prove: min-security-bits 2^32',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'min-security-bits': '4294967296' }),
    input: '`min-security-bits`',
  },
  {
    name: 'prove: verifier-layout of 32 characters',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'verifier-layout': 'x'.repeat(32) }),
    input: '`verifier-layout`',
  },
  {
    name: 'prove: verify-onchain "polygon"',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'verify-onchain': 'polygon' }),
    input: '`verify-onchain`',
  },
  {
    name: 'prove: no file at pie',
    action: 'main',
    inputs: () => ({ pie: file('nope.zip'), ...service() }),
    input: 'pie',
    fix: /give a pie\.zip or a PIE directory/,
  },
  {
    name: 'prove: corrupt zip',
    action: 'main',
    inputs: () => ({ pie: file('corrupt.zip'), ...service() }),
    input: 'pie',
    fix: /not a valid Cairo PIE/,
    lines: 'headline',
  },
  {
    name: 'prove: symlink out of the PIE directory',
    action: 'main',
    inputs: () => ({ pie: file('pie-symlink'), ...service() }),
    input: 'pie',
    fix: /fix what is listed below/,
    lines: 'headline',
  },
  {
    name: 'prove: retention-days 0',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'retention-days': '0' }),
    input: '`retention-days`',
    fix: /from 1 to 90/,
  },
  {
    name: 'prove: compression-level 10',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'compression-level': '10' }),
    input: '`compression-level`',
    fix: /from 0 to 9/,
  },
  {
    name: 'prove: release-tag with a space',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'release-tag': 'v1 final' }),
    input: '`release-tag`',
    fix: /not a valid tag name/,
  },
  {
    name: 'prove: pr-comment "yes"',
    action: 'main',
    inputs: () => ({ pie: FIXTURE_PIE, ...service(), 'pr-comment': 'yes' }),
    input: '`pr-comment`',
    fix: /must be true or false/,
  },
  { name: 'pack: pie-dir missing', action: 'pack', inputs: () => ({}), input: '`pie-dir`', fix: /is required/ },
  {
    name: 'pack: no folder at pie-dir',
    action: 'pack',
    inputs: () => ({ 'pie-dir': file('nope') }),
    input: '`pie-dir`',
    fix: /give the folder/,
  },
  {
    name: 'pack: symlink out of the PIE directory',
    action: 'pack',
    inputs: () => ({ 'pie-dir': file('pie-symlink'), output: file('packed.zip') }),
    input: 'pie-dir',
    fix: /fix what is listed below/,
    lines: 'headline',
  },
  {
    name: 'wait: query-id with spaces',
    action: 'wait',
    inputs: () => ({ 'query-id': 'my query', ...service() }),
    input: '`query-id`',
  },
  {
    name: 'wait: query-id of 300 characters',
    action: 'wait',
    inputs: () => ({ 'query-id': 'q'.repeat(300), ...service() }),
    input: '`query-id`',
    fix: /longer than 256/,
  },
  {
    name: 'verify-proof: stone-version stone7',
    action: 'verify-proof',
    inputs: () => ({ proof: FIXTURE_PIE, ...service(), 'stone-version': 'stone7' }),
    input: '`stone-version`',
  },
  {
    name: 'verify-proof: memory-verification loose',
    action: 'verify-proof',
    inputs: () => ({ proof: FIXTURE_PIE, ...service(), 'memory-verification': 'loose' }),
    input: '`memory-verification`',
  },
  {
    name: 'retry: query-id missing',
    action: 'retry',
    inputs: () => ({ ...service() }),
    input: '`query-id`',
    fix: /is required/,
  },
  {
    name: 'bucket-close: bucket-id with a slash',
    action: 'bucket-close',
    inputs: () => ({ 'bucket-id': 'a/b', ...service() }),
    input: '`bucket-id`',
  },
  {
    name: 'task: no file',
    action: 'task',
    inputs: () => ({ task: file('task-missing.json'), ...taskService() }),
    input: '`task`',
    fix: /give the path/,
  },
  {
    name: 'task: inline JSON broken',
    action: 'task',
    inputs: () => ({ task: '{ "destination_chain_id": ', ...taskService() }),
    input: '`task`',
  },
  {
    name: 'task: decimal destination_chain_id',
    action: 'task',
    inputs: () => ({ task: file('task-decimal-chain.json'), ...taskService() }),
    input: 'destination_chain_id',
    fix: /must be 0x-prefixed hex/,
  },
  {
    name: 'task: non-UTF-8 bytes',
    action: 'task',
    inputs: () => ({ task: file('task-latin1.json'), ...taskService() }),
    input: '`task`',
    fix: /UTF-8/,
  },
  {
    name: 'task: JSON nested 5000 deep',
    action: 'task',
    inputs: () => ({ task: file('task-deep.json'), ...taskService() }),
    input: '`task`',
    fix: /flatten it/,
  },
  {
    name: 'task: 17 MiB of JSON',
    action: 'task',
    inputs: () => ({ task: file('task-huge.json'), ...taskService() }),
    input: '`task`',
    fix: /send a smaller one/,
  },
  {
    name: 'decommit: decimal destination-chain-id',
    action: 'decommit',
    inputs: () => ({ 'proving-query-id': 'q-1', 'destination-chain-id': '11155111', ...taskService() }),
    input: '`destination-chain-id`',
  },
  {
    name: 'decommit: program-hash not hex',
    action: 'decommit',
    inputs: () => ({
      'proving-query-id': 'q-1',
      'destination-chain-id': '0xaa36a7',
      'program-hash': 'abc',
      ...taskService(),
    }),
    input: '`program-hash`',
  },
  {
    name: 'decommit: webhook-url not a URL',
    action: 'decommit',
    inputs: () => ({
      'proving-query-id': 'q-1',
      'destination-chain-id': '0xaa36a7',
      'webhook-url': 'hooks.example.com',
      ...taskService(),
    }),
    input: '`webhook-url`',
  },
  {
    name: 'storage-query: hex destinationChainId',
    action: 'storage-query',
    inputs: () => ({ query: file('query-hex-chain.json'), 'api-key': KEY, 'storage-proof-url': emulator.url }),
    input: '`query`',
  },
  {
    name: 'storage-query: no storage-proof-url',
    action: 'storage-query',
    inputs: () => ({ query: file('query-hex-chain.json'), 'api-key': KEY }),
    input: '`storage-proof-url`',
    fix: /is required/,
  },
  {
    name: 'api-key: private-key missing',
    action: 'api-key',
    inputs: () => ({ 'auth-url': emulator.url }),
    input: '`private-key`',
    fix: /is required/,
  },
  {
    name: 'api-key: auth-url not a URL',
    action: 'api-key',
    inputs: () => ({ 'private-key': `0x${'11'.repeat(32)}`, 'auth-url': 'accounts' }),
    input: '`auth-url`',
  },
]

describe('action', () => {
  for (const spec of action) {
    const name = `action ${spec.action}: ${spec.name}`
    row(name, async () => {
      const io = fakeIO(spec.inputs(), { env: { GITHUB_WORKSPACE: REPO_ROOT } })
      const { run } = await actionModules[spec.action]()
      await run(io)
      expect(io.failed, 'the step did not fail').toBeDefined()
      assertLines(io.failed!, spec)
      expect(io.summary).toMatch(/\S/)
      expect(io.outputs['query-id']).toBeUndefined()
      expect(
        io.logs
          .filter((log) => log.level === 'error')
          .map((log) => log.message)
          .join('\n'),
      ).not.toMatch(STACK)
      assertNoRequest(name)
    })
  }
})

// The count docs/reliability.md gives is this file's: a row added without it fails here.
describe('docs/reliability.md', () => {
  it('counts every row of this catalogue, by kind', async () => {
    const names = [...catalogue.rows.keys()]
    const kinds = {
      CLI: names.filter((name) => name.startsWith('CLI: ')).length,
      library: names.filter((name) => name.startsWith('library: ')).length,
    }
    const action = names.length - kinds.CLI - kinds.library
    const docs = await readFile(join(REPO_ROOT, 'docs/reliability.md'), 'utf8')
    const total = names.length
    expect(docs).toContain(
      `| Bad-input catalogue (CLI ${kinds.CLI}, library ${kinds.library}, action ${action}) | ${total} | ${total} | 0 |`,
    )
    expect(docs).toContain(`## Bad-input catalogue (${total}; test/e2e/bad-input-catalogue.test.ts)`)
  })
})
