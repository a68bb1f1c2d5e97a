import { describe, expect, it } from 'vitest'
import {
  artifactUrl,
  renderSummary,
  resumeSnippet,
  runUrl,
  subActionRef,
} from '../../../../src/action/steps/summary.ts'

describe('renderSummary', () => {
  it('a passed gate: title, headline, a table of the known rows, the run link', () => {
    const markdown = renderSummary({
      action: 'Prove',
      outcome: 'passed',
      headline: 'Query q-1 is DONE, and the facts match the PIE.',
      rows: [
        ['Query', { code: 'q-1' }],
        ['Status', 'DONE (step PROOF_VERIFICATION_ON_L2)'],
        ['Error reason', undefined],
        ['Fact mocked', 'no'],
        [
          'Artifacts',
          {
            links: [{ label: 'proof (pie.zip, proof.json)', url: 'https://github.com/o/r/actions/runs/1/artifacts/9' }],
          },
        ],
      ],
      runUrl: 'https://github.com/o/r/actions/runs/1',
    })
    expect(markdown).toMatch(/^### ✅ Prove: passed\n\nQuery q-1 is DONE, and the facts match the PIE\.\n/)
    expect(markdown).toContain('| **Query** | `q-1` |')
    expect(markdown).toContain('| **Status** | DONE (step PROOF_VERIFICATION_ON_L2) |')
    expect(markdown).not.toContain('Error reason')
    expect(markdown).toContain('[proof (pie.zip, proof.json)](https://github.com/o/r/actions/runs/1/artifacts/9)')
    expect(markdown).toContain('<sub>[this run](https://github.com/o/r/actions/runs/1) · proving-kit')
    expect(markdown).not.toContain('What failed')
  })

  it('a failure: what failed and what to do, and a snippet to copy', () => {
    const markdown = renderSummary({
      action: 'Prove',
      outcome: 'timed-out',
      headline: 'Stopped waiting after 2h; query q-9 is still running on the service.',
      rows: [['Query', { code: 'q-9' }]],
      problems: ['Timed out <after> 2h | still running'],
      nextSteps: ['Follow it with the `wait` sub-action.'],
      snippet: { caption: 'To pick it up:', yaml: resumeSnippet({}, 'q-9', 240, 'https://svc.example') },
    })
    expect(markdown).toMatch(/^### ⏱️ Prove: timed out/)
    expect(markdown).toContain('**What failed**\n\n- Timed out &lt;after&gt; 2h | still running')
    expect(markdown).toContain('**What to do**\n\n- Follow it with the `wait` sub-action.')
    expect(markdown).toContain(
      '```yaml\n- uses: ./wait\n  with:\n    query-id: q-9\n    api-key: ${{ secrets.PROVING_API_KEY }}\n    base-url: https://svc.example\n    timeout-minutes: 240\n```',
    )
  })

  it('escapes table cells: pipes and line breaks never break the table', () => {
    const markdown = renderSummary({
      action: 'Wait',
      outcome: 'failed',
      headline: 'x',
      rows: [['Error reason', 'a | b\nc']],
    })
    expect(markdown).toContain('| **Error reason** | a \\| b c |')
  })

  it('says when it ran on the emulator', () => {
    const markdown = renderSummary({ action: 'Prove', outcome: 'passed', headline: 'ok', rows: [], emulated: true })
    expect(markdown).toMatch(/^### ✅ Prove: passed \(emulator\)/)
    expect(markdown).toContain('emulated: nothing was proved or verified for real')
  })
})

describe('subActionRef', () => {
  it('names the sub-action as the workflow refers to this action', () => {
    expect(subActionRef({ GITHUB_ACTION_REPOSITORY: 'acme/proving-kit', GITHUB_ACTION_REF: 'v1' }, 'wait')).toBe(
      'acme/proving-kit/wait@v1',
    )
    expect(subActionRef({}, 'wait')).toBe('./wait')
  })
})

describe("runUrl and artifactUrl (from the runner's environment)", () => {
  const env = {
    GITHUB_SERVER_URL: 'https://ghe.example.com/',
    GITHUB_REPOSITORY: 'o/r',
    GITHUB_RUN_ID: '77',
    GITHUB_RUN_ATTEMPT: '1',
  }

  it('links to the run, and to the attempt after a re-run; artifacts belong to the run', () => {
    expect(runUrl(env)).toBe('https://ghe.example.com/o/r/actions/runs/77')
    expect(runUrl({ ...env, GITHUB_RUN_ATTEMPT: '3' })).toBe('https://ghe.example.com/o/r/actions/runs/77/attempts/3')
    expect(artifactUrl({ ...env, GITHUB_RUN_ATTEMPT: '3' }, 9)).toBe(
      'https://ghe.example.com/o/r/actions/runs/77/artifacts/9',
    )
    expect(runUrl({ GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '1' })).toBe('https://github.com/o/r/actions/runs/1')
  })

  it("gives none outside a workflow run, or with values that are not a run's", () => {
    expect(runUrl({})).toBeUndefined()
    expect(runUrl({ ...env, GITHUB_RUN_ID: '' })).toBeUndefined()
    expect(runUrl({ ...env, GITHUB_RUN_ID: '7 8' })).toBeUndefined()
    expect(runUrl({ ...env, GITHUB_REPOSITORY: 'no-owner' })).toBeUndefined()
    expect(artifactUrl({}, 9)).toBeUndefined()
  })
})
