import { describe, expect, it } from 'vitest'
import type { CliIO } from '../../../src/cli/context.ts'
import { main } from '../../../src/cli/main.ts'
import { closestWord } from '../../../src/cli/suggest.ts'

async function run(argv: string[]) {
  let stderr = ''
  const io: CliIO = { stdout: () => {}, stderr: (text) => void (stderr += text), env: {}, isTTY: false }
  return { code: await main(argv, { io, signal: new AbortController().signal }), stderr }
}

describe('closestWord', () => {
  const words = [
    'prove',
    'submit',
    'query',
    'bucket',
    'task',
    'storage',
    'auth',
    'completion',
    'validate',
    'verify-proof',
  ]

  it('finds a typo, a swap, a missing or extra letter, and an unambiguous start', () => {
    expect(closestWord('porve', words)).toBe('prove')
    expect(closestWord('qeury', words)).toBe('query')
    expect(closestWord('buckt', words)).toBe('bucket')
    expect(closestWord('storagee', words)).toBe('storage')
    expect(closestWord('compl', words)).toBe('completion')
    expect(closestWord('--wiat', ['--wait', '--timeout', '--json'])).toBe('--wait')
  })

  it('says nothing when no word is close, or the start is ambiguous', () => {
    expect(closestWord('deploy', words)).toBeUndefined()
    expect(closestWord('x', words)).toBeUndefined()
    expect(closestWord('--auth-', ['--auth-url', '--auth-token'])).toBeUndefined()
  })
})

describe('did you mean, on the command line', () => {
  it('an unknown command names the close one', async () => {
    const top = await run(['porve', 'pie.zip'])
    expect(top.code).toBe(2)
    expect(top.stderr).toBe(
      'proving: Unknown command `proving porve`: did you mean `proving prove`? Otherwise run `proving --help` for the list of commands.\n',
    )
    const inGroup = await run(['task', 'sumbit', 'task.json'])
    expect(inGroup.stderr).toContain('did you mean `proving task submit`?')
    const nested = await run(['auth', 'keys', 'lst'])
    expect(nested.stderr).toContain('did you mean `proving auth keys list`?')
    expect((await run(['deploy'])).stderr).not.toContain('did you mean')
    expect((await run(['--verison'])).stderr).toContain('did you mean `proving --version`?')
  })

  it("an unknown flag names the close one of the command's own", async () => {
    const flag = await run(['prove', 'pie.zip', '--wiat'])
    expect(flag.code).toBe(2)
    expect(flag.stderr).toContain("Unknown option '--wiat'. Did you mean --wait? Run `proving prove --help` for usage.")
    // With a value glued on, and only among the command's flags (validate has no --timeout).
    expect((await run(['query', 'list', '--limt=5'])).stderr).toContain('Did you mean --limit?')
    expect((await run(['validate', 'pie.zip', '--timeot'])).stderr).not.toContain('Did you mean')
  })
})
