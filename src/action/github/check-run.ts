/**
 * A check run on the commit, named after what is proved: `in_progress` while the query is
 * followed, then concluded with the gate's verdict and the job summary's table as its summary.
 */
import { serviceLine } from '../../core/service-text.ts'
import type { GitHubContext } from './context.ts'
import { gitHubFailure } from './errors.ts'
import type { GitHub } from './octokit.ts'

export type CheckConclusion = 'success' | 'failure' | 'cancelled' | 'timed_out' | 'neutral'
export type CheckRun = { id: number; url: string }

const PERMISSION = 'checks: write'
/** GitHub refuses a check run's output.summary above 65535 characters. */
const MAX_SUMMARY = 65_535

export async function startCheckRun(
  github: GitHub,
  context: GitHubContext,
  name: string,
  detailsUrl: string | undefined,
): Promise<CheckRun> {
  if (!context.headSha)
    throw gitHubFailure(new Error('no commit: GITHUB_SHA is not set'), 'create a check run', PERMISSION)
  try {
    const { data } = await github.rest.checks.create({
      owner: context.owner,
      repo: context.repo,
      name,
      head_sha: context.headSha,
      status: 'in_progress',
      started_at: new Date().toISOString(),
      ...(detailsUrl ? { details_url: detailsUrl } : {}),
    })
    return { id: data.id, url: data.html_url ?? '' }
  } catch (error) {
    throw gitHubFailure(error, `create check run "${name}"`, PERMISSION)
  }
}

export async function concludeCheckRun(
  github: GitHub,
  context: GitHubContext,
  run: CheckRun,
  conclusion: CheckConclusion,
  title: string,
  summary: string,
): Promise<void> {
  try {
    await github.rest.checks.update({
      owner: context.owner,
      repo: context.repo,
      check_run_id: run.id,
      status: 'completed',
      conclusion,
      completed_at: new Date().toISOString(),
      // The title is plain text, and a headline may quote a service: one line, no controls.
      output: {
        title: serviceLine(title).slice(0, 255),
        summary: summary.length > MAX_SUMMARY ? `${summary.slice(0, MAX_SUMMARY - 1)}…` : summary,
      },
    })
  } catch (error) {
    throw gitHubFailure(error, 'conclude the check run', PERMISSION)
  }
}
