import { describe, expect, it } from 'vitest'
import { forceNewHintOf } from '../../../../src/pipeline/statement/request.ts'

describe('the journal policy of a statement request', () => {
  it("takes the host's words for forcing a new query from forceNewHint, else from the deprecated submitAnew", () => {
    expect(forceNewHintOf({ dir: 'journal', forceNew: false, forceNewHint: 'pass --new' })).toBe('pass --new')
    // A caller written against the earlier name keeps its advice line.
    expect(forceNewHintOf({ dir: 'journal', forceNew: false, submitAnew: 'set `new: true`' })).toBe('set `new: true`')
    expect(
      forceNewHintOf({ dir: 'journal', forceNew: false, forceNewHint: 'pass --new', submitAnew: 'old words' }),
    ).toBe('pass --new')
    expect(forceNewHintOf({ dir: 'journal', forceNew: false })).toBeUndefined()
  })
})
