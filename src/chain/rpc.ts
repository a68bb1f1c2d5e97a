import { InvalidInputError } from '../core/errors.ts'
import { inputNames } from '../core/checks.ts'
import { refusesPlainHttp } from '../core/http/network-rule.ts'
import { redact, SecretRedactor, showUrl } from '../core/redact.ts'

/**
 * An RPC URL as the chain checks hold it. Providers put their API key in the URL
 * (`https://mainnet.infura.io/v3/<key>`, `https://eth-sepolia.g.alchemy.com/v2/<key>`, or a
 * `?apikey=` parameter), so the URL is a secret: messages name the RPC by its host only, and
 * the redactor masks the whole URL, its path and its credentials wherever a library prints them.
 */
export type RpcEndpoint = {
  url: string
  /** What messages show: the host (and port), never the path or query. */
  display: string
  redactor: SecretRedactor
  /** Scrubs the URL's secrets (and those already in the redactor) from free text. */
  scrub(text: string): string
}

/**
 * `input` names the flag or option the URL came from, for the error of a malformed URL. Plain
 * http is refused to a host that is not this machine unless `allowInsecureHttp`: the URL often
 * carries the provider's key, and the answer is what the gate calls "registered on chain" (the
 * services' rule, core/http/network-rule.ts).
 */
export function rpcEndpoint(
  url: string,
  input: string,
  redactor: SecretRedactor = new SecretRedactor(),
  allowInsecureHttp = false,
): RpcEndpoint {
  const trimmed = url.trim()
  let parsed: URL
  try {
    parsed = new URL(trimmed)
  } catch {
    throw new InvalidInputError(`${input} is not a valid URL: "${showUrl(trimmed)}"; give an absolute http(s) URL.`, {
      input,
    })
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new InvalidInputError(`${input} must use http or https, got "${parsed.protocol}".`, { input })
  }
  registerUrlSecrets(redactor, trimmed, parsed)
  if (refusesPlainHttp(parsed, allowInsecureHttp)) {
    throw new InvalidInputError(
      `${input} ${showUrl(parsed)} is plain http to another machine: use https, or allow it (${inputNames('allow-insecure-http', 'allowInsecureHttp')}).`,
      {
        input,
        metaMessages: [
          "The key in the URL and the registry's answer would cross the network in clear: anyone on the way could say a fact is registered.",
        ],
      },
    )
  }
  return {
    url: trimmed,
    display: parsed.host,
    redactor,
    scrub: (text) => redact(text, redactor),
  }
}

/** Adds the parts of a URL that can carry a key to a redactor (the host is left readable). */
export function registerUrlSecrets(redactor: SecretRedactor, raw: string, parsed: URL = new URL(raw)): void {
  for (const secret of urlSecrets(raw, parsed)) redactor.add(secret)
}

/**
 * The parts of a URL to mask (for hosts with their own secret masking, like the action's
 * `setSecret`): the URL, its path and query, its credentials, and what looks like a key in them.
 * Empty for text that is not a URL.
 */
export function urlSecrets(raw: string, parsed?: URL): string[] {
  if (!parsed) {
    try {
      parsed = new URL(raw.trim())
    } catch {
      return raw.trim() ? [raw.trim()] : []
    }
  }
  const secrets = [raw.trim(), parsed.toString()]
  if (parsed.username) secrets.push(decodeURIComponent(parsed.username))
  if (parsed.password) secrets.push(decodeURIComponent(parsed.password))
  const pathAndQuery = `${parsed.pathname}${parsed.search}`
  if (pathAndQuery !== '/') secrets.push(pathAndQuery, `${parsed.host}${pathAndQuery}`)
  // A key is usually one long path segment or query value; mask it even where it is printed
  // apart from the rest of the URL. Short segments ("v3", "rpc") are words, not keys.
  for (const segment of parsed.pathname.split('/')) {
    if (looksLikeKey(segment)) secrets.push(segment)
  }
  for (const value of parsed.searchParams.values()) {
    if (value.length >= 8) secrets.push(value)
  }
  return [...new Set(secrets)]
}

function looksLikeKey(segment: string): boolean {
  return segment.length >= 12 && /\d/.test(segment) && /^[A-Za-z0-9_\-.~=+]+$/.test(segment)
}
