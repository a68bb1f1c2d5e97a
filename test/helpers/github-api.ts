/**
 * A stand-in for GitHub's REST API on loopback: releases and their assets, issue comments and
 * check runs, kept in memory. Octokit reaches it through GITHUB_API_URL; a release's
 * `upload_url` points at its second listener, as GitHub's points at uploads.github.com.
 *
 * Every request is judged by GitHub's published description (./openapi.ts): an operation GitHub
 * does not document, a missing path or query parameter, a wrong body or content type, or a
 * request sent to the wrong origin (an upload to the API, a JSON call to the uploads host) is
 * answered 422 and kept in `problems`. Every answer is checked against the documented response
 * the same way, so the stand-in cannot flatter the client either.
 *
 * What it does as GitHub does: the by-tag endpoint does not return draft releases; a comment or
 * check run write by a read-only token (`readOnly`) is answered 403 "Resource not accessible by
 * integration".
 */
import { createHash } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { checkRequest, checkResponse, findOperation, type MatchedOperation } from './openapi.ts'

export type StoredAsset = {
  id: number
  name: string
  contentType: string
  data: Buffer
  label: string | null
  createdAt: string
}
export type StoredRelease = {
  id: number
  tag: string
  name: string
  draft: boolean
  assets: StoredAsset[]
  createdAt: string
}
/** `author`: a person's comment (the job's own are github-actions[bot]'s), with their association to the repository. */
export type StoredComment = {
  id: number
  issue: number
  body: string
  createdAt: string
  updatedAt: string
  author?: { login: string; association: string }
}
export type StoredCheckRun = {
  id: number
  name: string
  headSha: string
  status: string
  conclusion: string | null
  detailsUrl: string | null
  output: { title: string | null; summary: string | null }
  /** Every state the run went through, in order. */
  history: { status: string; conclusion: string | null }[]
}
export type RecordedRequest = {
  method: string
  path: string
  operationId: string | undefined
  origin: 'api' | 'uploads'
  status: number
}

/** The token's missing permissions: what answers 403. */
export type Denied = { comments?: boolean; checks?: boolean; contents?: boolean }

export type GitHubApiStandIn = {
  /** GITHUB_API_URL for the action. */
  url: string
  uploadsUrl: string
  releases: StoredRelease[]
  comments: StoredComment[]
  checkRuns: StoredCheckRun[]
  requests: RecordedRequest[]
  /** Requests or answers that differ from GitHub's description. */
  problems: string[]
  /** Tokens seen in Authorization headers. */
  tokens: Set<string>
  denied: Denied
  addRelease(release: { tag: string; draft?: boolean; assets?: { name: string; data: string }[] }): StoredRelease
  close(): Promise<void>
}

const NOT_ACCESSIBLE = {
  message: 'Resource not accessible by integration',
  documentation_url: 'https://docs.github.com/rest',
  status: '403',
}

export async function startGitHubApi(options: { owner: string; repo: string }): Promise<GitHubApiStandIn> {
  let nextId = 1000
  const now = () => new Date().toISOString()
  const api = createServer()
  const uploads = createServer()
  await Promise.all([listen(api), listen(uploads)])
  const url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`
  const uploadsUrl = `http://127.0.0.1:${(uploads.address() as AddressInfo).port}`
  const repoPath = `/repos/${options.owner}/${options.repo}`
  const html = `https://github.com/${options.owner}/${options.repo}`

  const state: GitHubApiStandIn = {
    url,
    uploadsUrl,
    releases: [],
    comments: [],
    checkRuns: [],
    requests: [],
    problems: [],
    tokens: new Set(),
    denied: {},
    addRelease(release) {
      const stored: StoredRelease = {
        id: nextId++,
        tag: release.tag,
        name: release.tag,
        draft: release.draft ?? false,
        createdAt: now(),
        assets: (release.assets ?? []).map((asset) => ({
          id: nextId++,
          name: asset.name,
          contentType: 'text/plain',
          data: Buffer.from(asset.data),
          label: null,
          createdAt: now(),
        })),
      }
      state.releases.push(stored)
      return stored
    },
    close: async () => {
      await Promise.all([close(api), close(uploads)])
    },
  }

  const user = (login: string, id: number, type: 'Bot' | 'User' = 'Bot') => ({
    login,
    id,
    node_id: `U_${id}`,
    avatar_url: `https://avatars.githubusercontent.com/u/${id}`,
    gravatar_id: '',
    url: `https://api.github.com/users/${login}`,
    html_url: `https://github.com/${login}`,
    followers_url: `https://api.github.com/users/${login}/followers`,
    following_url: `https://api.github.com/users/${login}/following{/other_user}`,
    gists_url: `https://api.github.com/users/${login}/gists{/gist_id}`,
    starred_url: `https://api.github.com/users/${login}/starred{/owner}{/repo}`,
    subscriptions_url: `https://api.github.com/users/${login}/subscriptions`,
    organizations_url: `https://api.github.com/users/${login}/orgs`,
    repos_url: `https://api.github.com/users/${login}/repos`,
    events_url: `https://api.github.com/users/${login}/events{/privacy}`,
    received_events_url: `https://api.github.com/users/${login}/received_events`,
    type,
    site_admin: false,
  })
  const bot = user('github-actions[bot]', 41898282)
  const assetJson = (asset: StoredAsset) => ({
    url: `${url}${repoPath}/releases/assets/${asset.id}`,
    browser_download_url: `${html}/releases/download/${encodeURIComponent(asset.name)}`,
    id: asset.id,
    node_id: `RA_${asset.id}`,
    name: asset.name,
    label: asset.label,
    state: 'uploaded',
    content_type: asset.contentType,
    size: asset.data.length,
    digest: `sha256:${sha256Hex(asset.data)}`,
    download_count: 0,
    created_at: asset.createdAt,
    updated_at: asset.createdAt,
    uploader: bot,
  })
  const releaseJson = (release: StoredRelease) => ({
    url: `${url}${repoPath}/releases/${release.id}`,
    html_url: release.draft
      ? `${html}/releases/tag/untagged-${release.id}`
      : `${html}/releases/tag/${encodeURIComponent(release.tag)}`,
    assets_url: `${url}${repoPath}/releases/${release.id}/assets`,
    upload_url: `${uploadsUrl}${repoPath}/releases/${release.id}/assets{?name,label}`,
    tarball_url: `${url}${repoPath}/tarball/${release.tag}`,
    zipball_url: `${url}${repoPath}/zipball/${release.tag}`,
    id: release.id,
    node_id: `RE_${release.id}`,
    tag_name: release.tag,
    target_commitish: 'main',
    name: release.name,
    draft: release.draft,
    prerelease: false,
    created_at: release.createdAt,
    published_at: release.draft ? null : release.createdAt,
    author: bot,
    assets: release.assets.map(assetJson),
  })
  const commentJson = (comment: StoredComment) => ({
    id: comment.id,
    node_id: `IC_${comment.id}`,
    url: `${url}${repoPath}/issues/comments/${comment.id}`,
    html_url: `${html}/pull/${comment.issue}#issuecomment-${comment.id}`,
    issue_url: `${url}${repoPath}/issues/${comment.issue}`,
    body: comment.body,
    user: comment.author ? user(comment.author.login, 583231, 'User') : bot,
    created_at: comment.createdAt,
    updated_at: comment.updatedAt,
    author_association: comment.author?.association ?? 'NONE',
  })
  const app = {
    id: 15368,
    slug: 'github-actions',
    node_id: 'MDM6QXBwMTUzNjg=',
    client_id: 'Iv1.0000000000000000',
    owner: user('github', 9919),
    name: 'GitHub Actions',
    description: 'Automate your workflow from idea to production',
    external_url: 'https://help.github.com/en/actions',
    html_url: 'https://github.com/apps/github-actions',
    created_at: '2018-07-30T09:30:17Z',
    updated_at: '2019-12-10T19:04:12Z',
    permissions: { checks: 'write' },
    events: [],
  }
  const checkRunJson = (run: StoredCheckRun) => ({
    id: run.id,
    head_sha: run.headSha,
    node_id: `CR_${run.id}`,
    external_id: null,
    url: `${url}${repoPath}/check-runs/${run.id}`,
    html_url: `${html}/runs/${run.id}`,
    details_url: run.detailsUrl,
    status: run.status,
    conclusion: run.conclusion,
    started_at: now(),
    completed_at: run.status === 'completed' ? now() : null,
    output: {
      title: run.output.title,
      summary: run.output.summary,
      text: null,
      annotations_count: 0,
      annotations_url: `${url}${repoPath}/check-runs/${run.id}/annotations`,
    },
    name: run.name,
    check_suite: { id: 1 },
    app,
    pull_requests: [],
  })

  type Answer = { status: number; body?: unknown; headers?: Record<string, string> }
  const handle = (
    matched: MatchedOperation,
    query: URLSearchParams,
    body: unknown,
    raw: Buffer,
    contentType: string,
  ): Answer => {
    const params = matched.pathParams
    if (params.owner !== options.owner || params.repo !== options.repo)
      return { status: 404, body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' } }
    const json = body as Record<string, unknown>
    const notFound: Answer = {
      status: 404,
      body: { message: 'Not Found', documentation_url: 'https://docs.github.com/rest', status: '404' },
    }
    const release = (id: string | undefined) => state.releases.find((candidate) => String(candidate.id) === id)
    switch (matched.operationId) {
      case 'repos/get-release-by-tag': {
        // As on GitHub: a draft release is not found by its tag.
        const found = state.releases.find((candidate) => candidate.tag === params.tag && !candidate.draft)
        return found ? { status: 200, body: releaseJson(found) } : notFound
      }
      case 'repos/list-releases':
        return { status: 200, body: [...state.releases].reverse().map(releaseJson) }
      case 'repos/create-release': {
        if (state.denied.contents) return { status: 403, body: NOT_ACCESSIBLE }
        const created: StoredRelease = {
          id: nextId++,
          tag: String(json.tag_name),
          name: typeof json.name === 'string' ? json.name : String(json.tag_name),
          draft: json.draft === true,
          createdAt: now(),
          assets: [],
        }
        state.releases.push(created)
        return { status: 201, body: releaseJson(created) }
      }
      case 'repos/list-release-assets': {
        const found = release(params.release_id)
        return found ? { status: 200, body: found.assets.map(assetJson) } : notFound
      }
      case 'repos/delete-release-asset': {
        if (state.denied.contents) return { status: 403, body: NOT_ACCESSIBLE }
        for (const candidate of state.releases) {
          const index = candidate.assets.findIndex((asset) => String(asset.id) === params.asset_id)
          if (index >= 0) {
            candidate.assets.splice(index, 1)
            return { status: 204 }
          }
        }
        return notFound
      }
      case 'repos/upload-release-asset': {
        if (state.denied.contents) return { status: 403, body: NOT_ACCESSIBLE }
        const found = release(params.release_id)
        if (!found) return notFound
        const name = query.get('name')!
        if (found.assets.some((asset) => asset.name === name)) {
          return {
            status: 422,
            body: {
              message: 'Validation Failed',
              errors: [{ resource: 'ReleaseAsset', code: 'already_exists', field: 'name' }],
              documentation_url: 'https://docs.github.com/rest',
            },
          }
        }
        const asset: StoredAsset = {
          id: nextId++,
          name,
          contentType,
          data: raw,
          label: query.get('label'),
          createdAt: now(),
        }
        found.assets.push(asset)
        return { status: 201, body: assetJson(asset) }
      }
      case 'issues/list-comments':
        return {
          status: 200,
          body: state.comments.filter((comment) => String(comment.issue) === params.issue_number).map(commentJson),
        }
      case 'issues/create-comment': {
        if (state.denied.comments) return { status: 403, body: NOT_ACCESSIBLE }
        const comment: StoredComment = {
          id: nextId++,
          issue: Number(params.issue_number),
          body: String(json.body),
          createdAt: now(),
          updatedAt: now(),
        }
        state.comments.push(comment)
        return { status: 201, body: commentJson(comment) }
      }
      case 'issues/update-comment': {
        if (state.denied.comments) return { status: 403, body: NOT_ACCESSIBLE }
        const comment = state.comments.find((candidate) => String(candidate.id) === params.comment_id)
        if (!comment) return notFound
        comment.body = String(json.body)
        comment.updatedAt = now()
        return { status: 200, body: commentJson(comment) }
      }
      case 'checks/create': {
        if (state.denied.checks) return { status: 403, body: NOT_ACCESSIBLE }
        const output = (json.output ?? {}) as { title?: string; summary?: string }
        const conclusion = typeof json.conclusion === 'string' ? json.conclusion : null
        const status = conclusion ? 'completed' : String(json.status ?? 'queued')
        const run: StoredCheckRun = {
          id: nextId++,
          name: String(json.name),
          headSha: String(json.head_sha),
          status,
          conclusion,
          detailsUrl: typeof json.details_url === 'string' ? json.details_url : null,
          output: { title: output.title ?? null, summary: output.summary ?? null },
          history: [{ status, conclusion }],
        }
        state.checkRuns.push(run)
        return { status: 201, body: checkRunJson(run) }
      }
      case 'checks/update': {
        if (state.denied.checks) return { status: 403, body: NOT_ACCESSIBLE }
        const run = state.checkRuns.find((candidate) => String(candidate.id) === params.check_run_id)
        if (!run) return notFound
        if (typeof json.conclusion === 'string') {
          run.conclusion = json.conclusion
          run.status = 'completed'
        } else if (typeof json.status === 'string') run.status = json.status
        const output = json.output as { title?: string; summary?: string } | undefined
        if (output) run.output = { title: output.title ?? null, summary: output.summary ?? null }
        run.history.push({ status: run.status, conclusion: run.conclusion })
        return { status: 200, body: checkRunJson(run) }
      }
      default:
        return { status: 501, body: { message: `The stand-in does not implement ${matched.operationId}` } }
    }
  }

  const serve = (origin: 'api' | 'uploads') => async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks)
    const target = new URL(request.url ?? '/', 'http://stand-in')
    const method = request.method ?? 'GET'
    const auth = request.headers.authorization
    if (auth) state.tokens.add(auth.replace(/^(token|bearer)\s+/i, ''))
    const send = (answer: Answer, operationId: string | undefined) => {
      state.requests.push({ method, path: target.pathname, operationId, origin, status: answer.status })
      const text = answer.body === undefined ? '' : JSON.stringify(answer.body)
      response.writeHead(answer.status, {
        ...(text ? { 'content-type': 'application/json; charset=utf-8' } : {}),
        ...answer.headers,
      })
      response.end(text)
    }
    const refuse = (problems: string[], operationId: string | undefined) => {
      state.problems.push(...problems.map((problem) => `${method} ${target.pathname}: ${problem}`))
      send(
        { status: 422, body: { message: problems.join('; '), documentation_url: 'https://docs.github.com/rest' } },
        operationId,
      )
    }
    const matched = findOperation(method, target.pathname)
    if (!matched) return refuse(['GitHub documents no such operation'], undefined)
    const wantsUploads = new URL(matched.server).hostname === 'uploads.github.com'
    if (wantsUploads !== (origin === 'uploads')) {
      return refuse(
        [`${matched.operationId} belongs on ${matched.server}, not the ${origin} host`],
        matched.operationId,
      )
    }
    if (!auth) return refuse(['no Authorization header'], matched.operationId)
    const contentType = request.headers['content-type']
    const problems = checkRequest(matched, { query: target.searchParams, contentType, body: raw })
    const length = request.headers['content-length']
    if (origin === 'uploads' && length !== undefined && Number(length) !== raw.length)
      problems.push(`content-length ${length} but ${raw.length} bytes arrived`)
    if (problems.length) return refuse(problems, matched.operationId)
    let body: unknown
    if (raw.length && contentType?.startsWith('application/json') && origin === 'api')
      body = JSON.parse(raw.toString('utf8'))
    const answer = handle(matched, target.searchParams, body, raw, contentType ?? '')
    if (answer.status < 300) {
      const wrong = checkResponse(matched, answer.status, answer.body)
      if (wrong.length)
        state.problems.push(
          ...wrong.map((problem) => `the stand-in's answer to ${method} ${target.pathname}: ${problem}`),
        )
    }
    send(answer, matched.operationId)
  }
  api.on('request', (request, response) => void serve('api')(request, response))
  uploads.on('request', (request, response) => void serve('uploads')(request, response))
  return state
}

function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
}

function close(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}
