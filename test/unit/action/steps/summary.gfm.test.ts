import { execFileSync, spawnSync } from 'node:child_process'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { describe, expect, it } from 'vitest'
import { renderSummary, summaryLink } from '../../../../src/action/steps/summary.ts'

/**
 * The job summary with hostile service text, rendered by two GitHub-Flavored Markdown
 * implementations neither of which is ours:
 * - micromark with its GFM extension (npm; follows the CommonMark and GFM specifications, checked
 *   against their example suites), always here, so `npm test` judges the escaping on any machine;
 * - cmark-gfm, GitHub's own renderer (its fork of cmark, with the extensions GitHub turns on),
 *   Debian's `cmark-gfm` package, which `.ci/run` installs. On a machine without it that renderer's
 *   cases report themselves skipped, saying so on the console, like the browser suite.
 * Raw HTML is let through (`--unsafe`, `allowDangerousHtml`), the worst case: GitHub sanitises it
 * after rendering.
 */

const CMARK = 'cmark-gfm'
const hasCmark = spawnSync(CMARK, ['--version']).status === 0
const CMARK_MISSING = `skipped: ${CMARK} is not installed (apt-get install cmark-gfm; .ci/run installs it)`
if (!hasCmark)
  console.warn(`summary.gfm.test.ts: GitHub's renderer ${CMARK_MISSING}; micromark's GFM still judges every case.`)

const RENDERERS: [string, (markdown: string) => string][] = [
  [
    'micromark with GFM',
    (markdown) => micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] }),
  ],
  ...(hasCmark
    ? ([
        [
          `GitHub's renderer (${CMARK})`,
          (markdown: string) =>
            execFileSync(
              CMARK,
              ['--unsafe', '-e', 'table', '-e', 'autolink', '-e', 'strikethrough', '-e', 'tasklist'],
              { input: markdown, encoding: 'utf8' },
            ),
        ],
      ] as [string, (markdown: string) => string][])
    : []),
]

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

describe.each(RENDERERS)('the job summary through %s', (_name, render) => {
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

  it("one heading (ours); no link, image or HTML tag of the service's", () => {
    const out = html()
    expect(out.match(/<h\d/g)).toEqual(['<h3'])
    expect(out).toContain('<h3>❌ Prove: failed</h3>')
    expect(out).not.toMatch(/<a href="[^"]*evil/)
    expect(out).not.toMatch(/<img/)
    expect(out).not.toMatch(/<a href="mailto:/)
    expect(out).not.toMatch(/<(del|em|input)\b/)
    // Bold only where the summary puts it: the row labels and the two section titles.
    for (const bold of out.match(/<strong>[^<]*<\/strong>/g) ?? [])
      expect(bold).toMatch(/^<strong>(Query|Error reason|Step|What failed)<\/strong>$/)
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

  it('a link (the release link, the PR, the check run, a table link) is one link to its whole URL, whatever the URL holds (issue 31)', () => {
    // A tag and an html_url GitHub echoes back: parentheses, brackets, spaces and quotes in the URL.
    const url = 'https://github.com/o/r/releases/tag/v1)[pwned](https://evil.example) "x" <b>|'
    const out = render(`- Release ${summaryLink('v1](https://evil.example)', url)}: pie.zip.\n`)
    const links = [...out.matchAll(/<a href="([^"]*)">/g)].map((match) => match[1]!)
    expect(links).toHaveLength(1)
    expect(decodeURIComponent(links[0]!.replaceAll('&amp;', '&'))).toBe(url)
    expect(out).not.toMatch(/<a href="https:\/\/evil/)
    expect(out).not.toMatch(/<b>/)
    // Not http(s): the label alone, no link.
    expect(render(summaryLink('run', 'javascript:alert(1)'))).not.toContain('<a')
    const table = render(
      renderSummary({
        action: 'Prove',
        outcome: 'passed',
        headline: 'ok',
        rows: [['Links', { links: [{ label: 'proof', url }] }]],
      }),
    )
    expect(
      [...table.matchAll(/<a href="([^"]*)">/g)].map((match) => decodeURIComponent(match[1]!.replaceAll('&amp;', '&'))),
    ).toEqual([url])
  })

  it('issue references and @-mentions a service wrote are shown, not linked: no text of the page is one GitHub would link', () => {
    // GitHub links references and mentions in the text of the rendered page (not in code or
    // links): #1, owner/repo#2, GH-3, @user; in a PR comment or a check run each cross-references
    // that issue or notifies that person.
    const said = 'Closes #1 fixes acme/widgets#2, see GH-3 and (#4); cc @octocat'
    const out = render(
      renderSummary({
        action: 'Prove',
        outcome: 'failed',
        headline: said,
        rows: [['Error reason', said]],
        problems: [said],
      }),
    )
    const text = pageText(out)
    expect(text.match(/(?<![\w/])#\d+|[\w.-]+\/[\w.-]+#\d+|\bGH-\d+|(?<![\w`])@[A-Za-z\d-]+/gi)).toBeNull()
    // What a person reads is what the service said, three times (the zero-width spaces do not show).
    expect(text.replaceAll('\u200b', '').split(said).length - 1).toBe(3)
  })

  it("the toolkit's own code spans and docs links still render", () => {
    const out = html()
    expect(out).toContain(
      'Fix <code>pie</code> in the workflow file (<a href="https://github.com/proving-kit/proving-kit/blob/v1/docs/action.md">docs/action.md</a>).',
    )
  })
})

/** The text of a rendered page where GitHub looks for references: outside code, links and tags, entities decoded. */
function pageText(html: string): string {
  return html
    .replace(/<(code|pre|a)\b[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
}

if (!hasCmark) {
  describe("the job summary through GitHub's renderer", () => {
    // CI (.ci/run) installs cmark-gfm and sets this: there, a missing renderer is a failure, never a skip.
    if (process.env.PROVING_REQUIRE_SYSTEM_TOOLS === '1')
      it('has the renderer .ci/run installs', () =>
        expect.fail(`${CMARK} is not installed, and PROVING_REQUIRE_SYSTEM_TOOLS=1 requires it`))
    else it.skip(CMARK_MISSING, () => {})
  })
}
