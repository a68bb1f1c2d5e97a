import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { run } from '../../src/action/actions/main.ts'
import { redact, showUrl } from '../../src/core/redact.ts'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE } from '../helpers/emulator.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * Anything URL-shaped the user gave is shown as scheme and host only, whether or not it parses
 * (issue 13): a port of 99999, user:password, a stray space, a key in the path.
 */

const KEYISH = 'abcdef0123456789abcdef'
const cases: [string, string][] = [
  ['https://alice:S3CRETPASS@api.example.com:99999', 'https://api.example.com'],
  [`https://mainnet.infura.io:99999/v3/${KEYISH}`, 'https://mainnet.infura.io'],
  [`https://alice:S3CRETPASS@api.example.com /v3/${KEYISH}`, 'https://api.example.com'],
  [` https://mainnet.infura.io/v3/ ${KEYISH}`, 'https://mainnet.infura.io'],
  [`https://api.example.com:8443/v1?apiKey=${KEYISH}`, 'https://api.example.com:8443'],
  [`api.example.com/v1?apiKey=${KEYISH}`, 'api.example.com'],
  ['http://[::1]:99999/x', 'http://[::1]'],
  ['not a url at all', '(a URL that does not parse)'],
]

describe('showUrl', () => {
  it.each(cases)('%j -> %s', (input, shown) => {
    expect(showUrl(input)).toBe(shown)
  })
  it('free text: an unparsable URL keeps only scheme and host; a parsable one loses its credentials', () => {
    const text = redact(
      `at https://alice:S3CRETPASS@api.example.com:99999/v3/${KEYISH} and https://ok.example/a?apiKey=${KEYISH}`,
    )
    expect(text).not.toContain('S3CRETPASS')
    expect(text).not.toContain(KEYISH)
    expect(text).not.toContain('alice')
  })
})

describe('the CLI never echoes a URL-shaped input whole', () => {
  const secrets = ['S3CRETPASS', 'alice', KEYISH, '99999', '/v3']
  it.each([
    [['query', 'get', 'q-1', '--base-url', cases[0]![0]], {}],
    [['query', 'get', 'q-1', '--base-url', cases[2]![0]], {}],
    [['query', 'get', 'q-1'], { PROVING_BASE_URL: cases[0]![0] }],
    [['fact', 'check', '0x1'], { PROVING_ETHEREUM_RPC_URL: cases[1]![0] }],
    [['fact', 'check', '0x1', '--ethereum-rpc', cases[3]![0]], {}],
  ] as [string[], Record<string, string>][])('%j', async (args, env) => {
    const run = await runCli(args, { env })
    expect(run.code).not.toBe(0)
    for (const secret of secrets) expect(run.stdout + run.stderr).not.toContain(secret)
  })
})

describe('a URL inside a sentence keeps its port, path and query (the punctuation after it is not part of it)', () => {
  it('the action\'s log names the emulator\'s address whole: "at http://127.0.0.1:<port>: nothing is proved"', async () => {
    const io = new RecordingIO({ pie: FIXTURE_PIE, emulator: 'true', reuse: 'never' }, { scrub: true })
    await run(io)
    expect(io.failed).toBeUndefined()
    const line = io.logs.find((log) => log.startsWith('Running against the built-in emulator at '))
    expect(line).toMatch(
      /^Running against the built-in emulator at http:\/\/127\.0\.0\.1:\d+: nothing is proved or verified for real\.$/,
    )
  })

  it('whatever the punctuation after it, a URL with a port and a path is shown as it is, credentials masked', () => {
    const url = fc
      .record({
        scheme: fc.constantFrom('http', 'https'),
        host: fc.constantFrom('127.0.0.1', 'localhost', 'api.example.com', '[::1]'),
        // The schemes' default ports among them: URL drops those when it serialises a masked URL.
        port: fc.oneof(fc.constantFrom(80, 443), fc.integer({ min: 1, max: 65_535 })),
        path: fc.array(fc.stringMatching(/^[a-z0-9-]{1,8}$/), { maxLength: 3 }),
        key: fc.option(fc.stringMatching(/^[A-Za-z0-9]{8,16}$/), { nil: undefined }),
      })
      .map(({ scheme, host, port, path, key }) => ({
        given: `${scheme}://${host}:${port}/${path.join('/')}${key ? `?apiKey=${key}` : ''}`,
        shown: `${scheme}://${host}:${port}/${path.join('/')}${key ? '?apiKey=***' : ''}`,
        key,
      }))
    const after = fc.constantFrom(':', '.', ',', ';', '!', '?', ')', '):', '.)', ': refused', '')
    fc.assert(
      fc.property(url, after, ({ given, shown, key }, tail) => {
        const text = redact(`URL: ${given}${tail} then more`)
        expect(text).toBe(`URL: ${shown}${tail} then more`)
        if (key) expect(text).not.toContain(key)
      }),
    )
  })

  it('a parenthesis or bracket the URL opened stays in it', () => {
    expect(redact('see (https://example.com/wiki/Fact_(hash)).')).toBe('see (https://example.com/wiki/Fact_(hash)).')
    expect(redact('at https://example.com:8443/a]: gone')).toBe('at https://example.com:8443/a]: gone')
  })
})
