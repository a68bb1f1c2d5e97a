import { execFileSync } from 'node:child_process'
import { NODE, REPO_ROOT } from './cli.ts'

/**
 * Every file module a fresh process resolves while importing `entry` (a resolve hook records
 * them), as `src/...` and `node_modules/...` paths. `argv` is what the entry sees after
 * `proving`. Printed at exit: an entry such as the CLI's ends the process itself.
 */
export function modulesLoadedBy(entry: string, argv: string[] = []): string[] {
  const script = `
    import { registerHooks } from 'node:module'
    import { writeSync } from 'node:fs'
    const seen = new Set()
    registerHooks({ resolve(specifier, context, next) {
      const result = next(specifier, context)
      if (result.url.startsWith('file:')) seen.add(result.url)
      return result
    } })
    process.on('exit', () => writeSync(1, '\\n' + JSON.stringify([...seen]) + '\\n'))
    process.argv.splice(1, Infinity, "proving", ...${JSON.stringify(argv)})
    await import(${JSON.stringify(entry)})
  `
  const output = execFileSync(NODE, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' })
  return (JSON.parse(output.trim().split('\n').at(-1)!) as string[]).map((url) =>
    url.replace(/^file:\/\/.*?\/(src|node_modules)\//, '$1/'),
  )
}
