/**
 * The root action's GitHub side (`release-tag`, `pr-comment`, `check-run`, `attest`), loaded only
 * when one of them is asked for: a check run `in_progress` from the start, then, once the step
 * has written its report, the release's assets (only when the gate passed), the pull request's
 * comment and the check run's conclusion, each carrying the job summary the step rendered (so
 * service text stays escaped as it is there), and a "GitHub" section added to the summary.
 *
 * A release or check run that cannot be written fails the step, naming the permission to add; a
 * comment that cannot be written (a fork's read-only token) is a notice, with the job summary
 * as the place the result is read.
 */
import { randomUUID } from 'node:crypto'
import { mkdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { forSummary, forSummaryCode } from '../../core/service-text.ts'
import { sha256File } from '../../pie/shared/index.ts'
import { outputFacts } from '../../pipeline/gate.ts'
import { writeSummary } from '../steps/io.ts'
import type { ProvingStep, QueryStep } from '../steps/query-step.ts'
import { STATE } from '../steps/state.ts'
import { runUrl, summaryLink, type Outcome } from '../steps/summary.ts'
import type { ActionIO } from '../types.ts'
import { type CheckConclusion, type CheckRun, concludeCheckRun, startCheckRun } from './check-run.ts'
import { upsertComment } from './comment.ts'
import { type GitHubContext, readGitHubContext } from './context.ts'
import { GitHubApiError } from './errors.ts'
import { type GitHub, gitHubClient } from './octokit.ts'
import { attachToRelease, type ReleaseFile } from './release.ts'
import { inTotoStatement, type ProvenFacts, serviceOrigin, sha256Sums } from './statement.ts'

/** The GitHub inputs; `bucket-close/` has no single PIE, so no `release-tag` or `attest`. */
export type GitHubInputs = {
  'github-token': string
  /** Which comment of the job this step's is (default: the `external-id`, else the PIE's path). */
  'comment-key'?: string | undefined
  'release-tag'?: string | undefined
  'pr-comment': boolean
  'check-run': boolean
  attest?: boolean | undefined
}

/** What is read of a step: how it ended, its summary and, for a query, what it proved. */
export type PublishedStep = ProvingStep & Partial<Pick<QueryStep, 'record' | 'pie' | 'proofJson'>>

export type PublishOptions = {
  /** The proving service the query ran on (its origin goes into facts.json). */
  serviceUrl: string | undefined
  /** Downloads proof.json from the query's metadata URL (the proving client's download). */
  download: (url: string, path: string) => Promise<void>
}

const CONCLUSIONS: Record<Outcome, CheckConclusion> = {
  passed: 'success',
  // Done without a gate (bucket-close without wait): nothing was judged.
  done: 'neutral',
  failed: 'failure',
  cancelled: 'cancelled',
  'timed-out': 'timed_out',
  submitted: 'neutral',
}

/** Why nothing was attached to the release, by how the step ended. */
const NOT_PASSED: Record<Outcome, string> = {
  passed: '',
  failed: 'the step failed (see above)',
  cancelled: 'the step was cancelled',
  'timed-out': 'the wait timed out',
  submitted: 'the result was not gated (the query is still running)',
  done: 'nothing was gated',
}

/** A link label this module wrote itself ("#17", "success"): shown as it is. */
const ownText = (text: string) => text

/** The summary's "GitHub" lines and the failures among them (each fails the step). */
type GitHubReport = { lines: string[]; failures: string[]; fail: (error: unknown) => void }

type StepEnd = NonNullable<PublishedStep['ended']>

export class GitHubPublisher {
  readonly #io: ActionIO
  readonly #inputs: GitHubInputs
  readonly #context: GitHubContext
  readonly #github: GitHub | undefined
  /** The pull request comment's key: one comment per job and key (comment.ts). */
  readonly #commentKey: string | undefined
  #check: CheckRun | undefined

  private constructor(io: ActionIO, inputs: GitHubInputs, context: GitHubContext, commentKey: string | undefined) {
    this.#io = io
    this.#inputs = inputs
    this.#context = context
    this.#commentKey = inputs['comment-key'] ?? commentKey
    const needsApi = inputs['release-tag'] !== undefined || inputs['pr-comment'] || inputs['check-run']
    this.#github = needsApi ? gitHubClient(inputs['github-token'], context) : undefined
  }

  /** `commentKey`: what tells this step's comment from the job's others when `comment-key` is not given (the PIE's path, the `external-id`). */
  static async open(io: ActionIO, inputs: GitHubInputs, commentKey?: string): Promise<GitHubPublisher> {
    return new GitHubPublisher(io, inputs, await readGitHubContext(io.env), commentKey)
  }

  /**
   * The check run, `in_progress`, before anything is paid for: a token without `checks: write`
   * fails the step here, with nothing submitted. Resolves false when it did.
   */
  async start(step: PublishedStep, subject: string): Promise<boolean> {
    if (!this.#inputs['check-run'] || !this.#github) return true
    try {
      this.#check = await startCheckRun(this.#github, this.#context, `proving-kit: ${subject}`, runUrl(this.#io.env))
      // A step killed before it reports leaves the check in progress: the post step concludes it.
      this.#io.saveState(STATE.checkRun, String(this.#check.id))
      this.#io.info(`Check run started on ${this.#context.headSha}.`)
      return true
    } catch (error) {
      const message = (error as Error).message.split('\n')[0]!
      await step.report({
        outcome: 'failed',
        headline: 'The check run could not be created; nothing was submitted.',
        problems: [message],
        // The permission is the way out only when GitHub refused it (a missing variable or an
        // outage is not fixed by permissions; the message says what it was).
        nextSteps:
          error instanceof GitHubApiError && error.forbidden
            ? ["Add `checks: write` to the job's `permissions:` (docs/github.md), or drop `check-run: true`."]
            : [],
        failure: message,
      })
      return false
    }
  }

  /** After the step's report: the release, the comment, the check run's conclusion. */
  async finish(step: PublishedStep, options: PublishOptions): Promise<void> {
    const end = step.ended
    if (!end || !step.summaryMarkdown) return
    const lines: string[] = []
    const failures: string[] = []
    const report: GitHubReport = {
      lines,
      failures,
      fail: (error: unknown) => {
        const message = error instanceof GitHubApiError ? error.shortMessage : (error as Error).message.split('\n')[0]!
        failures.push(message)
        lines.push(`- ❌ ${forSummary(message)}`)
      },
    }

    let files: ReleaseFile[] = []
    try {
      files = await this.#writeFacts(step, end.outcome === 'passed', options)
    } catch (error) {
      report.fail(error)
    }
    await this.#release(step, end, files, options, report)
    // What the GitHub API receives leaves by another road than the job summary: scrubbed the same
    // way (registered secrets, credentials in URLs), as the summary file is by appendSummary.
    await this.#comment(this.#io.scrub([step.summaryMarkdown.trimEnd(), '', ...lines].join('\n')), report)
    await this.#conclude(step, end, step.summaryMarkdown, report)
    await this.#close(lines, failures, step)
  }

  /** With `release-tag` and a passed gate: facts.json, pie.zip (and the proof) attached to the release. */
  async #release(
    step: PublishedStep,
    end: StepEnd,
    files: ReleaseFile[],
    options: PublishOptions,
    report: GitHubReport,
  ): Promise<void> {
    const tag = this.#inputs['release-tag']
    if (tag === undefined || !this.#github) return
    const shownTag = forSummaryCode(tag)
    if (end.outcome !== 'passed') {
      report.lines.push(`- Release ${shownTag}: nothing attached, ${NOT_PASSED[end.outcome]}.`)
    } else if (!step.pie) {
      report.lines.push(`- Release ${shownTag}: nothing attached, there is no single pie.zip to attach.`)
    } else if (files.length === 0) {
      // facts.json could not be written (said above): a release without it would be unverifiable.
      report.lines.push(`- Release ${shownTag}: nothing attached, facts.json could not be written.`)
    } else {
      try {
        const attached = await attachToRelease(
          this.#github,
          this.#context,
          tag,
          await this.#withProof(step, files, options),
        )
        step.outputs.set({
          'release-url': attached.url,
          'release-assets': JSON.stringify(attached.assets.map(({ name, id, size, url }) => ({ name, id, size, url }))),
        })
        const names = attached.assets.map((asset) => `${asset.name}${asset.replaced ? ' (replaced)' : ''}`).join(', ')
        const removed = attached.removed.length ? `; removed ${attached.removed.join(', ')}, an earlier run's` : ''
        report.lines.push(
          `- Release ${summaryLink(tag, attached.url)}${attached.created ? ' (draft, created by this step)' : attached.draft ? ' (draft)' : ''}: ${names}${removed}.`,
        )
        this.#io.info(`Attached to release ${tag}: ${names}${removed}.`)
      } catch (error) {
        report.fail(error)
      }
    }
  }

  /** With `pr-comment`: the summary as the pull request's comment (a fork's read-only token is a notice). */
  async #comment(body: string, report: GitHubReport): Promise<void> {
    if (!this.#inputs['pr-comment'] || !this.#github) return
    const pull = this.#context.pullNumber
    if (pull === undefined) {
      report.lines.push('- Pull request comment: none, this run is not for a pull request.')
    } else {
      try {
        const posted = await upsertComment(this.#github, this.#context, pull, body, this.#commentKey)
        // Our own label (forSummary would escape the `#` as at a line's start); the address escaped.
        report.lines.push(
          `- Pull request ${summaryLink(`#${pull}`, posted.url, ownText)}: comment ${posted.updated ? 'updated' : 'posted'}.`,
        )
      } catch (error) {
        if (error instanceof GitHubApiError && error.forbidden) {
          const why = this.#context.fromFork
            ? 'a pull request from a fork gets a read-only token'
            : 'the token lacks `pull-requests: write`'
          // Expected on every fork's pull request: a notice, not a warning, and the step goes on.
          const notice = `Could not comment on pull request #${pull} (${why}); the result is in the job summary.`
          if (this.#io.notice) this.#io.notice(notice)
          else this.#io.info(notice)
          report.lines.push(`- Pull request #${pull}: no comment (${why}); this summary is the result.`)
        } else {
          report.fail(error)
        }
      }
    }
  }

  /** With `check-run`: the check concluded as the step ended. */
  async #conclude(step: PublishedStep, end: StepEnd, summaryMarkdown: string, report: GitHubReport): Promise<void> {
    if (!this.#check || !this.#github) return
    // The check says what the step says: a release that could not be written fails both, and
    // so does a later part of the step that failed after a passed gate (the decommitment);
    // one cancelled then is `cancelled`.
    const later = step.laterFailure
    const conclusion = report.failures.length
      ? 'failure'
      : later
        ? later.cancelled
          ? 'cancelled'
          : 'failure'
        : CONCLUSIONS[end.outcome]
    const title = this.#io.scrub(report.failures[0] ?? later?.message ?? end.headline)
    try {
      const summary = this.#io.scrub([summaryMarkdown.trimEnd(), '', ...report.lines].join('\n'))
      await concludeCheckRun(this.#github, this.#context, this.#check, conclusion, title, summary)
      // Concluded: the post step has none left to conclude.
      this.#io.saveState(STATE.checkRun, '')
      report.lines.push(`- Check run: ${summaryLink(conclusion, this.#check.url, ownText)}.`)
    } catch (error) {
      report.fail(error)
    }
  }

  /** The summary's "GitHub" section; what could not be written fails the step. */
  async #close(lines: string[], failures: string[], step: PublishedStep): Promise<void> {
    if (lines.length) await writeSummary(this.#io, ['**GitHub**', '', ...lines, ''].join('\n'))
    if (failures.length) {
      if (step.outputs.get('error-reason') === undefined) step.outputs.set({ 'error-reason': failures[0] })
      this.#io.setFailed(failures.join('\n'))
    }
  }

  /** facts.json (and facts.intoto.json with `attest`), in RUNNER_TEMP; their paths as outputs. */
  async #writeFacts(step: PublishedStep, passed: boolean, options: PublishOptions): Promise<ReleaseFile[]> {
    if (this.#inputs['release-tag'] === undefined && !this.#inputs.attest) return []
    const record = step.record
    const onchain = step.outputs.get('onchain-details')
    const facts: ProvenFacts = {
      queryId: step.queryId ?? null,
      status: record?.status ?? null,
      ...outputFacts(record),
      isFactMocked: record?.isFactMocked ?? null,
      onchain: onchain ? (JSON.parse(onchain) as unknown[]) : [],
      // The refusals are the summary's problems, which may quote a service (an answer echoing
      // the key): scrubbed as the summary is, since this file is attached and attested as it is.
      gate: { passed, refusals: passed ? [] : (step.ended?.problems ?? []).map((problem) => this.#io.scrub(problem)) },
      pie: step.pie ? { name: 'pie.zip', sha256: step.pie.sha256 } : null,
      service: serviceOrigin(options.serviceUrl),
      emulated: step.options.emulated === true,
      run: runUrl(this.#io.env) ?? null,
    }
    const folder = join(this.#io.env.RUNNER_TEMP || tmpdir(), 'proving-kit', `github-${randomUUID()}`)
    await mkdir(folder, { recursive: true })
    const factsPath = join(folder, 'facts.json')
    await writeFile(factsPath, `${JSON.stringify(facts, null, 2)}\n`)
    step.outputs.set({ 'facts-json': factsPath })
    const files: ReleaseFile[] = [{ name: 'facts.json', path: factsPath, contentType: 'application/json' }]
    if (this.#inputs.attest) {
      if (facts.pie) {
        const statementPath = join(folder, 'facts.intoto.json')
        await writeFile(statementPath, `${JSON.stringify(inTotoStatement({ ...facts, pie: facts.pie }), null, 2)}\n`)
        step.outputs.set({ 'attestation-statement': statementPath })
        files.push({ name: 'facts.intoto.json', path: statementPath, contentType: 'application/json' })
      } else {
        this.#io.warning(
          "`attest` is true but there is no single pie.zip to be the statement's subject; no statement was written.",
        )
      }
    }
    return files
  }

  /** pie.zip and the query's proof.json (when the service lists one) first, SHA256SUMS last. */
  async #withProof(step: PublishedStep, facts: ReleaseFile[], options: PublishOptions): Promise<ReleaseFile[]> {
    const pie = step.pie!
    const files: ReleaseFile[] = [{ name: 'pie.zip', path: pie.zipPath, contentType: 'application/zip' }]
    // Called only with facts.json written: proof.json goes beside it.
    const folder = dirname(facts[0]!.path)
    // The one the artifact took, when `upload-artifacts` downloaded it already.
    const proof = step.proofJson?.(join(folder, 'proof.json'), options.download)
    if (proof) {
      files.push({ name: 'proof.json', path: await proof, contentType: 'application/json' })
    } else {
      this.#io.info('The query lists no proof.json among its metadata URLs; the release gets none.')
    }
    files.push(...facts)
    const sums = await Promise.all(
      files.map(async (file) => ({
        name: file.name,
        sha256: file.name === 'pie.zip' ? pie.sha256 : await sha256File(file.path),
      })),
    )
    const sumsPath = join(folder, 'SHA256SUMS')
    await writeFile(sumsPath, sha256Sums(sums))
    files.push({ name: basename(sumsPath), path: sumsPath, contentType: 'text/plain' })
    return files
  }
}

/**
 * The post step's part: the main step was stopped (killed) before it reported, so the check run
 * it started is still `in_progress`; it is concluded `cancelled` with the post step's summary. A
 * failure here only warns: the post step has nothing left to fail.
 */
export async function concludeAbandonedCheckRun(io: ActionIO, checkRunId: number, summary: string): Promise<void> {
  const token = io.getInput('github-token')
  if (!token) {
    io.warning(
      `Check run ${checkRunId} is left in progress: the post step has no \`github-token\` to conclude it with.`,
    )
    return
  }
  const context = await readGitHubContext(io.env)
  try {
    await concludeCheckRun(
      gitHubClient(token, context),
      context,
      { id: checkRunId, url: '' },
      'cancelled',
      'The step stopped before it could report',
      io.scrub(summary),
    )
  } catch (error) {
    io.warning(`Check run ${checkRunId} is left in progress: ${(error as Error).message.split('\n')[0]}`)
  }
}
