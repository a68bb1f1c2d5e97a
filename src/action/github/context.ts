/**
 * Where the step runs on GitHub: the repository, the pull request and the commit to report on,
 * read from the runner's variables and the event payload file (GITHUB_EVENT_PATH) through the
 * step's `env`, not from @actions/github's `context`, which reads `process.env` once when it is
 * imported (a test drives several runs in one process, the bundle one).
 */
import { readFile } from 'node:fs/promises'

export type GitHubContext = {
  owner: string
  repo: string
  /** The REST API's address (GITHUB_API_URL: api.github.com, or a GHES host's /api/v3). */
  apiUrl: string
  /** The pull request of a pull_request / pull_request_target event; undefined otherwise. */
  pullNumber: number | undefined
  /** The commit a check run belongs on: a pull request's head, else GITHUB_SHA. */
  headSha: string | undefined
  /** A pull request from a fork: its `pull_request` token is read-only. */
  fromFork: boolean
  /** The job's id in the workflow (GITHUB_JOB): one PR comment per job. */
  job: string
  workflow: string
}

type PullRequestPayload = {
  number?: unknown
  head?: { sha?: unknown; repo?: { full_name?: unknown } | null }
  base?: { repo?: { full_name?: unknown } | null }
}

export async function readGitHubContext(env: Record<string, string | undefined>): Promise<GitHubContext> {
  const [owner = '', repo = ''] = (env.GITHUB_REPOSITORY ?? '').split('/')
  let pull: PullRequestPayload | undefined
  if (env.GITHUB_EVENT_PATH) {
    try {
      const event = JSON.parse(await readFile(env.GITHUB_EVENT_PATH, 'utf8')) as { pull_request?: PullRequestPayload }
      pull = event.pull_request ?? undefined
    } catch {
      // No payload (a local run) or an unreadable one: treated as an event without a pull request.
      pull = undefined
    }
  }
  const pullNumber = typeof pull?.number === 'number' && Number.isInteger(pull.number) ? pull.number : undefined
  const headSha = typeof pull?.head?.sha === 'string' ? pull.head.sha : env.GITHUB_SHA || undefined
  const headRepo = pull?.head?.repo?.full_name
  const baseRepo = pull?.base?.repo?.full_name
  return {
    owner,
    repo,
    apiUrl: (env.GITHUB_API_URL || 'https://api.github.com').replace(/\/+$/, ''),
    pullNumber,
    headSha,
    fromFork: typeof headRepo === 'string' && typeof baseRepo === 'string' && headRepo !== baseRepo,
    job: env.GITHUB_JOB || 'job',
    workflow: env.GITHUB_WORKFLOW || '',
  }
}
