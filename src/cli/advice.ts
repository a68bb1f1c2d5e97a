/**
 * What the CLI adds to an error the library raised, for a person at a shell: the command that
 * resumes an ended wait, where the API key and the service's address came from when the key is
 * refused, and `proving emulator` when nothing listens at the built-in emulator's address. The
 * library's own messages speak to every caller (a script, the action), so they carry none of it.
 */
import {
  NetworkError,
  type NextStepWords,
  ProvingKitError,
  ServiceError,
  type WaitedFor,
  wordNextStep,
} from '../core/errors.ts'
import { serviceLine } from '../core/service-text.ts'
import { showUrl } from '../core/redact.ts'
import type { Origins } from './context.ts'
import { EMULATOR_URL, PROFILE_FIELDS } from './profiles.ts'

const RESUME: Readonly<Record<WaitedFor['kind'], (id: string, waited: WaitedFor) => string>> = {
  // The kind the ended wait's gate expected goes with it: a resumed wait never expects less.
  query: (id, waited) =>
    `proving query wait ${id}${waited.expectedResult ? ` --expect-result ${waited.expectedResult}` : ''}`,
  task: (id) => `proving task wait ${id}`,
  'batch query': (id) => `proving storage status ${id} --wait`,
  bucket: (id) => `proving bucket close ${id} --wait`,
}

/** `Resume with: proving query wait q-1` for an error that ended a wait (timed out, cancelled); else undefined. */
export function resumeAdvice(error: unknown): string | undefined {
  const ended =
    error instanceof ProvingKitError
      ? (error.walk((link) => (link as { waitedFor?: WaitedFor }).waitedFor !== undefined) as {
          waitedFor: WaitedFor
        } | null)
      : null
  return ended ? `Resume with: ${RESUME[ended.waitedFor.kind](ended.waitedFor.id, ended.waitedFor)}` : undefined
}

/** An id the service gave, inside a line the CLI writes: one line, no terminal escapes. */
const shown = (id: string) => serviceLine(id, 200)

const NEXT_STEP: NextStepWords = {
  'look-for-query': (step) =>
    step.thenSubmitAnew
      ? 'Look with `proving query list`, then run again with --new if no query came of it.'
      : 'Look with `proving query list` before submitting again.',
  'look-for-task': () => 'Look with `proving task list` before submitting again.',
  'read-query': (step) => `Read it with \`proving query get ${shown(step.id)}\`.`,
  'read-task': (step) => `Read it with \`proving task status ${shown(step.id)}\`.`,
  'create-api-key': () => 'Create one with `proving auth keys create --name <name>`.',
  'show-challenge': () => 'See the challenge with `proving auth login --show-challenge`; check --auth-url.',
  'clear-journal': (step) =>
    step.key
      ? `Remove it with \`proving journal clear ${step.key}\`.`
      : '`proving journal clear --all` removes every entry.',
  'follow-candidates': (step) => {
    const ids = step.ids.map(shown).join(', ') || 'see `proving query list`'
    const clear = step.key
      ? `; once none of them is this PIE's, remove the entry: \`proving journal clear ${step.key}\` (not --new: it would pay twice)`
      : ''
    return `Follow them with \`proving query wait <id>\` (${ids})${clear}.`
  },
}

/** The CLI's words for what the library says can be done next (its error's `nextStep`); else undefined. */
export function nextStepAdvice(error: unknown): string | undefined {
  return wordNextStep(error, NEXT_STEP)
}

/** The command's flags as parsed, where each came from, and the flags it takes. */
export type AdviceContext = { values: Readonly<Record<string, unknown>>; origins: Origins; options: readonly string[] }

/** Lines to show under the error's own: what to check or run next. */
export function cliAdvice(error: unknown, context: AdviceContext): string[] {
  if (!(error instanceof ProvingKitError)) return []
  const address = serviceAddress(context)
  if (error instanceof ServiceError && error.status === 401) {
    const key = context.values['api-key'] === undefined ? undefined : context.origins['api-key']
    const sentTo = address ? ` to ${showUrl(address.url)} (${address.origin})` : ''
    return [
      key
        ? `The API key came from ${key} (not shown) and was sent${sentTo}: check that it is a key of that service (\`proving auth keys list\` lists a wallet's keys).`
        : `No API key was given${sentTo}: set PROVING_API_KEY (or pass --api-key <key>).`,
    ]
  }
  const refused = error.walk((link) => link instanceof NetworkError && link.code === 'ECONNREFUSED')
  if (refused && address && sameOrigin(address.url, EMULATOR_URL)) {
    const instead = context.options.includes('emulator') ? ', or add --emulator to run one for this command' : ''
    return [
      `Nothing listens at ${EMULATOR_URL} (${address.origin}), the built-in emulator's address: start it with \`proving emulator\` in another terminal${instead}.`,
    ]
  }
  return []
}

/** The first service address the command reads, and where it came from. */
function serviceAddress(context: AdviceContext): { url: string; origin: string } | undefined {
  for (const { flag } of Object.values(PROFILE_FIELDS)) {
    const url = context.values[flag]
    if (typeof url === 'string' && url.trim()) return { url: url.trim(), origin: context.origins[flag] ?? `--${flag}` }
  }
  return undefined
}

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin
  } catch {
    return false
  }
}
