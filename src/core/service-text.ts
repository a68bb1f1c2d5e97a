/**
 * Service text is data. A string a service hands back (an `errorReason`, a `step`, an error
 * message, a task's failure) is shown to people in three media, and each has its own way of
 * turning text into instructions:
 *
 * - the runner's log: a line that starts (after blanks) with `::` is a workflow command
 *   (`::add-mask::`, `::warning::`, `::stop-commands::`), and `##[name]` anywhere in a line is
 *   one of the old form;
 * - the job summary: GitHub-flavoured Markdown, HTML allowed (headings, links, tables, images);
 * - the terminal: escape sequences move the cursor, rewrite lines, set the title, make links
 *   (OSC 8), and `\r` or a line break can forge a line of our own.
 *
 * This module is the one place that renders such text for each of them. The hosts apply it
 * where every line passes (the action's ActionIO, the CLI's writers); the summary applies the
 * Markdown escaping per context (text, code span, table cell).
 */

/**
 * Escape sequences, whole: CSI (`ESC [` or 0x9b, parameters, a final byte), the string
 * commands OSC, DCS, SOS, PM and APC (`ESC ]`, `ESC P`, `ESC X`, `ESC ^`, `ESC _`, or their
 * 8-bit forms) up to BEL or ST (or the end of the line: an unterminated one must not swallow the
 * lines we write after it), and the two-byte `ESC x` forms. Removing only the ESC byte would
 * leave `]8;;https://evil.example` on the screen.
 */
const ESCAPE_SEQUENCE =
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|(?:\u001b[\]PX^_]|[\u0090\u0098\u009d\u009e\u009f])[^\u0007\u001b\u009c\n]*(?:\u0007|\u001b\\|\u009c)?|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g

/**
 * What is left after the sequences: C0 controls but tab and line feed, DEL, C1 controls, and the
 * bidirectional overrides and isolates, which reorder what a person reads (Trojan Source).
 */
const CONTROL_BUT_LINE_BREAKS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g

/** Line breaks as terminals, browsers and the runner see them. */
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u0085\u2028\u2029]/g

/** Shown in place of a control character, so that something visibly was there. */
const REPLACEMENT = '\ufffd'

/** The most of one service string a line shows; the rest is counted, not printed. */
const SERVICE_TEXT_LIMIT = 2_000

/**
 * For the terminal (the CLI's stdout and stderr): escape sequences removed, other control
 * characters replaced; line feeds and tabs kept (the CLI's own output has several lines).
 */
export function forTerminal(text: string): string {
  return text.replace(ESCAPE_SEQUENCE, '').replace(/\r\n/g, '\n').replace(CONTROL_BUT_LINE_BREAKS, REPLACEMENT)
}

/**
 * JSON for the terminal: JSON.stringify leaves DEL, the C1 controls (0x9b starts a sequence on
 * some terminals) and the bidirectional controls raw; written as `\u` escapes they are the same
 * JSON value, so a script reading `--json` gets the service's text unchanged.
 */
export function jsonForTerminal(
  value: unknown,
  space?: number,
  replacer?: (key: string, value: unknown) => unknown,
): string {
  return (replacer ? JSON.stringify(value, replacer, space) : JSON.stringify(value, null, space)).replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/**
 * One service string inside a line we write: escape sequences removed, line breaks shown as
 * `\n` (so a reason cannot start a line of its own: a forged "status DONE", a workflow command),
 * other controls replaced, and at most SERVICE_TEXT_LIMIT characters.
 */
export function serviceLine(text: string, limit = SERVICE_TEXT_LIMIT): string {
  const line = text
    .replace(ESCAPE_SEQUENCE, '')
    .replace(LINE_BREAK, '\\n')
    .replace(/\t/g, ' ')
    .replace(CONTROL_BUT_LINE_BREAKS, REPLACEMENT)
  return line.length > limit ? `${line.slice(0, limit)}… (${line.length - limit} more characters)` : line
}

/**
 * For the runner's log (what @actions/core's `info` writes raw to stdout): terminal-safe, and
 * no line the runner would take for a workflow command. A zero-width space after the first
 * colon of a leading `::`, and inside `##[`, keeps the text readable as it was sent while the
 * runner's parser (which trims leading blanks, then looks for `::`) no longer matches it.
 */
export function forLog(text: string): string {
  return forTerminal(text)
    .split('\n')
    .map((line) => line.replace(/^(\s*):(?=:)/u, '$1:\u200b').replace(/##\[/g, '##\u200b['))
    .join('\n')
}

/**
 * A name the service gave, where a lookalike would mislead (a prover, a bucket id compared with
 * another): quoted, every character outside printable ASCII written as a `\u` escape, cut short
 * (an ellipsis after the quote). `"st\u043ene"` shows the Cyrillic о that `"stоne"` would hide;
 * printable ASCII, so every medium shows these characters.
 */
export function visibleName(text: string, limit = 80): string {
  const escaped = text
    .slice(0, limit)
    .replace(/["\\]/g, '\\$&')
    .replace(/[^\u0020-\u007e]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
  return `"${escaped}"${text.length > limit ? '…' : ''}`
}

// --- The job summary (GitHub-flavoured Markdown) ---------------------------------------------

/**
 * Characters that make Markdown structure anywhere in a line: links and images (`[`), emphasis
 * (`*`, and `_` at a word's edge: GFM ignores it inside words), strikethrough, math, and the
 * backslash itself. `|` is left to the table cell, the only place it has a meaning.
 */
const MARKDOWN_SPECIAL = /[\\*[\]~$]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu

/**
 * Text for the job summary: one line (line breaks as spaces), HTML escaped, and every character that makes
 * Markdown structure backslash-escaped, so a reason holding `### ✅ Prove: passed` or
 * `[link](https://evil.example)` shows as those characters, not as a heading or a link. What
 * GitHub links by itself, bare addresses (`https://…`, `www.…`, `a@b.c`), @-mentions and issue
 * references (a `#`, an `owner/repo#` or a `GH-` before a number), is broken with a zero-width space.
 * Code spans in the text (the toolkit's own `` `input` `` mentions) are kept
 * as code: nothing inside a code span is Markdown, so they need no escaping.
 */
export function forSummary(text: string): string {
  // A line break reads as a space in a paragraph; shown as `\n` it would only be noise here.
  const line = serviceLine(text.replace(LINE_BREAK, ' '))
  let out = ''
  let at = 0
  while (at < line.length) {
    const open = line.indexOf('`', at)
    if (open < 0) break
    out += escapeMarkdown(line.slice(at, open))
    const run = backtickRun(line, open)
    const close = closingRun(line, open + run, run)
    if (close < 0) {
      // No closing run of the same length: literal backticks, as CommonMark reads them.
      out += '\\`'.repeat(run)
      at = open + run
      continue
    }
    out += line.slice(open, close + run)
    at = close + run
  }
  return out + escapeMarkdown(line.slice(at))
}

/**
 * An identifier or hash as a code span for the summary: one line, and a span that its own
 * backticks cannot close (GitHub shows a code span's content literally: no Markdown, no HTML).
 */
export function forSummaryCode(text: string): string {
  const line = serviceLine(text, 300)
  const longest = Math.max(0, ...(line.match(/`+/g) ?? []).map((run) => run.length))
  const fence = '`'.repeat(longest + 1)
  const pad = line.startsWith('`') || line.endsWith('`') ? ' ' : ''
  return `${fence}${pad}${line}${pad}${fence}`
}

/** A table cell of the summary: `forSummary`, or `forSummaryCode` for a code cell, with its pipes escaped. */
export function forSummaryCell(text: string, as: 'text' | 'code' = 'text'): string {
  if (as === 'code' && !text) return ''
  return (as === 'code' ? forSummaryCode(text) : forSummary(text)).replace(/\|/g, '\\|')
}

function escapeMarkdown(text: string): string {
  return (
    text
      .replace(/&/g, '&amp;')
      .replace(/</g, '&lt;')
      .replace(/>/g, '&gt;')
      .replace(MARKDOWN_SPECIAL, '\\$&')
      // What makes a block at the start of a line: a heading, a list item, a setext underline.
      .replace(
        /^(\s*)(#|[-+=]|\d+[.)])/,
        (_match, blank: string, marker: string) => `${blank}${marker.replace(/[#\-+=.)]/, '\\$&')}`,
      )
      .replace(/(https?|ftp):\/\//gi, '$1:/\u200b/')
      .replace(/\bwww\./gi, 'www\u200b.')
      .replace(/@/g, '@\u200b')
      // Issue and pull-request references (`#1`, `acme/widgets#2`, `GH-3`): in a PR comment or a
      // check run GitHub links them and cross-references the issue, as it notifies on a mention.
      .replace(/#(?=\d)/g, '#\u200b')
      .replace(/\b(GH-)(?=\d)/gi, '$1\u200b')
  )
}

function backtickRun(text: string, at: number): number {
  let length = 0
  while (text[at + length] === '`') length++
  return length
}

/** Where the next run of exactly `length` backticks starts, or -1. */
function closingRun(text: string, from: number, length: number): number {
  let at = from
  while (at < text.length) {
    const next = text.indexOf('`', at)
    if (next < 0) return -1
    const run = backtickRun(text, next)
    if (run === length) return next
    at = next + run
  }
  return -1
}
