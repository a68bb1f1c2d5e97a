import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { concludeCheckRun, startCheckRun } from '../../../../src/action/github/check-run.ts'
import { commentMarker, upsertComment } from '../../../../src/action/github/comment.ts'
import type { GitHubContext } from '../../../../src/action/github/context.ts'
import { gitHubClient } from '../../../../src/action/github/octokit.ts'
import { startGitHubApi, type GitHubApiStandIn } from '../../../helpers/github-api.ts'

/** GitHub's limits on what a comment and a check run's summary may hold, against the stand-in. */
let github: GitHubApiStandIn
let context: GitHubContext

beforeAll(async () => {
  github = await startGitHubApi({ owner: 'octo', repo: 'app' })
  context = {
    owner: 'octo',
    repo: 'app',
    apiUrl: github.url,
    pullNumber: 5,
    headSha: 'f'.repeat(40),
    fromFork: false,
    job: 'prove',
    workflow: 'CI',
  }
})
afterAll(async () => {
  await github.close()
})
afterEach(() => {
  expect(github.problems).toEqual([])
})

describe('upsertComment', () => {
  it('cuts a body above 65536 characters, keeping the marker first so the next run finds it', async () => {
    const client = gitHubClient('ghs_unit_token', context)
    const long = `${'| row | value |\n'.repeat(6_000)}`
    const first = await upsertComment(client, context, 5, long)
    expect(first.updated).toBe(false)
    const stored = github.comments.find((comment) => comment.id === first.id)!
    expect(stored.body.length).toBeLessThanOrEqual(65_536)
    expect(stored.body.startsWith(commentMarker(context))).toBe(true)
    expect(stored.body).toMatch(/cut to GitHub's comment limit: the job summary has it all\)_$/)
    const second = await upsertComment(client, context, 5, 'short')
    expect(second).toMatchObject({ id: first.id, updated: true })
    expect(github.comments.filter((comment) => comment.issue === 5)).toHaveLength(1)
  })

  it("another job's comment on the same pull request is left alone", async () => {
    const client = gitHubClient('ghs_unit_token', context)
    const other = await upsertComment(client, { ...context, job: 'other' }, 5, 'the other job')
    const ours = await upsertComment(client, context, 5, 'ours')
    expect(ours.id).not.toBe(other.id)
    expect(github.comments.find((comment) => comment.id === other.id)!.body).toContain('the other job')
  })
})

describe('upsertComment: whose comment is edited', () => {
  const seed = (issue: number, association: string) => {
    const comment = {
      id: 900_000 + issue,
      issue,
      body: `${commentMarker(context)}\nlooks like ours`,
      createdAt: '',
      updatedAt: '',
      author: { login: 'someone', association },
    }
    github.comments.push(comment)
    return comment
  }

  it("an outsider's comment carrying the marker is left alone: the result is posted as a new comment", async () => {
    const forged = seed(6, 'NONE')
    const posted = await upsertComment(gitHubClient('ghs_unit_token', context), context, 6, 'the result')
    expect(posted.updated).toBe(false)
    expect(posted.id).not.toBe(forged.id)
    expect(forged.body).toContain('looks like ours')
  })

  it("a collaborator's (the author of a personal token) is edited in place", async () => {
    const theirs = seed(7, 'COLLABORATOR')
    const posted = await upsertComment(gitHubClient('ghs_unit_token', context), context, 7, 'the result')
    expect(posted).toMatchObject({ id: theirs.id, updated: true })
  })
})

describe('check runs', () => {
  it('a summary above 65535 characters is cut to the limit', async () => {
    const client = gitHubClient('ghs_unit_token', context)
    const run = await startCheckRun(client, context, 'proving-kit: pie.zip', undefined)
    await concludeCheckRun(client, context, run, 'success', 'Passed', 'x'.repeat(70_000))
    const stored = github.checkRuns.find((candidate) => candidate.id === run.id)!
    expect(stored).toMatchObject({ status: 'completed', conclusion: 'success' })
    expect(stored.output.summary!.length).toBe(65_535)
  })

  it('the title is one line without control characters, whatever a service put in the headline', async () => {
    const client = gitHubClient('ghs_unit_token', context)
    const run = await startCheckRun(client, context, 'proving-kit: pie.zip', undefined)
    await concludeCheckRun(
      client,
      context,
      run,
      'failure',
      'The step failed: bad\nstatus DONE\u001b[2K\u202e',
      'summary',
    )
    const stored = github.checkRuns.find((candidate) => candidate.id === run.id)!
    expect(stored.output.title).toBe('The step failed: bad\\nstatus DONE\ufffd')
  })
})

describe('upsertComment: one comment per job and key (issue 31: matrix legs)', () => {
  it('two legs of one job (two keys) keep two comments; each re-run edits its own', async () => {
    const client = gitHubClient('ghs_unit_token', context)
    const a = await upsertComment(client, context, 20, 'leg a, run 1', 'pies/a.zip')
    const b = await upsertComment(client, context, 20, 'leg b, run 1', 'pies/b.zip')
    expect(b.id).not.toBe(a.id)
    expect(await upsertComment(client, context, 20, 'leg a, run 2', 'pies/a.zip')).toMatchObject({
      id: a.id,
      updated: true,
    })
    expect(await upsertComment(client, context, 20, 'leg b, run 2', 'pies/b.zip')).toMatchObject({
      id: b.id,
      updated: true,
    })
    const bodies = github.comments.filter((comment) => comment.issue === 20).map((comment) => comment.body)
    expect(bodies).toEqual([
      `${commentMarker(context, 'pies/a.zip')}\nleg a, run 2`,
      `${commentMarker(context, 'pies/b.zip')}\nleg b, run 2`,
    ])
    expect(bodies[0]).toMatch(/^<!-- proving-kit:pr-comment workflow=CI job=prove key=pies\/a\.zip -->\n/)
  })

  it('a key that begins another, or an unplain key, never finds the other comment', async () => {
    const client = gitHubClient('ghs_unit_token', context)
    const long = await upsertComment(client, context, 21, 'long', 'pie.zip.bak')
    const short = await upsertComment(client, context, 21, 'short', 'pie.zip')
    expect(short.id).not.toBe(long.id)
    // Keys that clean to the same text still differ by their digest; the marker stays one safe line.
    const star = commentMarker(context, 'a*.zip --> <b>')
    expect(star).not.toBe(commentMarker(context, 'a?.zip --> <b>'))
    expect(star).toMatch(/^<!-- proving-kit:pr-comment workflow=CI job=prove key=a_\.zip --_ _b_#[0-9a-f]{16} -->$/)
    expect(commentMarker(context, 'x'.repeat(150))).toMatch(/key=x{60}#[0-9a-f]{16} -->$/)
  })

  it('a keyed comment written by an outsider is still left alone', async () => {
    github.comments.push({
      id: 990_022,
      issue: 22,
      body: `${commentMarker(context, 'k1')}\nforged`,
      createdAt: '',
      updatedAt: '',
      author: { login: 'someone', association: 'NONE' },
    })
    const posted = await upsertComment(gitHubClient('ghs_unit_token', context), context, 22, 'the result', 'k1')
    expect(posted.updated).toBe(false)
    expect(github.comments.find((comment) => comment.id === 990_022)!.body).toContain('forged')
  })
})
