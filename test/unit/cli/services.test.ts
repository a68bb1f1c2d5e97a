import { describe, expect, it } from 'vitest'
import { describeQuery } from '../../../src/cli/services.ts'

describe('describeQuery (issue 31: facts in their on-chain form)', () => {
  it('shows the SHARP fact as 0x and 64 hex digits, the program hash and the Integrity fact as felts', () => {
    const text = describeQuery({
      provingQuery: {
        id: 'q-1',
        status: 'DONE',
        programHash: '0x0ABC',
        sharpFactHash: '0x2',
        integrityFactHash: '0x01',
      },
      metadataUrls: [],
    })
    expect(text).toContain(`SHARP fact     0x${'0'.repeat(63)}2`)
    expect(text).toContain('program hash   0x0ABC')
    expect(text).toContain('Integrity fact 0x01')
  })
})
