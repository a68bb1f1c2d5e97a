/**
 * What the release and the attestation say was proven: `facts.json` (the predicate) and the
 * in-toto v1 Statement whose subject is the pie.zip. Pure: the values in, the JSON out. Service
 * text (status, hashes) is data here; it is only ever written as JSON string values.
 *
 * The Statement is not signed here: signing needs the job's OIDC token and Sigstore (Fulcio,
 * Rekor). A workflow signs it with actions/attest, given pie.zip as the subject and facts.json as
 * the predicate with PREDICATE_TYPE (docs/github.md).
 */

/** The in-toto Statement layer, v1 (github.com/in-toto/attestation/spec/v1/statement.md). */
export const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1'
/** Names what facts.json holds; a URI under the project's documentation, versioned. */
export const PREDICATE_TYPE = 'https://github.com/proving-kit/proving-kit/blob/v1/docs/github.md#facts-predicate-v1'

export type ProvenFacts = {
  queryId: string | null
  status: string | null
  programHash: string | null
  sharpFactHash: string | null
  integrityFactHash: string | null
  isFactMocked: boolean | null
  /** The on-chain check, one object per chain (chain, registry, blockNumber, registered, ...). */
  onchain: unknown[]
  /** Whether the gate passed, and every reason it refused. */
  gate: { passed: boolean; refusals: string[] }
  pie: { name: string; sha256: string } | null
  /** The proving service's origin (scheme, host, port): never a path, query or credential. */
  service: string | null
  emulated: boolean
  /** The workflow run that proved it. */
  run: string | null
}

export type InTotoStatement = {
  _type: typeof STATEMENT_TYPE
  subject: { name: string; digest: { sha256: string } }[]
  predicateType: string
  predicate: ProvenFacts
}

export function inTotoStatement(facts: ProvenFacts & { pie: { name: string; sha256: string } }): InTotoStatement {
  return {
    _type: STATEMENT_TYPE,
    subject: [{ name: facts.pie.name, digest: { sha256: facts.pie.sha256.toLowerCase() } }],
    predicateType: PREDICATE_TYPE,
    predicate: facts,
  }
}

/** The origin of a service URL, credentials and path left out; null when it is not a URL. */
export function serviceOrigin(url: string | undefined): string | null {
  if (!url) return null
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? null : origin
  } catch {
    return null
  }
}

/** `sha256sum` lines: the digest, two spaces, the name (binary mode is not marked). */
export function sha256Sums(files: { name: string; sha256: string }[]): string {
  return files.map((file) => `${file.sha256}  ${file.name}\n`).join('')
}
