/**
 * The proving service as the action uses it (loaded lazily, see ./lazy.ts).
 */
import { createWriteStream } from 'node:fs'
import { rename, unlink } from 'node:fs/promises'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { ProvingClient } from '../../clients/proving.ts'
import { InvalidInputError, InvalidResponseError } from '../../core/errors.ts'
import { closeDefaultDispatcher, HttpClient } from '../../core/http.ts'
import { showUrl } from '../../core/redact.ts'
import type { Logger } from '../../core/runtime.ts'

export function provingClient(options: { baseUrl: string; apiKey: string | undefined; logger: Logger; allowInsecureHttp?: boolean | undefined }): ProvingClient {
  try {
    return new ProvingClient(options)
  } catch (error) {
    throw new InvalidInputError(`\`base-url\` ${(error as Error).message.split('\n')[0]}`, { input: 'base-url', cause: error })
  }
}

/** The largest artifact (a proof) the action downloads: real proofs are a few MiB. */
export const MAX_DOWNLOAD_BYTES = 256 * 1024 * 1024

/**
 * Downloads one artifact of a query through the one HTTP client (metadata URLs need no
 * authentication): capped in size, redirects followed only within the link's own origin, the
 * proxy settings honoured. Written beside the destination and renamed at the end: a cancelled
 * or cut download leaves no half-written file behind.
 */
export async function downloadFile(
  url: string,
  destination: string,
  signal?: AbortSignal,
  options: { allowInsecureHttp?: boolean; maxBytes?: number; logger?: Logger } = {},
): Promise<void> {
  let origin: string
  try {
    origin = new URL(url).origin
  } catch {
    throw new InvalidResponseError(`The service gave an artifact link that is not a URL: ${showUrl(url)}.`)
  }
  const http = new HttpClient({ baseUrl: origin, serviceName: 'artifact host', allowInsecureHttp: options.allowInsecureHttp ?? true, logger: options.logger })
  const partial = `${destination}.${process.pid}.partial`
  try {
    await http.download(url, {
      maxBytes: options.maxBytes ?? MAX_DOWNLOAD_BYTES,
      signal,
      what: `the artifact ${showUrl(url)}`,
      write: (body) => pipeline(Readable.from(body), createWriteStream(partial)),
    })
    await rename(partial, destination)
  } catch (error) {
    await unlink(partial).catch(() => {})
    throw error
  }
}

export async function closeConnections(): Promise<void> {
  await closeDefaultDispatcher()
}
