import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { FormDataEncoder, type FileLike, type FormDataLike } from 'form-data-encoder'
import type { BodyContext } from './http.ts'
import { ReadBuffers, type ReadBufferStats, readFileChunks } from './upload-buffers.ts'

/**
 * A multipart/form-data body whose files stream from disk. The encoding itself is
 * form-data-encoder's; this module only supplies file parts that read in large chunks (1 MiB:
 * what gets an upload near curl's throughput, see shared/perf-notes.md) into reused buffers
 * where that is provably safe (./upload-buffers.ts), and a known `content-length`. The body is
 * an async iterable rather than a stream: undici then asks for each chunk only once it has
 * written the previous one, nothing reads ahead, and nothing holds a copy of the body.
 */

export type FilePart = {
  path: string
  /** The file name sent in the part's Content-Disposition. */
  fileName?: string
  contentType: string
}

export type MultipartFields = Record<string, string | FilePart>

export type MultipartOptions = {
  /**
   * Called as each chunk of the body goes to the HTTP client, with how much of its files was
   * handed over so far, of their sizes together: what a person uploading a 2,107-byte pie.zip
   * expects to read (the part headers and boundaries around it are not theirs to count). A body
   * without files counts its bytes.
   */
  onProgress?: ((progress: { sentBytes: number; totalBytes: number }) => void) | undefined
}

export type MultipartBody = {
  headers: Record<string, string>
  /** The body's bytes; iterate it once. */
  stream: AsyncIterable<Uint8Array>
  contentLength: number
  /** How the file reads were buffered so far. */
  readonly reads: ReadBufferStats
  /** Stops waiting for the HTTP client to say where the body goes; call once the request is over. */
  release(): void
}

class DiskFile implements FileLike {
  readonly name: string
  readonly type: string
  readonly size: number
  readonly lastModified = 0
  readonly [Symbol.toStringTag] = 'File'
  readonly path: string

  constructor(path: string, name: string, type: string, size: number) {
    this.path = path
    this.name = name
    this.type = type
    this.size = size
  }

  /** The file's bytes in fresh buffers (form-data-encoder's own `encode()` reads this). */
  stream(): AsyncIterable<Uint8Array> {
    return readFileChunks(this.path, this.size, new ReadBuffers({ recycle: false }))
  }
}

/** The minimal FormData shape form-data-encoder reads; global FormData only takes Blobs. */
export class PartList implements FormDataLike {
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
 * Builds a body factory: each call opens the files again, so a request refused before
 * processing (429, connection refused) can be sent again. The sizes are read once, up front.
 */
export async function prepareMultipart(
  fields: MultipartFields,
  options: MultipartOptions = {},
): Promise<(context?: Partial<BodyContext>) => MultipartBody> {
  const parts: [string, string | DiskFile][] = []
  for (const [name, value] of Object.entries(fields)) {
    if (typeof value === 'string') {
      parts.push([name, value])
      continue
    }
    const info = await stat(value.path)
    parts.push([name, new DiskFile(value.path, value.fileName ?? basename(value.path), value.contentType, info.size)])
  }
  return (context = {}) => {
    const form = new PartList()
    for (const [name, value] of parts) form.append(name, value)
    const encoder = new FormDataEncoder(form)
    const contentLength = Number(encoder.contentLength)
    // Reused read buffers only through the library's own agent (see ./upload-buffers.ts).
    const buffers = new ReadBuffers({ recycle: context.ownDispatcher === true })
    const { onProgress } = options
    const fileBytes = parts.reduce((sum, [, value]) => sum + (value instanceof DiskFile ? value.size : 0), 0)
    const hasFiles = parts.some(([, value]) => value instanceof DiskFile)
    const totalBytes = hasFiles ? fileBytes : contentLength
    let sentBytes = 0
    const onChunk = onProgress
      ? (bytes: number, ofFile: boolean) => {
          if (ofFile !== hasFiles) return
          sentBytes += bytes
          onProgress({ sentBytes, totalBytes })
        }
      : undefined
    let iterated = false
    const stream: AsyncIterable<Uint8Array> = {
      [Symbol.asyncIterator]: () => {
        // Two readers would share the read buffers: each body is read once.
        if (iterated) throw new Error('This multipart body has been read already; ask the factory for a new one.')
        iterated = true
        return encodeParts(encoder, buffers, onChunk)
      },
    }
    // undici names the body object it was given when it starts sending it.
    buffers.watch(stream)
    return {
      headers: {
        'content-type': encoder.contentType,
        'content-length': String(contentLength),
      },
      stream,
      contentLength,
      reads: buffers.stats,
      release: () => buffers.stopWatching(),
    }
  }
}

/**
 * The body's bytes: form-data-encoder's part headers, values and boundaries (`values()`), with
 * each file's 1 MiB reads passed through as they are. Its own `encode()` copies every file into
 * 64 KiB pieces, one async step each: that made a 1 GiB upload 2-3x slower (bench/, figure 2)
 * and doubled the garbage to collect.
 */
async function* encodeParts(
  encoder: FormDataEncoder,
  buffers: ReadBuffers,
  onChunk: ((bytes: number, ofFile: boolean) => void) | undefined,
): AsyncGenerator<Uint8Array> {
  const ofFile = onChunk && ((bytes: number) => onChunk(bytes, true))
  try {
    for (const part of encoder.values()) {
      if (part instanceof DiskFile) {
        yield* readFileChunks(part.path, part.size, buffers, ofFile)
      } else {
        const bytes = part as Uint8Array
        onChunk?.(bytes.length, false)
        yield bytes
      }
    }
  } finally {
    buffers.stopWatching()
  }
}
