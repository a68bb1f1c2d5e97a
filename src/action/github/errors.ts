/**
 * A refusal of GitHub's REST API, told as what to change: a missing permission of the token names
 * the `permissions:` entry to add. The request's text (Octokit's message quotes GitHub's answer)
 * is kept as details; the token never appears in it (Octokit does not echo the header).
 */
import { ProvingKitError } from '../../core/errors.ts'

export class GitHubApiError extends ProvingKitError {
  override name = 'GitHubApiError'
  /** GitHub refused for want of a permission (403 "Resource not accessible by integration"). */
  readonly forbidden: boolean
  constructor(
    shortMessage: string,
    options: { status?: number | undefined; details?: string | undefined; forbidden: boolean },
  ) {
    super(shortMessage, { status: options.status, details: options.details })
    this.forbidden = options.forbidden
  }
}

/** The HTTP status of an Octokit RequestError (or undefined for a network failure). */
export function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | undefined)?.status
  return typeof status === 'number' ? status : undefined
}

/**
 * What failed, for `doing` ("attach assets to release v1.2.0"), and the permission that would let
 * it: GitHub answers 403 to a token without it, and 404 to one that cannot see the resource.
 */
export function gitHubFailure(error: unknown, doing: string, permission: string): GitHubApiError {
  const status = statusOf(error)
  const answer = firstLine(error instanceof Error ? error.message : String(error))
  if (status === 403 || status === 401) {
    return new GitHubApiError(
      `Could not ${doing}: GitHub refused the token (HTTP ${status}). Add \`${permission}\` to the job's \`permissions:\` (or pass a \`github-token\` that has it).`,
      { status, details: answer, forbidden: true },
    )
  }
  return new GitHubApiError(`Could not ${doing}: ${status === undefined ? '' : `HTTP ${status}, `}${answer}`, {
    status,
    details: answer,
    forbidden: false,
  })
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.slice(0, 300)
}
