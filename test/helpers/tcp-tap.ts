/**
 * A TCP pass-through in front of a server, that tells when bytes have arrived: a test cancels an
 * upload once the server has received its first bytes (an event), never after a fixed delay that
 * a busy machine may not honour. Listens on 127.0.0.1, port 0.
 */
import { createServer, connect, type Socket } from 'node:net'

export type TcpTap = {
  /** `http://127.0.0.1:<port>`: send the requests here instead of the target. */
  url: string
  /** Resolves once at least `bytes` bytes from clients have been passed to the target. */
  received(bytes?: number): Promise<void>
  close(): Promise<void>
}

export async function tcpTap(targetUrl: string): Promise<TcpTap> {
  const target = new URL(targetUrl)
  const sockets = new Set<Socket>()
  let total = 0
  const waiters: { bytes: number; resolve: () => void }[] = []
  const check = () => {
    for (const waiter of [...waiters]) {
      if (total < waiter.bytes) continue
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve()
    }
  }
  const server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname)
    sockets.add(client).add(upstream)
    client.on('data', (chunk: Buffer) => {
      // Counted once the target has taken the bytes (written to its socket).
      upstream.write(chunk, () => {
        total += chunk.length
        check()
      })
      if (upstream.writableNeedDrain) {
        client.pause()
        upstream.once('drain', () => client.resume())
      }
    })
    client.on('end', () => upstream.end())
    upstream.pipe(client)
    const drop = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on('error', drop).on('close', drop)
    upstream.on('error', drop).on('close', drop)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return {
    url: `http://127.0.0.1:${port}`,
    received: (bytes = 1) =>
      new Promise<void>((resolve) => {
        waiters.push({ bytes, resolve })
        check()
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
