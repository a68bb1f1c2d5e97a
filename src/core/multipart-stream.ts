import { randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { FormDataEncoder, type FileLike } from 'form-data-encoder'
import type { RequestBody } from './http.ts'
import { PartList } from './multipart.ts'

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

/** The file part: its length is unknown (NaN), so the encoder declares no content-length. */
class StreamedFile implements FileLike {
  readonly name: string
  readonly type: string
  readonly size = Number.NaN
  readonly lastModified = 0
  readonly [Symbol.toStringTag] = 'File'
  readonly #bytes: AsyncIterable<Uint8Array>

  constructor(name: string, type: string, bytes: AsyncIterable<Uint8Array>) {
    this.name = name
    this.type = type
    this.#bytes = bytes
  }

  stream(): AsyncIterable<Uint8Array> {
    return this.#bytes
  }
}

export function streamedMultipart(fields: Record<string, string>, file: StreamedFilePart): () => RequestBody {
  const boundary = `form-data-boundary-${randomBytes(16).toString('hex')}`
  let sent = false
  return () => {
    if (sent) throw new Error('A streamed multipart body can be sent only once.')
    sent = true
    // The encoding is form-data-encoder's, as in ./multipart.ts: the fields in order, the file last.
    const form = new PartList()
    for (const [name, value] of Object.entries(fields)) form.append(name, value)
    const streamed = new StreamedFile(file.fileName, file.contentType, file.bytes)
    form.append(file.field, streamed)
    const encoder = new FormDataEncoder(form, boundary)
    // Its parts one by one, the file's chunks as they come (encode() would cut them to 64 KiB).
    async function* parts(): AsyncGenerator<Uint8Array> {
      for (const part of encoder.values()) {
        if (part === streamed) yield* file.bytes
        else yield part as Uint8Array
      }
    }
    return {
      headers: { 'content-type': encoder.contentType },
      stream: Readable.from(parts(), { objectMode: false, highWaterMark: 1024 * 1024 }),
    }
  }
}
