import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inspect } from 'node:util'
import nock from 'nock'
import { Agent } from 'undici'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import {
  SubmissionOutcomeUnknownError,
  InvalidResponseError,
  ProvingKitError,
  ServiceError,
} from '../../../src/core/errors.ts'
import { HttpClient } from '../../../src/core/http.ts'
import {
  REDACTED,
  redact,
  redactUrl,
  SecretRedactor,
  secretForms,
  showGivenUrl,
  showUrl,
} from '../../../src/core/redact.ts'
import { forSummary, forSummaryCell } from '../../../src/core/service-text.ts'
import type { Logger } from '../../../src/core/runtime.ts'
import { ProvingClient } from '../../../src/clients/proving.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { leaksSecret, secretFormsWritten } from '../../helpers/secret-forms.ts'
import { failure } from '../../helpers/failure.ts'

const KEY = 'sk_live_SECRET_9f8e7d'

describe('redactUrl', () => {
  it('masks apiKey and keeps everything else', () => {
    expect(redactUrl(`https://api.example.com/v1/l2/proving-query/proof-verification?apiKey=${KEY}&x=1`)).toBe(
      `https://api.example.com/v1/l2/proving-query/proof-verification?apiKey=${REDACTED}&x=1`,
    )
  })

  it.each([
    'apiKey',
    'APIKEY',
    'api_key',
    'api-key',
    'key',
    'token',
    'access_token',
    'refresh_token',
    'auth',
    'secret',
    'password',
    'signature',
  ])('masks the credential parameter %s', (name) => {
    const out = redactUrl(`https://h.example/p?${name}=${KEY}&page=2`)
    expect(out).not.toContain(KEY)
    expect(out).toContain(`${name}=${REDACTED}`)
    expect(out).toContain('page=2')
  })

  it('masks user:password in the authority', () => {
    const out = redactUrl('https://alice:hunter2hunter2@rpc.example.com/v2')
    expect(out).not.toContain('alice')
    expect(out).not.toContain('hunter2')
    expect(out).toContain('rpc.example.com/v2')
  })

  it('accepts URL objects', () => {
    expect(redactUrl(new URL(`http://h.test/p?apiKey=${KEY}`))).toBe(`http://h.test/p?apiKey=${REDACTED}`)
  })

  it('masks the key even in text that is not a parseable URL', () => {
    expect(redactUrl(`/v1/l2/proving-query/proof-verification?apiKey=${KEY}&a=1`)).toBe(
      `/v1/l2/proving-query/proof-verification?apiKey=${REDACTED}&a=1`,
    )
  })

  it.each([
    'apiKey',
    'API_KEY',
    'api-key',
    'key',
    'token',
    'access_token',
    'refresh_token',
    'auth',
    'secret',
    'password',
    'signature',
  ])('masks %s in a URL missing its scheme (a common base-URL mistake)', (name) => {
    const out = redactUrl(`api.example.com/v1?page=2&${name}=${KEY}#top`)
    expect(out).not.toContain(KEY)
    expect(out).toBe(`api.example.com/v1?page=2&${name}=${REDACTED}#top`)
  })

  it('does not mask a parameter that merely ends like a credential one', () => {
    expect(redactUrl('/p?monkey=banana&apiKey=x1234')).toBe(`/p?monkey=banana&apiKey=${REDACTED}`)
  })

  it('leaves a URL without credentials as it was', () => {
    expect(redactUrl('https://h.example/proving-query/q-1?limit=10')).toBe(
      'https://h.example/proving-query/q-1?limit=10',
    )
    // Not re-serialised: no `/` added to a bare host.
    expect(redactUrl('https://rpc.example')).toBe('https://rpc.example')
  })

  it("keeps a port given explicitly though it is the scheme's default, and never shows a password of digits", () => {
    expect(redactUrl('https://127.0.0.1:443/?apiKey=aaaaA000')).toBe('https://127.0.0.1:443/?apiKey=***')
    expect(redactUrl('http://u:p@h:80/x?apiKey=1')).toBe('http://***:***@h:80/x?apiKey=***')
    expect(redactUrl('https://[::1]:443/a?token=z#frag')).toBe('https://[::1]:443/a?token=***#frag')
    expect(redactUrl('https://h/?apiKey=q')).toBe('https://h/?apiKey=***')
    // A password of digits is not a port: the regex never reaches past the authority's '@'.
    expect(redactUrl('https://u:443@h/?apiKey=q')).toBe('https://***:***@h/?apiKey=***')
    expect(redactUrl('https://u:8080@h')).toBe('https://***:***@h/')
  })

  it('masks a user without a password, and a password without a user', () => {
    expect(redactUrl(`https://${KEY}@rpc.example/v2`)).toBe(`https://${REDACTED}@rpc.example/v2`)
    expect(redactUrl(`https://:${KEY}@rpc.example/v2`)).toBe(`https://:${REDACTED}@rpc.example/v2`)
  })
})

describe('showUrl: scheme and host only', () => {
  it('keeps the port of a URL that parses, and drops user, path, query and fragment', () => {
    expect(showUrl(`https://bob:pw1234@RPC.Example.org:8443/v3/${KEY}?apiKey=${KEY}#x`)).toBe(
      'https://rpc.example.org:8443',
    )
    expect(showUrl(new URL('http://127.0.0.1:8545/'))).toBe('http://127.0.0.1:8545')
  })

  it('picks scheme and host out of a URL that does not parse (a port of 99999), lowercasing the host', () => {
    expect(showUrl(`https://Node.Example.org:99999/v3/${KEY}`)).toBe('https://node.example.org')
    expect(showUrl(`wss://carol:${KEY}@ws.example.org:99999`)).toBe('wss://ws.example.org')
    expect(showUrl('http://[::1]:99999/x')).toBe('http://[::1]')
  })

  it('trims the text first', () => {
    expect(showUrl(`  https://node.example.org:99999/v3/${KEY}\n`)).toBe('https://node.example.org')
  })

  it('shows a host without a scheme as the host alone', () => {
    expect(showUrl(`//node.example.org:99999/${KEY}`)).toBe('node.example.org')
    expect(showUrl(`Node.Example.org/v1?apiKey=${KEY}`)).toBe('node.example.org')
    expect(showUrl('127.0.0.1:8545')).toBe('127.0.0.1')
  })

  it('says the URL does not parse when no host can be picked out', () => {
    expect(showUrl('file:///etc/passwd')).toBe('(a URL that does not parse)')
    expect(showUrl('localhost:8545')).toBe('(a URL that does not parse)')
    expect(showUrl(`see https://node.example.org:99999/${KEY}`)).toBe('(a URL that does not parse)')
    expect(showUrl('')).toBe('(a URL that does not parse)')
  })

  it('a client given a URL that does not parse shows it, redacted: the typo, never a key', () => {
    const refused = (baseUrl: string) => {
      try {
        new ProvingClient({ baseUrl })
      } catch (error) {
        return (error as Error).message
      }
      throw new Error(`${baseUrl} was accepted`)
    }
    expect(refused('not a url')).toBe(
      'The proving service URL is not a valid URL: "not a url"; give an absolute http(s) URL.',
    )
    expect(refused('htps//proving.example.com')).toContain('"htps//proving.example.com"')
    for (const given of [
      `https://user:${KEY}@host:99999/x`,
      `https://host:99999/v2/${KEY}`,
      `host:99999?apiKey=${KEY}`,
      KEY,
    ]) {
      const message = refused(given)
      expect(message).not.toContain(KEY)
      expect(message).not.toContain('SECRET')
    }
    // Shaped like a URL: its scheme and host only (a path, a port or a user may hold a key).
    expect(refused(`https://host:99999/v2/${KEY}`)).toContain('"https://host/…"')
    expect(refused(`junk ${KEY} more`)).toContain('"junk sk_l… more"')
  })
})

describe('showGivenUrl: what a message shows of a URL that does not parse', () => {
  it('one shaped like a URL: its scheme and host, then "/…"', () => {
    expect(showGivenUrl(`https://node.example:99999/v3/${KEY}`)).toBe('"https://node.example/…"')
  })

  it('free text as given, its query, user and long runs cut, at most 80 characters, quoted', () => {
    expect(showGivenUrl(' htps//host ')).toBe('"htps//host"')
    expect(showGivenUrl(`not a url?apiKey=${KEY}&x=1`)).toBe('"not a url?…"')
    expect(showGivenUrl('not a url#fragment')).toBe('"not a url?…"')
    expect(showGivenUrl(`not a url?apiKey=${KEY} and more words`)).toBe('"not a url?…"')
    expect(showGivenUrl(`alice:${KEY}@ not a url`)).toBe('"…@ not a url"')
    expect(showGivenUrl(`my key ${'a'.repeat(15)} ${'b'.repeat(16)}`)).toBe(`"my key ${'a'.repeat(15)} bbbb…"`)
    const long = 'word '.repeat(20)
    expect(showGivenUrl(long)).toBe(JSON.stringify(`${long.trim().slice(0, 80)}…`))
    const eighty = `${'ab '.repeat(26)}ab`
    expect(eighty).toHaveLength(80)
    expect(showGivenUrl(eighty)).toBe(JSON.stringify(eighty))
  })
})

describe('redact (free text)', () => {
  it('masks credential parameters in every URL of a text', () => {
    const text = `POST https://a.example/x?apiKey=${KEY} failed; see "http://b.example/y?token=${KEY}&z=1".`
    const out = redact(text)
    expect(out).not.toContain(KEY)
    expect(out).toContain('https://a.example/x?apiKey=***')
    expect(out).toContain('z=1')
  })

  it('shows a URL that does not parse by scheme and host only, and keeps the path of one that does', () => {
    const text = `GET https://node.example.org:99999/v3/${KEY} then https://h.example/artifacts/proof.json?token=${KEY}`
    expect(redact(text)).toBe(
      `GET https://node.example.org then https://h.example/artifacts/proof.json?token=${REDACTED}`,
    )
  })

  it('a URL in a sentence ends before the punctuation after it, and before a bracket that closes nothing in it', () => {
    const at = 'http://127.0.0.1:8790'
    expect(redact(`failed at ${at}: nothing answered.`)).toBe(`failed at ${at}: nothing answered.`)
    expect(redact(`(see ${at}/p?apiKey=${KEY}).`)).toBe(`(see ${at}/p?apiKey=${REDACTED}).`)
    expect(redact(`[see ${at}/p?apiKey=${KEY}]!`)).toBe(`[see ${at}/p?apiKey=${REDACTED}]!`)
    expect(redact(`at ${at}/p?apiKey=${KEY}, then ${at}/q?apiKey=${KEY};`)).toBe(
      `at ${at}/p?apiKey=${REDACTED}, then ${at}/q?apiKey=${REDACTED};`,
    )
    // A port followed by a bracket that closes nothing: the port parses without it.
    expect(redact(`(at ${at})`)).toBe(`(at ${at})`)
    expect(redact(`[at ${at}]`)).toBe(`[at ${at}]`)
    // A URL that does not parse (its port) is shown by scheme and host; a bracket it opened is its own, dropped with it.
    expect(redact('GET http://node.example:99999/wiki/Cairo_(language) failed')).toBe('GET http://node.example failed')
    expect(redact('GET http://node.example:99999/list[1] failed')).toBe('GET http://node.example failed')
    // A bracket the URL opened is its own (a wiki path).
    expect(redact(`read https://wiki.example/Cairo_(language) first`)).toBe(
      'read https://wiki.example/Cairo_(language) first',
    )
    expect(redact(`read https://wiki.example/a[1] first`)).toBe('read https://wiki.example/a[1] first')
  })

  it('masks registered values wherever they appear', () => {
    const redactor = new SecretRedactor([KEY])
    expect(redact(`the key ${KEY} is wrong`, redactor)).toBe(`the key ${REDACTED} is wrong`)
  })
})

describe('SecretRedactor', () => {
  it('masks a value and its URL-encoded form', () => {
    const secret = 'ab+c/d=e f'
    const redactor = new SecretRedactor([secret])
    expect(redactor.redact(`raw ${secret} encoded ${encodeURIComponent(secret)}`)).toBe(
      `raw ${REDACTED} encoded ${REDACTED}`,
    )
  })

  it('masks every occurrence', () => {
    expect(new SecretRedactor([KEY]).redact(`${KEY}${KEY} and ${KEY}`)).toBe(`${REDACTED}${REDACTED} and ${REDACTED}`)
  })

  it('masks a secret that contains another one whole', () => {
    const redactor = new SecretRedactor(['abcd', 'abcdefgh'])
    expect(redactor.redact('xx abcdefgh yy abcd')).toBe(`xx ${REDACTED} yy ${REDACTED}`)
  })

  it('ignores empty, missing and very short values (they would destroy messages)', () => {
    const redactor = new SecretRedactor([undefined, null, '', '  ', '1', 'abc'])
    expect(redactor.size).toBe(0)
    expect(redactor.redact('1 abc')).toBe('1 abc')
  })

  it('a value of four characters is a secret; a space around one is not part of it', () => {
    expect(new SecretRedactor(['abcd']).redact('x abcd y')).toBe(`x ${REDACTED} y`)
    expect(new SecretRedactor([' abc ']).size).toBe(0)
    expect(secretForms(' abcd ')).toContain('abcd')
    expect(secretForms('abcd').every((form) => form.length >= 4)).toBe(true)
  })

  it('trims values before registering them', () => {
    expect(new SecretRedactor([`  ${KEY}\n`]).redact(`k=${KEY}`)).toBe(`k=${REDACTED}`)
  })

  it('add() chains and counts the secrets (each masked in its encoded forms too)', () => {
    const redactor = new SecretRedactor().add('plainvalue').add('with space').add('with space')
    expect(redactor.size).toBe(2)
    expect(redactor.redact('with%20space plainvalue')).toBe('*** ***')
  })
})

/**
 * The L2 submissions carry the API key in the query string. Whatever goes wrong, the key must
 * not reach an error (message, stack, String, inspect) or a log line.
 */
describe('the API key of an L2 submission never leaks', () => {
  const BASE = 'https://svc.test'
  const L2_PIE = '/v1/l2/proving-query/proof-generation-verification'
  const L2_PROOF = '/v1/l2/proving-query/proof-verification'
  let dir: string
  let pie: string
  let proof: string
  let clock: FakeClock
  let captured: string[]

  const logger: Logger = {
    debug: (m) => captured.push(m),
    info: (m) => captured.push(m),
    warn: (m) => captured.push(m),
    error: (m) => captured.push(m),
  }

  function connectionError(code: string): Error {
    return Object.assign(new Error(`simulated ${code}`), { code })
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pk-redact-'))
    pie = join(dir, 'pie.zip')
    proof = join(dir, 'proof.json')
    await writeFile(pie, Buffer.from('PK\u0003\u0004 not really a zip'))
    await writeFile(proof, '{"proof_parameters":{}}')
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })
  beforeEach(() => {
    nock.disableNetConnect()
    clock = new FakeClock()
    captured = []
  })
  afterEach(() => {
    nock.cleanAll()
    nock.enableNetConnect()
  })

  function provingClient() {
    return new ProvingClient({ baseUrl: BASE, apiKey: KEY, logger, clock })
  }

  /** Everything a user could see of an error: its text, its stack, its inspection (with causes). */
  function everything(error: unknown): string {
    const parts = [String(error), inspect(error, { depth: 10 })]
    let current: unknown = error
    for (let depth = 0; current && depth < 10; depth++) {
      if (current instanceof Error) parts.push(current.message, current.stack ?? '')
      if (current instanceof ProvingKitError) {
        parts.push(current.shortMessage, current.details ?? '', ...(current.metaMessages ?? []))
      }
      current = (current as { cause?: unknown }).cause
    }
    return [...parts, ...captured].join('\n')
  }

  const submissions = [
    ['submitPie', L2_PIE, () => provingClient().submitPie({ pieZip: pie })],
    [
      'submitProofVerification',
      L2_PROOF,
      () => provingClient().submitProofVerification({ proof, stoneVersion: 'stone6', memoryVerification: 'strict' }),
    ],
  ] as const

  describe.each(submissions)('%s', (_name, path, submit) => {
    it('500 with the spec body', async () => {
      nock(BASE).post(path).query({ apiKey: KEY }).reply(500, { error: 'INTERNAL_SERVER_ERROR' })
      const error = await failure(submit())
      expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
      expect(everything(error)).not.toContain(KEY)
    })

    it('500 HTML page', async () => {
      nock(BASE).post(path).query(true).reply(500, '<h1>Internal Server Error</h1>')
      const error = await failure(submit())
      expect(everything(error)).not.toContain(KEY)
    })

    it('400 whose message echoes the request URL and the key', async () => {
      nock(BASE)
        .post(path)
        .query(true)
        .reply(400, { message: `Bad request to ${BASE}${path}?apiKey=${KEY}: key ${KEY} has no credits` })
      const error = await failure(submit())
      expect(error).toBeInstanceOf(ServiceError)
      // The parsed body is kept as received for programs; every text a person sees is scrubbed.
      const visible = [String(error), error.stack ?? '', error.message, error.details ?? '', ...captured].join('\n')
      expect(visible).not.toContain(KEY)
      expect(error.details).toContain('has no credits')
    })

    it('connection reset mid-request', async () => {
      nock(BASE).post(path).query(true).replyWithError(connectionError('ECONNRESET'))
      const error = await failure(submit())
      expect(error).toBeInstanceOf(SubmissionOutcomeUnknownError)
      expect(everything(error)).not.toContain(KEY)
    })

    it('a network error whose text carries the full URL', async () => {
      nock(BASE)
        .post(path)
        .query(true)
        .replyWithError(
          Object.assign(new Error(`request to ${BASE}${path}?apiKey=${KEY} failed, reason: socket hang up`), {
            code: 'ECONNRESET',
          }),
        )
      const error = await failure(submit())
      const visible = [String(error), error.stack ?? '', error.message, error.details ?? '', ...captured].join('\n')
      expect(visible).not.toContain(KEY)
      expect(error.message).toContain('socket hang up')
    })

    it('connection refused on every attempt (retried, logged, then given up)', async () => {
      nock(BASE).post(path).query(true).times(10).replyWithError(connectionError('ECONNREFUSED'))
      const error = await failure(submit())
      expect(error.message).toContain('Gave up after')
      expect(captured.length).toBeGreaterThan(0)
      expect(everything(error)).not.toContain(KEY)
    })

    it('429 on every attempt', async () => {
      nock(BASE).post(path).query(true).times(10).reply(429, { error: 'Rate limit exceeded' }, { 'retry-after': '1' })
      const error = await failure(submit())
      expect(error.status).toBe(429)
      expect(everything(error)).not.toContain(KEY)
    })

    it('timeout waiting for the answer', async () => {
      nock(BASE).post(path).query(true).replyWithError(connectionError('UND_ERR_HEADERS_TIMEOUT'))
      const error = await failure(submit())
      expect(everything(error)).not.toContain(KEY)
    })

    it('invalid response: not JSON', async () => {
      nock(BASE).post(path).query(true).reply(201, 'created')
      const error = await failure(submit())
      expect(error).toBeInstanceOf(InvalidResponseError)
      expect(everything(error)).not.toContain(KEY)
    })

    it('invalid response: wrong shape, with an extra field echoing the key', async () => {
      nock(BASE)
        .post(path)
        .query(true)
        .reply(201, { provingQueryId: 7, requestUrl: `${BASE}${path}?apiKey=${KEY}` })
      const error = await failure(submit())
      expect(error).toBeInstanceOf(InvalidResponseError)
      expect(everything(error)).not.toContain(KEY)
    })

    it('success: the debug note on extra fields does not carry it either', async () => {
      nock(BASE)
        .post(path)
        .query(true)
        .reply(201, { provingQueryId: 'q-1', [`echo_${KEY}`]: KEY })
      await submit()
      expect(captured.join('\n')).not.toContain(KEY)
    })
  })

  it('a real headers timeout on a URL with the key', async () => {
    // undici's own timer fires here: a real server that takes the request and never answers.
    nock.enableNetConnect('127.0.0.1')
    const server = createServer(() => {})
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address() as AddressInfo
      const http = new HttpClient({
        baseUrl: `http://127.0.0.1:${port}`,
        serviceName: 'proving service',
        logger,
        clock,
        dispatcher: new Agent(),
        timeouts: { headersMs: 200 },
        redactor: new SecretRedactor([KEY]),
      })
      const error = await failure(http.request({ method: 'POST', path: L2_PIE, query: { apiKey: KEY }, json: {} }))
      expect(error.code).toBe('UND_ERR_HEADERS_TIMEOUT')
      expect(everything(error)).not.toContain(KEY)
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

/**
 * A secret in the forms a service or a library writes it (issue 31), through each way the
 * action's sinks render text before they are scrubbed. Whether a form leaked is judged by
 * decoding what is left (percent-decoding, JSON-unescaping, base64 at every alignment), not by
 * looking for the form that was put in.
 */
describe('encoded forms of a secret are masked (forms × renderings)', () => {
  const SECRET = 'sk_live/secret+key=0123'
  const FORMS = secretFormsWritten(SECRET)
  const b64 = (text: string) => Buffer.from(text).toString('base64')
  const url = (text: string) => text.replace(/\+/g, '-').replace(/\//g, '_')
  const RENDERINGS: [string, (text: string) => string][] = [
    ['a log line', (text) => `the service said: ${text}.`],
    ['the job summary (forSummary)', (text) => forSummary(`the service said: ${text}.`)],
    ['a summary table cell (forSummaryCell)', (text) => forSummaryCell(`said ${text}|`)],
    ['a JSON output', (text) => JSON.stringify({ reason: `said ${text}` })],
  ]

  const leaks = (shown: string) => leaksSecret(shown, SECRET)

  // A redactor of each test's own: its pattern, compiled on first use, is then this test's.
  const redactor = () => new SecretRedactor([SECRET])
  describe.each(RENDERINGS)('in %s', (_rendering, render) => {
    it.each(FORMS)('%s', (_form, written) => {
      const shown = render(written)
      expect(leaks(shown), 'the oracle sees the secret before scrubbing').toBe(true)
      const scrubbed = redactor().redact(shown)
      expect(leaks(scrubbed), scrubbed).toBe(false)
      expect(scrubbed).toContain(REDACTED)
    })
  })

  it('secretForms gives the runner the forms that stand alone', () => {
    const forms = secretForms(SECRET)
    for (const form of [
      SECRET,
      encodeURIComponent(SECRET),
      'sk_live%2fsecret%2bkey%3d0123',
      'sk_live\\/secret+key=0123',
      b64(SECRET),
      url(b64(SECRET)).replace(/=+$/, ''),
    ]) {
      expect(forms).toContain(form)
    }
    expect(secretForms('abc')).toEqual([])
  })

  it('a secret holding what the summary breaks with a zero-width space (an address, an @, a #1) is masked there too', () => {
    for (const secret of [
      'https://eth.example/v3/abcdef0123456789',
      'ops@team.example',
      'key#12-GH-34',
      'www.rpc.example/k9',
    ]) {
      const shown = forSummary(`the service said: ${secret}.`)
      expect(shown.replaceAll('\u200b', ''), 'the summary breaks it').toContain(secret)
      expect(shown).not.toContain(secret)
      expect(new SecretRedactor([secret]).redact(shown)).toBe(`the service said: ${REDACTED}.`)
    }
  })

  it('a secret made of what Markdown, HTML and JSON escape is masked in every rendering, as given or JSON-escaped', () => {
    const special = 'k\\e*y[1]~$2_`x|&<>"\'9/'
    for (const [name, render] of RENDERINGS) {
      for (const written of [special, JSON.stringify(special).slice(1, -1)]) {
        const scrubbed = new SecretRedactor([special]).redact(render(written))
        expect(leaksSecret(scrubbed, special), `${name}: ${scrubbed}`).toBe(false)
        // Masked whole: nothing of it is left beside the mask.
        expect(scrubbed, name).toContain(REDACTED)
        expect(scrubbed, name).not.toMatch(/k\\*e|y\\*\[|&lt;|&amp;/)
      }
    }
  })

  it('base64 of a short secret, unpadded, and of one of eight characters inside a longer stream, at every alignment', () => {
    const short = 'k9Zq'
    expect(new SecretRedactor([short]).redact(`auth ${b64(short).replace(/=+$/, '')} end`)).toBe(`auth ${REDACTED} end`)
    const eight = 'k9Zq-2Wx'
    for (const [before, after] of [
      ['', 'tail'],
      ['a', 'tail'],
      ['ab', 'tail'],
    ]) {
      const stream = b64(`${before}${eight}${after}`)
      expect(leaksSecret(new SecretRedactor([eight]).redact(stream), eight), stream).toBe(false)
    }
  })

  it('base64url of a secret whose base64 holds + and /, whole and inside a stream', () => {
    const secret = '~~~???>>>'
    expect(b64(secret)).toMatch(/[+/]/)
    for (const written of [url(b64(secret)), url(b64(`Basic u:${secret}`))]) {
      const scrubbed = new SecretRedactor([secret]).redact(`said ${written}`)
      expect(leaksSecret(scrubbed, secret), scrubbed).toBe(false)
    }
  })

  it('leaves text without the secret as it is, base64 of other text included', () => {
    const text = `plain sk_live words ${b64('another secret entirely')} %2F \\u002f`
    expect(redactor().redact(text)).toBe(text)
  })
})
