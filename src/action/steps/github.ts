/**
 * The GitHub side of a proving step (`release-tag`, `pr-comment`, `check-run`, `attest`), shared
 * by the root action, `wait/` and `bucket-close/` (the comment and the check run only): nothing is loaded unless one of them is asked for, then
 * ../github/publish.ts (and Octokit) is imported, the check run started before anything else,
 * and the rest registered to run once the step has reported.
 */
import type { ActionIO } from '../types.ts'
import type { GitHubInputs, PublishedStep } from '../github/publish.ts'
import { loadClientModule } from './lazy.ts'

export function usesGitHub(inputs: GitHubInputs): boolean {
  return inputs['release-tag'] !== undefined || inputs['pr-comment'] || inputs['check-run'] || inputs.attest === true
}

/**
 * Starts the GitHub side; resolves false when the step has already reported a failure (a check
 * run that could not be created). Call it before anything is submitted, and before an emulator
 * registers its close: what runs after the report downloads proof.json from the service.
 */
export async function startGitHub(
  io: ActionIO,
  step: PublishedStep,
  inputs: GitHubInputs,
  options: {
    subject: string
    serviceUrl: () => string | undefined
    signal: AbortSignal
    allowInsecureHttp?: boolean | undefined
    /** The PR comment's key when `comment-key` is not given: the `external-id`, else the subject (the PIE's path, the query, the bucket). */
    commentKey?: string | undefined
  },
): Promise<boolean> {
  if (!usesGitHub(inputs)) return true
  const { GitHubPublisher } = await import('../github/publish.ts')
  const publisher = await GitHubPublisher.open(io, inputs, options.commentKey ?? options.subject)
  if (!(await publisher.start(step, options.subject))) return false
  step.onClose(() =>
    publisher.finish(step, {
      serviceUrl: options.serviceUrl(),
      download: async (url, path) =>
        (await loadClientModule()).downloadFile(url, path, options.signal, {
          allowInsecureHttp: options.allowInsecureHttp,
        }),
    }),
  )
  return true
}
