import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { COMMANDS } from '../../../src/cli/commands/index.ts'
import { type CliIO, type CommandSpec, commandOptions } from '../../../src/cli/context.ts'
import { wrap } from '../../../src/cli/help.ts'
import { L2_LAYOUTS, LAYOUTS } from '../../../src/schemas/proving-constants.ts'
import { main } from '../../../src/cli/main.ts'
import { REPO_ROOT } from '../../helpers/cli.ts'

/**
 * What `--help` shows a person: at most 100 columns, a flag never glued to its text, the top
 * level in sections with examples and the docs' address, `proving help <cmd>`, and on each
 * command only the flags it reads.
 */
async function run(argv: string[]) {
  let stdout = ''
  let stderr = ''
  const io: CliIO = {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env: {},
    isTTY: false,
  }
  const code = await main(argv, { io, signal: new AbortController().signal })
  return { code, stdout, stderr }
}

const GROUPS = [
  ...new Set(
    COMMANDS.flatMap((spec) => spec.path.slice(0, -1).map((_, depth) => spec.path.slice(0, depth + 1).join(' '))),
  ),
]
const EVERY_HELP = [
  ['--help'],
  ...COMMANDS.map((spec) => [...spec.path, '--help']),
  ...GROUPS.map((group) => [...group.split(' '), '--help']),
]
const flagOf = (name: string, option: { short?: string; valueName?: string }) =>
  `${option.short ? `-${option.short}, ` : ''}--${name}${option.valueName ? ` ${option.valueName}` : ''}`

describe('help text', () => {
  it('no line of any help is wider than 100 columns', async () => {
    const wide: string[] = []
    for (const argv of EVERY_HELP) {
      const { code, stdout } = await run(argv)
      expect(code, argv.join(' ')).toBe(0)
      for (const line of stdout.split('\n')) if (line.length > 100) wide.push(`${argv.join(' ')}: ${line}`)
    }
    expect(wide).toEqual([])
  })

  it.each(COMMANDS.map((spec) => [spec.path.join(' '), spec] as const))(
    '%s: every flag stands apart from its text',
    async (_, spec) => {
      const { stdout } = await run([...spec.path, '--help'])
      for (const [name, option] of Object.entries(commandOptions(spec))) {
        // The flag ends its line (the text on the next one) or two spaces part it from the text.
        expect(stdout, name).toMatch(new RegExp(`^  ${escapeRegExp(flagOf(name, option))}(\\n {4,}| {2,})\\S`, 'm'))
      }
    },
  )

  it('the top level: sections, every first word once, examples and the docs', async () => {
    const { stdout } = await run(['--help'])
    const sections = stdout.split('\n').filter((line) => /^[A-Z][\w ()-]+:$/.test(line))
    expect(sections).toEqual(['Prove and gate:', 'PIE files (offline):', 'Other services:', 'Set-up:', 'Examples:'])
    for (const word of new Set(COMMANDS.map((spec) => spec.path[0]!)))
      expect(stdout.match(new RegExp(`^  ${word} `, 'gm')), word).toHaveLength(1)
    expect(stdout.match(/^ {2}\$ proving /gm)!.length).toBeGreaterThanOrEqual(2)
    expect(stdout).toMatch(/^Docs: https:\/\/\S+$/m)
    expect(stdout.split('\n').length).toBeLessThan(COMMANDS.length + 20)
  })

  it('no line of any help is one lone word left over from the line before ("whose", "it.")', async () => {
    const lone: string[] = []
    for (const argv of EVERY_HELP) {
      const lines = (await run(argv)).stdout.split('\n')
      lines.forEach((line, index) => {
        const before = lines[index - 1]?.trim() ?? ''
        if (/^\s*[A-Za-z'-]+[.,;)]?$/.test(line) && before !== '' && !before.endsWith(':'))
          lone.push(`${argv.join(' ')}: ${JSON.stringify(line)}`)
      })
    }
    expect(lone).toEqual([])
  })

  it('wrap keeps every word in order, fits the width, and leaves no lone last word it could pair', () => {
    const word = fc.stringMatching(/^[a-z.,()]{1,12}$/)
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 30, max: 100 }),
        fc.integer({ min: 0, max: 4 }),
        (words, width, indent) => {
          const lines = wrap(words.join(' '), width, indent)
          expect(lines.join(' ').split(/ +/).filter(Boolean)).toEqual(words)
          for (const line of lines) expect(line.length).toBeLessThanOrEqual(width)
          for (const line of lines.slice(1)) expect(line.startsWith(' '.repeat(indent))).toBe(true)
          // Two words always fit one line here (12 + 1 + 12 + 4 < 30): the last line holds two when there are two.
          if (lines.length > 1) expect(lines.at(-1)!.trim().split(' ').length).toBeGreaterThanOrEqual(2)
        },
      ),
    )
  })

  it('an option says its default once', async () => {
    const twice: string[] = []
    for (const spec of COMMANDS) {
      const text = (await run([...spec.path, '--help'])).stdout.replaceAll(/\n {32}/g, ' ')
      for (const line of text.split('\n'))
        if (/\bdefault\b.*\(default [^)]*\)$/.test(line)) twice.push(`${spec.path.join(' ')}: ${line}`)
    }
    expect(twice).toEqual([])
  })

  it("help points at no file the installed package lacks (docs/, examples/): the repository's address instead", async () => {
    const packed = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[] }
    for (const argv of EVERY_HELP) {
      const { stdout } = await run(argv)
      for (const path of stdout.matchAll(/(?<![\w/.:-])((?:docs|examples)\/[\w./-]+)/g)) {
        expect(
          packed.files.some((entry) => path[1]!.startsWith(entry)),
          `${argv.join(' ')}: ${path[1]}`,
        ).toBe(true)
      }
    }
    expect((await run(['emulator', '--help'])).stdout).toContain(
      'https://github.com/proving-kit/proving-kit/blob/main/docs/emulator.md',
    )
  })

  it('`help prove` lists the layouts each endpoint accepts, the lists the CLI checks against', async () => {
    const { stdout } = await run(['help', 'prove'])
    const text = stdout.replaceAll(/\n {32}/g, ' ')
    expect(text).toContain(
      `Cairo layout: ${L2_LAYOUTS.join(', ')}; with a general-submission flag, also ${LAYOUTS.filter((name) => !(L2_LAYOUTS as readonly string[]).includes(name)).join(', ')}.`,
    )
  })

  it("`proving help <command>` is that command's help; `proving help <group>` the group's", async () => {
    for (const argv of [['prove'], ['query', 'get'], ['auth', 'keys', 'create'], ['task'], ['auth', 'keys']]) {
      const viaHelp = await run(['help', ...argv])
      expect(viaHelp.code, argv.join(' ')).toBe(0)
      expect(viaHelp.stdout).toBe((await run([...argv, '--help'])).stdout)
      expect(viaHelp.stdout).toMatch(new RegExp(`^Usage: proving ${argv.join(' ')} `))
    }
    const unknown = await run(['help', 'porve'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain('did you mean `proving prove`?')
  })
})

/** The commands that talk to no service. */
const OFFLINE = [
  'validate',
  'pack',
  'inspect',
  'emulator',
  'completion',
  'auth keys revoke',
  'journal list',
  'journal clear',
]

describe('each command lists only the flags it reads', () => {
  it('offline commands neither list nor accept --profile and --allow-insecure-http', async () => {
    for (const path of OFFLINE) {
      const { stdout } = await run([...path.split(' '), '--help'])
      expect(stdout, path).not.toContain('--profile')
      expect(stdout, path).not.toContain('--allow-insecure-http')
      const refused = await run([...path.split(' '), '--profile', 'local'])
      expect(refused.code, path).toBe(2)
      expect(refused.stderr, path).toContain("Unknown option '--profile'")
    }
  })

  it('the commands that reach a service list both; config show lists --profile', async () => {
    for (const spec of COMMANDS.filter(
      (command) =>
        !OFFLINE.includes(command.path.join(' ')) && command.path[0] !== 'config' && command.path[0] !== 'fact',
    )) {
      const { stdout } = await run([...spec.path, '--help'])
      expect(stdout, spec.path.join(' ')).toContain('--allow-insecure-http')
      expect(stdout, spec.path.join(' ')).toContain('--profile <name>')
    }
    expect((await run(['config', 'show', '--help'])).stdout).toContain('--profile <name>')
  })

  it('every flag a command lists is read by its module or the CLI modules it imports', async () => {
    const cli = join(REPO_ROOT, 'src/cli')
    const unread: string[] = []
    for (const file of readdirSync(join(cli, 'commands'))) {
      const module = (await import(join(cli, 'commands', file))) as Record<string, unknown>
      // completion.ts exports its command as a function of the table it completes.
      const made =
        typeof module.completionCommand === 'function'
          ? [(module.completionCommand as (table: () => CommandSpec[]) => unknown)(() => [])]
          : []
      const specs = [...Object.values(module), ...made]
      const read = flagsRead(join(cli, 'commands', file), new Set())
      for (const spec of specs.filter(isCommand)) {
        for (const name of Object.keys(commandOptions(spec)))
          if (!read.has(name)) unread.push(`${spec.path.join(' ')} --${name}`)
      }
    }
    expect(unread).toEqual([])
  })
})

function isCommand(value: unknown): value is CommandSpec {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as CommandSpec).path) &&
    typeof (value as CommandSpec).run === 'function'
  )
}

/**
 * The flag names a module and the CLI modules it imports read: `values.name`, `values['name']`,
 * the general-submission reader's `text('name')`, and a table of names read in a loop. main.ts reads --json, --debug, --help
 * and --max-rps (the process's request budget) for every command.
 */
function flagsRead(file: string, seen: Set<string>): Set<string> {
  const names = new Set(['json', 'debug', 'help', 'max-rps'])
  if (seen.has(file)) return names
  seen.add(file)
  const source = readFileSync(file, 'utf8')
  // `(context.values as { new?: boolean }).new` reads --new as well.
  for (const match of source.matchAll(
    /values(?: as [^)]*\))?(?:\.([a-z][\w]*)|\[['"]([a-z][\w-]*)['"]\])|\btext\('([a-z][\w-]*)'\)/g,
  ))
    names.add(match[1] ?? match[2] ?? match[3]!)
  // A table of flag names read in a loop (`const flags = { layout: 'layout', ... } as const`).
  for (const table of source.matchAll(/const flags = \{([^}]*)\} as const/g))
    for (const name of table[1]!.matchAll(/'([a-z][\w-]*)'/g)) names.add(name[1]!)
  for (const match of source.matchAll(/from '(\.\.?\/[\w./-]+\.ts)'/g)) {
    const imported = join(file, '..', match[1]!)
    if (imported.includes('/src/cli/')) for (const name of flagsRead(imported, seen)) names.add(name)
  }
  return names
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
