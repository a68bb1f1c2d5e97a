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

/** Masks credential-carrying query parameters and any user:password part of a URL. */
export function redactUrl(url: string | URL): string {
  let parsed: URL
  try {
    parsed = new URL(String(url))
  } catch {
    return String(url).replace(SECRET_PARAMETER_IN_TEXT, `$1${REDACTED}`)
  }
  if (parsed.username) parsed.username = REDACTED
  if (parsed.password) parsed.password = REDACTED
  for (const name of [...parsed.searchParams.keys()]) {
    if (SECRET_QUERY_PARAMETERS.has(name.toLowerCase())) parsed.searchParams.set(name, REDACTED)
  }
  // URLSearchParams encodes `*`; keep the mask readable.
  return parsed.toString().replaceAll('%2A%2A%2A', REDACTED)
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
  const match = /^([a-z][a-z0-9+.-]*:)?\/\/(?:[^@/?#]*@)?(\[[0-9a-f:.]*\]|[^/?#:\s@[]*)/i.exec(text) ?? /^()([a-z0-9-]+(?:\.[a-z0-9-]+)+)/i.exec(text)
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
 * A set of secret values and the means to scrub them from text. Values shorter than 4
 * characters are not registered: masking "1" everywhere would destroy messages and protect
 * nothing.
 */
export class SecretRedactor {
  readonly #secrets = new Set<string>()

  constructor(secrets: Iterable<string | undefined | null> = []) {
    for (const secret of secrets) this.add(secret)
  }

  add(secret: string | undefined | null): this {
    if (typeof secret !== 'string') return this
    const value = secret.trim()
    if (value.length < 4) return this
    this.#secrets.add(value)
    // A secret also shows up URL-encoded inside query strings and bodies.
    this.#secrets.add(encodeURIComponent(value))
    return this
  }

  get size(): number {
    return this.#secrets.size
  }

  redact(text: string): string {
    let out = text
    // Longest first, so a secret that contains another is masked whole.
    for (const secret of [...this.#secrets].sort((a, b) => b.length - a.length)) {
      out = out.split(secret).join(REDACTED)
    }
    return out
  }
}

/** Scrubs URLs (by parameter name) and known values from free text. */
export function redact(text: string, redactor?: SecretRedactor): string {
  // A URL that parses keeps its path (artifact links are meant to be read), minus credentials;
  // one that does not parse (a bad port, a stray character) shows its scheme and host only.
  const withUrls = text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (match) => (URL.canParse(match) ? redactUrl(match) : showUrl(match)))
  return redactor ? redactor.redact(withUrls) : withUrls
}
