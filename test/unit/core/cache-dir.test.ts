import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { userCacheDir } from '../../../src/core/cache-dir.ts'
import { defaultJournalDir } from '../../../src/pipeline/journal.ts'

describe('userCacheDir', () => {
  it('is under $XDG_CACHE_HOME, else ~/.cache (on this Linux), and holds the journal unless PROVING_JOURNAL_DIR says otherwise', () => {
    expect(process.platform).toBe('linux')
    expect(userCacheDir({ XDG_CACHE_HOME: '/x/cache', HOME: '/home/u' }, 'compile-cache')).toBe(
      join('/x/cache', 'proving-kit', 'compile-cache'),
    )
    expect(userCacheDir({ HOME: '/home/u' }, 'submissions')).toBe(
      join('/home/u', '.cache', 'proving-kit', 'submissions'),
    )
    expect(defaultJournalDir({ HOME: '/home/u' })).toBe(userCacheDir({ HOME: '/home/u' }, 'submissions'))
    expect(defaultJournalDir({ HOME: '/home/u', PROVING_JOURNAL_DIR: '/j' })).toBe('/j')
  })
})
