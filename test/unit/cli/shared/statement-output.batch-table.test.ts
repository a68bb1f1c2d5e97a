import { describe, expect, it } from 'vitest'
import { type BatchOutcome, batchTable } from '../../../../src/cli/shared/statement-output.ts'

describe('the batch table (issue 35)', () => {
  it('200,000 rows: one line each and the counts, no stack overflow (a spread into Math.max overflowed at ~150,000)', () => {
    const n = 200_000
    const outcomes: BatchOutcome[] = Array.from({ length: n }, (_, index) => ({
      pie: `pies/pie${index}.zip`,
      provingQueryId: `q-${index}`,
      status: 'DONE',
      step: null,
      facts: 'match',
      exitCode: 0,
      error: null,
      reused: false,
    }))
    const lines = batchTable(outcomes, '1.0').split('\n')
    expect(lines).toHaveLength(n + 2)
    // Columns padded to the widest cell: the last row's PIE is the longest.
    expect(lines[1]).toBe(`1       pies/pie0.zip       q-0       DONE    match`)
    expect(lines.at(-1)).toBe(`${n} of ${n} succeeded in 1.0 s.`)
  })
})
