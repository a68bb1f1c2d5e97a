import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, expectTypeOf, it } from 'vitest'
import { COMMANDS } from '../../../src/cli/commands/index.ts'
import { main } from '../../../src/cli/main.ts'
import { type CliIO, defineCommand, parseCommandArgs } from '../../../src/cli/context.ts'

function recordingIO(env: NodeJS.ProcessEnv = {}) {
  const out: string[] = []
  const err: string[] = []
  const io: CliIO = { stdout: (text) => void out.push(text), stderr: (text) => void err.push(text), env, isTTY: false }
  return { io, stdout: () => out.join(''), stderr: () => err.join('') }
}

const GROUPS = [...new Set(COMMANDS.filter((spec) => spec.path.length > 1).map((spec) => spec.path[0]!))]

describe('group help', () => {
  it.each(GROUPS)('`proving %s --help` lists every command of the group and exits 0', async (group) => {
    const { io, stdout, stderr } = recordingIO()
    expect(await main([group, '--help'], { io })).toBe(0)
    const listed = COMMANDS.filter((spec) => spec.path[0] === group)
    expect(listed.length).toBeGreaterThan(0)
    for (const spec of listed) expect(stdout()).toContain(`  ${spec.path.join(' ')} `)
    // Only the group's commands.
    for (const spec of COMMANDS.filter((other) => other.path[0] !== group))
      expect(stdout()).not.toContain(`  ${spec.path.join(' ')} `)
    expect(stdout()).toContain(`Usage: proving ${group} <command> [options]`)
    expect(stderr()).toBe('')
  })

  it('`proving task` alone is a usage error that shows the same list on stderr', async () => {
    const { io, stdout, stderr } = recordingIO()
    expect(await main(['task'], { io })).toBe(2)
    expect(stdout()).toBe('')
    expect(stderr()).toContain('task submit <task.json>')
    expect(stderr()).toContain('task list')
  })

  it("an unknown command of a group names the group's commands", async () => {
    const { io, stderr } = recordingIO()
    expect(await main(['task', 'frobnicate'], { io })).toBe(2)
    expect(stderr()).toMatch(/Unknown command `proving task frobnicate`: use one of task submit, task decommit/)
  })

  it.each(COMMANDS.map((spec) => spec.path.join(' ')))(
    '`proving %s --help` shows its options and exits 0',
    async (path) => {
      const { io, stdout } = recordingIO()
      expect(await main([...path.split(' '), '--help'], { io })).toBe(0)
      expect(stdout()).toContain(`Usage: proving ${path}`)
      expect(stdout()).toContain('--json')
    },
  )
})

describe('option values', () => {
  const spec = defineCommand({
    path: ['demo'],
    summary: 'A command to parse flags with.',
    options: {
      'base-url': { type: 'string', env: 'DEMO_URL', description: 'an address' },
      timeout: { type: 'string', default: '2h', description: 'a duration' },
      wait: { type: 'boolean', description: 'a switch' },
      pie: { type: 'string', multiple: true, description: 'repeatable' },
    },
    run: async () => 0,
  })

  it('types each value by its spec: defaulted string, optional string, switch, list', async () => {
    const { values } = await parseCommandArgs(spec, [], {})
    expectTypeOf(values.timeout).toEqualTypeOf<string>()
    expectTypeOf(values['base-url']).toEqualTypeOf<string | undefined>()
    expectTypeOf(values.wait).toEqualTypeOf<boolean | undefined>()
    expectTypeOf(values.pie).toEqualTypeOf<string[] | undefined>()
    expectTypeOf(values.json).toEqualTypeOf<boolean | undefined>()
    expect(values).toEqual({ timeout: '2h' })
  })

  it('fills an absent flag from its environment variable; a given flag wins over it', async () => {
    expect((await parseCommandArgs(spec, [], { DEMO_URL: 'http://env' })).values['base-url']).toBe('http://env')
    expect(
      (await parseCommandArgs(spec, ['--base-url', 'http://flag'], { DEMO_URL: 'http://env' })).values['base-url'],
    ).toBe('http://flag')
    expect((await parseCommandArgs(spec, ['--pie', 'a', '--pie', 'b', '--wait'], {})).values).toMatchObject({
      pie: ['a', 'b'],
      wait: true,
    })
  })

  it("refuses an unknown flag, naming the command's help", async () => {
    await expect(parseCommandArgs(spec, ['--nope'], {})).rejects.toThrow(/Unknown option '--nope'.*proving demo --help/)
  })
})

describe('a missing service address', () => {
  it.each([
    [['query', 'list'], '--base-url', 'PROVING_BASE_URL'],
    [['task', 'list'], '--tasks-url', 'PROVING_TASKS_URL'],
    [['storage', 'status', 'x'], '--storage-proof-url', 'PROVING_STORAGE_PROOF_URL'],
    [['auth', 'keys', 'list'], '--auth-url', 'PROVING_AUTH_URL'],
  ])('%j names the flag, the variable and the profiles (PROVING_PROFILE, --profile)', async (argv, flag, variable) => {
    // No config file: no default profile stands in for the address.
    const home = mkdtempSync(join(tmpdir(), 'proving-home-'))
    const { io, stderr } = recordingIO({
      HOME: home,
      XDG_CONFIG_HOME: home,
      PROVING_API_KEY: 'k',
      PROVING_PRIVATE_KEY: `0x${'1'.repeat(64)}`,
    })
    expect(await main(argv, { io })).toBe(2)
    expect(stderr()).toContain(
      `pass ${flag} <url> or set ${variable}, or choose a profile that has one with PROVING_PROFILE or --profile`,
    )
    expect(stderr().trim().split('\n')).toHaveLength(1)
  })
})

describe("--max-rps: the process's request budget (issue 35)", () => {
  it('sets the budget every wait of the command shares (flag or PROVING_MAX_RPS); 10 when absent; a bad value is exit 2 naming it, before anything is sent', async () => {
    const { requestBudgetFor } = await import('../../../src/core/budget.ts')
    const { systemClock } = await import('../../../src/core/runtime.ts')
    const budget = requestBudgetFor(systemClock)
    const home = mkdtempSync(join(tmpdir(), 'proving-home-'))
    const env = { HOME: home, XDG_CONFIG_HOME: home }
    // No address: the command stops at its first step, after the budget was set.
    expect(await main(['query', 'wait', 'q-1', '--max-rps', '2.5'], { io: recordingIO(env).io })).toBe(2)
    expect(budget.maxPerSecond).toBe(2.5)
    expect(await main(['query', 'wait', 'q-1'], { io: recordingIO({ ...env, PROVING_MAX_RPS: '40' }).io })).toBe(2)
    expect(budget.maxPerSecond).toBe(40)
    expect(await main(['query', 'wait', 'q-1'], { io: recordingIO(env).io })).toBe(2)
    expect(budget.maxPerSecond).toBe(10)
    for (const text of ['0', 'fast', '1001']) {
      const { io, stderr } = recordingIO(env)
      expect(await main(['prove', 'x.zip', '--wait', '--max-rps', text], { io })).toBe(2)
      expect(stderr()).toContain(
        `--max-rps must be a number of requests per second from 0.1 to 1000; got ${JSON.stringify(text)}.`,
      )
    }
    expect(budget.maxPerSecond).toBe(10)
  })
})
