import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { Readable } from 'node:stream'
import { FormDataEncoder, type FileLike, type FormDataLike } from 'form-data-encoder'

/**
 * A multipart/form-data body whose files stream from disk. The encoding itself is
 * form-data-encoder's; this module only supplies file parts that read in large chunks (1 MiB:
 * what gets an upload near curl's throughput, see shared/perf-notes.md) and a known
 * `content-length`, so undici sends the body as a plain stream and nothing holds a copy of it.
 */

export type FilePart = {
  path: string
  /** The file name sent in the part's Content-Disposition. */
  fileName?: string
  contentType: string
}

export type MultipartFields = Record<string, string | FilePart>

export type MultipartBody = {
  headers: Record<string, string>
  stream: Readable
  contentLength: number
}

const READ_CHUNK_BYTES = 1024 * 1024

class DiskFile implements FileLike {
  readonly name: string
  readonly type: string
  readonly size: number
  readonly lastModified = 0
  readonly [Symbol.toStringTag] = 'File'
  readonly #path: string

  constructor(path: string, name: string, type: string, size: number) {
    this.#path = path
    this.name = name
    this.type = type
    this.size = size
  }

  stream(): AsyncIterable<Uint8Array> {
    return createReadStream(this.#path, { highWaterMark: READ_CHUNK_BYTES })
  }
}

/** The minimal FormData shape form-data-encoder reads; global FormData only takes Blobs. */
class PartList implements FormDataLike {
  readonly [Symbol.toStringTag] = 'FormData'
  readonly #entries: [string, string | FileLike][] = []

  append(name: string, value: unknown): void {
    this.#entries.push([name, value as string | FileLike])
  }
  getAll(name: string): (string | FileLike)[] {
    return this.#entries.filter(([key]) => key === name).map(([, value]) => value)
  }
  *entries(): IterableIterator<[string, string | FileLike]> {
    yield* this.#entries
  }
  [Symbol.iterator](): IterableIterator<[string, string | FileLike]> {
    return this.entries()
  }
}

/**
 * Builds a body factory: each call opens the files anew, so a request refused before
 * processing (429, connection refused) can be sent again. The sizes are read once, up front.
 */
export async function prepareMultipart(fields: MultipartFields): Promise<() => MultipartBody> {
  const parts: [string, string | DiskFile][] = []
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') {
      parts.push([name, value])
      continue
    }
    const info = await stat(value.path)
    parts.push([
      name,
      new DiskFile(value.path, value.fileName ?? basename(value.path), value.contentType, info.size),
    ])
  }
  return () => {
    const form = new PartList()
    for (const [name, value] of parts) form.append(name, value)
    const encoder = new FormDataEncoder(form)
    const contentLength = Number(encoder.contentLength)
    return {
      headers: {
        'content-type': encoder.contentType,
        'content-length': String(contentLength),
      },
      stream: Readable.from(encodeParts(encoder), { objectMode: false, highWaterMark: READ_CHUNK_BYTES }),
      contentLength,
    }
  }
}

/**
 * The body's bytes: form-data-encoder's part headers, values and boundaries (`values()`), with
 * each file's 1 MiB reads passed through as they are. Its own `encode()` copies every file into
 * 64 KiB pieces, one async step each: that made a 1 GiB upload 2-3x slower (bench/, figure 2)
 * and doubled the garbage to collect.
 */
async function* encodeParts(encoder: FormDataEncoder): AsyncGenerator<Uint8Array> {
  for (const part of encoder.values()) {
    if (part instanceof DiskFile) yield* part.stream()
    else yield part as Uint8Array
  }
}
