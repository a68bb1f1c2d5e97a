/**
 * One comment per pull request and job, found again by a hidden marker and edited in place (after
 * eslint-annotate and publish-unit-test-result): a re-run replaces what the last run said instead
 * of adding to the thread.
 */
import type { GitHubContext } from './context.ts'
import { gitHubFailure } from './errors.ts'
import type { GitHub } from './octokit.ts'

export type PostedComment = { id: number; url: string; updated: boolean }

/** GitHub refuses a comment body above 65536 characters. */
const MAX_BODY = 65_536

/** The hidden line that identifies this job's comment (an HTML comment: not rendered). */
export function commentMarker(context: Pick<GitHubContext, 'workflow' | 'job'>): string {
  const clean = (text: string) => text.replace(/[^\w .:/@-]/g, '_')
  return `<!-- proving-kit:pr-comment workflow=${clean(context.workflow)} job=${clean(context.job)} -->`
}

export async function upsertComment(github: GitHub, context: GitHubContext, pullNumber: number, markdown: string): Promise<PostedComment> {
  const repo = { owner: context.owner, repo: context.repo }
  const marker = commentMarker(context)
  const body = withinLimit(`${marker}\n${markdown}`)
  let existing: { id: number; body?: string | undefined }[]
  try {
    existing = await github.paginate(github.rest.issues.listComments, { ...repo, issue_number: pullNumber, per_page: 100 })
  } catch (error) {
    throw gitHubFailure(error, `read the comments of pull request #${pullNumber}`, 'pull-requests: write')
  }
  const ours = existing.find((comment) => comment.body?.startsWith(marker))
  try {
    if (ours) {
      const { data } = await github.rest.issues.updateComment({ ...repo, comment_id: ours.id, body })
      return { id: data.id, url: data.html_url, updated: true }
    }
    const { data } = await github.rest.issues.createComment({ ...repo, issue_number: pullNumber, body })
    return { id: data.id, url: data.html_url, updated: false }
  } catch (error) {
    throw gitHubFailure(error, `comment on pull request #${pullNumber}`, 'pull-requests: write')
  }
}

function withinLimit(body: string): string {
  if (body.length <= MAX_BODY) return body
  const note = '\n\n_(cut to GitHub\'s comment limit: the job summary has it all)_'
  return body.slice(0, MAX_BODY - note.length) + note
}
