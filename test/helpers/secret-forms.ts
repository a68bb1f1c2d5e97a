/**
 * A secret as services and libraries write it (issue 31), and an oracle that says whether a text
 * still gives it away: it undoes the summary's Markdown and HTML escaping, then tries every
 * decoding (JSON unescaping, percent-decoding, base64 and base64url at every alignment) and looks
 * for the secret in what comes out. It is written apart from src/core/redact.ts, which it judges.
 */

const b64 = (text: string) => Buffer.from(text).toString('base64')
const urlSafe = (text: string) => text.replace(/\+/g, '-').replace(/\//g, '_')

/** [name, the secret written that way], for a secret with `/`, `+` and `=` in it. */
export function secretFormsWritten(secret: string): [string, string][] {
  return [
    ['raw', secret],
    ['percent-encoded, upper case', encodeURIComponent(secret)],
    ['percent-encoded, lower case', encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (byte) => byte.toLowerCase())],
    [
      'percent-encoded, every character, mixed case',
      [...Buffer.from(secret)]
        .map((byte, i) => `%${byte.toString(16).padStart(2, '0')[i % 2 ? 'toUpperCase' : 'toLowerCase']()}`)
        .join(''),
    ],
    ['JSON with an escaped solidus', JSON.stringify(secret).replaceAll('/', '\\/').slice(1, -1)],
    [
      'JSON with \\u escapes',
      [...secret].map((c) => (/[a-z]/.test(c) ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)).join(''),
    ],
    ['a JSON body quoted in JSON', JSON.stringify(JSON.stringify({ key: secret.replaceAll('/', '\\/') }))],
    ['base64, padded', b64(secret)],
    ['base64, unpadded', b64(secret).replace(/=+$/, '')],
    ['base64url, padded', urlSafe(b64(secret))],
    ['base64url, unpadded', urlSafe(b64(secret)).replace(/=+$/, '')],
    ['base64 in a stream, alignment 0', b64(`abc${secret}xyz`)],
    ['base64 in a stream, alignment 1', b64(`a${secret}x`)],
    ['base64 in a stream, alignment 2', b64(`Basic alice:${secret}:more`)],
    ['base64url in a stream, alignment 2', urlSafe(b64(`ab${secret}`))],
  ]
}

/** Whether `shown` (a log, a summary, an output, a JSON file) still gives `secret` away. */
export function leaksSecret(shown: string, secret: string): boolean {
  const text = shown
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\\(.)/g, '$1')
  const json = (value: string) =>
    value
      .replace(/\\+u([0-9a-f]{4})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
      .replace(/\\+(.)/g, '$1')
  const percent = (value: string) =>
    value.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
  const candidates = [shown, text, json(shown), json(text), percent(text), percent(json(text))]
  for (const run of text.match(/[A-Za-z0-9+/_=-]{8,}/g) ?? []) {
    for (let skip = 0; skip < 4; skip++)
      candidates.push(Buffer.from(urlSafeBack(run.slice(skip)), 'base64').toString('latin1'))
  }
  return candidates.some((candidate) => candidate.includes(secret))
}

function urlSafeBack(text: string): string {
  return text.replace(/-/g, '+').replace(/_/g, '/')
}
