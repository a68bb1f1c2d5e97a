import fc from 'fast-check'
import { micromark } from 'micromark'
import { gfm, gfmHtml } from 'micromark-extension-gfm'
import { describe, expect, it } from 'vitest'
import { describeServiceFailure, type ServiceText } from '../../../../src/action/steps/failure.ts'
import { renderSummary } from '../../../../src/action/steps/summary.ts'
import { nextStepAdvice } from '../../../../src/cli/advice.ts'
import { type NextStep, ProvingKitError } from '../../../../src/core/errors.ts'

/**
 * A next step names ids the service gave (a FAILED query to read, the queries a re-run must
 * follow): service text, though the sentence around it is ours. As a property over every id (any
 * characters: Markdown, HTML, backticks, line breaks, terminal escapes): in the job summary,
 * rendered by micromark's GFM (not ours), the "What to do" list keeps one item per step, each id
 * is one code span and nothing of it becomes a link, an image, a heading or a tag; in the CLI's
 * line, no control character reaches the terminal. Before, the ids went in raw in both.
 */
const SEED = Number(process.env.PROVING_FC_SEED ?? 20261128)
const RUNS = Number(process.env.PROVING_FC_RUNS ?? 300)

const TEXT: ServiceText = { service: 'proving service', urlInput: 'base-url', networkDetails: true }
const hostile = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({
    unit: fc.constantFrom(
      '`',
      '\n',
      '\r',
      '#',
      '[',
      ']',
      '(',
      ')',
      '<',
      '>',
      '|',
      '*',
      '_',
      '!',
      '\\',
      'a',
      ' ',
      '\u001b',
      '\u0007',
      '\u009b',
      'https://evil.example',
    ),
    maxLength: 30,
  }),
  fc.constantFrom(
    'q-1`</code><a href="https://evil.example">x</a>',
    'q\n\n## pwned\n- [x] done',
    '![i](https://evil.example/x.png)',
    '\u001b[31mred\u001b[0m',
  ),
)
const step: fc.Arbitrary<NextStep> = fc.oneof(
  hostile.map((id) => ({ kind: 'read-query' as const, id })),
  hostile.map((id) => ({ kind: 'read-task' as const, id })),
  fc.array(hostile, { minLength: 1, maxLength: 3 }).map((ids) => ({ kind: 'follow-candidates' as const, ids })),
)

const render = (markdown: string) =>
  micromark(markdown, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] })

describe('a next step that names service ids', () => {
  it('job summary: one list item, each id one code span, no link, image, heading or tag of theirs', () => {
    fc.assert(
      fc.property(step, (next) => {
        const ending = describeServiceFailure(new ProvingKitError('The step failed.', { nextStep: next }), TEXT)
        const html = render(
          renderSummary({
            action: 'Prove',
            outcome: 'failed',
            headline: 'The step failed.',
            rows: [],
            nextSteps: ending.nextSteps,
          }),
        )
        const list = /<strong>What to do<\/strong>[\s\S]*?<ul>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? ''
        expect(list.match(/<li>/g)).toHaveLength(ending.nextSteps!.length)
        expect(html.match(/<h\d/g)).toEqual(['<h3'])
        expect(html).not.toMatch(/<a |<img|<input|<del|<em>|<table/)
        const ids = 'ids' in next ? next.ids : 'id' in next ? [next.id] : []
        // Each id is inside a code span of the first item (its text escaped as HTML).
        const codes = [...list.matchAll(/<code>([\s\S]*?)<\/code>/g)].map((match) => match[1]!)
        expect(codes.length).toBeGreaterThanOrEqual(ids.length)
      }),
      { numRuns: RUNS, seed: SEED },
    )
  })

  it('CLI: the advice line holds no control character, whatever the ids', () => {
    fc.assert(
      fc.property(step, (next) => {
        const line = nextStepAdvice(new ProvingKitError('Failed.', { nextStep: next }))!
        expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
      }),
      { numRuns: RUNS, seed: SEED },
    )
  })
})
