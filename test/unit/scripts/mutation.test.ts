import { describe, expect, it } from 'vitest'
import { judgeScores, moduleScores } from '../../../scripts/mutation.ts'

const mutants = (counts: Record<string, number>) =>
  Object.entries(counts).flatMap(([status, n]) => Array.from({ length: n }, () => ({ status })))

describe('npm run mutation: the score of each module', () => {
  it('counts as Stryker does: timeouts are detected, compile errors and ignored mutants are not counted', () => {
    const [score] = moduleScores({
      files: {
        'src/core/classify.ts': {
          mutants: mutants({ Killed: 15, Timeout: 2, Survived: 2, NoCoverage: 1, CompileError: 7, Ignored: 3 }),
        },
      },
    })
    expect(score).toEqual({
      path: 'src/core/classify.ts',
      killed: 15,
      timedOut: 2,
      survived: 2,
      noCoverage: 1,
      score: 85,
    })
  })

  it('refuses a module under the minimum even when the total passes, and names it', () => {
    const scores = moduleScores({
      files: {
        'src/pipeline/journal.ts': { mutants: mutants({ Killed: 84, Survived: 16 }) },
        'src/pipeline/gate.ts': { mutants: mutants({ Killed: 1000 }) },
        'src/core/redact.ts': { mutants: mutants({ Ignored: 4 }) },
      },
    })
    const { lines, failing } = judgeScores(scores, 85)
    expect(failing).toEqual(['src/pipeline/journal.ts'])
    expect(lines).toEqual([
      'src/core/redact.ts: no mutants (killed 0, timed out 0, survived 0, no coverage 0)',
      'src/pipeline/gate.ts: 100.00% (killed 1000, timed out 0, survived 0, no coverage 0)',
      'src/pipeline/journal.ts: 84.00% (killed 84, timed out 0, survived 16, no coverage 0)',
    ])
  })
})
