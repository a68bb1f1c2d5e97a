import { requestBudgetFor } from '../core/budget.ts'
import { ProvingKitError, ServiceError } from '../core/errors.ts'
import { redact, SecretRedactor } from '../core/redact.ts'
import { type Logger, systemClock } from '../core/runtime.ts'
import { forTerminal, jsonForTerminal, serviceLine } from '../core/service-text.ts'
import { jsonOutputValue } from './json-output.ts'
import { VERSION } from '../core/version.ts'
import { COMMANDS } from './commands/index.ts'
import { type AdviceContext, cliAdvice, nextStepAdvice, resumeAdvice } from './advice.ts'
import {
  type CliIO,
  type CommandContext,
  type CommandSpec,
  commandOptions,
  createLogger,
  parseCommandArgs,
  parseMaxRps,
} from './context.ts'
import { EXIT, exitCodeFor } from './exit-codes.ts'
import { groupHelp, helpText, topLevelHelp } from './help.ts'
import { closestWord } from './suggest.ts'

export type MainOptions = {
  io?: CliIO
  /** Aborts the running command; when absent, SIGINT and SIGTERM do. */
  signal?: AbortSignal
}

const processIO = (): CliIO => ({
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
  env: process.env,
  stdin: process.stdin,
  isTTY: process.stderr.isTTY,
})

/** Runs `proving <argv...>` and resolves with the exit code. */
export async function main(argv: string[], options: MainOptions = {}): Promise<number> {
  const io = terminalSafe(options.io ?? processIO())
  const wantsJson = argv.includes('--json')
  const debug = argv.includes('--debug') || io.env.PROVING_DEBUG === '1'
  const redactor = new SecretRedactor([io.env.PROVING_API_KEY, io.env.PROVING_PRIVATE_KEY])

  if (argv.length === 0 || (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help'))) {
    io.stdout(`${topLevelHelp(COMMANDS)}\n`)
    return argv.length === 0 ? EXIT.usage : EXIT.ok
  }
  if (argv[0] === '--version' || argv[0] === '-v') {
    io.stdout(`${VERSION}\n`)
    return EXIT.ok
  }
  // `proving help prove`, `proving help auth keys`: the same as `proving prove --help`.
  if (argv[0] === 'help' || argv[0] === '--help' || argv[0] === '-h')
    return main([...argv.slice(1).filter((arg) => !arg.startsWith('-')), '--help'], options)

  const found = findCommand(argv)
  if (!found) return unknownCommand(io, argv, redactor)

  const command = found.spec
  const { controller, detach } = abortOn(options.signal)
  const advice: AdviceContext = { values: {}, origins: {}, options: Object.keys(commandOptions(command)) }
  try {
    const parsed = await parseCommandArgs(command, argv.slice(found.words), io.env)
    advice.values = parsed.values
    advice.origins = parsed.origins
    const json = parsed.values.json === true
    if (parsed.values.help) {
      io.stdout(`${helpText(command)}\n`)
      return EXIT.ok
    }
    for (const name of ['api-key', 'private-key']) {
      const value = parsed.values[name]
      if (typeof value === 'string') redactor.add(value)
    }
    const logger = createLogger(io, { debug, json, redactor })
    for (const warning of parsed.warnings) logger.warn(warning)
    const context = commandContext(parsed, { io, json, debug, logger, redactor, signal: controller.signal })
    // One request budget for the process: every wait of the command shares it (src/core/budget.ts).
    const maxRps = parsed.values['max-rps']
    if (typeof maxRps === 'string') requestBudgetFor(systemClock).configure(parseMaxRps(maxRps))
    return await command.run(context)
  } catch (error) {
    reportError(io, error, { debug, json: wantsJson, redactor, advice })
    return exitCodeFor(error)
  } finally {
    detach()
  }
}

/** `proving <words>` that names no command: a group's help, or the unknown word and what it may have meant. */
function unknownCommand(io: CliIO, argv: string[], redactor: SecretRedactor): number {
  // The deepest group the leading words name (`proving auth keys --help` as `proving task --help`).
  const leading = argv.slice(
    0,
    Math.max(
      argv.findIndex((arg) => arg.startsWith('-') || arg === 'help'),
      0,
    ) || argv.length,
  )
  let words = leading
  let group: CommandSpec[] = []
  for (let depth = leading.length; depth >= 1 && group.length === 0; depth--) {
    words = leading.slice(0, depth)
    group = COMMANDS.filter(
      (spec) => spec.path.length > depth && words.every((word, index) => spec.path[index] === word),
    )
  }
  const rest = argv.slice(words.length)
  if (group.length && (rest.length === 0 || rest[0] === '--help' || rest[0] === '-h' || rest[0] === 'help')) {
    // `proving task --help`: the group's commands. Bare `proving task` is a usage error.
    const text = `${groupHelp(words.join(' '), group)}\n`
    if (rest.length === 0) {
      io.stderr(text)
      return EXIT.usage
    }
    io.stdout(text)
    return EXIT.ok
  }
  const depth = group.length ? words.length : 0
  const typed = argv[depth] ?? ''
  const choices = [...new Set((group.length ? group : COMMANDS).map((spec) => spec.path[depth]!))]
  // `proving --verison`: the top level's own flags.
  const suggestion = typed.startsWith('-')
    ? depth === 0
      ? closestWord(typed, ['--help', '--version'])
      : undefined
    : closestWord(typed, choices)
  const mean = suggestion
    ? ` did you mean \`proving ${[...argv.slice(0, depth), suggestion].join(' ')}\`? Otherwise`
    : ''
  const message = group.length
    ? `Unknown command \`proving ${argv.slice(0, depth + 1).join(' ')}\`:${mean} use one of ${group.map((spec) => spec.path.join(' ')).join(', ')}.`
    : `Unknown command \`proving ${argv[0]}\`:${mean ? `${mean} run` : ' run'} \`proving --help\` for the list of commands.`
  io.stderr(`proving: ${redact(message, redactor)}\n`)
  return EXIT.usage
}

/** The command's abort signal: the caller's, else SIGINT and SIGTERM (a second one exits at once). */
function abortOn(signal: AbortSignal | undefined): { controller: AbortController; detach: () => void } {
  const controller = new AbortController()
  let detach = () => {}
  if (signal) {
    const onAbort = () => controller.abort(signal?.reason)
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
    detach = () => signal.removeEventListener('abort', onAbort)
  } else {
    const onSignal = (name: NodeJS.Signals) => {
      if (controller.signal.aborted) process.exit(EXIT.interrupted)
      controller.abort(new Error(`received ${name}`))
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
    detach = () => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
    }
  }
  return { controller, detach }
}

/** What a command runs with: its values, the streams, the logger, and how it prints, reports progress and fails. */
function commandContext(
  parsed: Awaited<ReturnType<typeof parseCommandArgs>>,
  base: { io: CliIO; json: boolean; debug: boolean; logger: Logger; redactor: SecretRedactor; signal: AbortSignal },
): CommandContext {
  const { io, json, debug, redactor } = base
  return {
    values: parsed.values,
    positionals: parsed.positionals,
    io,
    json,
    debug,
    logger: base.logger,
    redactor,
    signal: base.signal,
    print: (human, value) => {
      if (json) io.stdout(`${redact(jsonForTerminal(value ?? null, 2, jsonOutputValue), redactor)}\n`)
      else if (human) io.stdout(`${redact(human, redactor)}\n`)
    },
    // Progress is for a person watching: stderr, also with --json (stdout stays pure JSON), not
    // with -q (a script that asked for the id alone). One line each: a status or step the
    // service sent cannot start a line of its own.
    progress: (line) =>
      parsed.values.quiet === true ? undefined : io.stderr(`${serviceLine(redact(line, redactor))}\n`),
    fail: (error) => reportError(io, error, { debug, json, redactor }),
  }
}

/**
 * Every character the CLI writes passes here: what a service sent (a reason, a step, an id)
 * reaches the terminal as text, never as an escape sequence (a rewritten line, an OSC 8 link).
 */
function terminalSafe(io: CliIO): CliIO {
  return { ...io, stdout: (text) => io.stdout(forTerminal(text)), stderr: (text) => io.stderr(forTerminal(text)) }
}

/** The command the leading words name (the longest match, by its name or a former one), and how many words that took. */
function findCommand(argv: string[]): { spec: CommandSpec; words: number } | undefined {
  const matches = COMMANDS.flatMap((spec) =>
    [spec.path, ...(spec.aliases ?? [])]
      .filter((path) => path.every((word, index) => argv[index] === word))
      .map((path) => ({ spec, words: path.length })),
  )
  return matches.sort((a, b) => b.words - a.words)[0]
}

export function reportError(
  io: CliIO,
  error: unknown,
  options: { debug: boolean; json: boolean; redactor: SecretRedactor; advice?: AdviceContext },
): void {
  const scrub = (text: string) => redact(text, options.redactor)
  // The library's message, and what the CLI adds for a person at a shell (./advice.ts).
  const resume = resumeAdvice(error)
  const next = nextStepAdvice(error)
  const added = [...(next ? [next] : []), ...(options.advice ? cliAdvice(error, options.advice) : [])]
  if (options.json) {
    // With --json a script reads the failure too: one JSON object on stderr (stdout stays clean).
    const known = error instanceof ProvingKitError
    const body = {
      error: {
        name: error instanceof Error ? error.name : 'Error',
        message: known
          ? `${error.shortMessage}${resume ? ` ${resume}` : ''}`
          : error instanceof Error
            ? error.message
            : String(error),
        ...(known && error.details && error.details !== error.shortMessage ? { reason: error.details } : {}),
        ...(known && (error.metaMessages?.length || added.length)
          ? { notes: [...(error.metaMessages ?? []), ...added] }
          : {}),
        ...(known && error.status !== undefined ? { status: error.status } : {}),
        ...(known && error.code !== undefined ? { code: error.code } : {}),
        ...(known ? { retryable: error.retryable } : {}),
        ...(known && 'input' in error && (error as { input?: unknown }).input !== undefined
          ? { input: (error as { input?: unknown }).input }
          : {}),
        exitCode: exitCodeFor(error),
      },
    }
    io.stderr(`${scrub(jsonForTerminal(body, undefined, jsonOutputValue))}\n`)
    if (options.debug && error instanceof Error && error.stack) io.stderr(`${scrub(error.stack)}\n`)
    return
  }
  if (error instanceof ProvingKitError) {
    const lines = [`proving: ${error.shortMessage}${resume ? ` ${resume}` : ''}`]
    for (const line of [...(error.metaMessages ?? []), ...added]) lines.push(`  ${line}`)
    // The service's own reason (a 400's message, ...) says what to fix: shown without --debug.
    const reason =
      error instanceof ServiceError &&
      error.details &&
      error.details !== error.shortMessage &&
      !error.shortMessage.includes(error.details)
        ? error.details
        : undefined
    if (reason) lines.push(`  reason: ${reason}`)
    if (options.debug && error.stack) lines.push(error.stack)
    io.stderr(`${scrub(lines.join('\n'))}\n`)
  } else {
    const message = error instanceof Error ? error.message : String(error)
    io.stderr(`${scrub(`proving: unexpected failure: ${message}`)}\n`)
    if (options.debug && error instanceof Error && error.stack) io.stderr(`${scrub(error.stack)}\n`)
  }
}
