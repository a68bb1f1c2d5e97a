/**
 * A one-producer, one-consumer channel of byte chunks with backpressure: the producer's `put`
 * resolves once at most `limitBytes` are ahead of the consumer. With a limit of 0 it is a
 * handoff: `put` resolves only when the consumer has finished with the chunk (it asked for the
 * next one), so the producer may then reuse the chunk's buffer. Used to let one reading of a PIE
 * directory feed both the packer and the validation, and the zip's bytes feed an upload as they
 * are written.
 *
 * Either side can stop: `end()` (the producer has no more), `fail(error)` (the consumer's next
 * read throws it), `close()` (the consumer is gone: what is queued is dropped and every `put`
 * resolves at once, so a producer never waits on a consumer that left).
 */
export class ByteChannel implements AsyncIterableIterator<Uint8Array> {
  readonly #limit: number
  readonly #queue: Uint8Array[] = []
  /** Bytes put so far, and of those, the bytes the consumer is done with. */
  #put = 0
  #done = 0
  /** The chunk the consumer holds (done with it when it asks for the next). */
  #held = 0
  /** Each waiting `put`, released once at most the limit is ahead of the consumer after its chunk. */
  #producers: { position: number; resolve: () => void }[] = []
  #reader: { resolve: (result: IteratorResult<Uint8Array>) => void; reject: (error: unknown) => void } | undefined
  #ended = false
  #failure: { error: unknown } | undefined
  #closed = false

  constructor(options: { limitBytes: number }) {
    this.#limit = options.limitBytes
  }

  /** Whether the consumer has gone (`close()`, or it stopped iterating). */
  get closed(): boolean {
    return this.#closed
  }

  put(chunk: Uint8Array): Promise<void> {
    if (this.#closed || this.#ended) return Promise.resolve()
    this.#put += chunk.length
    const position = this.#put
    if (this.#reader) {
      const reader = this.#reader
      this.#reader = undefined
      this.#held = chunk.length
      reader.resolve({ value: chunk, done: false })
    } else {
      this.#queue.push(chunk)
    }
    if (position - this.#done <= this.#limit) return Promise.resolve()
    return new Promise((resolve) => this.#producers.push({ position, resolve }))
  }

  /** No more chunks: the consumer's iteration ends after the queued ones. */
  end(): void {
    if (this.#ended) return
    this.#ended = true
    this.#wakeReader()
  }

  /** The consumer's next read throws `error` (queued chunks are dropped, every producer let go). */
  fail(error: unknown): void {
    if (this.#ended) return
    this.#ended = true
    this.#failure = { error }
    this.#queue.length = 0
    this.#wakeReader()
    this.#releaseProducers(Number.POSITIVE_INFINITY)
  }

  /** The consumer is gone: drops what is queued and lets every producer go on. */
  close(): void {
    this.#closed = true
    this.#queue.length = 0
    this.#held = 0
    this.#releaseProducers(Number.POSITIVE_INFINITY)
  }

  next(): Promise<IteratorResult<Uint8Array>> {
    // Asking for the next chunk means the consumer is done with the one it held.
    this.#done += this.#held
    this.#held = 0
    this.#releaseProducers(this.#done + this.#limit)
    if (this.#failure) return Promise.reject(this.#failure.error)
    const chunk = this.#queue.shift()
    if (chunk) {
      this.#held = chunk.length
      return Promise.resolve({ value: chunk, done: false })
    }
    if (this.#ended || this.#closed) return Promise.resolve({ value: undefined, done: true })
    return new Promise((resolve, reject) => (this.#reader = { resolve, reject }))
  }

  /** The consumer stopped iterating (`break`, or a throw inside `for await`). */
  return(): Promise<IteratorResult<Uint8Array>> {
    this.close()
    return Promise.resolve({ value: undefined, done: true })
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<Uint8Array> {
    return this
  }

  #wakeReader(): void {
    const reader = this.#reader
    if (!reader) return
    this.#reader = undefined
    if (this.#failure) reader.reject(this.#failure.error)
    else reader.resolve({ value: undefined, done: true })
  }

  /** Releases the waiting producers whose chunk ends at or before `upTo`. */
  #releaseProducers(upTo: number): void {
    while (this.#producers.length && this.#producers[0]!.position <= upTo) this.#producers.shift()!.resolve()
  }
}
