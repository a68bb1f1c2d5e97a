import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Agent } from 'undici'
import { afterEach, describe, expect, it } from 'vitest'
import { withDeadline } from '../../../src/core/deadline.ts'
import { HttpClient } from '../../../src/core/http.ts'
import { isDeadlineError } from '../../../src/core/http/failures.ts'
import { type Clock, startTimer, systemClock } from '../../../src/core/runtime.ts'
import { FakeClock } from '../../helpers/fake-clock.ts'
import { failure } from '../../helpers/failure.ts'

/**
 * A wait's deadline is in its clock's time (src/core/deadline.ts). A request in flight is cut
 * when that time passes: by the host's timers for the system clock, by the clock's own timer
 * when it has one. A test's clock that stands still must not see its request cut by wall time
 * it never counted (a loaded machine answering a mocked request late aborted it mid-answer,
 * which undici then reported as an uncaught assertion).
 */

const servers: ReturnType<typeof createServer>[] = []
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** A server that holds every request until the test answers it. */
async function holdingServer() {
  const held: ServerResponse[] = []
  const arrivals: (() => void)[] = []
  const server = createServer((_request, response) => {
    held.push(response)
    arrivals.shift()?.()
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const arrived = () => (held.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => arrivals.push(resolve)))
  return { baseUrl: `http://127.0.0.1:${port}`, held, arrived }
}

function clientOf(baseUrl: string, clock: Clock) {
  return new HttpClient({ baseUrl, serviceName: 'test service', clock, dispatcher: new Agent() })
}

describe('a request bounded by a wait deadline', () => {
  it('with a clock that stands still: answered after more wall time than the deadline leaves, it succeeds', async () => {
    const clock = new FakeClock()
    const { baseUrl, held, arrived } = await holdingServer()
    const http = clientOf(baseUrl, clock)
    // 5 ms of the clock's time left; the answer comes after 50 ms of wall time (an event: a
    // real timer of the host, after the request arrived).
    const pending = withDeadline(clock.now() + 5, () => http.request({ method: 'GET', path: '/status' }))
    await arrived()
    await new Promise((resolve) => setTimeout(resolve, 50))
    held[0]!.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}')
    expect((await pending).data).toEqual({ ok: true })
  })

  it('with a clock that stands still: cut as soon as its time passes the deadline', async () => {
    const clock = new FakeClock()
    const { baseUrl, arrived } = await holdingServer()
    const http = clientOf(baseUrl, clock)
    // A minute of the clock's time: only the clock's own timer can cut it within the test.
    const pending = failure(withDeadline(clock.now() + 60_000, () => http.request({ method: 'GET', path: '/status' })))
    await arrived()
    clock.advance(59_999)
    clock.advance(1)
    expect(isDeadlineError(await pending)).toBe(true)
  })

  it('with the system clock: cut by the host timer, with nothing answered', async () => {
    const { baseUrl, arrived } = await holdingServer()
    const http = clientOf(baseUrl, systemClock)
    const pending = failure(withDeadline(Date.now() + 300, () => http.request({ method: 'GET', path: '/status' })))
    await arrived()
    expect(isDeadlineError(await pending)).toBe(true)
  })
})

describe('startTimer', () => {
  it("uses the clock's timer when it has one, and its cancel works", () => {
    const clock = new FakeClock()
    const fired: string[] = []
    startTimer(clock, 10, () => fired.push('a'))
    const cancel = startTimer(clock, 10, () => fired.push('b'))
    cancel()
    clock.advance(9)
    expect(fired).toEqual([])
    clock.advance(1)
    expect(fired).toEqual(['a'])
    clock.advance(100)
    expect(fired).toEqual(['a'])
  })
})
