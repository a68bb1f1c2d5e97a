import { describe, expect, it } from 'vitest'
import {
  forLog,
  forSummary,
  forSummaryCell,
  forSummaryCode,
  forTerminal,
  jsonForTerminal,
  serviceLine,
  visibleName,
} from '../../../src/core/service-text.ts'

/**
 * What the runner takes for a workflow command in one line of a step's stdout, by the rules of
 * actions/runner's ActionCommand: `TryParseV2` trims leading white space (.NET's: Unicode
 * White_Space) and wants `::`, a command, `::`; `TryParse` (the old form) finds `##[` anywhere.
 */
function runnerCommand(line: string): string | undefined {
  const trimmed = line.replace(/^[\s\u0085]+/u, '')
  if (trimmed.startsWith('::')) {
    const end = trimmed.indexOf('::', 2)
    if (end >= 0) return trimmed.slice(2, end).split(' ')[0]
  }
  const old = line.indexOf('##[')
  if (old >= 0 && line.indexOf(']', old) > old) return line.slice(old + 3, line.indexOf(']', old)).split(' ')[0]
  return undefined
}

/** Lines as the runner reads a stream (StreamReader.ReadLine: \n, \r and \r\n end a line). */
const runnerLines = (text: string) => text.split(/\r\n|\r|\n/)

const ESC = '\u001b'
const HOSTILE_REASON = [
  'prover crashed',
  '::add-mask::proving-kit',
  '  ::warning file=action.yml,line=1::pwned',
  '::stop-commands::abc',
  '##[error]old form',
  `${ESC}[2K${ESC}[1G status          DONE`,
  `${ESC}]8;;https://evil.example${ESC}\\click here${ESC}]8;;${ESC}\\`,
  `${ESC}]0;title${'\u0007'}`,
  '\u009b31mred\u009b0m',
  'evil\r status DONE',
  '\u202eesrever',
].join('\n')

describe('forLog: no line of it is a workflow command', () => {
  it('neutralises ::commands at line start (after blanks) and ##[ anywhere, keeping the text readable', () => {
    const logged = forLog(HOSTILE_REASON)
    for (const line of runnerLines(logged)) expect(runnerCommand(line), line).toBeUndefined()
    // The text still reads as the service sent it (a zero-width space is all that was added).
    expect(logged.replace(/\u200b/g, '')).toContain('::add-mask::proving-kit')
    expect(logged.replace(/\u200b/g, '')).toContain('##[error]old form')
  })

  it('the same text unrendered does carry commands (the stand-in parser sees them)', () => {
    const commands = runnerLines(HOSTILE_REASON).map(runnerCommand).filter(Boolean)
    expect(commands).toEqual(['add-mask', 'warning', 'stop-commands', 'error'])
  })

  it('leaves ordinary lines alone', () => {
    expect(forLog('[    3s] IN_PROGRESS  step PIE_VALIDATION')).toBe('[    3s] IN_PROGRESS  step PIE_VALIDATION')
    expect(forLog('a::b and c :: d\nsecond line')).toBe('a::b and c :: d\nsecond line')
  })
})

describe('forTerminal: no escape sequence survives', () => {
  it('removes CSI, OSC (BEL and ST ended), 8-bit CSI; replaces other controls, \\r and bidi overrides', () => {
    const shown = forTerminal(HOSTILE_REASON)
    expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/)
    expect(shown).not.toContain(']8;;')
    expect(shown).not.toContain('evil.example')
    expect(shown).toContain('click here')
    expect(shown).toContain('red')
    // `\r` would have sent the cursor back to overwrite the line: shown as a replacement character.
    expect(shown).toContain('evil\ufffd status DONE')
  })

  it('an unterminated OSC ends at the line: the lines after it stay', () => {
    expect(forTerminal(`reason ${ESC}]8;;https://evil.example\ncreated  2026-01-01`)).toBe(
      'reason \ncreated  2026-01-01',
    )
  })

  it("keeps line feeds and tabs, the CLI's own layout", () => {
    expect(forTerminal('a\tb\nc\r\nd')).toBe('a\tb\nc\nd')
  })
})

describe('serviceLine: one line, bounded', () => {
  it('shows line breaks as \\n so a reason cannot start a line of its own', () => {
    const line = serviceLine('boom\nstatus          DONE\r\nx\u2028y')
    expect(line).toBe('boom\\nstatus          DONE\\nx\\ny')
    expect(serviceLine(HOSTILE_REASON)).not.toMatch(/[\n\r]/)
  })

  it('cuts a long text and says how much was left out', () => {
    expect(serviceLine('x'.repeat(30), 10)).toBe(`${'x'.repeat(10)}… (20 more characters)`)
  })
})

describe('visibleName: a lookalike shows as what it is', () => {
  it('quotes the name and writes every character outside printable ASCII as a \\u escape', () => {
    // A Cyrillic о (U+043E) in "stone", a hyphen that is not U+002D, a zero-width space, a line break.
    expect(visibleName('st\u043ene')).toBe('"st\\u043ene"')
    expect(visibleName('b\u20101')).toBe('"b\\u20101"')
    expect(visibleName('stone\u200b')).toBe('"stone\\u200b"')
    expect(visibleName('a"b\\c\n\u001b[2J')).toBe('"a\\"b\\\\c\\u000a\\u001b[2J"')
    expect(visibleName('stone')).toBe('"stone"')
    // Printable ASCII only, so every medium shows these characters: nothing for serviceLine to change.
    const hostile = visibleName(`x\u202e\u0085\r\n::warning::${'y'.repeat(100)}`)
    expect(hostile).toMatch(/^"[\x20-\x7e]*"…$/)
    expect(serviceLine(hostile)).toBe(hostile)
  })
})

describe('forSummary: data, never Markdown or HTML', () => {
  const attack =
    'boom\n\n### ✅ Prove: passed\n\nAll good: [link](https://evil.example) ![img](https://evil.example/i.png) <img src=x onerror=alert(1)> **bold** _it_ ~~gone~~ $x$ www.evil.example'

  it('a heading, links, images, HTML and emphasis come out as their characters', () => {
    const markdown = forSummary(attack)
    expect(markdown).not.toContain('\n')
    // Every bracket escaped: no link or image can open.
    expect(markdown).not.toMatch(/(?<!\\)[[\]]/)
    expect(markdown).toContain('!\\[img\\]')
    expect(markdown).not.toContain('<img')
    expect(markdown).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(markdown).toContain('\\*\\*bold\\*\\*')
    expect(markdown).toContain('\\_it\\_')
    expect(markdown).toContain('\\~\\~gone\\~\\~')
    expect(markdown).toContain('\\$x\\$')
    // Bare addresses, which GitHub links by itself, are broken with a zero-width space.
    expect(markdown).not.toMatch(/https:\/\/evil/)
    expect(markdown).not.toMatch(/www\.evil/)
  })

  it('breaks the issue references and @-mentions GitHub would link, with a zero-width space', () => {
    expect(forSummary('Closes #1 fixes acme/widgets#2, gh-3 cc @octocat')).toBe(
      'Closes #\u200b1 fixes acme/widgets#\u200b2, gh-\u200b3 cc @\u200boctocat',
    )
    // A heading mark or an anchor is no reference.
    expect(forSummary('see #readme and C# 12')).toBe('see #readme and C# 12')
    expect(forSummary('#12 first')).toBe('\\#\u200b12 first')
  })

  it("a text that is all the service's cannot open a block: heading, list, quote, rule", () => {
    expect(forSummary('### ✅ Prove: passed')).toBe('\\### ✅ Prove: passed')
    expect(forSummary('- [x] done')).toBe('\\- \\[x\\] done')
    expect(forSummary('1. first')).toBe('1\\. first')
    expect(forSummary('> quoted')).toBe('&gt; quoted')
    expect(forSummary('***')).toBe('\\*\\*\\*')
  })

  it("keeps the toolkit's own code spans as code, and reads unclosed backticks as CommonMark does", () => {
    expect(forSummary('Fix `pie` in the workflow file.')).toBe('Fix `pie` in the workflow file.')
    expect(forSummary('`a_b*` and [x]')).toBe('`a_b*` and \\[x\\]')
    expect(forSummary('one ` tick [x](y)')).toBe('one \\` tick \\[x\\](y)')
    expect(forSummary('``a`b`` [x]')).toBe('``a`b`` \\[x\\]')
  })

  it('identifiers as code spans their own backticks cannot close; cells escape their pipes', () => {
    expect(forSummaryCode('q-1')).toBe('`q-1`')
    expect(forSummaryCode('a`b')).toBe('``a`b``')
    expect(forSummaryCode('`x')).toBe('`` `x ``')
    expect(forSummaryCode('a\nb')).toBe('`a\\nb`')
    expect(forSummaryCell('a | b')).toBe('a \\| b')
    expect(forSummaryCell('a|b', 'code')).toBe('`a\\|b`')
    expect(forSummaryCell('', 'code')).toBe('')
  })
})

describe('jsonForTerminal', () => {
  it('writes DEL, C1 and bidi controls as \\u escapes: the same JSON value, nothing raw', () => {
    const value = { reason: `a${ESC}[31m\u009b1m\u202eb` }
    const text = jsonForTerminal(value)
    expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/)
    expect(JSON.parse(text)).toEqual(value)
  })
})
