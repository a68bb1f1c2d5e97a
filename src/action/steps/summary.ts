/**
 * The job summary: what a person opening the run wants to see at a glance (did the gate pass,
 * what was proved, is the fact real or mocked, were the facts checked here) and, on failure,
 * what failed and what to do next. Rendering is pure (a model in, Markdown out) so it is tested
 * without a runner. The headline, problems and plain cells may hold what a service sent: they
 * go through `forSummary` (one line, HTML and Markdown escaped), codes through `forSummaryCode`.
 */
import { forSummary, forSummaryCell } from '../../core/service-text.ts'
import { VERSION } from '../../core/version.ts'

export type Outcome = 'passed' | 'failed' | 'submitted' | 'cancelled' | 'timed-out' | 'done'

export type SummaryLink = { label: string; url: string }

export type SummaryModel = {
  /** What the step did: "Prove", "Wait", "Pack", ... */
  action: string
  outcome: Outcome
  /** One sentence under the title. */
  headline: string
  /** The result table, in order; empty values are left out. */
  rows: [label: string, value: SummaryValue][]
  /** Markdown blocks after the table (a per-query table, ...), written as given. */
  sections?: string[] | undefined
  /** What failed (each a sentence). */
  problems?: string[] | undefined
  /** What to do (Markdown allowed). */
  nextSteps?: string[] | undefined
  /** A workflow step to copy, e.g. the `wait` sub-action with the query id. */
  snippet?: { caption: string; yaml: string } | undefined
  /** A link to this run, when the GitHub context has one. */
  runUrl?: string | undefined
  /** Where `docs/*.md` live on the web (docsBase()): every mention in the summary becomes a link there. */
  docsBase?: string | undefined
  emulated?: boolean | undefined
}

/**
 * How a step ended, as its closing report tells it: the summary's outcome, headline, problems,
 * next steps and snippet, and the failure message that fails the step (absent when it passed).
 */
export type Ending = Pick<SummaryModel, 'outcome' | 'headline' | 'problems' | 'nextSteps' | 'snippet'> & {
  failure?: string
}

/** A table cell: plain text (escaped), code (a hash, an id), a yes/no, or links. */
export type SummaryValue =
  | string
  | undefined
  | { code: string | undefined }
  | { links: SummaryLink[] }
  | { markdown: string }

const ICONS: Record<Outcome, string> = {
  passed: '✅',
  done: '✅',
  submitted: '📨',
  failed: '❌',
  cancelled: '⏹️',
  'timed-out': '⏱️',
}

const TITLES: Record<Outcome, string> = {
  passed: 'passed',
  done: 'done',
  submitted: 'submitted',
  failed: 'failed',
  cancelled: 'cancelled',
  'timed-out': 'timed out',
}

export function renderSummary(model: SummaryModel): string {
  const lines: string[] = []
  const emulated = model.emulated ? ' (emulator)' : ''
  lines.push(`### ${ICONS[model.outcome]} ${model.action}: ${TITLES[model.outcome]}${emulated}`, '')
  lines.push(forSummary(model.headline), '')
  const rows = model.rows.map(([label, value]) => [label, cell(value)] as const).filter(([, value]) => value !== '')
  if (rows.length) {
    lines.push('| | |', '|---|---|')
    for (const [label, value] of rows) lines.push(`| **${forSummaryCell(label)}** | ${value} |`)
    lines.push('')
  }
  for (const section of model.sections ?? []) lines.push(section.trimEnd(), '')
  const linked = (text: string) =>
    model.docsBase
      ? text.replace(/(?<![\w/[])docs\/[\w-]+\.md(?:#[\w-]+)?/g, (path) => `[${path}](${model.docsBase}/${path})`)
      : text
  if (model.problems?.length) {
    lines.push('**What failed**', '')
    for (const problem of model.problems) lines.push(`- ${linked(forSummary(problem))}`)
    lines.push('')
  }
  if (model.nextSteps?.length) {
    lines.push('**What to do**', '')
    for (const step of model.nextSteps) lines.push(`- ${linked(step)}`)
    lines.push('')
  }
  if (model.snippet) {
    lines.push(model.snippet.caption, '', '```yaml', model.snippet.yaml.trimEnd(), '```', '')
  }
  const footer = [`proving-kit ${VERSION}`]
  if (model.runUrl) footer.unshift(summaryLink('this run', model.runUrl))
  if (model.emulated) footer.push('emulated: nothing was proved or verified for real')
  lines.push(`<sub>${footer.join(' · ')}</sub>`, '')
  return lines.join('\n')
}

function cell(value: SummaryValue): string {
  if (value === undefined) return ''
  if (typeof value === 'string') return forSummaryCell(value)
  if ('code' in value) return forSummaryCell(value.code ?? '', 'code')
  if ('links' in value) return value.links.map((link) => summaryLink(link.label, link.url, forSummaryCell)).join('<br>')
  return value.markdown.replace(/\|/g, '\\|').replace(/\r?\n/g, '<br>')
}

/**
 * A link in the summary (and in what carries it: the PR comment, the check run), the one way
 * every link is written: the label escaped (`forSummary`, or `forSummaryCell` in a table), the
 * target an http(s) URL whose characters that would end or bend the link (parentheses, which
 * encodeURIComponent leaves as they are, brackets, angle brackets, quotes, backslash, backtick,
 * pipe, whitespace) are percent-encoded. A target that is not http(s) gives the label alone.
 */
export function summaryLink(label: string, url: string, escapeLabel: (text: string) => string = forSummary): string {
  const parsed = URL.parse(url)
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) return escapeLabel(label)
  const target = url.replace(/[()[\]<>"'`\\|\s]/g, (character) =>
    encodeURIComponent(character) === character
      ? `%${character.charCodeAt(0).toString(16).toUpperCase()}`
      : encodeURIComponent(character),
  )
  return `[${escapeLabel(label)}](${target})`
}

export const yesNo = (value: boolean | null | undefined): string | undefined =>
  value === true ? 'yes' : value === false ? 'no' : undefined

/**
 * The `uses:` of one of this repository's sub-actions as the running workflow refers to it:
 * `owner/repo/wait@ref` when run from a published ref, `./wait` when run with `uses: ./`.
 */
export function subActionRef(env: Record<string, string | undefined>, name: string): string {
  const repository = env.GITHUB_ACTION_REPOSITORY
  const ref = env.GITHUB_ACTION_REF
  if (repository && ref) return `${repository}/${name}@${ref}`
  return `./${name}`
}

/**
 * A link to the running workflow run (its attempt, after a re-run), from the variables the
 * runner sets: the same ones @actions/github's `context` reads, without loading that package
 * (Octokit and a second undici, a megabyte of bundle) into every step that writes a summary.
 */
/**
 * The web address of the action's own repository at the ref the workflow named (the runner's
 * GITHUB_ACTION_REPOSITORY and GITHUB_ACTION_REF), where a summary's `docs/*.md` mentions point:
 * a person reading a failed job's summary can open them. For a local `uses: ./` (no action
 * repository), the published repository at this version's own release tag (`v0.1.0`): every
 * release has it (the release workflow tags `vX.Y.Z` from package.json), it describes exactly the
 * code that wrote the summary, and it does not move. (The major tag of 0.x, `v0`, is not the
 * `@v1` the docs name, and a major tag moves on to later releases.)
 */
export function docsBase(env: Record<string, string | undefined>): string {
  const server = (env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '')
  const repository =
    env.GITHUB_ACTION_REPOSITORY && /^[^/\s]+\/[^/\s]+$/.test(env.GITHUB_ACTION_REPOSITORY)
      ? env.GITHUB_ACTION_REPOSITORY
      : PUBLISHED_REPOSITORY
  const ref =
    env.GITHUB_ACTION_REPOSITORY && env.GITHUB_ACTION_REF && /^[\w./-]+$/.test(env.GITHUB_ACTION_REF)
      ? env.GITHUB_ACTION_REF
      : `v${VERSION}`
  return `${server}/${repository}/blob/${ref}`
}

/** Where the action is published (the docs' `uses: proving-kit/proving-kit@v1`). */
export const PUBLISHED_REPOSITORY = 'proving-kit/proving-kit'

export function runUrl(env: Record<string, string | undefined>): string | undefined {
  const repository = env.GITHUB_REPOSITORY
  const runId = env.GITHUB_RUN_ID
  if (!repository || !/^[^/\s]+\/[^/\s]+$/.test(repository) || !runId || !/^\d+$/.test(runId)) return undefined
  const server = (env.GITHUB_SERVER_URL || 'https://github.com').replace(/\/+$/, '')
  const attempt = Number(env.GITHUB_RUN_ATTEMPT)
  return `${server}/${repository}/actions/runs/${runId}${Number.isInteger(attempt) && attempt > 1 ? `/attempts/${attempt}` : ''}`
}

/** An artifact's page in the run (artifacts belong to the run, not to one attempt). */
export function artifactUrl(env: Record<string, string | undefined>, id: number): string | undefined {
  const run = runUrl(env)
  return run ? `${run.replace(/\/attempts\/\d+$/, '')}/artifacts/${id}` : undefined
}

/** A `wait` step resuming on a query: what the summary offers after a timeout or a cancellation. */
export function resumeSnippet(
  env: Record<string, string | undefined>,
  queryId: string,
  timeoutMinutes?: number,
  baseUrl?: string,
  expectedResult?: string,
): string {
  return [
    `- uses: ${subActionRef(env, 'wait')}`,
    '  with:',
    `    query-id: ${queryId}`,
    '    api-key: ${{ secrets.PROVING_API_KEY }}',
    `    base-url: ${baseUrl ?? '${{ vars.PROVING_BASE_URL }}'}`,
    ...(timeoutMinutes === undefined ? [] : [`    timeout-minutes: ${timeoutMinutes}`]),
    // What the query was asked for: the resumed gate expects it, not any proof.
    ...(expectedResult === undefined ? [] : [`    expected-result: ${expectedResult}`]),
  ].join('\n')
}
