import type { Server } from 'node:http'
import { type AddressInfo, connect } from 'node:net'

/**
 * Makes `server` answer CONNECT as a corporate proxy does: a tunnel to the named host:port,
 * bytes passed both ways untouched. `onTunnel` hears each CONNECT target (`host:port`).
 */
export function tunnelConnects(server: Server, onTunnel: (target: string) => void = () => {}): void {
  server.on('connect', (req, clientSocket, head) => {
    const target = String(req.url)
    onTunnel(target)
    const [host, port] = target.split(':')
    const upstream = connect(Number(port), host!, () => {
      clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length) upstream.write(head)
      upstream.pipe(clientSocket)
      clientSocket.pipe(upstream)
    })
    upstream.on('error', () => clientSocket.destroy())
    clientSocket.on('error', () => upstream.destroy())
  })
}

/** Listens on a free loopback port; the proxy URL (`http://127.0.0.1:<port>`). */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Closes the server and every connection still open through it (tunnels included). */
export function closeProxy(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve())
    server.closeAllConnections()
  })
}
