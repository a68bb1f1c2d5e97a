import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { COMMANDS } from '../../../src/cli/commands/index.ts'
import { commandOptions, GLOBAL_OPTIONS, SERVICE_ACCESS_OPTIONS } from '../../../src/cli/context.ts'
import { REPO_ROOT } from '../../helpers/cli.ts'

/**
 * Every flag `--help` lists is documented: docs/cli.md has a section per command, and each of the
 * command's own flags is in its section (the flags every command takes are in its opening). The
 * flags are read from the CLI's own definitions, so a flag added without its docs fails here.
 */
const reference = readFileSync(join(REPO_ROOT, 'docs/cli.md'), 'utf8')
const sections = new Map(
  reference
    .split(/^## /m)
    .slice(1)
    .map((section) => [/^proving ([a-z -]+?)(?: [<[]|\n)/.exec(section)![1]!.trim(), section] as const),
)

describe('docs/cli.md documents every flag of every command', () => {
  it.each(COMMANDS.map((spec) => [spec.path.join(' '), spec] as const))('proving %s', (name, spec) => {
    const section = sections.get(name)
    expect(section, `no "## proving ${name}" section in docs/cli.md`).toBeDefined()
    const missing = Object.entries(commandOptions(spec))
      .filter(([flag]) => !(flag in GLOBAL_OPTIONS) && !(flag in SERVICE_ACCESS_OPTIONS))
      .filter(
        ([flag, option]) =>
          !section!.includes(`--${flag}`) ||
          (option.short !== undefined && !section!.includes(`-${option.short}, --${flag}`)),
      )
      .map(([flag]) => `--${flag}`)
    expect(missing).toEqual([])
  })

  it('names the flags every command takes, and has no section for a command that does not exist', () => {
    const opening = reference.split(/^## /m)[0]!
    for (const flag of [...Object.keys(GLOBAL_OPTIONS), ...Object.keys(SERVICE_ACCESS_OPTIONS)])
      expect(opening, flag).toContain(`--${flag}`)
    expect([...sections.keys()].sort()).toEqual(COMMANDS.map((spec) => spec.path.join(' ')).sort())
  })

  it('is linked from the README', () => {
    expect(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')).toContain('](docs/cli.md)')
  })
})
