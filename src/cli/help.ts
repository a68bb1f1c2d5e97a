import { VERSION } from '../core/version.ts'
import { type CommandSpec, commandOptions } from './context.ts'

/** No help line is wider: a terminal of 100 columns shows every line whole. */
export const HELP_WIDTH = 100
/** Where an option's description starts; a longer flag puts its description on the next line. */
const FLAG_COLUMN = 32
/** Where a command's summary starts in a list of commands. */
const COMMAND_COLUMN = 26
/** The repository: the docs are there, not in the installed package (which holds bin/, lib/ and the README). */
export const REPOSITORY_URL = 'https://github.com/proving-kit/proving-kit'
const DOCS_URL = `${REPOSITORY_URL}#the-cli`

/** Where a page of the docs is read (an installed package has no docs/ folder). */
export function docsUrl(page: string): string {
  return `${REPOSITORY_URL}/blob/main/docs/${page}`
}

/**
 * The top level's sections, by the first word of a command. A command whose first word is in no
 * section lands in the last one (so a new command is never missing from the help).
 */
const SECTIONS: readonly { title: string; words: readonly string[] }[] = [
  { title: 'Prove and gate', words: ['prove', 'submit', 'verify-proof', 'query', 'bucket', 'fact', 'journal'] },
  { title: 'PIE files (offline)', words: ['validate', 'pack', 'inspect'] },
  { title: 'Other services', words: ['task', 'storage', 'auth'] },
  { title: 'Set-up', words: ['config', 'emulator', 'completion'] },
]

/** What a group of commands is for, on its one line of the top-level help. */
const GROUP_SUMMARIES: Readonly<Record<string, string>> = {
  query: 'Show, wait for, retry and list proving queries.',
  bucket: 'Create, close and show buckets (many queries, one proof).',
  fact: 'Check that a fact is registered on chain.',
  journal: 'List and clear the local journal of submissions (what a re-run follows instead of paying again).',
  task: 'Submit, follow and list data-processor tasks.',
  storage: 'Submit and follow storage-proof batch queries.',
  auth: 'Sign in with a wallet; create, list and revoke API keys.',
  config: "Show the profiles and where each service's address comes from.",
}

const EXAMPLES = [
  'proving emulator &                                   # the four services, on this machine',
  'export PROVING_PROFILE=local PROVING_API_KEY=dev-key',
  'proving prove pie.zip --wait                         # your PIE (cairo-run --cairo_pie_output)',
]

/**
 * Words of `text` in lines of at most `width` columns, every line after the first indented by
 * `indent`. The last line never holds one lone word ("it.") when the line before can give it a
 * companion: the last word of that line moves down.
 */
export function wrap(text: string, width: number, indent: number): string[] {
  const lead = /^ */.exec(text)![0]
  const lines: string[] = []
  let line = lead
  for (const word of text.slice(lead.length).split(/ +/)) {
    if (word === '') continue
    const bare = line.trim() === ''
    if (!bare && line.length + 1 + word.length > width) {
      lines.push(line)
      line = `${' '.repeat(indent)}${word}`
    } else line = bare ? `${line}${word}` : `${line} ${word}`
  }
  lines.push(line)
  const last = lines.length - 1
  if (last >= 1 && !/\S\s+\S/.test(lines[last]!)) {
    const before = lines[last - 1]!
    const cut = before.lastIndexOf(' ')
    const moved = before.slice(cut + 1)
    if (cut > /^ */.exec(before)![0].length && lines[last]!.length + 1 + moved.length <= width) {
      lines[last - 1] = before.slice(0, cut)
      lines[last] = `${' '.repeat(indent)}${moved} ${lines[last]!.trimStart()}`
    }
  }
  return lines
}

/** A term and its text in two columns; a term wider than the column puts the text on the next line. */
function twoColumns(term: string, text: string, column: number): string[] {
  const head = `  ${term}`
  const body = wrap(text, HELP_WIDTH - column, 0).map((line) => `${' '.repeat(column)}${line}`)
  if (head.length + 2 > column) return [head, ...body]
  return [`${head.padEnd(column)}${body[0]!.trimStart()}`, ...body.slice(1)]
}

/**
 * Detail lines are laid out by hand (examples, aligned columns), so a line that fits is kept as
 * written. One too wide is wrapped; when its sentence goes on in the next line (same indentation,
 * the sentence not ended), the words that did not fit start that line, and so on, instead of
 * standing alone on a line of their own.
 */
function paragraph(lines: readonly string[]): string[] {
  const out: string[] = []
  let carry = ''
  for (const [index, written] of lines.entries()) {
    const lead = /^ */.exec(written)![0]
    const line = carry ? `${lead}${carry} ${written.slice(lead.length)}` : written
    carry = ''
    if (line.length <= HELP_WIDTH) {
      out.push(line)
      continue
    }
    const wrapped = wrap(line, HELP_WIDTH, lead.length ? lead.length + 2 : 0)
    const next = lines[index + 1]
    const goesOn = next !== undefined && next.trim() !== '' && /^ */.exec(next)![0] === lead && !/[.:!?]$/.test(line)
    if (goesOn) {
      out.push(...wrapped.slice(0, -1))
      carry = wrapped.at(-1)!.trim()
    } else out.push(...wrapped)
  }
  return out
}

/** One command's help: usage, summary, details, and every flag it takes. */
export function helpText(spec: CommandSpec): string {
  const lines = [
    `Usage: proving ${spec.path.join(' ')}${spec.args ? ` ${spec.args}` : ''} [options]`,
    '',
    ...paragraph([spec.summary]),
  ]
  if (spec.details?.length) lines.push('', ...paragraph(spec.details))
  lines.push('', 'Options:')
  for (const [name, option] of Object.entries(commandOptions(spec))) {
    const flag = `${option.short ? `-${option.short}, ` : ''}--${name}${option.valueName ? ` ${option.valueName}` : ''}`
    const extra = [
      option.env ? `env ${option.env}` : '',
      // A description that already says its default (`(default 4)`, `(default: any ...)`) is not given a second one.
      option.default !== undefined && option.default !== false && !/\bdefault\b/.test(option.description)
        ? `default ${option.default}`
        : '',
    ].filter(Boolean)
    lines.push(...twoColumns(flag, `${option.description}${extra.length ? ` (${extra.join('; ')})` : ''}`, FLAG_COLUMN))
  }
  return lines.join('\n')
}

/** One line per command: its words and arguments, then its summary. */
function commandLines(commands: readonly CommandSpec[]): string[] {
  return commands.flatMap((spec) =>
    twoColumns(`${spec.path.join(' ')}${spec.args ? ` ${spec.args}` : ''}`, spec.summary, COMMAND_COLUMN),
  )
}

/** `proving task --help`: the group's commands. */
export function groupHelp(word: string, group: readonly CommandSpec[]): string {
  return [
    `Usage: proving ${word} <command> [options]`,
    '',
    'Commands:',
    ...commandLines(group),
    '',
    `Run \`proving help ${word} <command>\` for a command's options.`,
  ].join('\n')
}

/** `proving --help`: the commands in sections, a group on one line, a few examples and where the docs are. */
export function topLevelHelp(commands: readonly CommandSpec[]): string {
  const firstWords = [...new Set(commands.map((spec) => spec.path[0]!))]
  const known = new Set(SECTIONS.flatMap((section) => section.words))
  const sections = SECTIONS.map((section, index) => ({
    title: section.title,
    words: [
      ...section.words.filter((word) => firstWords.includes(word)),
      ...(index === SECTIONS.length - 1 ? firstWords.filter((word) => !known.has(word)) : []),
    ],
  }))
  const lines = [
    `proving ${VERSION}: prove Cairo programs with a STARK proving service, or its built-in emulator.`,
    '',
    'Usage: proving <command> [options]',
  ]
  for (const section of sections) {
    lines.push('', `${section.title}:`)
    for (const word of section.words) {
      const specs = commands.filter((spec) => spec.path[0] === word)
      const single = specs.length === 1 && specs[0]!.path.length === 1 ? specs[0] : undefined
      if (single) lines.push(...commandLines([single]))
      else {
        const subcommands = [...new Set(specs.map((spec) => spec.path.slice(1).join(' ')))]
        lines.push(
          ...twoColumns(`${word} <command>`, GROUP_SUMMARIES[word] ?? `${subcommands.join(', ')}.`, COMMAND_COLUMN),
        )
      }
    }
  }
  lines.push(
    '',
    'Examples:',
    ...EXAMPLES.map((line) => `  $ ${line}`),
    '',
    'Run `proving help <command>` (or `proving <command> --help`) for its options and subcommands.',
    ...wrap(
      'Exit codes: 0 success, 1 remote failure (query FAILED, facts differ), 2 bad input or usage, 3 service or network error, 4 timed out, 130 interrupted.',
      HELP_WIDTH,
      12,
    ),
    `Docs: ${DOCS_URL}`,
  )
  return lines.join('\n')
}
