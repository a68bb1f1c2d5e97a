/**
 * How much of an answer is read: a successful body up to its limit (larger: refused), an error
 * body cut at MAX_ERROR_BODY_BYTES (it only feeds a code and an excerpt), and a body dropped
 * without an error left unhandled.
 */
import type { Dispatcher } from 'undici'
import { InvalidResponseError } from '../errors.ts'

/** An error body is read up to this, then cut: a large one never becomes an error of its own. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024

export async function readCapped(
  body: Dispatcher.ResponseData['body'],
  limit: number,
  options: { truncate?: boolean; what?: string } = {},
): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    const buffer = chunk as Buffer
    size += buffer.length
    if (size > limit) {
      body.destroy()
      if (!options.truncate)
        throw new InvalidResponseError(
          `${options.what ?? 'The answer'} is larger than ${formatBytes(limit)}; refused unread.`,
        )
      chunks.push(buffer.subarray(0, buffer.length - (size - limit)))
      break
    }
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Stops reading a body: no error event left unhandled. */
export function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {})
  body.destroy()
}

export function formatBytes(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${bytes / (1024 * 1024)} MiB`
    : bytes >= 1024
      ? `${bytes / 1024} KiB`
      : `${bytes} bytes`
}
