import { InvalidInputError } from '../../core/errors.ts'
import { type CommandSpec, commandOptions, defineCommand, type OptionSpec } from '../context.ts'
import { EXIT } from '../exit-codes.ts'
import { HINTS, JOB_SIZES, LAYOUTS, RESULTS } from '../../schemas/proving-constants.ts'
import { TASK_STATUSES } from '../../schemas/tasks-constants.ts'

/**
 * `proving completion bash|zsh|fish`: a completion script generated from the command table, so
 * it always knows every command, subcommand and flag (and the values of flags whose value is a
 * fixed list, such as --network <TESTNET|MAINNET>), and the arguments that are a fixed list
 * (`completion <bash|zsh|fish>`); after `help`, the commands. Files complete where a path is
 * expected.
 */
/**
 * The command, over the table it completes: given as a function (commands/index.ts passes its
 * COMMANDS) so this module does not import the table that lists it.
 */
export const completionCommand = (commands: () => readonly CommandSpec[]) =>
  defineCommand({
    path: ['completion'],
    args: '<bash|zsh|fish>',
    summary: 'Print a shell completion script for bash, zsh or fish.',
    details: [
      'bash:  source <(proving completion bash)',
      '       (or save it as ~/.local/share/bash-completion/completions/proving)',
      'zsh:   source <(proving completion zsh)       (in ~/.zshrc, after compinit)',
      'fish:  proving completion fish > ~/.config/fish/completions/proving.fish',
    ],
    positionals: { min: 1, max: 1 },
    options: {},
    async run(context) {
      const shell = context.positionals[0]!
      const table = completionTable(commands())
      if (shell === 'bash') context.io.stdout(bashScript(table))
      else if (shell === 'zsh')
        context.io.stdout(
          `#compdef proving\n# proving completion for zsh (bash's, through bashcompinit)\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(table)}`,
        )
      else if (shell === 'fish') context.io.stdout(fishScript(table))
      else
        throw new InvalidInputError(`Unknown shell ${JSON.stringify(shell)}: use bash, zsh or fish.`, {
          input: '<shell>',
        })
      return EXIT.ok
    },
  })

type Entry = { path: string; options: [string, OptionSpec][]; args: string[] }
type Table = { groups: Map<string, string[]>; commands: Entry[] }

/** Words that follow each prefix ('' is the top level), and every command's flags. */
export function completionTable(commands: readonly CommandSpec[]): Table {
  const groups = new Map<string, string[]>()
  const add = (prefix: string, word: string) => {
    const words = groups.get(prefix) ?? []
    if (!words.includes(word)) words.push(word)
    groups.set(prefix, words)
  }
  for (const spec of commands) {
    for (let depth = 0; depth < spec.path.length; depth++) add(spec.path.slice(0, depth).join(' '), spec.path[depth]!)
  }
  // A former name (`auth create-key`) completes its flags too, but is not offered as a word.
  const entries = commands.flatMap((spec) =>
    [spec.path, ...(spec.aliases ?? [])].map((path) => ({
      path: path.join(' '),
      options: Object.entries(commandOptions(spec)) as [string, OptionSpec][],
      args: fixedArguments(spec),
    })),
  )
  return { groups, commands: entries }
}

/** Flags whose values are a fixed list too long for their value name. */
const KNOWN_VALUES: Record<string, readonly string[]> = {
  result: RESULTS,
  layout: LAYOUTS,
  hints: HINTS,
  'declared-job-size': JOB_SIZES,
  status: TASK_STATUSES,
}

/** The values of a flag whose value name lists them (`<TESTNET|MAINNET>`), or a known list. */
function valuesOf(option: OptionSpec, flag?: string): string[] {
  if (flag && KNOWN_VALUES[flag]) return [...KNOWN_VALUES[flag]]
  const name = 'valueName' in option ? option.valueName : undefined
  return name?.includes('|') ? name.replace(/^<|>$/g, '').split('|') : []
}

/** The values of an argument that is a fixed list, as its help names it: `<bash|zsh|fish>`. */
function fixedArguments(spec: CommandSpec): string[] {
  const list = /^<([^<>]+\|[^<>]+)>$/.exec(spec.args ?? '')
  return list ? list[1]!.split('|') : []
}

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`

function bashScript(table: Table): string {
  const lines = [
    '# proving completion for bash: source <(proving completion bash)',
    '_proving_complete() {',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"',
    '  local words="" i',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    case "${COMP_WORDS[i]}" in -*) ;; *) words="${words:+$words }${COMP_WORDS[i]}" ;; esac',
    '  done',
    '  local subs="" opts="" values="" args="" helping=""',
    // `proving help <command words>`: the words of a command, nothing else.
    '  case "$words" in help|help\\ *) helping=1 words="${words#help}" words="${words# }" ;; esac',
    '  case "$prev" in',
  ]
  const seen = new Map<string, string[]>()
  for (const entry of table.commands) {
    for (const [name, option] of entry.options) {
      const values = valuesOf(option, name)
      if (values.length && !seen.has(name)) seen.set(name, values)
    }
  }
  for (const [name, values] of seen) lines.push(`    --${name}) values=${quote(values.join(' '))} ;;`)
  lines.push('  esac', '  case "$words" in')
  // Longest paths first, so "query get" wins over "query".
  const prefixes = [...table.groups.keys()].sort((a, b) => b.length - a.length)
  const commands = [...table.commands].sort((a, b) => b.path.length - a.path.length)
  for (const entry of commands) {
    const opts = entry.options.flatMap(([name, option]) => [
      `--${name}`,
      ...('short' in option && option.short ? [`-${option.short}`] : []),
    ])
    const subs = table.groups.get(entry.path)
    // The arguments only right after the command's words: `proving completion bash <TAB>` has no more.
    const args = entry.args.length
      ? ` [[ "$words" == ${quote(entry.path)} ]] && args=${quote(entry.args.join(' '))}`
      : ''
    lines.push(
      `    ${quote(entry.path)}|${quote(entry.path)}\\ *) opts=${quote(opts.join(' '))}${subs ? ` subs=${quote(subs.join(' '))}` : ''};${args} ;;`,
    )
  }
  for (const prefix of prefixes) {
    if (table.commands.some((entry) => entry.path === prefix)) continue
    const words = [...table.groups.get(prefix)!, ...(prefix === '' ? ['help'] : [])]
    lines.push(`    ${prefix === '' ? "''" : quote(prefix)}) subs=${quote(words.join(' '))} opts='--help --version' ;;`)
  }
  lines.push(
    '  esac',
    '  if [[ -n "$helping" ]]; then',
    '    COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
    '  elif [[ -n "$values" ]]; then',
    '    COMPREPLY=($(compgen -W "$values" -- "$cur"))',
    '  elif [[ "$cur" == -* ]]; then',
    '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
    '  elif [[ -n "$subs" ]]; then',
    '    COMPREPLY=($(compgen -W "$subs" -- "$cur"))',
    '  elif [[ -n "$args" ]]; then',
    '    COMPREPLY=($(compgen -W "$args" -- "$cur"))',
    '  else',
    '    COMPREPLY=($(compgen -f -- "$cur"))',
    '  fi',
    '}',
    'complete -o default -o bashdefault -F _proving_complete proving',
    '',
  )
  return lines.join('\n')
}

function fishScript(table: Table): string {
  const lines = [
    '# proving completion for fish: proving completion fish > ~/.config/fish/completions/proving.fish',
    'function __proving_words',
    '    set -l tokens (commandline -opc)',
    '    set -e tokens[1]',
    "    string join ' ' (string match -v -- '-*' $tokens)",
    'end',
    'function __proving_at --description "the words typed so far are exactly these"',
    '    test (__proving_words) = "$argv"',
    'end',
    'function __proving_in --description "the words typed so far start with these"',
    '    string match -q -- "$argv*" (__proving_words)',
    'end',
    'complete -c proving -f',
  ]
  for (const [prefix, words] of table.groups) {
    for (const word of words) {
      lines.push(`complete -c proving -n ${quote(`__proving_at ${JSON.stringify(prefix)}`)} -a ${quote(word)}`)
      // `proving help <command words>`.
      lines.push(
        `complete -c proving -n ${quote(`__proving_at ${JSON.stringify(`help${prefix ? ` ${prefix}` : ''}`)}`)} -a ${quote(word)}`,
      )
    }
  }
  lines.push(`complete -c proving -n ${quote('__proving_at ""')} -a help`)
  for (const entry of table.commands) {
    if (entry.args.length)
      lines.push(
        `complete -c proving -n ${quote(`__proving_at ${JSON.stringify(entry.path)}`)} -a ${quote(entry.args.join(' '))}`,
      )
  }
  for (const entry of table.commands) {
    for (const [name, option] of entry.options) {
      const values = valuesOf(option, name)
      const takesValue = option.type === 'string'
      const short = 'short' in option && option.short ? ` -s ${option.short}` : ''
      // A value from a list, else a file name (-F); -r: the flag needs one.
      const value = `${takesValue ? ' -r' : ''}${values.length ? ` -a ${quote(values.join(' '))}` : takesValue ? ' -F' : ''}`
      lines.push(
        `complete -c proving -n ${quote(`__proving_in ${JSON.stringify(entry.path)}`)} -l ${name}${short}${value} -d ${quote(option.description.slice(0, 80))}`,
      )
    }
  }
  lines.push('')
  return lines.join('\n')
}
