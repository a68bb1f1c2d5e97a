import { describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { StorageProofClient } from '../../src/clients/storage-proof.ts'
import { TaskClient } from '../../src/clients/tasks.ts'
import { apiKeyOf, checkHeaderValue, requireId } from '../../src/core/checks.ts'
import { InvalidInputError } from '../../src/core/errors.ts'
import { runCli } from '../helpers/cli.ts'
import { KEY, useEmulator } from '../helpers/emulator.ts'

/**
 * Ids that would walk or cut the path, and header values a server would read differently, are
 * refused before anything is sent (issue 13): exit 2 naming the input, no request in the
 * emulator's log, the key never printed.
 */

const BAD_IDS: [string, RegExp][] = [
  ['', /is empty/],
  ['.', /path step/],
  ['..', /path step/],
  ['a/b', /holds a space, "\/"/],
  ['a?b', /holds a space/],
  ['a#b', /holds a space/],
  ['a\\b', /holds a space/],
  ['a\u0000b', /control character/],
  ['a\u007fb', /control character/],
  ['x'.repeat(257), /longer than 256/],
]

describe('requireId', () => {
  it.each(BAD_IDS)('refuses %j', (id, reason) => {
    expect(() => requireId(id, 'queryId')).toThrow(reason)
  })
  it('accepts the rest; the clients percent-encode it ("%2e%2e" never becomes "..")', () => {
    expect(requireId(' q-1 ', 'queryId')).toBe('q-1')
    expect(requireId('%2e%2e', 'queryId')).toBe('%2e%2e')
    expect(encodeURIComponent('%2e%2e')).toBe('%252e%252e')
  })
})

describe('header values', () => {
  it.each([['Zq9\n'], ['Zq\r9'], ['Z\u0000q9'], ['Z\u007fq9'], ['Zéq9\u2028']])(
    '%j is refused, the value never quoted',
    (value) => {
      const error = (() => {
        try {
          checkHeaderValue(value, 'PROVING_API_KEY', 'The API key')
        } catch (caught) {
          return caught as InvalidInputError
        }
      })()
      expect(error).toBeInstanceOf(InvalidInputError)
      expect(error!.message).toMatch(/The API key holds .* at position \d+/)
      expect(error!.message).not.toContain('Zq')
      expect(error!.message).not.toContain('q9')
    },
  )
  it('a trailing newline is trimmed; an inner one is refused by every client', () => {
    expect(apiKeyOf('pk_abc\n')).toBe('pk_abc')
    expect(() => new ProvingClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pk_a\nX-Injected: 1' })).toThrow(
      InvalidInputError,
    )
    expect(() => new TaskClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pk_a\nb' })).toThrow(InvalidInputError)
    expect(() => new StorageProofClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'pk_a\rb' })).toThrow(
      InvalidInputError,
    )
  })
})

describe('the CLI sends nothing for a bad id or key', () => {
  const emulator = useEmulator({ apiKeys: [KEY] })
  const requests = async () => (await emulator().control('GET', '/requests')).requests as { path: string }[]

  it.each([
    [['query', 'retry', '..'], 'queryId'],
    [['query', 'retry', '.'], 'queryId'],
    [['query', 'get', 'a?b'], 'queryId'],
    [['task', 'status', '..'], 'uuid'],
    [['storage', 'status', '..'], 'internalId'],
  ])('%j: exit 2 naming %s', async (args, input) => {
    await emulator().control('DELETE', '/requests')
    const url = emulator().url
    const run = await runCli(args, {
      env: { PROVING_API_KEY: KEY, PROVING_BASE_URL: url, PROVING_STORAGE_PROOF_URL: url, PROVING_TASKS_URL: url },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(input)
    expect(run.stderr.trim().split('\n')).toHaveLength(1)
    expect(await requests()).toEqual([])
  })

  it('an API key with a newline inside: exit 2, the input named, nothing sent, the key not printed', async () => {
    await emulator().control('DELETE', '/requests')
    const run = await runCli(['query', 'list', '--base-url', emulator().url], {
      env: { PROVING_API_KEY: `${KEY}\nsecond-line` },
    })
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/API key holds a line break/)
    expect(run.stderr).not.toContain(KEY)
    expect(run.stderr).not.toContain('second-line')
    expect(await requests()).toEqual([])
  })
})
