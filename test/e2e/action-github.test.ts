import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { EXAMPLE } from '../helpers/example-pie.ts'
import { startGitHubApi, type GitHubApiStandIn } from '../helpers/github-api.ts'
import { leaksSecret, secretFormsWritten } from '../helpers/secret-forms.ts'
import { startEmulator } from '../../src/emulator/index.ts'
import {
  type ActionRun,
  control,
  FIXTURE_PIE,
  leakedSecret,
  runAction,
  runPost,
  startAction,
} from '../helpers/run-action.ts'

/**
 * The root action's GitHub side (issue 25), run from the committed bundle (dist/) as the runner runs it (event
 * payload file, GITHUB_* variables, file commands), against a loopback stand-in of GitHub's REST
 * API that checks every request, and every answer it gives, against GitHub's published OpenAPI
 * description (test/helpers/openapi.ts). The proof itself comes from the built-in emulator.
 */
const OWNER = 'proving-kit'
const REPO = 'proving-kit'
const TOKEN = 'ghs_STANDINtoken0123456789abcdefABCDEF'
const HEAD_SHA = 'a'.repeat(40)
const MERGE_SHA = 'b'.repeat(40)
const PULL = 17

let github: GitHubApiStandIn
const runs: ActionRun[] = []

function pullRequestEvent(options: { fork?: boolean } = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'github-event-'))
  const file = join(dir, 'event.json')
  const base = `${OWNER}/${REPO}`
  writeFileSync(
    file,
    JSON.stringify({
      action: 'synchronize',
      number: PULL,
      pull_request: {
        number: PULL,
        head: { sha: HEAD_SHA, ref: 'feature', repo: { full_name: options.fork ? 'someone/proving-kit' : base } },
        base: { sha: 'c'.repeat(40), ref: 'main', repo: { full_name: base } },
      },
    }),
  )
  return file
}

function runnerEnv(options: { fork?: boolean } = {}): Record<string, string> {
  return {
    GITHUB_API_URL: github.url,
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: pullRequestEvent(options),
    GITHUB_REF: `refs/pull/${PULL}/merge`,
    GITHUB_SHA: MERGE_SHA,
    GITHUB_JOB: 'prove',
    GITHUB_WORKFLOW: 'release',
    // Debug lines are scanned for the token too.
    RUNNER_DEBUG: '1',
  }
}

const withDefaults = (action: string, inputs: Record<string, string>) => ({
  pie: FIXTURE_PIE,
  ...(action === '' && !inputs['base-url'] ? { emulator: 'true' } : {}),
  'github-token': TOKEN,
  ...inputs,
})

async function prove(
  inputs: Record<string, string>,
  options: { fork?: boolean; action?: string } = {},
): Promise<ActionRun> {
  const action = options.action ?? ''
  const run = await runAction(action, { inputs: withDefaults(action, inputs), env: runnerEnv(options) })
  runs.push(run)
  return run
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex')

/** The pull request's comment of this job for one key (issue 31: one comment per job and proved PIE). */
const commentFor = (key: string) =>
  github.comments.find(
    (comment) =>
      comment.issue === PULL &&
      comment.body.startsWith(`<!-- proving-kit:pr-comment workflow=release job=prove key=${key} -->\n`),
  )

beforeAll(async () => {
  github = await startGitHubApi({ owner: OWNER, repo: REPO })
})
afterAll(async () => {
  await github.close()
})
afterEach(() => {
  for (const run of runs.splice(0)) expect(leakedSecret(run, TOKEN), 'the token leaked').toBeUndefined()
  // Every request the action made, and every answer given, was as GitHub documents it.
  expect(github.problems).toEqual([])
  expect([...github.tokens]).toEqual([TOKEN])
})

describe('root action on GitHub: release assets, PR comment, check run', () => {
  it('run twice on a pull request: one comment updated in place, assets replaced, a foreign asset kept', async () => {
    github.addRelease({ tag: 'v1.4.0', assets: [{ name: 'NOTES.txt', data: 'put there by hand' }] })
    const inputs = { 'release-tag': 'v1.4.0', 'pr-comment': 'true', 'check-run': 'true', attest: 'true' }

    const first = await prove(inputs)
    expect(first.code, first.stdout + first.stderr).toBe(0)
    const release = github.releases.find((candidate) => candidate.tag === 'v1.4.0')!
    const names = release.assets.map((asset) => asset.name)
    expect(names.sort()).toEqual([
      'NOTES.txt',
      'SHA256SUMS',
      'facts.intoto.json',
      'facts.json',
      'pie.zip',
      'proof.json',
    ])
    const asset = (name: string) => release.assets.find((candidate) => candidate.name === name)!
    expect(sha256(asset('pie.zip').data)).toBe(EXAMPLE.sha256)
    expect(asset('pie.zip').contentType).toBe('application/zip')
    // SHA256SUMS covers every other asset of ours, in sha256sum's format.
    const sums = asset('SHA256SUMS').data.toString('utf8')
    for (const name of ['pie.zip', 'proof.json', 'facts.json', 'facts.intoto.json']) {
      expect(sums).toContain(`${sha256(asset(name).data)}  ${name}\n`)
    }
    const facts = JSON.parse(asset('facts.json').data.toString('utf8'))
    expect(facts).toMatchObject({
      queryId: first.outputs['query-id'],
      status: 'DONE',
      programHash: EXAMPLE.programHash,
      sharpFactHash: first.outputs['sharp-fact-hash'],
      integrityFactHash: first.outputs['integrity-fact-hash'],
      isFactMocked: false,
      gate: { passed: true, refusals: [] },
      pie: { name: 'pie.zip', sha256: EXAMPLE.sha256 },
      emulated: true,
      onchain: [],
    })
    expect(facts.service).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
    const statement = JSON.parse(asset('facts.intoto.json').data.toString('utf8'))
    expect(statement.subject).toEqual([{ name: 'pie.zip', digest: { sha256: EXAMPLE.sha256 } }])
    expect(statement.predicate).toEqual(facts)
    expect(JSON.parse(readFileSync(first.outputs['attestation-statement']!, 'utf8'))).toEqual(statement)

    expect(first.outputs['release-url']).toBe('https://github.com/proving-kit/proving-kit/releases/tag/v1.4.0')
    const listed = JSON.parse(first.outputs['release-assets']!) as { name: string; id: number }[]
    expect(listed.map((entry) => entry.name)).toEqual([
      'pie.zip',
      'proof.json',
      'facts.json',
      'facts.intoto.json',
      'SHA256SUMS',
    ])

    // The comment: marker, verdict, hashes, a link to the run.
    expect(github.comments).toHaveLength(1)
    const comment = github.comments[0]!
    expect(comment.issue).toBe(PULL)
    // Keyed by the PIE's path (issue 31: matrix legs keep their own comments).
    expect(
      comment.body.startsWith(
        `<!-- proving-kit:pr-comment workflow=release job=prove key=${FIXTURE_PIE} -->\n### ✅ Prove: passed`,
      ),
    ).toBe(true)
    expect(comment.body).toContain(EXAMPLE.programHash)
    expect(comment.body).toContain(first.outputs['sharp-fact-hash'])
    expect(comment.body).toContain('[this run](https://github.com/proving-kit/proving-kit/actions/runs/4242)')
    expect(comment.body).toContain('Release [v1.4.0](https://github.com/proving-kit/proving-kit/releases/tag/v1.4.0)')

    // The check run: on the PR's head commit (not the merge commit), in progress, then success.
    expect(github.checkRuns).toHaveLength(1)
    const check = github.checkRuns[0]!
    expect(check).toMatchObject({
      name: `proving-kit: ${FIXTURE_PIE}`,
      headSha: HEAD_SHA,
      status: 'completed',
      conclusion: 'success',
    })
    expect(check.history).toEqual([
      { status: 'in_progress', conclusion: null },
      { status: 'completed', conclusion: 'success' },
    ])
    expect(check.output.summary).toMatch(/^### ✅ Prove: passed/)
    expect(first.summary).toContain('**GitHub**')
    expect(first.summary).toMatch(/Pull request \[#17\]\(.*\): comment posted\./)

    const firstIds = Object.fromEntries(release.assets.map((entry) => [entry.name, entry.id]))
    const before = github.requests.length
    const second = await prove(inputs)
    expect(second.code, second.stdout + second.stderr).toBe(0)
    // Same names, new uploads; the hand-made asset untouched; still one release.
    expect(github.releases.filter((candidate) => candidate.tag === 'v1.4.0')).toHaveLength(1)
    expect(release.assets.map((entry) => entry.name).sort()).toEqual(names.sort())
    for (const entry of release.assets) {
      if (entry.name === 'NOTES.txt') expect(entry.id).toBe(firstIds['NOTES.txt'])
      else expect(entry.id).not.toBe(firstIds[entry.name])
    }
    expect(JSON.parse(asset('facts.json').data.toString('utf8')).queryId).toBe(second.outputs['query-id'])
    // One comment, edited in place: it shows the second run's query.
    expect(github.comments).toHaveLength(1)
    expect(github.comments[0]!.id).toBe(comment.id)
    expect(github.comments[0]!.body).toContain(second.outputs['query-id'])
    expect(second.summary).toMatch(/Pull request \[#17\]\(.*\): comment updated\./)
    expect(github.checkRuns).toHaveLength(2)
    // What the re-run asked of GitHub: each of its five assets deleted and uploaded again, the
    // comment found and edited, a check run created and concluded.
    const operations = github.requests.slice(before).map((request) => request.operationId)
    const count = (id: string) => operations.filter((operation) => operation === id).length
    expect([
      count('repos/delete-release-asset'),
      count('repos/upload-release-asset'),
      count('issues/update-comment'),
      count('issues/create-comment'),
    ]).toEqual([5, 5, 1, 0])
    expect([count('checks/create'), count('checks/update')]).toEqual([1, 1])
    expect(
      github.requests
        .filter((request) => request.operationId === 'repos/upload-release-asset')
        .every((request) => request.origin === 'uploads'),
    ).toBe(true)
  })

  it('a tag without a release gets a draft one, found again (not duplicated) by a re-run', async () => {
    const first = await prove({ 'release-tag': 'v2.0.0-rc.1' })
    expect(first.code, first.stdout + first.stderr).toBe(0)
    const drafts = () => github.releases.filter((candidate) => candidate.tag === 'v2.0.0-rc.1')
    expect(drafts()).toHaveLength(1)
    expect(drafts()[0]!.draft).toBe(true)
    expect(drafts()[0]!.assets.map((asset) => asset.name)).toEqual([
      'pie.zip',
      'proof.json',
      'facts.json',
      'SHA256SUMS',
    ])
    const second = await prove({ 'release-tag': 'v2.0.0-rc.1' })
    expect(second.code, second.stdout + second.stderr).toBe(0)
    expect(drafts()).toHaveLength(1)
  })

  it('a refused gate attaches nothing, says why on the pull request, and concludes the check as failure', async () => {
    const before = github.releases.length
    const run = await prove({
      'mock-fact-hash': 'true',
      'release-tag': 'v9.9.9',
      'pr-comment': 'true',
      'check-run': 'true',
    })
    expect(run.code).toBe(1)
    expect(github.releases.length).toBe(before)
    expect(run.outputs['release-url']).toBeUndefined()
    const comment = github.comments.find((candidate) => candidate.issue === PULL)!
    expect(comment.body).toContain('The fact is mocked')
    expect(comment.body).toContain('Release `v9.9.9`: nothing attached, the step failed (see above).')
    expect(github.checkRuns.at(-1)).toMatchObject({ status: 'completed', conclusion: 'failure' })
  })

  it("a fork's read-only token: no comment, a notice and the summary instead; the step passes", async () => {
    github.denied = { comments: true }
    try {
      const comments = github.comments.length
      const run = await prove({ 'pr-comment': 'true' }, { fork: true })
      expect(run.code, run.stdout + run.stderr).toBe(0)
      expect(github.comments.length).toBe(comments)
      expect(run.stdout).toMatch(
        /::notice::Could not comment on pull request #17 \(a pull request from a fork gets a read-only token\); the result is in the job summary\./,
      )
      expect(run.summary).toMatch(/^### ✅ Prove: passed/)
      expect(run.summary).toContain('no comment (a pull request from a fork gets a read-only token)')
    } finally {
      github.denied = {}
    }
  })

  it('a token without checks: write fails the step before anything is submitted, naming the permission', async () => {
    github.denied = { checks: true }
    try {
      const run = await prove({ 'check-run': 'true' })
      expect(run.code).toBe(1)
      expect(run.outputs['query-id']).toBeUndefined()
      expect(run.outputs['error-reason']).toMatch(/Add `checks: write` to the job's `permissions:`/)
      expect(run.summary).toContain('nothing was submitted')
    } finally {
      github.denied = {}
    }
  })

  it('a token without contents: write fails the step after a passed gate, naming the permission; the check says so too', async () => {
    github.denied = { contents: true }
    try {
      const run = await prove({ 'release-tag': 'v3.0.0', 'check-run': 'true' })
      expect(run.code).toBe(1)
      expect(run.outputs.status).toBe('DONE')
      expect(run.outputs['error-reason']).toMatch(
        /Could not create a draft release for tag v3\.0\.0: .*Add `contents: write`/,
      )
      expect(run.summary).toMatch(/^### ✅ Prove: passed/)
      expect(github.checkRuns.at(-1)).toMatchObject({
        conclusion: 'failure',
        output: { title: run.outputs['error-reason'] },
      })
    } finally {
      github.denied = {}
    }
  })
})

describe('a step killed before it reports', () => {
  it('leaves its check run in progress; the post step concludes it cancelled', async () => {
    // A service slow enough that the step is still waiting when it is killed.
    const emulator = await startEmulator({ timing: { receivedMs: 60_000, stepMs: 60_000 } })
    try {
      const inputs = withDefaults('', {
        'api-key': 'pk_killed_github_9f8e7d',
        'base-url': emulator.url,
        'check-run': 'true',
      })
      const env = runnerEnv()
      const main = startAction('', { inputs, env })
      await main.waitFor(/Submitted: query \S+/)
      main.child.kill('SIGKILL')
      const killed = await main.done
      runs.push(killed)
      expect(killed.signal).toBe('SIGKILL')
      const check = github.checkRuns.at(-1)!
      expect(check.status).toBe('in_progress')
      expect(killed.state['check-run-id']).toBe(String(check.id))

      const post = await runPost('', killed, { inputs, env })
      runs.push(post)
      expect(post.code, post.stdout + post.stderr).toBe(0)
      expect(check).toMatchObject({ status: 'completed', conclusion: 'cancelled' })
      expect(check.output.title).toBe('The step stopped before it could report')
      expect(check.output.summary).toContain(`Query ${killed.outputs['query-id']} had been submitted.`)
    } finally {
      await emulator.close()
    }
  })
})

describe('wait/ on GitHub: the query submitted by another job', () => {
  it('gates, attaches to the release, comments and checks as the root action does', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 50, stepMs: 50 } })
    try {
      const service = { 'api-key': 'pk_wait_github_0a1b2c', 'base-url': emulator.url }
      const submitted = await prove({ ...service, wait: 'false' })
      expect(submitted.code, submitted.stdout + submitted.stderr).toBe(0)
      const queryId = submitted.outputs['query-id']!
      const run = await prove(
        { ...service, 'query-id': queryId, 'release-tag': 'v5.0.0', 'pr-comment': 'true', 'check-run': 'true' },
        { action: 'wait' },
      )
      expect(run.code, run.stdout + run.stderr).toBe(0)
      expect(run.summary).toMatch(/^### ✅ Wait: passed/)
      const release = github.releases.find((candidate) => candidate.tag === 'v5.0.0')!
      expect(release.assets.map((asset) => asset.name)).toEqual(['pie.zip', 'proof.json', 'facts.json', 'SHA256SUMS'])
      expect(JSON.parse(release.assets[2]!.data.toString('utf8'))).toMatchObject({
        queryId,
        status: 'DONE',
        service: emulator.url,
      })
      expect(run.outputs['release-url']).toMatch(/\/releases\/tag\/untagged-\d+$/)
      // The job's one comment on the pull request (the root action's, edited, when that ran first).
      const onPull = github.comments.filter((comment) => comment.issue === PULL)
      expect(onPull).toHaveLength(1)
      expect(onPull[0]!.body).toContain('Wait: passed')
      expect(github.checkRuns.at(-1)).toMatchObject({ name: `proving-kit: ${FIXTURE_PIE}`, conclusion: 'success' })
    } finally {
      await emulator.close()
    }
  })
})

describe('bucket-close/ on GitHub', () => {
  it('comments the gate on every query and concludes a check run named after the bucket', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 30 } })
    try {
      const service = { 'api-key': 'pk_bucket_github_4d5e6f', 'base-url': emulator.url }
      const run = (action: string, inputs: Record<string, string>) => prove({ ...service, ...inputs }, { action })
      const created = await run('bucket-create', {})
      expect(created.code, created.stdout + created.stderr).toBe(0)
      const bucketId = created.outputs['bucket-id']!
      const leg = await run('', { 'bucket-id': bucketId, 'bucket-job-index': '0' })
      expect(leg.code, leg.stdout + leg.stderr).toBe(0)
      const closed = await run('bucket-close', {
        'bucket-id': bucketId,
        wait: 'true',
        pie: FIXTURE_PIE,
        'pr-comment': 'true',
        'check-run': 'true',
      })
      expect(closed.code, closed.stdout + closed.stderr).toBe(0)
      expect(github.checkRuns.at(-1)).toMatchObject({
        name: `proving-kit: bucket ${bucketId}`,
        headSha: HEAD_SHA,
        conclusion: 'success',
      })
      // Its own comment, keyed by the bucket: not the one the PIE's steps edit.
      const comment = commentFor(`bucket ${bucketId}`)!
      expect(comment.body).toMatch(/\n### ✅ Close bucket: passed/)
      expect(comment.body).toContain(leg.outputs['query-id'])
      // One query is one query, not "all 1 queries".
      expect(closed.summary).toContain(
        `Bucket ${bucketId} is DONE: its one query passed the gate and its facts match the PIEs.`,
      )
    } finally {
      await emulator.close()
    }
  })
})

describe("the GitHub API stand-in judges by GitHub's description", () => {
  const call = (base: string, method: string, path: string, body?: unknown, contentType = 'application/json') =>
    fetch(`${base}${path}`, {
      method,
      headers: { authorization: `token ${TOKEN}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })

  it('refuses what GitHub does not document: a missing required field, a wrong type, an unknown route, the wrong host', async () => {
    try {
      expect(
        (await call(github.url, 'POST', `/repos/${OWNER}/${REPO}/check-runs`, { name: 'x', status: 'running' })).status,
      ).toBe(422)
      expect((await call(github.url, 'POST', `/repos/${OWNER}/${REPO}/issues/1/comments`, { body: 42 })).status).toBe(
        422,
      )
      expect((await call(github.url, 'POST', `/repos/${OWNER}/${REPO}/releases/1/attachments`, {})).status).toBe(422)
      // An upload goes to the release's upload_url host, never to the API host; and it names the asset.
      const release = github.addRelease({ tag: 'judge' })
      expect(
        (
          await call(
            github.url,
            'POST',
            `/repos/${OWNER}/${REPO}/releases/${release.id}/assets?name=a.txt`,
            'a',
            'text/plain',
          )
        ).status,
      ).toBe(422)
      expect(
        (
          await call(
            github.uploadsUrl,
            'POST',
            `/repos/${OWNER}/${REPO}/releases/${release.id}/assets`,
            'a',
            'text/plain',
          )
        ).status,
      ).toBe(422)
      expect(
        (
          await call(
            github.uploadsUrl,
            'POST',
            `/repos/${OWNER}/${REPO}/releases/${release.id}/assets?name=a.txt`,
            'a',
            'text/plain',
          )
        ).status,
      ).toBe(201)
      expect(github.problems).toEqual([
        expect.stringMatching(/checks\/create body: the required field "head_sha" is missing/),
        expect.stringMatching(/checks\/create body\.status: must be one of queued, in_progress, completed/),
        expect.stringMatching(/issues\/create-comment body\.body: must be string/),
        expect.stringMatching(/GitHub documents no such operation/),
        expect.stringMatching(
          /repos\/upload-release-asset belongs on https:\/\/uploads\.github\.com, not the api host/,
        ),
        expect.stringMatching(/the required query parameter "name" is missing/),
      ])
    } finally {
      github.problems.length = 0
    }
  })
})

// Last: it adds a comment and a check run to the shared stand-in, which the tests above count.
describe('what the action hands to GitHub is scrubbed', () => {
  it('a secret the service echoes back is masked in the PR comment and the check run, as in the job summary', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
    try {
      const apiKey = 'pk_echoed_back_9a8b7c6d'
      const planned = await fetch(`${emulator.url}/_emulator/next-query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ outcome: 'fail', reason: `the key ${apiKey} is over its quota` }),
      })
      expect(planned.status).toBe(200)
      const run = await prove({
        'api-key': apiKey,
        'base-url': emulator.url,
        'pr-comment': 'true',
        'check-run': 'true',
      })
      expect(run.code, run.stdout + run.stderr).toBe(1)
      expect(run.summary).toContain('over its quota')
      expect(run.summary).not.toContain(apiKey)
      const comment = commentFor(FIXTURE_PIE)!
      expect(comment.body).toContain('over its quota')
      expect(comment.body).not.toContain(apiKey)
      const check = github.checkRuns.at(-1)!
      expect(check.conclusion).toBe('failure')
      expect(JSON.stringify(check)).not.toContain(apiKey)
    } finally {
      await emulator.close()
    }
  })
})

// After the one above, for the same reason.
describe('a secret echoed in an encoded form (issue 31): forms × sinks', () => {
  it('is masked in the log, the outputs, the state, the job summary, the PR comment, the check run and facts.json', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
    try {
      const apiKey = 'sk_live/secret+key=0123'
      const forms = secretFormsWritten(apiKey)
      // One failure reason carrying every form, each between words.
      const reason = forms.map(([name, written]) => `${name}: ${written} ;`).join(' ')
      const planned = await fetch(`${emulator.url}/_emulator/next-query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ outcome: 'fail', reason }),
      })
      expect(planned.status).toBe(200)
      const run = await runAction('', {
        fromSource: true,
        inputs: withDefaults('', {
          'api-key': apiKey,
          'base-url': emulator.url,
          'pr-comment': 'true',
          'check-run': 'true',
          attest: 'true',
        }),
        env: runnerEnv(),
      })
      expect(run.code, run.stdout + run.stderr).toBe(1)
      const comment = commentFor(FIXTURE_PIE)!
      const sinks: [string, string][] = [
        [
          'log',
          run.stdout
            .split('\n')
            .filter((line) => !line.startsWith('::add-mask::'))
            .join('\n') + run.stderr,
        ],
        ['outputs', run.raw.output],
        ['state', run.raw.state],
        ['job summary', run.raw.summary],
        ['PR comment', comment.body],
        ['check run', JSON.stringify(github.checkRuns.at(-1))],
        ['facts.json', readFileSync(run.outputs['facts-json']!, 'utf8')],
      ]
      // The reason did reach each sink (else the table proves nothing): its words are there.
      for (const [sink, text] of sinks.filter(([sink]) => sink !== 'state')) expect(text, sink).toContain('alignment 2')
      // The table: no form is left as written in any sink, and the oracle (which decodes what is
      // left, Markdown escaping undone) recovers the key from none.
      const left = sinks.flatMap(([sink, text]) =>
        forms.filter(([, written]) => text.includes(written)).map(([form]) => `${form} in ${sink}`),
      )
      expect(left).toEqual([])
      expect(sinks.filter(([, text]) => leaksSecret(text, apiKey)).map(([sink]) => sink)).toEqual([])
      // The runner is told the forms that stand alone, for its own masking of the log.
      const masks = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('::add-mask::'))
        // A workflow command's value escapes `%` (as %25), CR and LF; the runner undoes it.
        .map((line) =>
          line.slice('::add-mask::'.length).replace(/%0D/g, '\r').replace(/%0A/g, '\n').replace(/%25/g, '%'),
        )
      expect(masks).toEqual(
        expect.arrayContaining(['sk_live%2fsecret%2bkey%3d0123', Buffer.from(apiKey).toString('base64')]),
      )
    } finally {
      await emulator.close()
    }
  })
})

describe('the check run concludes with the step (issue 31)', () => {
  it('cancelled by the post step when the step is killed after its report, during the decommitment', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
    try {
      // A decommitment slow enough that the step is still waiting for it when it is killed.
      await control(emulator.url, 'PUT', 'tasks/timing', { receivedMs: 60_000, stageMs: 60_000 })
      const inputs = withDefaults('', {
        'api-key': 'pk_killed_decommit_0123456',
        'base-url': emulator.url,
        'tasks-url': emulator.url,
        'decommit-destination-chain-id': '0xaa36a7',
        'check-run': 'true',
      })
      const env = runnerEnv()
      const before = github.checkRuns.length
      const main = startAction('', { inputs, env, fromSource: true })
      await main.waitFor(/: task [0-9a-f-]{36}/, 60_000)
      main.child.kill('SIGKILL')
      const killed = await main.done
      runs.push(killed)
      expect(killed.state.reported).toBe('true')
      const check = github.checkRuns.slice(before).at(-1)!
      expect(check.status).toBe('in_progress')

      const post = await runPost('', killed, { inputs, env, fromSource: true })
      runs.push(post)
      expect(post.code, post.stdout + post.stderr).toBe(0)
      expect(check).toMatchObject({ status: 'completed', conclusion: 'cancelled' })
    } finally {
      await emulator.close()
    }
  })

  it('a concluded check run is not concluded again by the post step', async () => {
    const inputs = withDefaults('', { 'check-run': 'true' })
    const env = runnerEnv()
    const before = github.checkRuns.length
    const main = await runAction('', { inputs, env, fromSource: true })
    runs.push(main)
    expect(main.code, main.stdout + main.stderr).toBe(0)
    expect(main.state['check-run-id']).toBe('')
    const post = await runPost('', main, { inputs, env, fromSource: true })
    runs.push(post)
    const check = github.checkRuns.slice(before).at(-1)!
    expect(check.history.at(-1)).toEqual({ status: 'completed', conclusion: 'success' })
    expect(check.history).toHaveLength(2)
  })

  it('failure when the decommitment fails after a passed gate; the title says why', async () => {
    const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
    try {
      await control(emulator.url, 'POST', 'next-task', { outcome: 'fail', error: 'Decommitment reverted (emulated)' })
      const before = github.checkRuns.length
      const run = await runAction('', {
        fromSource: true,
        inputs: withDefaults('', {
          'api-key': 'pk_check_run_0123456789',
          'base-url': emulator.url,
          'tasks-url': emulator.url,
          'decommit-destination-chain-id': '0xaa36a7',
          'check-run': 'true',
        }),
        env: runnerEnv(),
      })
      runs.push(run)
      expect(run.code, run.stdout + run.stderr).toBe(1)
      expect(run.summary).toMatch(/^### ✅ Prove: passed[\s\S]*### ❌ Decommit: failed/)
      const check = github.checkRuns.slice(before).at(-1)!
      expect(check.history).toEqual([
        { status: 'in_progress', conclusion: null },
        { status: 'completed', conclusion: 'failure' },
      ])
      expect(check.output.title).toMatch(/Decommitment reverted \(emulated\)/)
    } finally {
      await emulator.close()
    }
  })
})

describe('PR comments of a matrix job (issue 31)', () => {
  it('two legs of one job keep one comment each (keyed by external-id, or comment-key), each edited by its own re-run', async () => {
    const env = runnerEnv()
    const leg = async (key: Record<string, string>) => {
      const run = await runAction('', {
        fromSource: true,
        inputs: withDefaults('', { 'pr-comment': 'true', ...key }),
        env,
      })
      runs.push(run)
      expect(run.code, run.stdout + run.stderr).toBe(0)
      return run
    }
    const before = new Set(github.comments.map((comment) => comment.id))
    const a = await leg({ 'external-id': 'matrix-leg-a' })
    const b = await leg({ 'external-id': 'matrix-leg-b' })
    const c = await leg({ 'external-id': 'matrix-leg-b', 'comment-key': 'leg c' })
    const again = await leg({ 'external-id': 'matrix-leg-a' })
    const fresh = github.comments.filter((comment) => !before.has(comment.id))
    expect(fresh.map((comment) => comment.body.split('\n')[0])).toEqual([
      '<!-- proving-kit:pr-comment workflow=release job=prove key=matrix-leg-a -->',
      '<!-- proving-kit:pr-comment workflow=release job=prove key=matrix-leg-b -->',
      '<!-- proving-kit:pr-comment workflow=release job=prove key=leg c -->',
    ])
    expect(fresh[0]!.body).toContain(again.outputs['query-id'])
    expect(fresh[0]!.body).not.toContain(a.outputs['query-id'])
    expect(fresh[1]!.body).toContain(b.outputs['query-id'])
    expect(fresh[2]!.body).toContain(c.outputs['query-id'])
  }, 120_000)
})
