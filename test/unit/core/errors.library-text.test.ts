import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../../helpers/cli.ts'

/**
 * The library speaks to every caller (a script, the action, the CLI), so the text it writes (its
 * errors' messages, its log lines) names no `proving` command and no CLI flag: what can be done
 * next travels as data (an error's `nextStep`, a journal's `forceNewHint`) and each adapter words
 * it (src/cli/advice.ts, src/action/steps/failure.ts). Read with TypeScript's own scanner: every
 * string and template literal of the library's layers, comments left out.
 */
const LIBRARY_LAYERS = ['core', 'clients', 'pipeline', 'chain', 'pie', 'schemas']
/** A `proving <command>` a person would type. */
const CLI_COMMAND =
  /\bproving (?:query|task|auth|journal|bucket|storage|fact|prove|submit|validate|inspect|pack|emulator|config|completion|verify-proof)\b/
/** A long flag (`--new`, `--auth-url`). */
const CLI_FLAG = /(?:^|[\s(`'"])--[a-z][a-z-]+/
/**
 * An input named in every host's spelling (core/checks.ts `inputNames`: the flag, then the
 * action's input, the environment variable or the library's option): the one way the library
 * may name a flag.
 */
const EVERY_HOST = /--[a-z-]+[;,] (?:the [a-z-]+ input|PROVING_[A-Z_]+|[a-zA-Z]+ in the library)/
const CLI_TEXT = { test: (text: string) => CLI_COMMAND.test(text) || (CLI_FLAG.test(text) && !EVERY_HOST.test(text)) }

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
  )
}

/** Every string literal and piece of template text in a file, with its line. */
function literalsOf(file: string): { line: number; text: string }[] {
  const source = readFileSync(file, 'utf8')
  const found: { line: number; text: string }[] = []
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, source)
  const lineOf = (position: number) => source.slice(0, position).split('\n').length
  // What each open brace belongs to: a block or object, or a template's `${`.
  const braces: ('block' | 'template')[] = []
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.CloseBraceToken && braces.pop() === 'template') {
      // The text after a template's `${...}` continues it.
      token = scanner.reScanTemplateToken(false)
    }
    if (token === ts.SyntaxKind.OpenBraceToken) braces.push('block')
    if (token === ts.SyntaxKind.TemplateHead || token === ts.SyntaxKind.TemplateMiddle) braces.push('template')
    if (
      token === ts.SyntaxKind.StringLiteral ||
      token === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
      token === ts.SyntaxKind.TemplateHead ||
      token === ts.SyntaxKind.TemplateMiddle ||
      token === ts.SyntaxKind.TemplateTail
    ) {
      found.push({ line: lineOf(scanner.getTokenStart()), text: scanner.getTokenValue() })
    }
    // A slash where an expression starts is a regular expression, not a division.
    if (token === ts.SyntaxKind.SlashToken || token === ts.SyntaxKind.SlashEqualsToken) scanner.reScanSlashToken()
  }
  return found
}

describe("the library's own text", () => {
  const offending = LIBRARY_LAYERS.flatMap((layer) => files(join(REPO_ROOT, 'src', layer)))
    .flatMap((file) => literalsOf(file).map((literal) => ({ ...literal, file: relative(REPO_ROOT, file) })))
    .filter((literal) => CLI_TEXT.test(literal.text))
    .map((literal) => `${literal.file}:${literal.line}: ${literal.text.slice(0, 160)}`)

  it('names no `proving` command and no CLI flag (the adapters word the next step)', () => {
    expect(offending).toEqual([])
  })

  it('the check finds such text where it is (the CLI names its commands)', () => {
    const cli = files(join(REPO_ROOT, 'src', 'cli'))
      .flatMap((file) => literalsOf(file))
      .filter((literal) => CLI_TEXT.test(literal.text))
    expect(cli.length).toBeGreaterThan(20)
    expect(cli.some((literal) => literal.text.includes('proving query list'))).toBe(true)
  })
})
