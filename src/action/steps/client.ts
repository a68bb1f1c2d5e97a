/**
 * The proving service as the action uses it (loaded lazily, see ./lazy.ts).
 */
import { createWriteStream } from 'node:fs'
import { rename, unlink } from 'node:fs/promises'
import { Readable } from 'node:stream'
import type { ReadableStream } from 'node:stream/web'
import { pipeline } from 'node:stream/promises'
import { ProvingClient } from '../../clients/proving.ts'
import { InvalidInputError, NetworkError, ServiceError } from '../../core/errors.ts'
import { closeDefaultDispatcher } from '../../core/http.ts'
import { redactUrl } from '../../core/redact.ts'
import type { Logger } from '../../core/runtime.ts'

export function provingClient(options: { baseUrl: string; apiKey: string | undefined; logger: Logger }): ProvingClient {
  try {
    return new ProvingClient(options)
  } catch (error) {
    throw new InvalidInputError(`\`base-url\` ${(error as Error).message.split('\n')[0]}`, { input: 'base-url', cause: error })
  }
}

/** Downloads one artifact of a query (metadata URLs need no authentication; redirects followed). */
export async function downloadFile(url: string, destination: string, signal?: AbortSignal): Promise<void> {
  const shown = redactUrl(url)
  const timeout = AbortSignal.timeout(120_000)
  let response: Response
  try {
    response = await fetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout })
  } catch (error) {
    throw new NetworkError(`Could not download ${shown}.`, { cause: error })
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel()
    throw new ServiceError(`Downloading ${shown} failed with ${response.status}.`, { status: response.status })
  }
  // Written beside the destination and renamed at the end: a cancelled or cut download leaves
  // no half-written file behind.
  const partial = `${destination}.${process.pid}.partial`
  try {
    await pipeline(Readable.fromWeb(response.body as ReadableStream), createWriteStream(partial))
    await rename(partial, destination)
  } catch (error) {
    await unlink(partial).catch(() => {})
    throw error
  }
}

export async function closeConnections(): Promise<void> {
  await closeDefaultDispatcher()
}
