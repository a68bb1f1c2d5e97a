import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import type { RequestBody } from './http.ts'

/**
 * A multipart/form-data body whose one file part is produced while it is sent (a zip being
 * written), so its length is not known up front: no `content-length`, and undici sends the body
 * with chunked transfer encoding (HTTP/1.1 requires servers to accept it; one that does not
 * answers 411 before reading it). The text fields come first and the file last, so the body
 * ends with the file's last bytes and the closing boundary: a body whose file stream fails
 * (the PIE turned out invalid) is cut before its end, and the server, which never saw the
 * closing boundary, has no complete form to act on.
 *
 * Sent once: unlike a file on disk, the bytes cannot be produced again, so the factory refuses a
 * second call (the caller sends such a request without retries).
 */

export type StreamedFilePart = {
  field: string
  fileName: string
  contentType: string
  bytes: AsyncIterable<Uint8Array>
}

const encoder = new TextEncoder()

/** As form-data-encoder (and browsers) write a quoted name: no quote or line break survives. */
function quoted(text: string): string {
  return text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')
}

export function streamedMultipart(fields: Record<string, string>, file: StreamedFilePart): () => RequestBody {
  const boundary = `form-data-boundary-${randomBytes(16).toString('hex')}`
  let sent = false
  return () => {
    if (sent) throw new Error('A streamed multipart body can be sent only once.')
    sent = true
    async function* parts(): AsyncGenerator<Uint8Array> {
      for (const [name, value] of Object.entries(fields)) {
        yield encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="${quoted(name)}"\r\n\r\n${value}\r\n`)
      }
      yield encoder.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="${quoted(file.field)}"; filename="${quoted(file.fileName)}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
      )
      yield* file.bytes
      yield encoder.encode(`\r\n--${boundary}--\r\n`)
    }
    return {
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      stream: Readable.from(parts(), { objectMode: false, highWaterMark: 1024 * 1024 }),
    }
  }
}
