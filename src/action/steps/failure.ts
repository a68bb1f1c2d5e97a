/**
 * The failures that end every step talking to a service in the same way: a submission that may
 * or may not have gone through, a refused input, an HTTP error status, no answer at all, and
 * anything else. Described once, so that the proving, task, storage-proof and account steps say
 * the same thing the same way; what differs between the services comes in as `ServiceText`,
 * and what to do about a job the service already has as `Submitted`. Each step describes its
 * own failures first (cancelled, timed out, a failed job, input problems) and hands the rest here.
 */
import {
  EarlierUploadOutcomeUnknownError,
  SubmissionOutcomeUnknownError,
  InvalidInputError,
  NetworkError,
  type NextStepWords,
  ProvingKitError,
  ServiceError,
  wordNextStep,
} from '../../core/errors.ts'
import { forSummaryCode } from '../../core/service-text.ts'
import type { InputProblemsError } from './inputs.ts'
import type { Ending } from './summary.ts'

export type ServiceText = {
  /** The service as the next steps name it: "task service" ("The task service is failing or busy"). */
  service: string
  /** The input that holds its address: the first thing to check when it did not answer. */
  urlInput: string
  /** Why a 404 may happen: "is `tasks-url` the right deployment?". Without it, a 404 is read like a 5xx. */
  notFound?: string
  /** The page on its inputs, for a status nothing else explains. Without it, such a status is read like a 5xx. */
  docs?: string
  /** Its own readings of a status, before the usual ones (the account service: a 401 is a refused sign-in). */
  statusAdvice?: (status: number) => string | undefined
  /**
   * A submission the client cannot tell went through (see SubmissionOutcomeUnknownError): what the
   * headline says and where to look. Absent where no call is ambiguous (the account service).
   */
  ambiguous?: { headline: string; nextStep: string }
  /**
   * Whether a network failure's details go under "What failed". The account and storage-proof
   * steps have shown the headline alone; kept so, to leave their summaries unchanged.
   */
  networkDetails: boolean
}

/** Given once the service holds the job (a query, task or batch query id is known). */
export type Submitted = {
  /** Next steps to pick the job up again, after an error status, no answer, or anything else. */
  follow: (after: 'service' | 'network' | 'other') => string[]
  /** Shown with those same failures (the proving steps' resume snippet). */
  snippet?: Ending['snippet']
}

/**
 * Inputs that need fixing, each problem listed: `notDone` says what did not happen ("nothing was
 * sent"), `docs` the page that describes each input.
 */
export function inputProblemsEnding(error: InputProblemsError, notDone: string, docs: string): Ending {
  return {
    outcome: 'failed',
    headline: `The inputs need fixing; ${notDone}.`,
    problems: error.problems.map((problem) => problem.message),
    nextSteps: [`Fix the inputs named above in the workflow file (see ${docs} for each input).`],
    failure: error.shortMessage,
  }
}

/** What failed and what to do, for the failures every service step shares. */
export function describeServiceFailure(error: unknown, text: ServiceText, submitted?: Submitted): Ending {
  const ending = describeFailure(error, text, submitted)
  // What the library says can be done next (its error's nextStep), in the action's words, first.
  const step = isFreshAmbiguity(error, text) ? undefined : wordNextStep(error, NEXT_STEP)
  return step ? { ...ending, nextSteps: [step, ...(ending.nextSteps ?? [])] } : ending
}

// The summary's "What to do" is written as Markdown: an id the service gave goes in as code only.
const NEXT_STEP: NextStepWords = {
  'look-for-query': () =>
    "Look for a new query among your key's queries (`proving query list`) before running this step again.",
  'look-for-task': () => 'Look for a new task among your tasks (`proving task list`) before running this step again.',
  'read-query': (step) => `Read query ${forSummaryCode(step.id)} (\`proving query get <id>\`) to see why.`,
  'read-task': (step) => `Read task ${forSummaryCode(step.id)} (\`proving task status <uuid>\`).`,
  'create-api-key': () => "Create an API key in the wallet's project (`proving auth keys create --name <name>`).",
  'show-challenge': () =>
    'Check `auth-url`; `proving auth login --show-challenge` shows the challenge the service sends.',
  'clear-journal': () => "Remove the journal entry named above (in the runner's temporary folder) if nothing holds it.",
  'follow-candidates': (step) =>
    `Follow ${step.ids.map((id) => forSummaryCode(id)).join(', ') || 'them'} with the \`wait\` sub-action before submitting this PIE again.`,
}

/**
 * A submission of this step whose outcome is unknown: said in the service's words (`ambiguous`),
 * which replace the library's advice on how to check. An earlier upload's (the journal's
 * EarlierUploadOutcomeUnknownError) is not: its own lines say which queries may be the PIE's.
 */
function isFreshAmbiguity(error: unknown, text: ServiceText): error is SubmissionOutcomeUnknownError {
  return (
    error instanceof SubmissionOutcomeUnknownError &&
    !(error instanceof EarlierUploadOutcomeUnknownError) &&
    text.ambiguous !== undefined
  )
}

/**
 * What the error's own lines explain (its metaMessages), for the summary's "What failed"; the
 * failure message (`error-reason`, the annotation) is the short line alone.
 */
function explanation(error: unknown): string[] {
  return error instanceof ProvingKitError ? (error.metaMessages ?? []) : []
}

function describeFailure(error: unknown, text: ServiceText, submitted?: Submitted): Ending {
  const follow = (after: 'service' | 'network' | 'other') => submitted?.follow(after) ?? []
  const snippet = submitted?.snippet
  if (isFreshAmbiguity(error, text) && text.ambiguous) {
    return {
      outcome: 'failed',
      headline: text.ambiguous.headline,
      problems: [error.details ?? error.shortMessage],
      nextSteps: [text.ambiguous.nextStep],
      failure: error.shortMessage,
    }
  }
  if (error instanceof InvalidInputError) {
    return {
      outcome: 'failed',
      // Once the job is submitted, what is refused is a value the service handed back, not an input.
      headline: submitted ? 'A value was refused.' : 'An input was refused; nothing was sent.',
      problems: [error.shortMessage, ...(error.metaMessages ?? [])],
      nextSteps: [`Fix ${error.input ? `\`${error.input}\`` : 'the input'} in the workflow file.`],
      failure: error.shortMessage,
    }
  }
  if (error instanceof ServiceError) {
    // A 404 means the service does not know the id: telling the person to follow it would contradict that.
    const unknown = error.status === 404 && text.notFound !== undefined
    const problems = [...explanation(error), ...(error.details ? [error.details] : [])]
    return {
      outcome: 'failed',
      headline: error.shortMessage,
      problems: problems.length ? problems : undefined,
      nextSteps: [statusAdvice(error.status ?? 0, text), ...(unknown ? [] : follow('service'))],
      snippet: unknown ? undefined : snippet,
      failure: error.details ? `${error.shortMessage} ${error.details}` : error.shortMessage,
    }
  }
  if (error instanceof NetworkError) {
    const problems = [...explanation(error), ...(text.networkDetails && error.details ? [error.details] : [])]
    return {
      outcome: 'failed',
      headline: error.shortMessage,
      problems: problems.length ? problems : undefined,
      nextSteps: [`Check \`${text.urlInput}\`, and that the runner can reach the service.`, ...follow('network')],
      snippet,
      failure: error.shortMessage,
    }
  }
  const message =
    error instanceof ProvingKitError ? error.shortMessage : error instanceof Error ? error.message : String(error)
  const nextSteps = follow('other')
  const problems = explanation(error)
  return {
    outcome: 'failed',
    headline: `The step failed: ${message}`,
    problems: problems.length ? problems : undefined,
    nextSteps: nextSteps.length ? nextSteps : undefined,
    snippet,
    failure: message,
  }
}

/** The next step for an HTTP error status: the service's own reading, else the usual one. */
function statusAdvice(status: number, text: ServiceText): string {
  const own = text.statusAdvice?.(status)
  if (own) return own
  if (status === 401 || status === 403) {
    return `Check \`api-key\`: the ${text.service} refused it (is the secret set for this repository, and still valid?).`
  }
  if (status === 404 && text.notFound) return `Check the identifier: the service does not know it (${text.notFound}).`
  if (status >= 500 || status === 429 || !text.docs)
    return `The ${text.service} is failing or busy: run the step again later.`
  return `Check the inputs against ${text.docs}.`
}
