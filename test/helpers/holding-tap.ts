/**
 * A TCP pass-through in front of the emulator that stops an upload where a test wants it, and
 * says when it got there (an event, never a delay): after `postBytes` bytes of the submission
 * (`POST`) have reached the service (the rest is held), or with the whole request delivered and
 * the service's answer held back (`answer`). `drop()` resets every connection and refuses new
 * ones until `restore()`: the network gone. Listens on 127.0.0.1, port 0.
 */
import { connect, createServer, type Socket } from 'node:net'

/** Which `POST` is held: the first (the submission), or the first whose request line holds `path`. */
export type Hold = (({ postBytes: number } | { answer: true }) & { path?: string }) | undefined

export type HoldingTap = {
  /** `http://127.0.0.1:<port>`: send the requests here instead of the target. */
  url: string
  /** Holds the next submission as told (or, undefined, passes everything). */
  arm(hold: Hold): void
  /** Resolves once the armed hold is reached. */
  reached(): Promise<void>
  /** How many connections clients have opened through it. */
  connections(): number
  /** Resets every connection and refuses new ones until `restore()`. */
  drop(): void
  /** Passes everything again (held bytes of a cut connection are gone with it). */
  restore(): void
  close(): Promise<void>
}

export async function holdingTap(targetUrl: string): Promise<HoldingTap> {
  const target = new URL(targetUrl)
  const sockets = new Set<Socket>()
  let hold: Hold
  let refusing = false
  let opened = 0
  let onReached: (() => void) | undefined
  let reachedPromise = new Promise<void>((resolve) => (onReached = resolve))
  const reach = () => onReached?.()

  const server = createServer((client) => {
    opened++
    if (refusing) {
      client.destroy()
      return
    }
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(client).add(upstream)
    /** This connection carries the held submission: bytes of it sent so far, and whether it is held. */
    let posting = false
    let sent = 0
    let holding = false
    client.on('data', (chunk: Buffer) => {
      if (!posting && hold && chunk.subarray(0, 5).toString('latin1') === 'POST ') {
        const line = chunk.subarray(0, chunk.indexOf(10)).toString('latin1')
        posting = hold.path === undefined || line.includes(hold.path)
      }
      if (holding) return
      if (posting && hold && 'postBytes' in hold && sent + chunk.length >= hold.postBytes) {
        const part = chunk.subarray(0, Math.max(0, hold.postBytes - sent))
        sent += part.length
        holding = true
        upstream.write(part, reach)
        return
      }
      if (posting) sent += chunk.length
      upstream.write(chunk)
    })
    upstream.on('data', (chunk: Buffer) => {
      if (posting && hold && 'answer' in hold) {
        // The service answered the submission: the answer never reaches the client.
        reach()
        return
      }
      client.write(chunk)
    })
    client.on('end', () => upstream.end())
    upstream.on('end', () => client.end())
    const cut = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('error', cut).on('close', cut)
    upstream.on('error', cut).on('close', cut)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    arm(next) {
      hold = next
      reachedPromise = new Promise<void>((resolve) => (onReached = resolve))
    },
    reached: () => reachedPromise,
    connections: () => opened,
    drop() {
      refusing = true
      for (const socket of sockets) socket.destroy()
      sockets.clear()
    },
    restore() {
      refusing = false
      hold = undefined
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}
