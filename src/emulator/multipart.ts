import { createHash, randomUUID } from 'node:crypto'
import { createWriteStream } from 'node:fs'
import { mkdir, rename, rm } from 'node:fs/promises'
import type { IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { type Readable, Transform, type TransformCallback } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import busboy from 'busboy'
import { badRequest } from './errors.ts'
import { HttpError } from './router.ts'

/**
 * multipart/form-data uploads, parsed by busboy and streamed to files on disk as they arrive:
 * nothing holds a whole upload in memory, so a 1 GiB pie.zip costs the emulator a write buffer,
 * not a gigabyte. Each file is hashed on the way through (its sha256 names the upload in the
 * state). Every failure answers 400 with a body naming the part, and removes what was written.
 */

export type UploadedFile = {
  field: string
  /** Where the upload sits until `keepFile` moves it. */
  path: string
  size: number
  sha256: string
  fileName: string
  contentType: string
}

export type Form = { fields: Map<string, string>; files: Map<string, UploadedFile> }

export type ReadFormOptions = {
  /** Directory for uploads in flight (on the same file system as their final place). */
  incomingDir: string
  /** Names of the file parts this endpoint takes; any other file part is refused. */
  fileFields: readonly string[]
  maxFileBytes: number
}

const MAX_FIELD_BYTES = 1024 * 1024
const MAX_FIELDS = 64

class Sha256Counter extends Transform {
  readonly hash = createHash('sha256')
  size = 0
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.hash.update(chunk)
    this.size += chunk.length
    callback(null, chunk)
  }
}

export async function readForm(req: IncomingMessage, options: ReadFormOptions): Promise<Form> {
  const contentType = req.headers['content-type'] ?? ''
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    throw new HttpError(
      400,
      badRequest(
        `The body must be multipart/form-data; got ${contentType ? JSON.stringify(contentType) : 'no content-type'}.`,
      ),
    )
  }
  await mkdir(options.incomingDir, { recursive: true })
  const form: Form = { fields: new Map(), files: new Map() }
  const writes: Promise<void>[] = []
  const streams: Readable[] = []
  let problem: string | undefined
  const refuse = (message: string) => {
    problem ??= message
  }

  let parser: busboy.Busboy
  try {
    parser = busboy({
      headers: req.headers,
      // A few spare file parts, so an unexpected one is refused by name rather than by count.
      limits: {
        fieldSize: MAX_FIELD_BYTES,
        fields: MAX_FIELDS,
        files: options.fileFields.length + 4,
        fileSize: options.maxFileBytes,
      },
    })
  } catch (error) {
    throw new HttpError(400, badRequest(`The multipart body cannot be read: ${(error as Error).message}.`))
  }

  parser.on('field', (name, value, info) => {
    if (info.valueTruncated) refuse(`Field ${name} is longer than ${MAX_FIELD_BYTES} bytes.`)
    else if (form.fields.has(name)) refuse(`Field ${name} is given more than once.`)
    else form.fields.set(name, value)
  })
  parser.on('file', (name, stream, info) => {
    if (!options.fileFields.includes(name)) {
      refuse(`Unexpected file part ${name}; this endpoint takes ${options.fileFields.join(', ')}.`)
      stream.resume()
      return
    }
    if (form.files.has(name)) {
      refuse(`File part ${name} is given more than once.`)
      stream.resume()
      return
    }
    streams.push(stream)
    const path = join(options.incomingDir, `${randomUUID()}.upload`)
    const counter = new Sha256Counter()
    const upload: UploadedFile = {
      field: name,
      path,
      size: 0,
      sha256: '',
      fileName: info.filename ?? name,
      contentType: info.mimeType,
    }
    form.files.set(name, upload)
    stream.on('limit', () => refuse(`File ${name} is larger than ${options.maxFileBytes} bytes.`))
    writes.push(
      pipeline(stream, counter, createWriteStream(path)).then(() => {
        upload.size = counter.size
        upload.sha256 = counter.hash.digest('hex')
      }),
    )
  })
  parser.on('filesLimit', () => refuse(`Too many file parts; this endpoint takes ${options.fileFields.join(', ')}.`))
  parser.on('fieldsLimit', () => refuse(`Too many fields (more than ${MAX_FIELDS}).`))

  try {
    await pipeline(req, parser)
    await Promise.all(writes)
  } catch (error) {
    // A broken body can leave a file part open; end those writes so they can be removed.
    for (const stream of streams) stream.destroy(error as Error)
    await Promise.allSettled(writes)
    await discardForm(form)
    throw new HttpError(400, badRequest(`The multipart body cannot be read: ${(error as Error).message}.`))
  }
  if (problem) {
    await discardForm(form)
    throw new HttpError(400, badRequest(problem))
  }
  return form
}

/** Removes the uploads of a form that is not kept. */
export async function discardForm(form: Form): Promise<void> {
  await Promise.all([...form.files.values()].map((file) => rm(file.path, { force: true })))
}

/** Moves an upload to its final place. */
export async function keepFile(file: UploadedFile, destination: string): Promise<void> {
  await rename(file.path, destination)
  file.path = destination
}
