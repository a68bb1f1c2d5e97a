import { describe, expect, it } from 'vitest'
import { abortable } from '../../../src/core/abortable.ts'

describe('abortable', () => {
  it('gives the promise its outcome when the signal does not abort, and leaves no listener', async () => {
    const controller = new AbortController()
    expect(await abortable(Promise.resolve(7), controller.signal)).toBe(7)
    await expect(abortable(Promise.reject(new Error('its own')), controller.signal)).rejects.toThrow('its own')
    // A later abort reaches nobody (the listener was removed): nothing rejects unhandled.
    controller.abort(new Error('late'))
  })

  it('rejects with the reason, or what `failure` makes of it, when the signal aborts first; the promise runs on', async () => {
    const controller = new AbortController()
    let settle!: (value: string) => void
    const shared = new Promise<string>((resolve) => (settle = resolve))
    const waited = abortable(shared, controller.signal)
    const wrapped = abortable(shared, controller.signal, (reason) => new Error(`wrapped: ${(reason as Error).message}`))
    controller.abort(new Error('stop'))
    await expect(waited).rejects.toThrow('stop')
    await expect(wrapped).rejects.toThrow('wrapped: stop')
    settle('done')
    // Another waiter of the same promise still gets it.
    expect(await abortable(shared, undefined)).toBe('done')
    await expect(abortable(shared, controller.signal)).rejects.toThrow('stop')
  })
})
