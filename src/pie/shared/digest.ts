/**
 * SHA-256 of a file, read through one reused buffer so hashing a large zip leaves no garbage
 * behind (a stream's fresh chunks would pile up until V8's external-memory GC trigger).
 */
import { createHash } from 'node:crypto'
import { open } from 'node:fs/promises'

export async function sha256File(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash('sha256')
  const buffer = new Uint8Array(1024 * 1024)
  const handle = await open(path, 'r')
  try {
    for (;;) {
      signal?.throwIfAborted()
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null)
      if (bytesRead === 0) break
      hash.update(buffer.subarray(0, bytesRead))
    }
  } finally {
    await handle.close()
  }
  return hash.digest('hex')
}

export function sha256Bytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}
