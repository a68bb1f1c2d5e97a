import { describe, expect, it } from 'vitest'
import { cliAdvice, resumeAdvice } from '../../../src/cli/advice.ts'
import {
  AbortedError,
  NetworkError,
  ProvingKitError,
  ServiceError,
  WaitTimeoutError,
} from '../../../src/core/errors.ts'

/** What the CLI adds to the library's errors: the library's own messages carry none of it. */
describe('resumeAdvice', () => {
  it.each([
    ['query', 'q-1', 'proving query wait q-1'],
    ['task', 't-1', 'proving task wait t-1'],
    ['batch query', 'bq-1', 'proving storage status bq-1 --wait'],
    ['bucket', 'b-1', 'proving bucket close b-1 --wait'],
  ] as const)('a %s wait resumes with its command', (kind, id, command) => {
    expect(resumeAdvice(new WaitTimeoutError('Timed out.', { waitedFor: { kind, id } }))).toBe(
      `Resume with: ${command}`,
    )
    // Wrapped (a cancellation re-raised by a caller), it is still found.
    expect(
      resumeAdvice(
        new ProvingKitError('Stopped.', { cause: new AbortedError('Cancelled.', { waitedFor: { kind, id } }) }),
      ),
    ).toBe(`Resume with: ${command}`)
  })

  it('an error that ended no wait gets none', () => {
    expect(resumeAdvice(new WaitTimeoutError('Timed out waiting for a fact.'))).toBeUndefined()
    expect(resumeAdvice(new Error('x'))).toBeUndefined()
  })
})

describe('cliAdvice', () => {
  const refused = new ServiceError('The proving service answered 401 INVALID_API_KEY to list queries.', { status: 401 })
  it('a 401 without a key says how to give one', () => {
    expect(
      cliAdvice(refused, {
        values: { 'base-url': 'https://p.example' },
        origins: { 'base-url': '--base-url' },
        options: [],
      }),
    ).toEqual([
      'No API key was given to https://p.example (--base-url): set PROVING_API_KEY (or pass --api-key <key>).',
    ])
  })

  it("connection refused elsewhere than the emulator's address adds nothing", () => {
    const error = new NetworkError('Could not connect.', { code: 'ECONNREFUSED' })
    expect(
      cliAdvice(error, { values: { 'base-url': 'http://127.0.0.1:9' }, origins: {}, options: ['emulator'] }),
    ).toEqual([])
    expect(
      cliAdvice(error, {
        values: { 'base-url': 'http://127.0.0.1:8790' },
        origins: { 'base-url': 'PROVING_BASE_URL' },
        options: [],
      })[0],
    ).toContain('start it with `proving emulator`')
  })
})
