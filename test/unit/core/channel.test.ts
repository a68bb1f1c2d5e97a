import { describe, expect, it } from 'vitest'
import { ByteChannel } from '../../../src/core/channel.ts'

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill)

/** Whether a promise has settled, after everything already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  void promise.then(
    () => (done = true),
    () => (done = true),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe('ByteChannel', () => {
  it('with no room ahead, lets the producer go on only once the consumer is done with the chunk', async () => {
    const channel = new ByteChannel({ limitBytes: 0 })
    const first = channel.put(bytes(4, 1))
    const iterator = channel[Symbol.asyncIterator]()
    const a = await iterator.next()
    expect(a.value).toEqual(bytes(4, 1))
    // The consumer holds the chunk: its buffer must not be reused yet.
    expect(await settled(first)).toBe(false)
    const second = channel.put(bytes(4, 2))
    const b = await iterator.next()
    expect(await settled(first)).toBe(true)
    expect(b.value).toEqual(bytes(4, 2))
    expect(await settled(second)).toBe(false)
    channel.end()
    expect(await iterator.next()).toEqual({ value: undefined, done: true })
    expect(await settled(second)).toBe(true)
  })

  it('lets the producer run up to the limit ahead of the consumer, and keeps the order', async () => {
    const channel = new ByteChannel({ limitBytes: 10 })
    const puts = [channel.put(bytes(4, 1)), channel.put(bytes(4, 2)), channel.put(bytes(4, 3))]
    expect(await settled(puts[0]!)).toBe(true)
    expect(await settled(puts[1]!)).toBe(true)
    expect(await settled(puts[2]!)).toBe(false)
    channel.end()
    const seen: number[] = []
    for await (const chunk of channel) seen.push(chunk[0]!)
    expect(seen).toEqual([1, 2, 3])
    expect(await settled(puts[2]!)).toBe(true)
  })

  it('a failure reaches the consumer; a consumer that leaves never holds the producer', async () => {
    const failing = new ByteChannel({ limitBytes: 0 })
    const reading = (async () => {
      for await (const _ of failing) {
        // consume
      }
    })()
    void failing.put(bytes(1))
    failing.fail(new Error('the PIE is not valid'))
    await expect(reading).rejects.toThrow('the PIE is not valid')

    const left = new ByteChannel({ limitBytes: 0 })
    const held = left.put(bytes(8))
    for await (const _ of left) break
    expect(left.closed).toBe(true)
    expect(await settled(held)).toBe(true)
    expect(await settled(left.put(bytes(8)))).toBe(true)
  })
})
