import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel'
import { type FileHandle, open } from 'node:fs/promises'
import { Socket } from 'node:net'
import { InvalidInputError } from './errors.ts'

/**
 * The bytes of a file being uploaded, read from disk in 1 MiB chunks into buffers that are
 * filled again once the socket is provably done with them, instead of a fresh buffer per read.
 *
 * Why: a fresh 1 MiB buffer per read is 1 GiB of garbage for a 1 GiB upload. V8 frees those
 * buffers only when ~64 MiB of them have accumulated, so the client's peak RSS sat ~70 MiB above
 * its resting size, and allocating, faulting in and collecting them cost about half of the
 * upload's time (bench/, figure 2: 2.4 s for 1 GiB with fresh buffers, ~1 s with two reused).
 *
 * When a buffer may be filled again. undici sends an async-iterable body (writeIterable in
 * lib/dispatcher/client-h1.js, undici 7) as
 *
 *     for await (const chunk of body) { if (!writer.write(chunk)) await waitForDrain() }
 *
 * where `writer.write` is `socket.write(chunk)` (no callback; its result returned) and
 * `waitForDrain` resolves on the socket's 'drain' or 'close'. A Writable counts a chunk in its
 * buffered length until that chunk's write has completed, and `write()` returns false when that
 * length reaches its high-water mark; 'drain' comes when the length is back to 0. So for a
 * chunk at least as long as the socket's `writableHighWaterMark` (64 KiB for undici's TCP
 * sockets, 16 KiB for TLS; the chunks are 1 MiB): when undici asks for the next chunk, either
 * `write()` returned true (the length was below the mark, so this chunk's write had already
 * completed), or 'drain' came (every write completed), or the socket closed (nothing more is
 * sent from it). A completed write on Node's own sockets no longer reads the buffer: libuv has
 * handed the bytes to the kernel, and TLS encrypts (or copies) the clear text as it is written.
 * The generator below resumes after a `yield` only when its consumer asks for the next chunk,
 * which is where a buffer is given back.
 *
 * That holds only when the consumer is undici writing to such a socket, so a buffer is filled
 * again only when all of these hold; otherwise each read gets a fresh buffer:
 * - the request goes through the library's own agent (`ownDispatcher`): a caller's dispatcher
 *   may carry interceptors or handlers that keep chunks (undici's own request handler has no
 *   `onBodySent`), or not be undici at all;
 * - undici announced on the `undici:client:sendHeaders` diagnostics channel that this very body
 *   object is being sent over HTTP/1.1 on a socket of Node's own classes (`net.Socket`,
 *   `tls.TLSSocket`) with Node's own handle (TCP, TLSWrap), no write method replaced on the
 *   socket or its handle, and a high-water mark no larger than the chunk. Test doubles that
 *   intercept sockets (@mswjs/interceptors, under nock 14+ and msw, replaces `_writeGeneric`)
 *   acknowledge a write at once while they keep the chunk: they fail this check;
 * - nothing subscribes to `undici:request:bodyChunkSent`, which hands every chunk to its
 *   subscribers (checked when a chunk goes out and when its buffer would be reused).
 */

/** The read size: what gets an upload near curl's throughput (shared/perf-notes.md, figure 2). */
export const READ_CHUNK_BYTES = 1024 * 1024

const SEND_HEADERS = 'undici:client:sendHeaders'
const chunkSent = channel('undici:request:bodyChunkSent')

/** Bodies waiting for undici to say which socket carries them, by the body object undici was given. */
const announced = new WeakMap<object, (socket: unknown) => void>()
let watching = 0

function onSendHeaders(message: unknown): void {
  const body = (message as { request?: { body?: unknown } } | undefined)?.request?.body
  if (body !== null && typeof body === 'object') announced.get(body)?.((message as { socket?: unknown }).socket)
}

/** Socket and handle members through which bytes are written: none may be an own property. */
const WRITE_MEMBER = /^_?write/

/**
 * Whether a socket is one of Node's own, writing through Node's own handle, over HTTP/1.1: the
 * sockets whose completed writes no longer read the chunk (see above).
 */
function isNodeSocket(socket: unknown, chunkBytes: number): socket is Socket {
  if (!(socket instanceof Socket)) return false
  const prototype = Object.getPrototypeOf(socket) as object
  if (prototype !== Socket.prototype && prototype !== process.getBuiltinModule('node:tls').TLSSocket.prototype)
    return false
  const handle = (socket as unknown as { _handle?: object | null })._handle
  const handleKind = handle?.constructor?.name
  if (!handle || (handleKind !== 'TCP' && handleKind !== 'TLSWrap')) return false
  for (const target of [socket, handle]) {
    if (Reflect.ownKeys(target).some((key) => typeof key === 'string' && WRITE_MEMBER.test(key))) return false
  }
  if ((socket as Socket & { alpnProtocol?: string | false }).alpnProtocol === 'h2') return false
  return socket.writableHighWaterMark <= chunkBytes
}

export type ReadBufferStats = {
  /** Buffers allocated for reads. */
  allocated: number
  /** Reads into a buffer that had already been sent. */
  reused: number
}

/**
 * The read buffers of one request body. With `recycle` (the library's own dispatcher), buffers
 * come back for reuse once the proof above holds for them; without it, or once the proof fails,
 * every read gets a fresh buffer.
 */
export class ReadBuffers {
  readonly size = READ_CHUNK_BYTES
  readonly stats: ReadBufferStats = { allocated: 0, reused: 0 }
  readonly #free: Buffer[] = []
  /** The socket undici announced for this body; null once the proof cannot hold. */
  #socket: Socket | null | undefined
  #watched: object | undefined

  constructor(options: { recycle: boolean }) {
    this.#socket = options.recycle ? undefined : null
  }

  /**
   * Starts listening for undici's announcement of the socket that carries `body` (the object
   * given to undici as the request body). Until `stopWatching`, one diagnostics subscription
   * serves every body being watched.
   */
  watch(body: object): void {
    if (this.#socket === null || this.#watched) return
    this.#watched = body
    announced.set(body, (socket) => {
      // Announced twice (the same body sent again): whichever socket it is, the proof is off.
      this.#socket = this.#socket === undefined && isNodeSocket(socket, this.size) ? socket : null
    })
    if (watching++ === 0) subscribe(SEND_HEADERS, onSendHeaders)
  }

  /** Stops listening; idempotent. Whatever was announced already stays known. */
  stopWatching(): void {
    if (!this.#watched) return
    announced.delete(this.#watched)
    this.#watched = undefined
    if (--watching === 0) unsubscribe(SEND_HEADERS, onSendHeaders)
  }

  /** A buffer to read into: one already sent and given back, or a new one. */
  take(): Buffer {
    const buffer = this.#free.pop()
    if (buffer) {
      this.stats.reused++
      return buffer
    }
    this.stats.allocated++
    return Buffer.allocUnsafe(this.size)
  }

  /** Called as a chunk of `buffer` goes out: whether anyone could receive it besides the socket. */
  lend(): boolean {
    if (chunkSent.hasSubscribers) this.#socket = null
    return this.#socket !== null
  }

  /**
   * Called when the consumer asks for the next chunk after one of `length` bytes from `buffer`
   * (see the proof above): the buffer comes back for reuse if the proof holds for it.
   */
  giveBack(buffer: Buffer, length: number, lent: boolean): void {
    if (chunkSent.hasSubscribers) this.#socket = null
    const socket = this.#socket
    if (!lent || !socket || length < socket.writableHighWaterMark) return
    this.#free.push(buffer)
  }
}

/**
 * The bytes of a file of `size` bytes (as measured when the upload was prepared), in reads of
 * up to `buffers.size` bytes, the next read under way while a chunk is being sent. A file that
 * is shorter or longer than `size` by then is an error: the declared content-length would be
 * wrong.
 */
export async function* readFileChunks(
  path: string,
  size: number,
  buffers: ReadBuffers,
  onChunk?: (bytes: number) => void,
): AsyncGenerator<Uint8Array> {
  let handle: FileHandle | undefined
  let reading: Promise<number> | undefined
  try {
    handle = await open(path, 'r')
    const file = handle
    const read = (buffer: Buffer, position: number): Promise<number> => {
      const promise = file
        .read(buffer, 0, Math.min(buffer.length, size - position), position)
        .then((result) => result.bytesRead)
      // Awaited later: marked handled now, so a failure while a chunk is out is not "unhandled".
      promise.catch(() => {})
      return promise
    }
    // Longer than announced: the content-length would be wrong.
    const checkNotGrown = async () => {
      if ((await file.read(Buffer.alloc(1), 0, 1, size)).bytesRead > 0) throw changedError(path, size, 'it has grown')
    }
    let position = 0
    let buffer: Buffer | undefined
    if (size > 0) {
      buffer = buffers.take()
      reading = read(buffer, 0)
    } else {
      await checkNotGrown()
    }
    while (buffer && reading) {
      const bytes = await reading
      reading = undefined
      if (bytes === 0) throw changedError(path, size, `it ended after ${position} bytes`)
      position += bytes
      const chunk = buffer.subarray(0, bytes)
      let next: Buffer | undefined
      if (position < size) {
        next = buffers.take()
        reading = read(next, position)
      } else {
        await checkNotGrown()
      }
      const lent = buffers.lend()
      onChunk?.(bytes)
      yield chunk
      buffers.giveBack(buffer, bytes, lent)
      buffer = next
    }
  } finally {
    // A read still under way must end before the file closes.
    await reading?.catch(() => {})
    await handle?.close()
  }
}

function changedError(path: string, size: number, what: string): InvalidInputError {
  return new InvalidInputError(
    `${path} changed while it was being uploaded: it had ${size} bytes when the upload was prepared, and ${what}. Upload it again once it no longer changes.`,
    {
      input: 'file',
    },
  )
}
