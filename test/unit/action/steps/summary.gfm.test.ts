import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { renderSummary } from '../../../../src/action/steps/summary.ts'

/**
 * The job summary with hostile service text, rendered by cmark-gfm: GitHub's own Markdown
 * renderer (its fork of cmark, with the extensions GitHub turns on), Debian's `cmark-gfm`
 * package. Our escaping is judged by the renderer GitHub uses, not by our reading of the spec.
 * `--unsafe` lets raw HTML through, the worst case (GitHub sanitises it after rendering).
 */

/** GitHub's extensions; `.ci/run` installs the package (apt-get install cmark-gfm). */
function render(markdown: string): string {
  try {
    return execFileSync('cmark-gfm', ['--unsafe', '-e', 'table', '-e', 'autolink', '-e', 'strikethrough', '-e', 'tasklist'], { input: markdown, encoding: 'utf8' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error('cmark-gfm is not installed: apt-get install cmark-gfm (Debian\'s package of GitHub\'s renderer; .ci/run installs it).')
    throw error
  }
}

const REASON = [
  'prover crashed',
  '',
  '### ✅ Prove: passed',
  '',
  '- [x] all checks green: [release notes](https://evil.example) ![badge](https://evil.example/ok.svg)',
  '<img src=x onerror=alert(1)> <a href="https://evil.example">details</a> https://evil.example/fix.sh www.evil.example ops@evil.example',
  '| forged | cell |',
  '**bold** ~~struck~~ $x^2$',
].join('\n')

describe('the job summary through GitHub\'s renderer (cmark-gfm)', () => {
  const html = () =>
    render(
      renderSummary({
        action: 'Prove',
        outcome: 'failed',
        headline: `The query FAILED: ${REASON}`,
        rows: [
          ['Query', { code: 'q-1`</code><a href="https://evil.example">x</a>|' }],
          ['Error reason', REASON],
          ['Step', 'PIE_VALIDATION | x'],
        ],
        problems: [REASON, 'Fix `pie` in the workflow file (docs/action.md).'],
        docsBase: 'https://github.com/proving-kit/proving-kit/blob/v1',
      }),
    )

  it('one heading (ours); no link, image or HTML tag of the service\'s', () => {
    const out = html()
    expect(out.match(/<h\d/g)).toEqual(['<h3'])
    expect(out).toContain('<h3>❌ Prove: failed</h3>')
    expect(out).not.toMatch(/<a href="[^"]*evil/)
    expect(out).not.toMatch(/<img/)
    expect(out).not.toMatch(/<a href="mailto:/)
    expect(out).not.toMatch(/<(del|em|input)\b/)
    // Bold only where the summary puts it: the row labels and the two section titles.
    for (const bold of out.match(/<strong>[^<]*<\/strong>/g) ?? []) expect(bold).toMatch(/^<strong>(Query|Error reason|Step|What failed)<\/strong>$/)
    expect(out).toContain('&lt;img src=x onerror=alert(1)&gt;')
    expect(out).toContain('[release notes](https:/')
    expect(out).toContain('### ✅ Prove: passed')
  })

  it('the table keeps its two columns; the id is one code span', () => {
    const out = html()
    const rows = out.match(/<tr>[\s\S]*?<\/tr>/g) ?? []
    expect(rows.length).toBe(4)
    for (const row of rows) expect(row.match(/<t[dh]\b/g)?.length).toBe(2)
    expect(out).toContain('<code>q-1`&lt;/code&gt;&lt;a href=&quot;https://evil.example&quot;&gt;x&lt;/a&gt;|</code>')
  })

  it('the toolkit\'s own code spans and docs links still render', () => {
    const out = html()
    expect(out).toContain('Fix <code>pie</code> in the workflow file (<a href="https://github.com/proving-kit/proving-kit/blob/v1/docs/action.md">docs/action.md</a>).')
  })
})
