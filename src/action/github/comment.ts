/**
 * One comment per pull request, job and proved PIE, found again by a hidden marker and edited in
 * place (after eslint-annotate and publish-unit-test-result): a re-run replaces what the last run
 * said instead of adding to the thread, and the legs of a matrix job, which share the job's name,
 * each keep their own comment (the key: `comment-key`, else `external-id`, else the PIE's path).
 */
import { createHash } from 'node:crypto'
import type { GitHubContext } from './context.ts'
import { gitHubFailure } from './errors.ts'
import type { GitHub } from './octokit.ts'

export type PostedComment = { id: number; url: string; updated: boolean }

/**
 * Who may have written a comment this step edits: a bot (the job's token is a GitHub App's:
 * github-actions[bot], or an app of the workflow's), or someone with write access (a personal
 * token's owner). Anyone can comment on a public repository's pull request: an outsider's comment
 * that copies the marker would otherwise be edited, and the result shown under their name, theirs
 * to edit afterwards.
 */
const TRUSTED_ASSOCIATIONS = new Set(['OWNER', 'MEMBER', 'COLLABORATOR'])

type ListedComment = {
  id: number
  body?: string | undefined
  user?: { type?: string } | null
  author_association?: string
}

function isOurs(comment: ListedComment, marker: string): boolean {
  // The marker ends in ` -->`: a key never finds the comment of a longer key it begins.
  if (!comment.body?.startsWith(marker)) return false
  return comment.user?.type === 'Bot' || TRUSTED_ASSOCIATIONS.has(comment.author_association ?? '')
}

/** GitHub refuses a comment body above 65536 characters. */
const MAX_BODY = 65_536

/**
 * The hidden line that identifies this job's comment for one key (an HTML comment: not rendered).
 * A key that is not plain (other characters than letters, digits and ` .:/@_-`, or over 100 of
 * them) is written cleaned and cut, followed by a digest of the whole key, so two keys never
 * share a marker.
 */
export function commentMarker(context: Pick<GitHubContext, 'workflow' | 'job'>, key?: string): string {
  const clean = (text: string) => text.replace(/[^\w .:/@-]/g, '_')
  const keyed =
    key === undefined
      ? ''
      : clean(key) === key && key.length <= 100
        ? ` key=${key}`
        : ` key=${clean(key).slice(0, 60)}#${createHash('sha256').update(key).digest('hex').slice(0, 16)}`
  return `<!-- proving-kit:pr-comment workflow=${clean(context.workflow)} job=${clean(context.job)}${keyed} -->`
}

export async function upsertComment(
  github: GitHub,
  context: GitHubContext,
  pullNumber: number,
  markdown: string,
  key?: string,
): Promise<PostedComment> {
  const repo = { owner: context.owner, repo: context.repo }
  const marker = commentMarker(context, key)
  const body = withinLimit(`${marker}\n${markdown}`)
  let existing: ListedComment[]
  try {
    existing = await github.paginate(github.rest.issues.listComments, {
      ...repo,
      issue_number: pullNumber,
      per_page: 100,
    })
  } catch (error) {
    throw gitHubFailure(error, `read the comments of pull request #${pullNumber}`, 'pull-requests: write')
  }
  const ours = existing.find((comment) => isOurs(comment, marker))
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
  const note = "\n\n_(cut to GitHub's comment limit: the job summary has it all)_"
  return body.slice(0, MAX_BODY - note.length) + note
}
