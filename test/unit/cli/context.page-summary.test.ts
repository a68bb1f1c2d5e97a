import { describe, expect, it } from 'vitest'
import { pageSummary } from '../../../src/cli/context.ts'

/** The last line of a list's page: which are shown of how many, and where the next page starts. */
describe('pageSummary', () => {
  it.each([
    [{ shown: 5, offset: 0, limit: 20, total: 5 }, 'Showing all 5.'],
    [{ shown: 5, offset: 0, limit: 5, total: 8 }, 'Showing 1-5 of 8; --offset 5 for the next 3.'],
    [{ shown: 3, offset: 5, limit: 5, total: 8 }, 'Showing 6-8 of 8; the last page.'],
    [{ shown: 1, offset: 2, limit: 2, total: 3 }, 'Showing 3 of 3; the last page.'],
    [{ shown: 20, offset: 0, limit: 20, total: 57 }, 'Showing 1-20 of 57; --offset 20 for the next 20.'],
    // Without a total: a full page may have more, a short one has none.
    [{ shown: 20, offset: 0, limit: 20, total: undefined }, 'Showing 1-20; --offset 20 for more, if any.'],
    [{ shown: 4, offset: 0, limit: 20, total: undefined }, 'Showing all 4.'],
    [{ shown: 4, offset: 20, limit: 20, total: undefined }, 'Showing 21-24; the last page.'],
    [{ shown: 0, offset: 8, limit: 20, total: 8 }, 'None shown of 8: --offset 8 is past the last one.'],
    [{ shown: 0, offset: 0, limit: 20, total: 0 }, 'None.'],
  ])('%j: %s', (page, line) => {
    expect(pageSummary(page)).toBe(line)
  })
})
