import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { readGitHubContext } from '../../../../src/action/github/context.ts'
import { commentMarker } from '../../../../src/action/github/comment.ts'

function eventFile(payload: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'event-')), 'event.json')
  writeFileSync(file, JSON.stringify(payload))
  return file
}

const ENV = { GITHUB_REPOSITORY: 'octo/app', GITHUB_SHA: 'merge', GITHUB_JOB: 'prove', GITHUB_WORKFLOW: 'CI' }

describe('readGitHubContext', () => {
  it('a pull request: its number, its head commit (not the merge commit), from the same repository', async () => {
    const context = await readGitHubContext({
      ...ENV,
      GITHUB_EVENT_PATH: eventFile({
        pull_request: {
          number: 3,
          head: { sha: 'head', repo: { full_name: 'octo/app' } },
          base: { repo: { full_name: 'octo/app' } },
        },
      }),
    })
    expect(context).toMatchObject({
      owner: 'octo',
      repo: 'app',
      pullNumber: 3,
      headSha: 'head',
      fromFork: false,
      apiUrl: 'https://api.github.com',
    })
  })

  it("a fork's pull request is told apart (its token is read-only)", async () => {
    const context = await readGitHubContext({
      ...ENV,
      GITHUB_EVENT_PATH: eventFile({
        pull_request: {
          number: 3,
          head: { sha: 'head', repo: { full_name: 'someone/app' } },
          base: { repo: { full_name: 'octo/app' } },
        },
      }),
    })
    expect(context.fromFork).toBe(true)
  })

  it('a push, or no payload file: no pull request, GITHUB_SHA, GITHUB_API_URL honoured', async () => {
    const context = await readGitHubContext({
      ...ENV,
      GITHUB_EVENT_PATH: join(tmpdir(), 'no-such-event.json'),
      GITHUB_API_URL: 'https://ghe.example.com/api/v3/',
    })
    expect(context).toMatchObject({
      pullNumber: undefined,
      headSha: 'merge',
      fromFork: false,
      apiUrl: 'https://ghe.example.com/api/v3',
    })
  })
})

describe('commentMarker', () => {
  it('is an HTML comment naming the workflow and job, whatever characters they hold', () => {
    expect(commentMarker({ workflow: 'CI', job: 'prove' })).toBe(
      '<!-- proving-kit:pr-comment workflow=CI job=prove -->',
    )
    expect(commentMarker({ workflow: 'a --> b', job: 'x' })).toBe(
      '<!-- proving-kit:pr-comment workflow=a --_ b job=x -->',
    )
  })
})
