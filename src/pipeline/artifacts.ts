/**
 * A query's artifacts (its `metadataUrls`: proof.json, metadata.json, pie.cairo0.zip) written to
 * disk: what `proving query download` and the action's artifact upload share.
 *
 * Every byte comes through the one `HttpClient` (`download`): the size capped, redirects
 * followed only within the link's own origin, plain http refused off loopback unless allowed,
 * the proxy settings honoured. A file is written under a temporary name beside its destination
 * and moved into place only once it is whole, so a cut, refused or cancelled download leaves
 * nothing behind; without `overwrite`, the move refuses an existing file (a hard link, which
 * fails when the name exists) instead of checking first and racing another writer.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { link, lstat, mkdir, rename, unlink } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { InvalidInputError, InvalidResponseError } from '../core/errors.ts'
import { inputNames } from '../core/checks.ts'
import { HttpClient } from '../core/http.ts'
import { refusesPlainHttp } from '../core/http/network-rule.ts'
import { showUrl } from '../core/redact.ts'
import type { Logger } from '../core/runtime.ts'

/** The largest artifact downloaded unless the caller says otherwise: real proofs are a few MiB. */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024

/** A name an artifact may be saved under: one path segment, no dot-files, nothing a shell or a filesystem reads specially. */
const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

export type ArtifactDownloadOptions = {
  /** Largest file accepted, in bytes (default 256 MiB). */
  maxBytes?: number | undefined
  /** Replace a file of the same name (default: refuse it). */
  overwrite?: boolean | undefined
  /** Plain http from another machine (default: refused). */
  allowInsecureHttp?: boolean | undefined
  signal?: AbortSignal | undefined
  logger?: Logger | undefined
}

export type DownloadedArtifact = {
  /** The file's name, from the link's last path segment. */
  name: string
  /** The link without its query string and credentials (a signed link's signature stays out of logs and JSON). */
  url: string
  path: string
  bytes: number
  /** Hex SHA-256 of what was written, computed as it was written. */
  sha256: string
}

/**
 * The file name a link names: its last path segment, decoded. A segment that decodes to a path
 * (a slash, a backslash, `..`), a hidden or empty name, or anything outside letters, digits,
 * `.`, `_` and `-` is refused: an artifact link must never choose where a file lands.
 */
export function artifactName(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new InvalidResponseError(`The service gave an artifact link that is not a URL: ${showUrl(url)}.`)
  }
  const segment = parsed.pathname.split('/').pop() ?? ''
  let name: string
  try {
    name = decodeURIComponent(segment)
  } catch {
    name = segment
  }
  if (!SAFE_NAME.test(name) || name.includes('..')) {
    throw new InvalidResponseError(
      `The artifact link ${showUrl(url)} does not end in a plain file name; refused (nothing written).`,
    )
  }
  return name
}

/**
 * Downloads one artifact to `destination`. Returns its size and SHA-256. Without `overwrite`,
 * an existing file at `destination` is refused and left as it was.
 */
export async function downloadArtifact(
  url: string,
  destination: string,
  options: ArtifactDownloadOptions = {},
): Promise<{ bytes: number; sha256: string }> {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw new InvalidResponseError(`The service gave an artifact link that is not a URL: ${showUrl(url)}.`)
  }
  if (refusesPlainHttp(parsed, options.allowInsecureHttp)) {
    throw new InvalidResponseError(
      `Refused to download the artifact ${basename(destination)} over plain http from another machine (${showUrl(url)}); allow it (${inputNames('allow-insecure-http', 'allowInsecureHttp')}).`,
    )
  }
  const origin = parsed.origin
  const http = new HttpClient({
    baseUrl: origin,
    serviceName: 'artifact host',
    allowInsecureHttp: options.allowInsecureHttp ?? false,
    logger: options.logger,
  })
  const partial = `${destination}.${process.pid}.${randomBytes(4).toString('hex')}.partial`
  const hash = createHash('sha256')
  try {
    const { bytes } = await http.download(url, {
      maxBytes: options.maxBytes ?? MAX_ARTIFACT_BYTES,
      signal: options.signal,
      what: `the artifact ${basename(destination)} from ${showUrl(url)}`,
      write: (body) =>
        pipeline(Readable.from(hashing(body, hash)), createWriteStream(partial, { flags: 'wx', mode: 0o644 })),
    })
    if (options.overwrite) {
      await rename(partial, destination)
    } else {
      try {
        await link(partial, destination)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw existsError(destination)
        throw error
      }
      await unlink(partial)
    }
    return { bytes, sha256: hash.digest('hex') }
  } catch (error) {
    await unlink(partial).catch(() => {})
    throw error
  }
}

/**
 * Downloads every artifact of a query into `outDir` (created if missing), one after the other.
 * Every link's name is checked, and without `overwrite` every destination too, before the first
 * byte is fetched: a refusal writes nothing. `only` keeps the artifacts of those names.
 */
export async function downloadArtifacts(
  urls: readonly string[],
  outDir: string,
  options: ArtifactDownloadOptions & { only?: readonly string[] | undefined } = {},
): Promise<DownloadedArtifact[]> {
  const planned = urls.map((url) => ({ url, name: artifactName(url) }))
  const seen = new Set<string>()
  for (const { name, url } of planned) {
    if (seen.has(name))
      throw new InvalidResponseError(
        `The service lists two artifacts named ${name} (from ${showUrl(url)}); refused (nothing written).`,
      )
    seen.add(name)
  }
  const wanted = options.only ? planned.filter(({ name }) => options.only!.includes(name)) : planned
  const missing = (options.only ?? []).filter((name) => !seen.has(name))
  if (missing.length > 0) {
    const listed = planned.length > 0 ? planned.map(({ name }) => name).join(', ') : 'none'
    throw new InvalidInputError(
      `The artifacts asked for (--only; only in the library) include ${missing.join(', ')}, which the query does not list (it lists: ${listed}).`,
      { input: 'only' },
    )
  }
  await mkdir(outDir, { recursive: true })
  if (!options.overwrite) {
    for (const { name } of wanted) {
      const path = join(outDir, name)
      if (await exists(path)) throw existsError(path)
    }
  }
  const downloaded: DownloadedArtifact[] = []
  for (const { url, name } of wanted) {
    const path = join(outDir, name)
    const { bytes, sha256 } = await downloadArtifact(url, path, options)
    downloaded.push({ name, url: linkShown(url), path, bytes, sha256 })
  }
  return downloaded
}

/** Scheme, host and path: a presigned link's query (X-Amz-Signature, ...) is a credential. */
function linkShown(url: string): string {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

async function* hashing(
  body: AsyncIterable<Uint8Array>,
  hash: ReturnType<typeof createHash>,
): AsyncIterable<Uint8Array> {
  for await (const chunk of body) {
    hash.update(chunk)
    yield chunk
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
    throw error
  }
}

function existsError(path: string): InvalidInputError {
  return new InvalidInputError(
    `${path} already exists; replace it (--force; overwrite in the library), or choose another folder (--out; outDir in the library).`,
    { input: 'out' },
  )
}
