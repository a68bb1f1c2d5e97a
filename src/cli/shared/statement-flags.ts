/**
 * The flags the proving commands share (prove, submit, verify-proof, query wait, query retry)
 * and how they become a statement request's policy. No command imports another's module for
 * these: they live here.
 */
import { checkEnum } from '../../core/checks.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { defaultJournalDir } from '../../pipeline/journal.ts'
import { REUSE_MODES, type ReuseMode } from '../../pipeline/reuse.ts'
import type { JournalPolicy } from '../../pipeline/statement/index.ts'
import { type CommandContext, waitOptions } from '../context.ts'

export const WAIT_OPTIONS = {
  ...waitOptions('Wait for the query to finish, then gate it (exit 0 DONE and passed, 1 FAILED or refused).'),
  quiet: {
    type: 'boolean',
    short: 'q',
    description:
      'Print only the query id (for QUERY=$(proving ...)), no progress; with --wait the exit code says how it ended.',
  },
  emulator: {
    type: 'boolean',
    description:
      'Run against a built-in emulator started for this command and stopped with it (no address or key needed).',
  },
} as const

/** Whether the gate lets a mocked fact pass, for the commands whose wait gates (prove, submit, verify-proof, query wait, query retry). */
export const GATE_OPTIONS = {
  'allow-mocked-fact': {
    type: 'boolean',
    description:
      'With --wait: let a mocked fact, or one the service does not say is real (isFactMocked null), pass (--mock-fact-hash implies it).',
  },
} as const

/** `--dry-run` of the commands that submit (prove, submit). */
export const DRY_RUN_OPTION = {
  'dry-run': {
    type: 'boolean',
    description:
      'Print the plan and stop: whether each PIE would be reused, followed, retried, submitted (paid) or refused, and why; nothing that costs is sent. --json: [{ pie, decision, reason, queryId }].',
  },
} as const

/** `--expected-program-hash` of the commands that submit a PIE (prove, submit). */
export const EXPECTED_PROGRAM_OPTION = {
  'expected-program-hash': {
    type: 'string',
    valueName: '<0x...>',
    description:
      'The program hash the PIE and the query must have: a PIE of another program is refused before anything is uploaded, and with --wait a query reporting another is refused by the gate.',
  },
} as const

/** `--expected-program-hash`: 0x and at most 64 hex digits, or none. */
export function expectedProgramHashFrom(context: CommandContext<typeof EXPECTED_PROGRAM_OPTION>): string | undefined {
  const value = context.values['expected-program-hash']?.trim()
  if (value === undefined) return undefined
  if (!/^0x[0-9a-fA-F]{1,64}$/.test(value)) {
    throw new InvalidInputError(
      `--expected-program-hash must be 0x-prefixed hex of at most 64 digits; got ${JSON.stringify(value.slice(0, 80))}.`,
      {
        input: '--expected-program-hash',
      },
    )
  }
  return value
}

/** Why the gate did not let a mocked fact pass, in the CLI's words. */
export const MOCKED_FACT_NOT_ALLOWED = '--allow-mocked-fact was not given'

/** `--reuse` of the commands that submit a PIE (prove, submit). */
export const REUSE_OPTION = {
  reuse: {
    type: 'string',
    valueName: '<auto|never>',
    description:
      'auto (default; PROVING_REUSE sets another): follow the newest DONE query of this key proving the same PIE (result kind, settings, facts), gated as if new; never: always pay for a new one.',
  },
} as const

/** `--reuse`, else PROVING_REUSE, else auto. */
export function reuseModeFrom(context: CommandContext<typeof REUSE_OPTION>): ReuseMode {
  const flag = context.values.reuse
  if (flag !== undefined) return checkFlagEnum(flag, 'reuse', REUSE_MODES)
  const env = context.io.env.PROVING_REUSE
  if (env === undefined || env === '') return 'auto'
  if ((REUSE_MODES as readonly string[]).includes(env)) return env as ReuseMode
  throw new InvalidInputError(
    `PROVING_REUSE must be auto or never; got ${JSON.stringify(env.slice(0, 40))}. Unset it for the default (auto).`,
    { input: 'PROVING_REUSE' },
  )
}

/**
 * The local journal of this command's submissions, or none for the emulator started for this
 * command: it forgets everything when the command ends. `--new` submits whatever it says.
 */
export function journalPolicyFrom(context: CommandContext): JournalPolicy | undefined {
  if (context.values.emulator === true) return undefined
  return {
    dir: defaultJournalDir(context.io.env),
    forceNew: (context.values as { new?: boolean }).new === true,
    forceNewHint: 'pass --new',
  }
}

/** Whether the gate lets a mocked fact pass: `--allow-mocked-fact`, implied by `--mock-fact-hash` (a mocked fact was asked for). */
export function allowMockedFactFrom(context: CommandContext): boolean {
  const values = context.values as { 'mock-fact-hash'?: boolean; 'allow-mocked-fact'?: boolean }
  return values['mock-fact-hash'] === true || values['allow-mocked-fact'] === true
}

/** A flag's value, one of `allowed`; an absent flag is refused like an empty one. */
export function checkFlagEnum<T extends string>(value: string | undefined, flag: string, allowed: readonly T[]): T {
  try {
    return checkEnum(value ?? '', `--${flag}`, allowed)
  } catch (error) {
    throw new InvalidInputError((error as Error).message.split('\n')[0]!, { input: `--${flag}` })
  }
}
