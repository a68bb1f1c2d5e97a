import { spawn } from 'node:child_process'
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { NODE, REPO_ROOT, runCli, spawnCli } from '../helpers/cli.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { control } from '../helpers/run-action.ts'
import type { CommandContext } from '../../src/cli/context.ts'
import { uploadReporter } from '../../src/cli/services.ts'
import { cliAdvice } from '../../src/cli/advice.ts'
import { commandOptions, parseCommandArgs } from '../../src/cli/context.ts'
import { EMULATOR_URL } from '../../src/cli/profiles.ts'
import { ProvingClient } from '../../src/clients/proving.ts'
import { closedPort } from '../helpers/evm-node.ts'

/**
 * What makes the CLI pleasant: one set-up (profiles) for the four services, the README's CLI
 * block pasted line by line into bash, errors as JSON with --json, the service's reason without
 * --debug, retriability in `query get`, keys listed and shown masked, and shell completion
 * checked by bash itself.
 */
const API_KEY = 'pk_cli_ux_9a71c2'
/** Hardhat's first test account: a public key pair, never used for anything real. */
const TEST_WALLET = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80'
let emulator: RunningEmulator
let work: string
let config: string

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 } })
  work = mkdtempSync(join(tmpdir(), 'cli-ux-'))
  config = join(work, 'config.json')
  const url = emulator.url
  writeFileSync(
    config,
    JSON.stringify({
      defaultProfile: 'staging',
      profiles: {
        local: { baseUrl: url, tasksUrl: url, storageProofUrl: url, authUrl: url },
        staging: { baseUrl: url, tasksUrl: url, storageProofUrl: url, authUrl: url },
        broken: { baseUrl: `http://127.0.0.1:${await closedPort()}/` },
      },
    }),
  )
})
afterAll(async () => {
  await emulator.close()
})

function bash(script: string, env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = spawn('bash', ['-c', script], { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: work, ...env } })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })))
}

describe('profiles: one set-up for the four services', () => {
  it('PROVING_PROFILE gives prove, task, storage and auth their addresses; flags and variables still win', async () => {
    const env = { PROVING_CONFIG: config, PROVING_PROFILE: 'local', PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' }
    const proved = await runCli(['prove', 'examples/fib/pie.zip', '-q'], { env })
    expect(proved.code, proved.stderr).toBe(0)
    expect(proved.stdout).toMatch(/^\S+\n$/)
    const task = await runCli(['task', 'submit', 'examples/task.json', '--json'], { env })
    expect(task.code, task.stderr).toBe(0)
    const storage = await runCli(['storage', 'query', 'examples/storage-query.json', '--json'], { env })
    expect(storage.code, storage.stderr).toBe(0)
    const login = await runCli(['auth', 'login', '--json'], { env: { ...env, PROVING_PRIVATE_KEY: TEST_WALLET } })
    expect(login.code, login.stderr).toBe(0)

    // The file's defaultProfile applies without PROVING_PROFILE; --profile picks another.
    const fromDefault = await runCli(['query', 'list', '--json'], {
      env: { PROVING_CONFIG: config, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(fromDefault.code, fromDefault.stderr).toBe(0)
    const broken = await runCli(['query', 'list', '--profile', 'broken'], {
      env: { PROVING_CONFIG: config, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(broken.code).toBe(3)
    // A variable wins over the profile.
    const overridden = await runCli(['query', 'list', '--profile', 'broken'], {
      env: { PROVING_CONFIG: config, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never', PROVING_BASE_URL: emulator.url },
    })
    expect(overridden.code, overridden.stderr).toBe(0)

    const shown = await runCli(['config', 'show', '--json'], { env })
    const json = JSON.parse(shown.stdout)
    expect(json.profile).toEqual({ name: 'local', chosenBy: 'PROVING_PROFILE' })
    expect(json.services.map((row: { url: string; from: string }) => [row.url.replace(/\/$/, ''), row.from])).toEqual(
      Array(4).fill([emulator.url.replace(/\/$/, ''), 'profile local']),
    )
  })

  it('an unknown profile, or a broken file, is refused naming what to fix', async () => {
    const unknown = await runCli(['query', 'list'], {
      env: { PROVING_CONFIG: config, PROVING_PROFILE: 'prod', PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain(
      'No profile "prod" (from PROVING_PROFILE): known profiles are broken, local, staging',
    )
    const bad = join(work, 'bad.json')
    writeFileSync(bad, JSON.stringify({ profiles: { x: { baseUrl: 'ftp://nope' } } }))
    const refused = await runCli(['query', 'list'], {
      env: { PROVING_CONFIG: bad, PROVING_PROFILE: 'x', PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(
      /config file .*bad\.json has a problem: profiles\.x\.baseUrl: must be an absolute http\(s\) URL/,
    )
  })
})

describe("the README's CLI block", () => {
  it('runs line by line in bash after the one set-up', async () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')
    const block = /## The CLI[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)![1]!
    const lines = block.split('\n').filter((line) => line.trim())
    expect(lines[0]).toMatch(/^proving emulator &/)
    expect(lines[1]).toMatch(/^export PROVING_PROFILE=local PROVING_API_KEY=/)
    // Instead of line 1 (a fixed port), this test's emulator stands in as the `local` profile.
    const bin = mkdtempSync(join(tmpdir(), 'proving-bin-'))
    writeFileSync(join(bin, 'proving'), `#!/bin/sh\nexec "${NODE}" "${REPO_ROOT}src/cli/run.ts" "$@"\n`)
    chmodSync(join(bin, 'proving'), 0o755)
    const script = [
      'set -euo pipefail',
      `cd "${work}"`,
      `cp -r "${REPO_ROOT}examples" examples`,
      ...lines.slice(1).map((line, index) => `echo "### line ${index + 2}" >&2\n${line}`),
    ].join('\n')
    const run = await bash(script, { PATH: `${bin}:${process.env.PATH}`, PROVING_CONFIG: config })
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0)
    expect(run.stdout).toContain("Gate passed: the bucket's one query is DONE and its facts match the PIEs.")
    expect(run.stdout).toMatch(/3 of 3 succeeded in/)
    expect(run.stdout).not.toContain(TEST_WALLET)
  }, 180_000)
})

describe('errors and query details', () => {
  it("prints the service's reason without --debug, and errors as one JSON object on stderr with --json", async () => {
    const env = { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' }
    const human = await runCli(['submit', '--program-hash', '0x12', '--bucket-id', 'no-such-bucket'], { env })
    expect(human.code).toBe(2)
    expect(human.stderr).toMatch(/reason: .*bucketId: no bucket no-such-bucket for this API key/)
    const json = await runCli(['submit', '--program-hash', '0x12', '--bucket-id', 'no-such-bucket', '--json'], { env })
    expect(json.code).toBe(2)
    expect(json.stdout).toBe('')
    const error = JSON.parse(json.stderr.trim().split('\n').at(-1)!).error
    expect(error).toMatchObject({ name: 'ServiceError', status: 400, retryable: false, exitCode: 2 })
    expect(error.reason).toContain('no bucket no-such-bucket')
    const usage = await runCli(['prove', '--json'], { env })
    expect(JSON.parse(usage.stderr).error).toMatchObject({ name: 'InvalidInputError', exitCode: 2, input: '<pie>...' })
  })

  it('a refused key says where it came from (never the key), and where it was sent', async () => {
    const wrong = 'pk_wrong_key_5f3e1d'
    const keyed = await startEmulator({ apiKeys: [API_KEY] })
    try {
      const fromEnv = await runCli(['query', 'list'], { env: { PROVING_BASE_URL: keyed.url, PROVING_API_KEY: wrong } })
      expect(fromEnv.code).toBe(2)
      expect(fromEnv.stderr).toContain(
        `The API key came from PROVING_API_KEY (not shown) and was sent to ${keyed.url} (PROVING_BASE_URL)`,
      )
      const fromFlag = await runCli(['query', 'list', '--api-key', wrong, '--base-url', keyed.url])
      expect(fromFlag.stderr).toContain(
        `The API key came from --api-key (not shown) and was sent to ${keyed.url} (--base-url)`,
      )
      const local = { ...JSON.parse(readFileSync(config, 'utf8')), profiles: { keyed: { baseUrl: keyed.url } } }
      const file = join(work, 'keyed.json')
      writeFileSync(file, JSON.stringify(local))
      const fromProfile = await runCli(['query', 'list', '--json'], {
        env: { PROVING_CONFIG: file, PROVING_PROFILE: 'keyed', PROVING_API_KEY: wrong },
      })
      expect(JSON.parse(fromProfile.stderr).error.notes).toEqual([
        `The API key came from PROVING_API_KEY (not shown) and was sent to ${keyed.url} (profile keyed (in ${file})): check that it is a key of that service (\`proving auth keys list\` lists a wallet's keys).`,
      ])
      for (const run of [fromEnv, fromFlag, fromProfile]) expect(run.stderr).not.toContain(wrong)
    } finally {
      await keyed.close()
    }
  })

  it("nothing listening at the `local` profile's address suggests `proving emulator`", async () => {
    // The built-in profile names the emulator's default address, 127.0.0.1:8790, which a user's own
    // `proving emulator` may hold while the suite runs: the test does not connect there. It reads
    // the flags as the CLI does with the built-in profile, and gives the advice a real refusal,
    // from a loopback port nothing listens on.
    const env = {
      PROVING_PROFILE: 'local',
      PROVING_API_KEY: API_KEY,
      HOME: work,
      PROVING_CONFIG: undefined,
      XDG_CONFIG_HOME: join(work, 'no-config'),
    }
    const { COMMANDS } = await import('../../src/cli/commands/index.ts')
    const command = (name: string) => COMMANDS.find((spec) => spec.path.join(' ') === name)!
    const refused = await new ProvingClient({ baseUrl: `http://127.0.0.1:${await closedPort()}`, apiKey: API_KEY })
      .listQueries()
      .catch((error: unknown) => error)
    const advice = async (name: string, argv: string[]) => {
      const { values, origins } = await parseCommandArgs(command(name), argv, env)
      expect(values['base-url']).toBe(EMULATOR_URL)
      return cliAdvice(refused, { values, origins, options: Object.keys(commandOptions(command(name))) })
    }
    expect(await advice('query list', [])).toEqual([
      `Nothing listens at ${EMULATOR_URL} (profile local (built-in)), the built-in emulator's address: start it with \`proving emulator\` in another terminal.`,
    ])
    expect((await advice('prove', ['examples/fib/pie.zip']))[0]).toMatch(
      /, or add --emulator to run one for this command\.$/,
    )
    // Refused anywhere else: no word of the emulator.
    const elsewhere = await runCli(['query', 'list', '--base-url', `http://127.0.0.1:${await closedPort()}`], { env })
    expect(elsewhere.code).toBe(3)
    expect(elsewhere.stderr).not.toContain('proving emulator')
  })

  it('query get says whether a FAILED query can be retried', async () => {
    const env = { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' }
    await control(emulator.url, 'POST', 'next-query', { outcome: 'fail', retriable: true, reason: 'worker lost' })
    const id = (await runCli(['prove', 'examples/fib/pie.zip', '-q'], { env })).stdout.trim()
    await runCli(['query', 'wait', id], { env })
    const shown = await runCli(['query', 'get', id], { env })
    expect(shown.stdout).toMatch(/status\s+FAILED/)
    expect(shown.stdout).toMatch(
      new RegExp(`retriable\\s+yes \\(0 of 3 retries used\\): proving query retry ${id} --wait`),
    )
    expect(JSON.parse((await runCli(['query', 'get', id, '--json'], { env })).stdout)).toMatchObject({
      retriable: true,
      retryCount: 0,
    })

    await control(emulator.url, 'POST', 'next-query', { outcome: 'fail', retriable: false, reason: 'bad builtin' })
    const other = (await runCli(['prove', 'examples/fib/pie.zip', '-q'], { env })).stdout.trim()
    await runCli(['query', 'wait', other], { env })
    expect((await runCli(['query', 'get', other], { env })).stdout).toMatch(
      /retriable\s+no: the error is not retriable/,
    )
    const done = (await runCli(['prove', 'examples/fib/pie.zip', '-q'], { env })).stdout.trim()
    await runCli(['query', 'wait', done], { env })
    expect((await runCli(['query', 'get', done], { env })).stdout).toMatch(
      /retriable\s+not applicable: the query is DONE, not FAILED/,
    )
  })

  it('with --json, a FAILED query and a refused gate write the `{ "error": … }` object on stderr, the record on stdout', async () => {
    // The staged FAILED query must be submitted, not an earlier DONE one of this PIE reused.
    const env = { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' }
    await control(emulator.url, 'POST', 'next-query', { outcome: 'fail', retriable: false, reason: 'bad builtin' })
    const failed = await runCli(['prove', 'examples/fib/pie.zip', '--wait', '--json'], { env })
    expect(failed.code).toBe(1)
    expect(JSON.parse(failed.stdout).provingQuery.status).toBe('FAILED')
    const error = JSON.parse(failed.stderr.trim().split('\n').at(-1)!).error
    expect(error).toMatchObject({ name: 'RemoteFailureError', exitCode: 1 })
    expect(error.message).toMatch(/^Query \S+ FAILED: bad builtin\.$/)
    // A query sent with --mock-fact-hash has a mocked fact: `query wait` without --allow-mocked-fact refuses it.
    const mocked = (await runCli(['prove', 'examples/fib/pie.zip', '--mock-fact-hash', '-q'], { env })).stdout.trim()
    const refused = await runCli(['query', 'wait', mocked, '--json'], { env })
    expect(refused.code).toBe(1)
    expect(JSON.parse(refused.stdout).gate.ok).toBe(false)
    const gate = JSON.parse(refused.stderr.trim().split('\n').at(-1)!).error
    expect(gate).toMatchObject({ name: 'GateError', exitCode: 1 })
    expect(gate.notes.join('\n')).toMatch(/mocked/)
    expect(refused.stderr).not.toMatch(/^proving: /m)
  })
})

describe('query list', () => {
  it('has a header row, its columns as wide as their cells, like `auth keys list`', async () => {
    const env = { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY }
    await runCli(['prove', 'examples/fib/pie.zip', '-q'], { env })
    const listed = (await runCli(['query', 'list', '--limit', '2'], { env })).stdout.split('\n')
    expect(listed[0]).toMatch(/^query {2,}status {2,}step {2,}created$/)
    expect(listed[1]!.indexOf('  ', 0)).toBeGreaterThan(0)
    // Each row's status starts under the header's.
    expect(listed[1]!.slice(listed[0]!.indexOf('status'))).toMatch(/^(RECEIVED|IN_PROGRESS|DONE|FAILED)\b/)
  })
})

describe('-q: the id alone', () => {
  it('prints only the query id, and no progress, with --wait too', async () => {
    const env = { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY }
    const submitted = await runCli(['prove', 'examples/fib/pie.zip', '-q'], { env })
    expect(submitted.code).toBe(0)
    expect(submitted.stdout).toMatch(/^\S+\n$/)
    expect(submitted.stderr).toBe('')
    const waited = await runCli(['prove', 'examples/fib/pie.zip', '-q', '--wait'], { env })
    expect(waited.code, waited.stderr).toBe(0)
    expect(waited.stdout).toMatch(/^\S+\n$/)
    expect(waited.stderr).toBe('')
  })

  it('storage query -q prints only the internal id, which storage status then reads', async () => {
    const env = { PROVING_STORAGE_PROOF_URL: emulator.url, PROVING_API_KEY: API_KEY }
    const submitted = await runCli(['storage', 'query', 'examples/storage-query.json', '-q'], { env })
    expect(submitted.code, submitted.stderr).toBe(0)
    expect(submitted.stdout).toMatch(/^\S+\n$/)
    const status = await runCli(['storage', 'status', submitted.stdout.trim()], { env })
    expect(status.code, status.stderr).toBe(0)
    expect(status.stdout).toMatch(/^batch query \S+: (RECEIVED|IN_PROGRESS|DONE)\n$/)
  })
})

describe('API keys', () => {
  it('keys create shows the key masked, in full with --reveal or --json; keys list finds it again', async () => {
    const env = { PROVING_AUTH_URL: emulator.url, PROVING_PRIVATE_KEY: TEST_WALLET }
    const masked = await runCli(['auth', 'keys', 'create', '--name', 'ci'], { env })
    expect(masked.code, masked.stderr).toBe(0)
    const shown = /^\s+(\S+…\S+)$/m.exec(masked.stdout)![1]!
    expect(masked.stdout).toContain('--reveal prints it in full')
    const revealed = await runCli(['auth', 'keys', 'list', '--reveal', '--json'], { env })
    const keys: { apiKey: string; name: string }[] = JSON.parse(revealed.stdout).data
    const minted = keys.find((key) => key.name === 'ci')!
    expect(shown).toBe(`${minted.apiKey.slice(0, 7)}…${minted.apiKey.slice(-4)}`)
    const list = await runCli(['auth', 'keys', 'list'], { env })
    expect(list.stdout).toContain(shown)
    expect(list.stdout).not.toContain(minted.apiKey)
    const full = await runCli(['auth', 'keys', 'create', '--name', 'ci-2', '--reveal'], { env })
    expect(full.stdout).toMatch(/^\s+pk_\S+$/m)
    expect(full.stdout).not.toContain('…')
  })
})

describe('help', () => {
  it('every command and every group, nested ones too, answers --help with exit 0', async () => {
    const { COMMANDS } = await import('../../src/cli/commands/index.ts')
    const groups = new Set(
      COMMANDS.flatMap((spec) => spec.path.slice(0, -1).map((_, depth) => spec.path.slice(0, depth + 1).join(' '))),
    )
    for (const words of [...COMMANDS.map((spec) => spec.path.join(' ')), ...groups]) {
      const run = await runCli([...words.split(' '), '--help'])
      expect(run.code, words).toBe(0)
      expect(run.stdout, words).toMatch(new RegExp(`^Usage: proving ${words}`))
    }
    expect(groups).toContain('auth keys')
    const bare = await runCli(['auth', 'keys'])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toContain('auth keys list')
  })
})

describe('shell completion', () => {
  it('bash: `complete -p` registers it; compgen completes commands, groups, flags and their values', async () => {
    const script = await runCli(['completion', 'bash'])
    expect(script.code).toBe(0)
    const file = join(work, 'proving.bash')
    writeFileSync(file, script.stdout)
    const run = await bash(
      [
        `source "${file}"`,
        'complete -p proving',
        't() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _proving_complete; echo "${COMPREPLY[*]}"; }',
        't proving ""',
        't proving qu',
        't proving query ""',
        't proving bucket close x --w',
        't proving submit --result PROOF_VERIFICATION_ON_L',
        't proving submit --network T',
        't proving auth keys ""',
        't proving completion ""',
        't proving help qu',
        't proving help auth keys ""',
        't proving validate --pr',
        't proving auth create-key --na',
      ].join('\n'),
      {},
    )
    expect(run.code, run.stderr).toBe(0)
    const [registered, top, qu, query, flags, result, network, keys, shells, helpQu, helpKeys, offline, former] =
      run.stdout.split('\n')
    expect(registered).toBe('complete -o bashdefault -o default -F _proving_complete proving')
    expect(top!.split(' ')).toEqual(
      expect.arrayContaining(['prove', 'submit', 'query', 'bucket', 'task', 'storage', 'auth', 'config', 'completion']),
    )
    expect(qu).toBe('query')
    expect(query!.split(' ').sort()).toEqual(['download', 'get', 'list', 'retry', 'wait'])
    expect(flags).toBe('--wait')
    expect(result).toBe('PROOF_VERIFICATION_ON_L1 PROOF_VERIFICATION_ON_L2')
    expect(network).toBe('TESTNET')
    expect(keys!.split(' ').sort()).toEqual(['create', 'list', 'revoke'])
    // Its own arguments, not file names; after `help`, the commands; offline, no --profile.
    expect(shells).toBe('bash zsh fish')
    expect(helpQu).toBe('query')
    expect(helpKeys!.split(' ').sort()).toEqual(['create', 'list', 'revoke'])
    expect(offline).toBe('')
    // The former name of `auth keys create` completes its flags, and is not offered as a word.
    expect(former).toBe('--name')
  })

  it('zsh and fish scripts name every command; an unknown shell is refused', async () => {
    const zsh = await runCli(['completion', 'zsh'])
    expect(zsh.stdout).toMatch(/^#compdef proving/)
    expect(zsh.stdout).toContain('bashcompinit')
    const fish = await runCli(['completion', 'fish'])
    expect(fish.stdout).toContain("complete -c proving -n '__proving_at \"query\"' -a 'retry'")
    expect(fish.stdout).toMatch(/__proving_in "prove"' -l concurrency -r -F/)
    const unknown = await runCli(['completion', 'tcsh'])
    expect(unknown.code).toBe(2)
  })
})

describe('progress a person can watch', () => {
  it('an upload prints bytes, rate and the end on stderr, with --json too', async () => {
    const generated = await generatePie({ outDir: join(work, 'big'), memoryBytes: 3 * 1024 * 1024, seed: 7 })
    const zip = join(work, 'big.zip')
    await packPie(generated.dir, zip)
    const run = await runCli(['prove', zip, '--json'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).provingQueryId).toMatch(/\S/)
    expect(run.stderr).toMatch(
      /Uploading .*big\.zip: (\d+\.\d [KM]iB) of \1 \(100%\)(, [\d.]+ \S+\/s)?, done in [\d.]+ s/,
    )
  })

  it("a small upload gives the file's own size (the example's 2,107 bytes), not its multipart body's", async () => {
    const run = await runCli(['prove', 'examples/fib/pie.zip'], {
      env: { PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toMatch(/^Uploading examples\/fib\/pie\.zip: 2,107 bytes, done in [\d.]+ s$/m)
  })

  it('a small upload gives its exact size, and no rate for under a second', async () => {
    const lines: string[] = []
    const context = { progress: (line: string) => lines.push(line) } as unknown as CommandContext
    let now = 0
    const report = uploadReporter(context, 'pie.zip', () => now)
    now = 100
    report({ sentBytes: 2107, totalBytes: 2107 })
    expect(lines).toEqual(['Uploading pie.zip: 2,107 bytes, done in 0.1 s'])
    const slow = uploadReporter(context, 'big.zip', () => now)
    now += 1500
    slow({ sentBytes: 3 * 1024 * 1024, totalBytes: 6 * 1024 * 1024 })
    expect(lines.at(-1)).toBe('Uploading big.zip: 3.0 MiB of 6.0 MiB (50%), 2.0 MiB/s, ETA 2s')
  })

  it('prove --emulator without --wait says the emulator stops with the command', async () => {
    const run = await runCli(['prove', 'examples/fib/pie.zip', '--emulator'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).toContain(
      'without --wait nothing can follow the query: the emulator stops when this command ends',
    )
    expect(run.stdout).toContain('The emulator stops with this command: add --wait to follow the query.')
  })

  it('a wait with no change prints a heartbeat line', async () => {
    const slow = await startEmulator({ timing: { receivedMs: 600_000, stepMs: 600_000 } })
    try {
      const run = spawnCli(['prove', 'examples/fib/pie.zip', '--wait', '--json'], {
        env: {
          PROVING_BASE_URL: slow.url,
          PROVING_API_KEY: API_KEY,
          PROVING_REUSE: 'never',
          PROVING_HEARTBEAT_SECONDS: '0.3',
        },
      })
      await run.waitForOutput(/\] \S+ {2}still RECEIVED \(for \d+s\)/)
      run.child.kill('SIGINT')
      const result = await run.done
      expect(result.code).toBe(130)
    } finally {
      await slow.close()
    }
  })
})
