import { parseArgs, type ParseArgsConfig } from 'node:util'
import { DEFAULT_MAX_REQUESTS_PER_SECOND } from '../core/budget.ts'
import { InvalidInputError, type ProvingKitError } from '../core/errors.ts'
import { activeProfile, PROFILE_FIELDS, profileValueFor } from './profiles.ts'
import { closestWord } from './suggest.ts'

const PROFILE_ENVS: Set<string> = new Set(Object.values(PROFILE_FIELDS).map((field) => field.env))
const serviceOf = (variable: string) =>
  Object.values(PROFILE_FIELDS).find((field) => field.env === variable)?.service ?? 'service'
import { redact, type SecretRedactor, showUrl } from '../core/redact.ts'
import { serviceLine } from '../core/service-text.ts'
import type { Logger } from '../core/runtime.ts'

/**
 * Where each flag's value came from: `--base-url`, `PROVING_API_KEY`, `profile local (built-in)`,
 * `profile staging (in ~/.config/proving/config.json)`. Absent for a default.
 */
export type Origins = Readonly<Record<string, string>>

/** What a command gets from the CLI: its parsed flags, where to write, and the shared settings. */
export type CliIO = {
  stdout: (text: string) => void
  stderr: (text: string) => void
  env: NodeJS.ProcessEnv
  stdin?: NodeJS.ReadableStream | undefined
  /** Whether stderr is a terminal; progress lines are terser when it is not. */
  isTTY?: boolean | undefined
}

type OptionBase = {
  short?: string
  /** Shown in --help. */
  description: string
  /** Shown in --help after the flag, e.g. "<url>". */
  valueName?: string
  /** Environment variable read when the flag is absent. */
  env?: string
}
/** A flag with one value: `--base-url <url>`. With a default its value is always a string. */
export type StringOption = OptionBase & { type: 'string'; multiple?: false; default?: string }
/** A repeatable flag: `--pie a.zip --pie b.zip`. */
export type StringListOption = OptionBase & { type: 'string'; multiple: true; default?: undefined }
/** A switch: `--wait`. From the environment, only the text `true` turns it on. */
export type BooleanOption = OptionBase & { type: 'boolean'; multiple?: false; default?: boolean }
export type OptionSpec = StringOption | StringListOption | BooleanOption
export type OptionSpecs = Readonly<Record<string, OptionSpec>>

/** The value a flag has once parsed: the option's spec gives its type. */
export type OptionValue<O extends OptionSpec> = O extends { type: 'boolean' }
  ? O extends { default: boolean }
    ? boolean
    : boolean | undefined
  : O extends { multiple: true }
    ? string[] | undefined
    : O extends { default: string }
      ? string
      : string | undefined

/**
 * A command's parsed flags, its own and the global ones, each typed by its spec. The
 * service-access flags are typed on every command; only the commands that take them get a value.
 */
export type OptionValues<O extends OptionSpecs> = { readonly [K in keyof O]: OptionValue<O[K]> } & {
  readonly [K in keyof typeof GLOBAL_OPTIONS]: OptionValue<(typeof GLOBAL_OPTIONS)[K]>
} & { readonly [K in keyof typeof SERVICE_ACCESS_OPTIONS]: OptionValue<(typeof SERVICE_ACCESS_OPTIONS)[K]> }

export type CommandSpec<O extends OptionSpecs = OptionSpecs> = {
  /** Words after `proving`, e.g. ['query', 'get']. */
  path: string[]
  /** Former names still accepted (`auth create-key` for `auth keys create`); help shows only `path`. */
  aliases?: readonly (readonly string[])[]
  summary: string
  /** Positional arguments, for --help: "<pie>". */
  args?: string
  options?: O
  /** Positional count bounds. */
  positionals?: { min: number; max: number }
  details?: string[]
  run(context: CommandContext<O>): Promise<number>
}

/**
 * Declares a command; its `run` gets `context.values` typed by `options` (a string flag with a
 * default is a string, a switch a boolean, a repeatable flag a string[]).
 */
export function defineCommand<const O extends OptionSpecs = Record<never, OptionSpec>>(
  spec: CommandSpec<O>,
): CommandSpec<O> {
  return spec
}

export type CommandContext<O extends OptionSpecs = OptionSpecs> = {
  values: OptionValues<O>
  positionals: string[]
  io: CliIO
  json: boolean
  debug: boolean
  logger: Logger
  redactor: SecretRedactor
  signal: AbortSignal
  /** Prints a result: JSON when --json, else the human text. */
  print: (human: string, json?: unknown) => void
  /** One progress line for a person (stderr, with --json too; silent with -q). */
  progress: (line: string) => void
  /**
   * Reports a failure that is the command's outcome, not an exception (a FAILED query, a refused
   * gate, a failed task): `proving: <message>` on stderr, or with --json the `{ "error": … }`
   * object the README promises. The command still prints its result and returns its exit code.
   */
  fail: (error: ProvingKitError) => void
}

/** Flags every command takes. */
export const GLOBAL_OPTIONS = {
  json: { type: 'boolean', description: 'Print machine-readable JSON on stdout, and nothing else.' },
  debug: { type: 'boolean', description: 'Show debug logs and stack traces.' },
  help: { type: 'boolean', short: 'h', description: 'Show help for the command.' },
} as const satisfies OptionSpecs

/** --profile: read by ./profiles.ts itself (it tells the flag from PROVING_PROFILE in its messages). */
export const PROFILE_OPTION = {
  profile: {
    type: 'string',
    valueName: '<name>',
    description: "Services' addresses from this profile (else PROVING_PROFILE; see `proving config show`).",
  },
} as const satisfies OptionSpecs

/**
 * Flags of the commands that talk to a service: every command with a service's address among its
 * options gets them (commandOptions), so an offline command neither lists nor accepts them.
 */
export const SERVICE_ACCESS_OPTIONS = {
  'allow-insecure-http': {
    type: 'boolean',
    env: 'PROVING_ALLOW_INSECURE_HTTP',
    description: 'Allow plain http to a service or chain RPC on another machine (keys and signatures travel in clear).',
  },
  ...PROFILE_OPTION,
} as const satisfies OptionSpecs

/** Whether a command reads a service's address (a flag whose variable a profile can stand in for). */
function readsServiceAddress(spec: CommandSpec): boolean {
  return Object.values(spec.options ?? {}).some((option) => option.env !== undefined && PROFILE_ENVS.has(option.env))
}

/** Every flag a command takes: its own, the service-access ones if it talks to a service, the global ones. */
export function commandOptions(spec: CommandSpec): OptionSpecs {
  return { ...spec.options, ...(readsServiceAddress(spec) ? SERVICE_ACCESS_OPTIONS : {}), ...GLOBAL_OPTIONS }
}

export const SERVICE_OPTIONS = {
  'base-url': {
    type: 'string',
    valueName: '<url>',
    env: 'PROVING_BASE_URL',
    description: 'Address of the proving service.',
  },
  'api-key': {
    type: 'string',
    valueName: '<key>',
    env: 'PROVING_API_KEY',
    description: 'API key (prefer the environment variable: flags land in shell history).',
  },
  'read-paths': {
    type: 'string',
    valueName: '<auto|docs|production>',
    env: 'PROVING_READ_PATHS',
    description: "Where queries are read: the /docs/ paths, production's, or auto (finds out).",
  },
} as const satisfies OptionSpecs

/**
 * --wait and its --timeout, on every command that can wait for what it started; `waits` says
 * what --wait waits for and how it exits.
 */
export function waitOptions(waits: string) {
  return {
    wait: { type: 'boolean', description: waits },
    timeout: {
      type: 'string',
      valueName: '<duration>',
      description: 'With --wait: give up after this long (90s, 30m, 2h).',
      default: '2h',
    },
    ...MAX_RPS_OPTION,
  } as const satisfies OptionSpecs
}

/**
 * --max-rps: the process's request budget (src/core/budget.ts), which every wait's reads share;
 * main.ts sets it before a command that takes the flag runs.
 */
export const MAX_RPS_OPTION = {
  'max-rps': {
    type: 'string',
    valueName: '<n>',
    env: 'PROVING_MAX_RPS',
    description: 'Status reads per second, all waits of this command together (a 429 slows them further).',
    default: String(DEFAULT_MAX_REQUESTS_PER_SECOND),
  },
} as const satisfies OptionSpecs

/** The most --max-rps accepts: beyond it a service's limits, not ours, decide. */
export const MAX_REQUESTS_PER_SECOND_LIMIT = 1_000

/** --max-rps as a number: 0.1 to 1,000, decimals allowed. */
export function parseMaxRps(text: string, input = '--max-rps'): number {
  const value = Number(text.trim())
  if (!/^\s*\d+(\.\d+)?\s*$/.test(text) || !(value >= 0.1) || value > MAX_REQUESTS_PER_SECOND_LIMIT) {
    throw new InvalidInputError(
      `${input} must be a number of requests per second from 0.1 to ${MAX_REQUESTS_PER_SECOND_LIMIT}; got ${JSON.stringify(text)}.`,
      { input },
    )
  }
  return value
}

/** Items per page of every list (`query list`, `task list`, `auth keys list`) when --limit is absent. */
export const DEFAULT_PAGE_SIZE = 20

/** --limit and --offset of a list, the same on every list. */
export function pageOptions(items: string, max: number) {
  return {
    limit: {
      type: 'string',
      valueName: '<n>',
      description: `${items} per page, 1 to ${max}.`,
      default: String(DEFAULT_PAGE_SIZE),
    },
    offset: { type: 'string', valueName: '<n>', description: `${items} to skip.`, default: '0' },
  } as const satisfies OptionSpecs
}

/**
 * The last line of one page of a list, as gh words it: which of how many are shown ("Showing
 * 1-5 of 8"), and the --offset of the next page only when there is one; "Showing all 5" when one
 * page holds them all. Without a total (a service that did not send it), a full page may have a
 * next one and a short page has none.
 */
export function pageSummary(page: { shown: number; offset: number; limit: number; total: number | undefined }): string {
  const { shown, offset, limit, total } = page
  if (shown === 0) return total ? `None shown of ${total}: --offset ${offset} is past the last one.` : 'None.'
  const last = offset + shown
  const left = total === undefined ? 0 : Math.min(limit, total - last)
  const more = total === undefined && shown === limit
  if (offset === 0 && left <= 0 && !more) return `Showing all ${shown}.`
  const next =
    left > 0 ? `--offset ${last} for the next ${left}` : more ? `--offset ${last} for more, if any` : 'the last page'
  const which = shown === 1 ? `${last}` : `${offset + 1}-${last}`
  return `Showing ${which}${total === undefined ? '' : ` of ${total}`}; ${next}.`
}

export async function parseCommandArgs<O extends OptionSpecs>(
  spec: CommandSpec<O>,
  argv: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ values: OptionValues<O>; positionals: string[]; warnings: string[]; origins: Origins }> {
  const options = commandOptions(spec)
  const parsed = parseOrExplain(spec, options, negativeValuesJoined(argv, options))
  const values = { ...parsed.values } as Values
  const origins: Record<string, string> = Object.fromEntries(
    Object.keys(parsed.values).map((name) => [name, `--${name}`]),
  )
  const fromEnv = fillFromEnv(options, values, origins, env)
  const profileFlag = typeof parsed.values.profile === 'string' ? parsed.values.profile : undefined
  const warnings = values.help ? [] : await fillFromProfile(options, values, origins, env, { profileFlag, fromEnv })
  if (!values.help) checkPositionals(spec, parsed.positionals)
  // parseArgs checked every flag against the same specs, so each value has its spec's type.
  return { values: values as OptionValues<O>, positionals: parsed.positionals, warnings, origins }
}

type Values = Record<string, string | boolean | string[] | undefined>

/**
 * `--timeout -5m`, `--offset -1`: a negative number is the flag's value, refused by the flag's
 * own check ("must be positive"), not taken for a flag by parseArgs ("argument is ambiguous").
 */
function negativeValuesJoined(argv: string[], options: OptionSpecs): string[] {
  const args: string[] = []
  for (let index = 0; index < argv.length; index++) {
    const name = /^--([\w-]+)$/.exec(argv[index]!)?.[1]
    const value = argv[index + 1]
    if (name && options[name]?.type === 'string' && value !== undefined && /^-\d/.test(value))
      args.push(`${argv[index++]}=${value}`)
    else args.push(argv[index]!)
  }
  return args
}

/** node:util's parseArgs over the command's flags; a refusal says the nearest flag and where the usage is. */
function parseOrExplain(
  spec: CommandSpec,
  options: OptionSpecs,
  args: string[],
): { values: Values; positionals: string[] } {
  const config: ParseArgsConfig = {
    args,
    allowPositionals: true,
    strict: true,
    options: Object.fromEntries(
      Object.entries(options).map(([name, option]) => [
        name,
        {
          type: option.type,
          ...(option.short ? { short: option.short } : {}),
          ...(option.multiple ? { multiple: true } : {}),
        },
      ]),
    ),
  }
  try {
    const parsed = parseArgs(config)
    return { values: parsed.values as Values, positionals: parsed.positionals }
  } catch (error) {
    const unknown =
      (error as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? /'(--?[^']+)'/.exec((error as Error).message)?.[1]
        : undefined
    const flags = Object.keys(options).map((name) => `--${name}`)
    const suggestion = unknown?.startsWith('--') ? closestWord(unknown.split('=')[0]!, flags) : undefined
    const hint = suggestion ? ` Did you mean ${suggestion}?` : ''
    throw new InvalidInputError(
      `${cleanParseMessage((error as Error).message)}${hint} Run \`proving ${spec.path.join(' ')} --help\` for usage.`,
      {
        input: spec.path.join(' '),
      },
    )
  }
}

/** The flags the command line did not give, from their variables, then their defaults; returns those a variable gave. */
function fillFromEnv(
  options: OptionSpecs,
  values: Values,
  origins: Record<string, string>,
  env: NodeJS.ProcessEnv,
): [name: string, variable: string][] {
  const fromEnv: [name: string, variable: string][] = []
  for (const [name, option] of Object.entries(options)) {
    if (values[name] === undefined && option.env && env[option.env] !== undefined && env[option.env] !== '') {
      values[name] = option.type === 'boolean' ? env[option.env] === 'true' : env[option.env]
      origins[name] = option.env
      fromEnv.push([name, option.env])
    }
    if (values[name] === undefined && option.default !== undefined) values[name] = option.default
  }
  return fromEnv
}

/**
 * The services' addresses a flag or variable did not give: the active profile's. A profile named
 * on the command line is read even when the variables give every address: a variable that
 * overrides it is said out loud (`--profile staging` must not talk to production in silence
 * because PROVING_BASE_URL is set in the shell). Returns the warnings.
 */
async function fillFromProfile(
  options: OptionSpecs,
  values: Values,
  origins: Record<string, string>,
  env: NodeJS.ProcessEnv,
  given: { profileFlag: string | undefined; fromEnv: [name: string, variable: string][] },
): Promise<string[]> {
  const warnings: string[] = []
  const missing = Object.entries(options).filter(
    ([name, option]) => values[name] === undefined && option.env && PROFILE_ENVS.has(option.env),
  )
  const overridden = given.profileFlag ? given.fromEnv.filter(([, variable]) => PROFILE_ENVS.has(variable)) : []
  if (!missing.length && !overridden.length) return warnings
  const active = await activeProfile(typeof values.profile === 'string' ? values.profile : undefined, env)
  for (const [name, option] of missing) {
    const value = profileValueFor(active, option.env)
    if (value === undefined) continue
    values[name] = value
    origins[name] =
      `profile ${active!.name} (${(active!.profile as { source?: string }).source === 'built-in' ? 'built-in' : `in ${active!.configPath}`})`
  }
  for (const [name, variable] of overridden) {
    const fromProfile = profileValueFor(active, variable)
    if (active && fromProfile !== undefined && fromProfile !== values[name]) {
      const [using, profiled] = [showUrl(String(values[name])), showUrl(fromProfile)]
      warnings.push(
        `${variable} overrides the ${serviceOf(variable)} address of profile ${active.name} (--profile ${active.name}): using ${using}, not ${profiled}. Unset it, or pass --${name}.`,
      )
    }
  }
  return warnings
}

/** As many arguments as the command takes. */
function checkPositionals(spec: CommandSpec, positionals: string[]): void {
  if (!spec.positionals) return
  const { min, max } = spec.positionals
  const usage = `usage is \`proving ${spec.path.join(' ')}${spec.args ? ` ${spec.args}` : ''}\``
  if (positionals.length < min)
    throw new InvalidInputError(`Missing ${spec.args ?? 'argument'}: ${usage}.`, { input: spec.args })
  if (positionals.length > max)
    throw new InvalidInputError(`Unexpected argument ${JSON.stringify(positionals[max])}: ${usage}.`, {
      input: positionals[max],
    })
}

function cleanParseMessage(message: string): string {
  // node's messages end with hints for script authors ("To specify a positional argument ...").
  const first = message
    .split('\n')[0]!
    .replace(/\. To specify.*$/, '.')
    .trim()
  const sentence = first.endsWith('.') ? first : `${first}.`
  // `--offset -1`: the value looks like a flag. node's own hint for that one is worth keeping.
  const dash = /To specify an option argument starting with a dash use '([^']+)'/.exec(message)
  return dash ? `${sentence} For a value starting with "-", write ${dash[1]}.` : sentence
}

export function createLogger(io: CliIO, options: { debug: boolean; json: boolean; redactor: SecretRedactor }): Logger {
  // One line per message: a status or reason the library quotes cannot start a line of its own.
  const write = (prefix: string, message: string) =>
    io.stderr(`${prefix}${serviceLine(redact(message, options.redactor), Number.POSITIVE_INFINITY)}\n`)
  return {
    debug: (message) => (options.debug ? write('debug: ', message) : undefined),
    info: (message) => (options.json ? undefined : write('', message)),
    warn: (message) => write('warning: ', message),
    error: (message) => write('error: ', message),
  }
}

// --- Reading flag values -----------------------------------------------------------------

/** Durations: "90" (seconds), "90s", "30m", "2h", "500ms". */
export function parseDuration(text: string, flag: string): number {
  if (/^\s*-/.test(text)) {
    throw new InvalidInputError(
      `--${flag} must be positive: a duration such as 90s, 30m or 2h; got ${JSON.stringify(text)}.`,
      { input: `--${flag}` },
    )
  }
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/i.exec(text)
  if (!match) {
    throw new InvalidInputError(
      `--${flag} must be a duration such as 90, 90s, 30m or 2h; got ${JSON.stringify(text)}.`,
      {
        input: `--${flag}`,
      },
    )
  }
  const amount = Number(match[1])
  const unit = (match[2] ?? 's').toLowerCase()
  const factor = unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000
  const ms = Math.round(amount * factor)
  if (ms <= 0 || ms > 7 * 24 * 3_600_000) {
    throw new InvalidInputError(`--${flag} must be above 0 and at most 7 days; got ${JSON.stringify(text)}.`, {
      input: `--${flag}`,
    })
  }
  return ms
}

export function parseInteger(text: string, flag: string, min: number, max: number): number {
  if (!/^\s*-?\d+\s*$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new InvalidInputError(
      `--${flag} must be a whole number from ${min} to ${max}; got ${JSON.stringify(text)}.`,
      {
        input: `--${flag}`,
      },
    )
  }
  return Number(text)
}

/** Whether --allow-insecure-http (or PROVING_ALLOW_INSECURE_HTTP=true) was given. */
export function allowInsecureHttp(context: CommandContext): boolean {
  return context.values['allow-insecure-http'] === true
}
