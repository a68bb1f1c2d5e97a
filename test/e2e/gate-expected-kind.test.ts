import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { run as runBucketClose } from '../../src/action/actions/bucket-close.ts'
import { run as runMain } from '../../src/action/actions/main.ts'
import { run as runPost } from '../../src/action/actions/post.ts'
import { run as runRetry } from '../../src/action/actions/retry.ts'
import { run as runVerifyProof } from '../../src/action/actions/verify-proof.ts'
import { run as runWait } from '../../src/action/actions/wait.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { EXAMPLE, EXAMPLE_PIE, generatedPie } from '../helpers/example-pie.ts'
import { type GitHubApiStandIn, startGitHubApi } from '../helpers/github-api.ts'
import { control, fakeIO } from '../helpers/run-action.ts'

/**
 * Issue 31: the expected result comes from the request, never from the answer. A hostile
 * service answers a proof with a DONE record that says `result: "TRACE_GENERATION"`, both facts
 * null and `isFactMocked` false (the program hash echoed): before, every host read the kind
 * from the record, found a trace with nothing to check, and passed. Now `proving prove --wait`,
 * `proving query wait`, the root action (with `expected-program-hash`), the `wait` action and
 * `bucket close --wait` / `bucket-close` refuse it, naming what was asked and what the record
 * claims; a trace that was asked for (`submit --result`, `--expect-result`, `expected-result`,
 * the journal's record) still passes.
 */
const API_KEY = 'pk_e2e_KIND_7c21d0e4'
let emulator: RunningEmulator
// Each case stages the next query's record and proves the same PIE again: reuse would follow an
// earlier DONE query instead of submitting the staged one (issue 32), so it is off here.
const env = (extra: Record<string, string> = {}) => ({
  PROVING_BASE_URL: emulator.url,
  PROVING_API_KEY: API_KEY,
  PROVING_REUSE: 'never',
  ...extra,
})
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url, reuse: 'never' })

/** The switched-off gate: a proof's record that says it is a trace, with nothing to check. */
const SAYS_TRACE = {
  result: 'TRACE_GENERATION',
  step: 'TRACE_GENERATION',
  programHash: EXAMPLE.programHash,
  sharpFactHash: null,
  integrityFactHash: null,
  isFactMocked: false,
}
const ASKED_L2_SAYS_TRACE =
  'The query was asked for PROOF_VERIFICATION_ON_L2, but its record says its result is "TRACE_GENERATION"'
const ASKED_PROOF_SAYS_TRACE =
  'The query was asked for a proof (PROOF_GENERATION or PROOF_VERIFICATION_ON_*), but its record says its result is "TRACE_GENERATION"'

async function nextQuerySays(record: Record<string, unknown>): Promise<void> {
  await control(emulator.url, 'POST', 'next-query', { outcome: 'done', record })
}

/** A query of the example PIE, DONE, its id. */
async function provedQuery(args: string[] = []): Promise<string> {
  const proved = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json', ...args], { env: env() })
  expect(proved.code, proved.stderr).toBe(0)
  return JSON.parse(proved.stdout).provingQuery.id as string
}

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 }, apiKeys: [API_KEY] })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(async () => {
  await control(emulator.url, 'DELETE', 'faults')
  const { nextQueries } = (await control(emulator.url, 'GET', 'state')) as { nextQueries: unknown[] }
  expect(nextQueries).toEqual([])
})

describe('the CLI', () => {
  it('prove --wait refuses a DONE proof whose record says TRACE_GENERATION with null facts (exit 1), naming both kinds', async () => {
    await nextQuerySays(SAYS_TRACE)
    const result = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env() })
    expect(result.code, result.stderr).toBe(1)
    // With --json the refusals are the notes of the one `{ "error": … }` object on stderr (README).
    expect(result.stderr).toContain(JSON.stringify(ASKED_L2_SAYS_TRACE).slice(1, -1))
    expect(result.stderr).toContain('its step is \\"TRACE_GENERATION\\", a trace, not a proof')
    // The facts are checked (a proof was asked for), and their absence is refused too.
    expect(result.stderr).not.toContain('No fact to check')
    expect(JSON.parse(result.stdout).gate.ok).toBe(false)
  })

  it('prove --result (general submission) expects what --result asked for', async () => {
    await nextQuerySays({ ...SAYS_TRACE, step: null })
    const result = await runCli(['prove', EXAMPLE_PIE, '--result', 'PROOF_VERIFICATION_ON_L1', '--wait'], {
      env: env(),
    })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stderr).toContain(
      'gate refused: The query was asked for PROOF_VERIFICATION_ON_L1, but its record says its result is "TRACE_GENERATION"',
    )
    expect(result.stderr).toContain('no sharpFactHash (null) for a DONE PROOF_VERIFICATION_ON_L1 result')
  })

  it('submit --result TRACE_GENERATION expects a trace: it passes, and a record claiming a proof is refused', async () => {
    const trace = await runCli(
      ['submit', EXAMPLE_PIE, '--result', 'TRACE_GENERATION', '--external-id', 'trace-1', '--wait'],
      { env: env() },
    )
    expect(trace.code, trace.stderr).toBe(0)
    expect(trace.stderr).toContain('No fact to check: a TRACE_GENERATION query generates a trace, not a proof.')
    await nextQuerySays({ result: 'PROOF_GENERATION' })
    const claimed = await runCli(
      ['submit', EXAMPLE_PIE, '--result', 'TRACE_GENERATION', '--external-id', 'trace-2', '--wait'],
      { env: env() },
    )
    expect(claimed.code, claimed.stderr).toBe(1)
    expect(claimed.stderr).toContain(
      'gate refused: The query was asked for TRACE_GENERATION, but its record says its result is "PROOF_GENERATION"',
    )
  })

  it("query wait expects a proof unless told: --expect-result, else the journal's record, else any proof", async () => {
    const traced = await runCli(
      ['submit', EXAMPLE_PIE, '--result', 'TRACE_GENERATION', '--external-id', 'trace-3', '--wait', '--json'],
      { env: env() },
    )
    expect(traced.code, traced.stderr).toBe(0)
    const id = JSON.parse(traced.stdout).provingQuery.id as string

    const asProof = await runCli(['query', 'wait', id], { env: env() })
    expect(asProof.code, asProof.stderr).toBe(1)
    expect(asProof.stderr).toContain(`gate refused: ${ASKED_PROOF_SAYS_TRACE}`)

    const told = await runCli(['query', 'wait', id, '--expect-result', 'TRACE_GENERATION'], { env: env() })
    expect(told.code, told.stderr).toBe(0)

    // An entry an interrupted run left in the journal says what was asked for.
    const journal = mkdtempSync(join(tmpdir(), 'kind-journal-'))
    mkdirSync(journal, { recursive: true })
    const entry = {
      version: 1,
      key: 'a'.repeat(32),
      startedAt: Date.now(),
      state: 'submitted',
      pieDigest: EXAMPLE.sha256,
      service: new URL(emulator.url).origin,
      endpoint: 'general',
      params: { result: 'TRACE_GENERATION' },
      provingQueryId: id,
    }
    writeFileSync(join(journal, `${'a'.repeat(32)}.json`), JSON.stringify(entry))
    const recorded = await runCli(['query', 'wait', id], { env: env({ PROVING_JOURNAL_DIR: journal }) })
    expect(recorded.code, recorded.stderr).toBe(0)
    expect(recorded.stderr).toContain(
      `Expecting TRACE_GENERATION: what the submission journal recorded for query ${id}.`,
    )

    // A proof, and a record that claims a trace for it.
    const proofId = await provedQuery()
    expect((await runCli(['query', 'wait', proofId], { env: env() })).code).toBe(0)
    await control(emulator.url, 'POST', `queries/${proofId}/record`, SAYS_TRACE)
    const switched = await runCli(['query', 'wait', proofId], { env: env() })
    expect(switched.code, switched.stderr).toBe(1)
    expect(switched.stderr).toContain(ASKED_PROOF_SAYS_TRACE)
    // Told it is a trace, it passes as a trace (what was asked decides, and the user says so).
    expect((await runCli(['query', 'wait', proofId, '--expect-result', 'TRACE_GENERATION'], { env: env() })).code).toBe(
      0,
    )
  })

  it('the query wait that resumes prove, submit or verify-proof expects what they asked for, not any proof', async () => {
    // Without --wait, the command to follow the query carries what was asked.
    const submitted = await runCli(
      ['prove', EXAMPLE_PIE, '--dedup-id', 'resume-kind-1', '--result', 'PROOF_VERIFICATION_ON_L1'],
      { env: env() },
    )
    expect(submitted.code, submitted.stderr).toBe(0)
    expect(submitted.stdout).toMatch(
      /Follow it with: proving query wait \S+ --expect-result PROOF_VERIFICATION_ON_L1\n/,
    )

    // A wait that times out says how to resume the same gate.
    await control(emulator.url, 'PUT', 'timing', { stepMs: 3_600_000 })
    let timedOut
    try {
      timedOut = await runCli(['prove', EXAMPLE_PIE, '--wait', '--timeout', '1s'], { env: env() })
    } finally {
      await control(emulator.url, 'PUT', 'timing', { stepMs: 20 })
    }
    expect(timedOut.code, timedOut.stderr).toBe(4)
    const resume = /Resume with: (proving query wait (\S+) --expect-result PROOF_VERIFICATION_ON_L2)$/m.exec(
      timedOut.stderr,
    )
    expect(resume, timedOut.stderr).not.toBeNull()
    const id = resume![2]!
    // The service then calls the L2 verification asked for a mere proof generation, with its facts.
    // DONE now, or already (on a loaded machine the emulator may have finished it first: 409).
    await control(emulator.url, 'POST', `queries/${id}/complete`).catch((error: Error) => {
      if (!/409 .*already DONE/.test(error.message)) throw error
    })
    await control(emulator.url, 'POST', `queries/${id}/record`, { result: 'PROOF_GENERATION' })
    // "Any proof" would pass it; the resumed gate does not.
    expect((await runCli(['query', 'wait', id], { env: env() })).code).toBe(0)
    const resumed = await runCli(resume![1]!.split(' ').slice(1), { env: env() })
    expect(resumed.code, resumed.stderr).toBe(1)
    expect(resumed.stderr).toContain(
      'The query was asked for PROOF_VERIFICATION_ON_L2, but its record says its result is "PROOF_GENERATION"',
    )
  })

  it('a batch refuses the PIE whose record says TRACE_GENERATION, and passes the other', async () => {
    const other = (await generatedPie({ seed: 9 })).zip
    await nextQuerySays(SAYS_TRACE)
    const result = await runCli(['prove', EXAMPLE_PIE, other, '--wait', '--concurrency', '1'], { env: env() })
    expect(result.code, result.stderr).toBe(1)
    expect(result.stdout).toMatch(/1 of 2 succeeded/)
    expect(result.stderr).toContain(ASKED_L2_SAYS_TRACE)
  })

  it('verify-proof --wait expects PROOF_VERIFICATION_ON_L2; query retry --wait a proof', async () => {
    const proof = await proofFile()
    await nextQuerySays({ ...SAYS_TRACE, step: null })
    const verified = await runCli(
      ['verify-proof', proof, '--stone-version', 'stone6', '--memory-verification', 'relaxed', '--wait'],
      { env: env() },
    )
    expect(verified.code, verified.stderr).toBe(1)
    expect(verified.stderr).toContain(`gate refused: ${ASKED_L2_SAYS_TRACE}`)

    // A FAILED query, retried: its new run's record says it is a trace.
    await control(emulator.url, 'POST', 'next-query', {
      outcome: 'fail',
      retriable: true,
      reason: 'worker lost',
      record: SAYS_TRACE,
    })
    const failed = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env() })
    expect(failed.code).toBe(1)
    const id = JSON.parse(failed.stdout).provingQuery.id as string
    const retried = await runCli(['query', 'retry', id, '--wait'], { env: env() })
    expect(retried.code, retried.stderr).toBe(1)
    expect(retried.stderr).toContain(`gate refused: ${ASKED_PROOF_SAYS_TRACE}`)
  })

  it('query wait --expect-result is checked strictly, naming the flag', async () => {
    const bad = await runCli(['query', 'wait', 'some-id', '--expect-result', 'proof'], { env: env() })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/--expect-result must be one of TRACE_GENERATION, PROOF_GENERATION/)
  })
})

/** A proof.json the emulator wrote for a proof of the example (what verify-proof submits). */
async function proofFile(): Promise<string> {
  const proved = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env() })
  expect(proved.code, proved.stderr).toBe(0)
  const url = (JSON.parse(proved.stdout).metadataUrls as string[]).find((link) => link.endsWith('/proof.json'))!
  const path = join(mkdtempSync(join(tmpdir(), 'kind-proof-')), 'proof.json')
  writeFileSync(path, Buffer.from(await (await fetch(url)).arrayBuffer()))
  return path
}

describe('the actions', () => {
  it('verify-proof and retry: the switched-off record fails the step', async () => {
    const proof = await proofFile()
    await nextQuerySays({ ...SAYS_TRACE, step: null })
    const verified = fakeIO({ proof, ...service() })
    await runVerifyProof(verified)
    expect(verified.failed).toContain(ASKED_L2_SAYS_TRACE)

    await control(emulator.url, 'POST', 'next-query', {
      outcome: 'fail',
      retriable: true,
      reason: 'worker lost',
      record: SAYS_TRACE,
    })
    const failed = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env() })
    const retried = fakeIO({ 'query-id': JSON.parse(failed.stdout).provingQuery.id, ...service() })
    await runRetry(retried)
    expect(retried.failed).toContain(ASKED_PROOF_SAYS_TRACE)
  })

  it('the wait step that follows or resumes the root action expects what it asked for, not any proof', async () => {
    const submitted = fakeIO({ pie: EXAMPLE_PIE, ...service(), wait: 'false' })
    await runMain(submitted)
    expect(submitted.failed).toBeUndefined()
    const id = submitted.outputs['query-id']!
    expect(submitted.summary).toContain('its `query-id` and `expected-result: PROOF_VERIFICATION_ON_L2`')
    // Killed before it reported: the post step's snippet carries it.
    const post = fakeIO({}, { state: { ...submitted.state, reported: '' } })
    await runPost(post)
    expect(post.summary).toContain(`    query-id: ${id}\n`)
    expect(post.summary).toContain('    expected-result: PROOF_VERIFICATION_ON_L2\n')
    // The service then calls the L2 verification asked for a mere proof generation, with its facts.
    // DONE now, or already (on a loaded machine the emulator may have finished it first: 409).
    await control(emulator.url, 'POST', `queries/${id}/complete`).catch((error: Error) => {
      if (!/409 .*already DONE/.test(error.message)) throw error
    })
    await control(emulator.url, 'POST', `queries/${id}/record`, { result: 'PROOF_GENERATION' })
    const anyProof = fakeIO({ 'query-id': id, ...service() })
    await runWait(anyProof)
    expect(anyProof.failed).toBeUndefined()
    const resumed = fakeIO({ 'query-id': id, ...service(), 'expected-result': 'PROOF_VERIFICATION_ON_L2' })
    await runWait(resumed)
    expect(resumed.failed).toContain(
      'The query was asked for PROOF_VERIFICATION_ON_L2, but its record says its result is "PROOF_GENERATION"',
    )
  })

  it('root action with several PIEs: the row whose record says TRACE_GENERATION fails', async () => {
    const other = (await generatedPie({ seed: 9 })).zip
    await nextQuerySays(SAYS_TRACE)
    const io = fakeIO({ pie: `${EXAMPLE_PIE}\n${other}`, ...service(), concurrency: '1' })
    await runMain(io)
    expect(io.failed).toBeDefined()
    const rows = JSON.parse(io.outputs.results!) as { passed: boolean; error: string | null }[]
    expect(rows.map((row) => row.passed).sort()).toEqual([false, true])
    expect(rows.find((row) => !row.passed)!.error).toContain(ASKED_L2_SAYS_TRACE)
  })

  it('root action: the switched-off record fails the step, even with expected-program-hash matching its echo', async () => {
    await nextQuerySays(SAYS_TRACE)
    const io = fakeIO({ pie: EXAMPLE_PIE, ...service(), 'expected-program-hash': EXAMPLE.programHash })
    await runMain(io)
    expect(io.failed).toContain(ASKED_L2_SAYS_TRACE)
    expect(io.outputs).toMatchObject({ status: 'DONE', 'facts-verified': 'false' })
    expect(io.summary).toContain('neither sharpFactHash nor integrityFactHash')
  })

  it('root action with release-tag and check-run: the switched-off record attaches nothing and concludes the check as failure', async () => {
    const github: GitHubApiStandIn = await startGitHubApi({ owner: 'proving-kit', repo: 'proving-kit' })
    try {
      await nextQuerySays(SAYS_TRACE)
      const env = {
        GITHUB_API_URL: github.url,
        GITHUB_REPOSITORY: 'proving-kit/proving-kit',
        GITHUB_SHA: 'a'.repeat(40),
        GITHUB_JOB: 'prove',
        GITHUB_WORKFLOW: 'release',
        GITHUB_EVENT_NAME: 'push',
      }
      const io = fakeIO(
        {
          pie: EXAMPLE_PIE,
          ...service(),
          'github-token': 'ghs_kind_token_0123',
          'release-tag': 'v31.0.0',
          'check-run': 'true',
        },
        { env },
      )
      await runMain(io)
      expect(io.failed).toContain(ASKED_L2_SAYS_TRACE)
      // Before, pie.zip, facts.json ("gate": {"passed": true}, both facts null) and SHA256SUMS went to the release.
      expect(github.releases.flatMap((release) => release.assets.map((asset) => asset.name))).toEqual([])
      expect(io.outputs['release-url']).toBeUndefined()
      expect(github.checkRuns.at(-1)).toMatchObject({ status: 'completed', conclusion: 'failure' })
      expect(github.problems).toEqual([])
    } finally {
      await github.close()
    }
  })

  it('wait action: a proof expected by default; `expected-result` names the kind; a bad value is refused by name', async () => {
    const id = await provedQuery()
    await control(emulator.url, 'POST', `queries/${id}/record`, SAYS_TRACE)
    const refused = fakeIO({ 'query-id': id, ...service(), pie: EXAMPLE_PIE })
    await runWait(refused)
    expect(refused.failed).toContain(ASKED_PROOF_SAYS_TRACE)

    const told = fakeIO({ 'query-id': id, ...service(), 'expected-result': 'TRACE_GENERATION' })
    await runWait(told)
    expect(told.failed).toBeUndefined()

    const l1 = fakeIO({ 'query-id': id, ...service(), 'expected-result': 'PROOF_VERIFICATION_ON_L1' })
    await runWait(l1)
    expect(l1.failed).toContain(
      'The query was asked for PROOF_VERIFICATION_ON_L1, but its record says its result is "TRACE_GENERATION"',
    )

    const bad = fakeIO({ 'query-id': id, ...service(), 'expected-result': 'a proof' })
    await runWait(bad)
    expect(bad.failed).toMatch(/`expected-result`.*must be one of TRACE_GENERATION/)
  })
})

describe('buckets: every query a proof, and the queries the caller expected', () => {
  /** A closed bucket holding `count` DONE queries of the example PIE (each submitted anew). */
  async function closedBucket(count: number): Promise<{ bucketId: string; queryIds: string[] }> {
    const created = await runCli(['bucket', 'create', '--json'], { env: env() })
    expect(created.code, created.stderr).toBe(0)
    const bucketId = JSON.parse(created.stdout).provingBucket.id as string
    const queryIds: string[] = []
    for (let index = 0; index < count; index++) {
      const proved = await runCli(
        ['prove', EXAMPLE_PIE, '--bucket-id', bucketId, '--external-id', `leg-${index}`, '--quiet'],
        { env: env() },
      )
      expect(proved.code, proved.stderr).toBe(0)
      queryIds.push(proved.stdout.trim())
    }
    const closed = await runCli(['bucket', 'close', bucketId, '--wait', '--expect-count', String(count)], {
      env: env(),
    })
    expect(closed.code, closed.stdout + closed.stderr).toBe(0)
    return { bucketId, queryIds }
  }

  it('bucket close --wait refuses a query whose record says TRACE_GENERATION (no --pie), and bucket-close too', async () => {
    const { bucketId, queryIds } = await closedBucket(1)
    await control(emulator.url, 'POST', `queries/${queryIds[0]}/record`, SAYS_TRACE)
    const cli = await runCli(['bucket', 'close', bucketId, '--wait'], { env: env() })
    expect(cli.code, cli.stderr).toBe(1)
    expect(cli.stdout).toContain(
      `Query #0 (${queryIds[0]}): it was asked for a proof (PROOF_GENERATION or PROOF_VERIFICATION_ON_*), but its record says its result is "TRACE_GENERATION"`,
    )

    const io = fakeIO({ 'bucket-id': bucketId, ...service(), wait: 'true' })
    await runBucketClose(io)
    expect(io.failed).toContain(
      'it was asked for a proof (PROOF_GENERATION or PROOF_VERIFICATION_ON_*), but its record says its result is "TRACE_GENERATION"',
    )
    expect(io.outputs['gate-passed']).toBe('false')
  })

  it('--expect-query / --expect-count: a missing or unexpected query is refused, naming it', async () => {
    const { bucketId, queryIds } = await closedBucket(2)
    const [first, second] = queryIds as [string, string]
    const both = await runCli(
      ['bucket', 'close', bucketId, '--wait', '--expect-query', first, '--expect-query', second],
      { env: env() },
    )
    expect(both.code, both.stdout + both.stderr).toBe(0)

    // A leg that never submitted: its id is expected, and the bucket does not list it.
    const missing = await runCli(
      [
        'bucket',
        'close',
        bucketId,
        '--wait',
        '--json',
        '--expect-query',
        first,
        '--expect-query',
        second,
        '--expect-query',
        'never-submitted',
      ],
      { env: env() },
    )
    expect(missing.code).toBe(1)
    expect(JSON.parse(missing.stdout).refusals).toEqual([
      `Bucket ${bucketId} does not list the expected query never-submitted: a job's query is missing (it never submitted, or the listing left it out).`,
    ])

    // A query no job of this run submitted: not read, named.
    const unexpected = await runCli(['bucket', 'close', bucketId, '--wait', '--json', '--expect-query', first], {
      env: env(),
    })
    expect(unexpected.code).toBe(1)
    expect(JSON.parse(unexpected.stdout)).toMatchObject({
      ok: false,
      queries: [],
      refusals: [`Bucket ${bucketId} lists a query that no job was expected to submit: ${second}.`],
    })

    const fewer = await runCli(['bucket', 'close', bucketId, '--wait', '--expect-count', '3'], { env: env() })
    expect(fewer.code).toBe(1)
    expect(fewer.stdout).toContain(`Bucket ${bucketId} lists 2 queries, not the 3 expected: a job's query is missing`)
  })

  it('bucket-close `expected-queries`: ids (a JSON array or a list) or a count; a missing one fails the step naming it', async () => {
    const { bucketId, queryIds } = await closedBucket(2)
    const passed = fakeIO({
      'bucket-id': bucketId,
      ...service(),
      wait: 'true',
      'expected-queries': JSON.stringify(queryIds),
    })
    await runBucketClose(passed)
    expect(passed.failed).toBeUndefined()
    expect(passed.outputs['gate-passed']).toBe('true')

    const counted = fakeIO({ 'bucket-id': bucketId, ...service(), wait: 'true', 'expected-queries': '2' })
    await runBucketClose(counted)
    expect(counted.failed).toBeUndefined()

    const missing = fakeIO({
      'bucket-id': bucketId,
      ...service(),
      wait: 'true',
      'expected-queries': `${queryIds.join('\n')}\nleg-that-never-ran`,
    })
    await runBucketClose(missing)
    expect(missing.failed).toContain(`Bucket ${bucketId} does not list the expected query leg-that-never-ran`)
    expect(missing.outputs['gate-passed']).toBe('false')
  })

  it('user input is checked strictly before anything is closed', async () => {
    const both = await runCli(['bucket', 'close', 'b-1', '--wait', '--expect-query', 'q-1', '--expect-count', '1'], {
      env: env(),
    })
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('Give --expect-query or --expect-count, not both')
    const zero = await runCli(['bucket', 'close', 'b-1', '--wait', '--expect-count', '0'], { env: env() })
    expect(zero.code).toBe(2)
    expect(zero.stderr).toMatch(/--expect-count/)
    const twice = await runCli(['bucket', 'close', 'b-1', '--wait', '--expect-query', 'q-1', '--expect-query', 'q-1'], {
      env: env(),
    })
    expect(twice.code).toBe(2)
    expect(twice.stderr).toContain('--expect-query q-1 is given twice')
    const slash = await runCli(['bucket', 'close', 'b-1', '--wait', '--expect-query', 'a/b'], { env: env() })
    expect(slash.code).toBe(2)
    // Every problem at once, on one line, as `expected-queries` lists them.
    const several = await runCli(
      [
        'bucket',
        'close',
        'b-1',
        '--wait',
        '--expect-query',
        'a/b',
        '--expect-query',
        'q-1',
        '--expect-query',
        'c?d',
        '--expect-query',
        'q-1',
      ],
      { env: env() },
    )
    expect(several.code).toBe(2)
    expect(several.stderr.trim().split('\n')).toHaveLength(1)
    expect(several.stderr).toContain('--expect-query "a/b", "c?d" are not query ids')
    expect(several.stderr).toContain('q-1 is given twice')
    const noWait = await runCli(['bucket', 'close', 'b-1', '--expect-count', '2'], { env: env() })
    expect(noWait.code).toBe(2)
    expect(noWait.stderr).toContain('--expect-count is for the gate of --wait')

    for (const [value, message] of [
      ['0', 'must be a whole number from 1'],
      ['-2', 'must be a whole number from 1'],
      ['q-1, q-1', 'names q-1 more than once'],
      ['q-1 a/b', 'not a query id'],
      ['["q-1", 2]', 'not a JSON array of query ids'],
      [' , ', 'names no query'],
    ] as const) {
      const io = fakeIO({ 'bucket-id': 'b-1', ...service(), wait: 'true', 'expected-queries': value })
      await runBucketClose(io)
      expect(io.failed, value).toContain('`expected-queries`')
      expect(io.failed, value).toContain(message)
    }
    const io = fakeIO({ 'bucket-id': 'b-1', ...service(), 'expected-queries': '2' })
    await runBucketClose(io)
    expect(io.failed).toContain('`expected-queries` is for the gate of `wait: true`')
  })
})
