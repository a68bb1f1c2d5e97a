/**
 * Secrets never reach a log, an error, a summary or an output. Two mechanisms, used together:
 * - query parameters whose name says they carry a credential are masked in every URL we print
 *   (the L2 endpoints require `apiKey` in the query string);
 * - known secret values (API keys, tokens, private keys, RPC URLs with embedded keys) are
 *   replaced wherever they appear in free text.
 */

export const REDACTED = '***'

const SECRET_QUERY_PARAMETERS = new Set([
  'apikey',
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
])

/** The same parameter names, for text that does not parse as a URL (e.g. a scheme is missing). */
const SECRET_PARAMETER_IN_TEXT = new RegExp(`([?&](?:${[...SECRET_QUERY_PARAMETERS].join('|')})=)[^&#\\s]*`, 'gi')

/**
 * Masks the credential-carrying query parameters (`apiKey`, `token`, `signature`, ...) and any
 * `user:password` part of a URL.
 *
 * @param url The URL, or text that should be one.
 * @returns The URL with those parts as `***`; the text as given when there is nothing to mask.
 * @example
 * ```ts
 * import { redactUrl } from 'proving-kit'
 *
 * console.log(redactUrl('https://proving.example/proving-queries?apiKey=sk-123&limit=5'))
 * // https://proving.example/proving-queries?apiKey=***&limit=5
 * ```
 */
export function redactUrl(url: string | URL): string {
  let parsed: URL
  try {
    parsed = new URL(String(url))
  } catch {
    return String(url).replace(SECRET_PARAMETER_IN_TEXT, `$1${REDACTED}`)
  }
  const secretNames = [...parsed.searchParams.keys()].filter((name) => SECRET_QUERY_PARAMETERS.has(name.toLowerCase()))
  // Nothing to mask: the text as it was given (not re-serialised with a `/` added to a bare host).
  if (!parsed.username && !parsed.password && secretNames.length === 0) return String(url)
  if (parsed.username) parsed.username = REDACTED
  if (parsed.password) parsed.password = REDACTED
  for (const name of secretNames) parsed.searchParams.set(name, REDACTED)
  // URLSearchParams encodes `*`; keep the mask readable.
  return withGivenPort(parsed, String(url)).replaceAll('%2A%2A%2A', REDACTED)
}

/** An explicit port as given: URL drops one that is the scheme's default (`https://host:443/`). */
const GIVEN_PORT = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?(?:\[[^\]]*\]|[^:/?#]*):(\d+)(?=[/?#]|$)/i

function withGivenPort(parsed: URL, given: string): string {
  const port = parsed.port === '' ? GIVEN_PORT.exec(given)?.[1] : undefined
  if (port === undefined) return parsed.toString()
  const user = parsed.username ? `${parsed.username}${parsed.password ? `:${parsed.password}` : ''}@` : ''
  return `${parsed.protocol}//${user}${parsed.hostname}:${port}${parsed.pathname}${parsed.search}${parsed.hash}`
}

/**
 * What a message may show of a URL the user gave: its scheme and host, nothing else (no
 * user:password, no path, no query: providers put keys in all three). Works on text that does
 * not parse as a URL too (a port of 99999, a stray space, a missing scheme): the scheme and
 * the host name are picked out and the rest dropped; text with no recognisable host shows as
 * `(a URL that does not parse)`.
 */
export function showUrl(url: string | URL): string {
  const text = String(url).trim()
  try {
    const parsed = new URL(text)
    if (parsed.host) return `${parsed.protocol}//${parsed.host}`
  } catch {
    // picked apart below
  }
  const match =
    /^([a-z][a-z0-9+.-]*:)?\/\/(?:[^@/?#]*@)?(\[[0-9a-f:.]*\]|[^/?#:\s@[]*)/i.exec(text) ??
    /^()([a-z0-9-]+(?:\.[a-z0-9-]+)+)/i.exec(text)
  const host = match?.[2]
  if (!host) return '(a URL that does not parse)'
  return match[1] ? `${match[1]}//${host.toLowerCase()}` : host.toLowerCase()
}

/**
 * A URL the caller gave that does not parse, shown so a person sees what was given: one shaped
 * like a URL (a scheme, `//`, or a dotted host first) as its scheme and host only (showUrl: its
 * user, port, path and query may hold keys), then "/…"; free text ("not a url", "htps//host") as
 * given, its query cut, every run of 16 or more letters and digits (a key pasted in the wrong
 * place) cut to its first four, at most 80 characters. Quoted.
 */
export function showGivenUrl(text: string): string {
  const host = showUrl(text)
  if (host !== '(a URL that does not parse)') return JSON.stringify(`${host}/…`)
  let shown = text.trim().replace(/[?#][\s\S]*$/, '?…')
  shown = shown.replace(/[^\s/@]*@/g, '…@').replace(/[A-Za-z0-9_-]{16,}/g, (run) => `${run.slice(0, 4)}…`)
  return JSON.stringify(shown.length > 80 ? `${shown.slice(0, 80)}…` : shown)
}

/**
 * A set of secret values and the means to scrub them from text. Values shorter than 4 characters
 * are not registered: masking "1" everywhere would destroy messages and protect nothing.
 *
 * A secret is masked in the forms a service or a library writes it, not only as given:
 * percent-encoded (in either case, and in part), JSON-escaped, base64 and base64url (with and
 * without padding, and inside a longer base64 stream), and each of these once escaped for Markdown
 * and HTML.
 *
 * @example
 * ```ts
 * import { SecretRedactor } from 'proving-kit'
 *
 * const redactor = new SecretRedactor([process.env.PROVING_API_KEY])
 * console.log(redactor.redact(`key=${encodeURIComponent(process.env.PROVING_API_KEY ?? '')}`)) // key=***
 * ```
 */
export class SecretRedactor {
  readonly #secrets = new Set<string>()
  #pattern: RegExp | null | undefined

  constructor(secrets: Iterable<string | undefined | null> = []) {
    for (const secret of secrets) this.add(secret)
  }

  /** Registers a secret (trimmed; ignored when shorter than 4 characters). */
  add(secret: string | undefined | null): this {
    if (typeof secret !== 'string') return this
    const value = secret.trim()
    if (value.length < 4) return this
    this.#secrets.add(value)
    this.#pattern = undefined
    return this
  }

  /** How many secrets are registered. */
  get size(): number {
    return this.#secrets.size
  }

  /** The text with every form of every registered secret replaced by `***`. */
  redact(text: string): string {
    if (this.#pattern === undefined) this.#pattern = compile(this.#secrets)
    return this.#pattern ? text.replace(this.#pattern, REDACTED) : text
  }
}

/**
 * The written forms of a secret that stand on their own (raw, percent-encoded in both cases,
 * JSON-escaped, base64 and base64url with and without padding, and the part of its base64 that
 * is the same at each alignment in a longer stream), for a host's own masking that matches exact
 * strings (the runner's `::add-mask::`). Forms shorter than 4 characters are left out.
 */
export function secretForms(secret: string): string[] {
  const value = secret.trim()
  if (value.length < 4) return []
  const percent = encodeURIComponent(value)
  const json = JSON.stringify(value).slice(1, -1)
  const forms = [
    value,
    percent,
    percent.replace(/%[0-9A-F]{2}/g, (byte) => byte.toLowerCase()),
    json,
    json.replaceAll('/', '\\/'),
    ...base64Forms(value),
  ]
  return [...new Set(forms)].filter((form) => form.length >= 4)
}

/** Base64 and base64url of a secret: whole (padded and not), and, for secrets of 8 characters or more, the part that is the same at any of the three alignments inside a longer stream. */
function base64Forms(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8')
  const whole = bytes.toString('base64')
  const forms = [whole, whole.replace(/=+$/, '')]
  if (value.length >= 8) {
    for (let offset = 0; offset < 3; offset++) {
      const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64')
      const total = offset + bytes.length
      // Characters that hold bits of the bytes before the secret, or after it, vary with them.
      const first = [0, 2, 3][offset]!
      const last = 4 * Math.floor(total / 3) + (total % 3)
      forms.push(encoded.slice(first, last))
    }
  }
  return [...new Set([...forms, ...forms.map((form) => form.replace(/\+/g, '-').replace(/\//g, '_'))])]
}

/** One pattern for every form of every secret, the longest secrets first (a secret that contains another is masked whole). */
function compile(secrets: ReadonlySet<string>): RegExp | null {
  if (secrets.size === 0) return null
  const alternatives: string[] = []
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    // The summary's escaping breaks what GitHub would link (`https:/\u200b/`, `@\u200b`, `#\u200b1`)
    // with a zero-width space: one may stand between any two characters of a secret.
    alternatives.push([...secret].map((character) => characterPattern(character, true)).join('\u200b?'))
    for (const form of base64Forms(secret))
      alternatives.push([...form].map((character) => characterPattern(character, false)).join(''))
  }
  return new RegExp(alternatives.join('|'), 'g')
}

/** Characters the job summary's escaping (service-text.ts forSummary, forSummaryCell) puts a backslash before. */
const MARKDOWN_ESCAPED = new Set(['\\', '*', '[', ']', '~', '$', '_', '`', '|'])
const HTML_ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
/** JSON's two-character escapes a secret's character may be written with. */
const JSON_SHORT_ESCAPES = new Set(['"', '\\', '/'])

/** The ways one character of a secret may be written: itself, escaped for Markdown or HTML, and (`encoded`) percent-encoded or JSON-escaped. */
function characterPattern(character: string, encoded: boolean): string {
  const literal = escapeRegExp(character)
  // Runs of backslashes are bounded: an unbounded `\\*` backtracks quadratically over a long run.
  const ways = [MARKDOWN_ESCAPED.has(character) ? `\\\\{0,8}${literal}` : literal]
  if (HTML_ENTITIES[character]) ways.push(escapeRegExp(HTML_ENTITIES[character]))
  if (encoded) {
    for (const byte of Buffer.from(character, 'utf8')) ways.push(`%${anyCaseHex(byte, 2)}`)
    // A JSON escape's backslash, itself escaped again (a JSON body quoted in JSON, the summary's
    // Markdown escaping): up to eight of them.
    const slash = '\\\\{1,8}'
    ways.push(
      Array.from(
        { length: character.length },
        (_, index) => `${slash}u${anyCaseHex(character.charCodeAt(index), 4)}`,
      ).join(''),
    )
    if (JSON_SHORT_ESCAPES.has(character)) ways.push(character === '\\' ? slash : `${slash}${literal}`)
  }
  return ways.length === 1 ? ways[0]! : `(?:${ways.join('|')})`
}

function anyCaseHex(value: number, width: number): string {
  return [...value.toString(16).padStart(width, '0')]
    .map((digit) => (/[a-f]/.test(digit) ? `[${digit}${digit.toUpperCase()}]` : digit))
    .join('')
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&')
}

/**
 * Scrubs free text: the credentials of every URL in it (see {@link redactUrl}), and every secret of `redactor`.
 *
 * @param text The text (a message, a log line, a service's answer).
 * @param redactor The secrets to mask too.
 * @returns The text, scrubbed.
 * @example
 * ```ts
 * import { redact, SecretRedactor } from 'proving-kit'
 *
 * const line = redact('GET https://u:p@proving.example/q failed for sk-live-123', new SecretRedactor(['sk-live-123']))
 * // GET https://***:***@proving.example/q failed for ***
 * ```
 */
export function redact(text: string, redactor?: SecretRedactor): string {
  // A URL that parses keeps its path (artifact links are meant to be read), minus credentials;
  // one that does not parse (a bad port, a stray character) shows its scheme and host only.
  const withUrls = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (match) => {
    const [url, after] = splitTrailingPunctuation(match)
    return (URL.canParse(url) ? redactUrl(url) : showUrl(url)) + after
  })
  return redactor ? redactor.redact(withUrls) : withUrls
}

/**
 * A URL in a sentence ends before the punctuation that follows it, as GitHub's autolinks read it:
 * `at http://127.0.0.1:8790: nothing` names `http://127.0.0.1:8790`. Taken into the URL, the colon
 * made a port that does not parse (`8790:`), and the URL was shown cut to its scheme and host.
 * Trailing `.,:;!?*_~'` are left out, and a `)` or `]` that closes nothing inside the URL.
 */
function splitTrailingPunctuation(match: string): [url: string, after: string] {
  let end = match.length
  const count = (character: string) => [...match.slice(0, end)].filter((each) => each === character).length
  while (end > 0) {
    const last = match[end - 1]!
    if (/[.,:;!?*_~']/.test(last)) end--
    else if (last === ')' && count(')') > count('(')) end--
    else if (last === ']' && count(']') > count('[')) end--
    else break
  }
  return [match.slice(0, end), match.slice(end)]
}
