import { spawn } from 'node:child_process'
import { openAsBlob } from 'node:fs'
import { mkdtemp, open, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { FormData, request } from 'undici'
import { describe, expect, it } from 'vitest'

/**
 * Uploads stream to disk: the emulator's memory must not grow with the size of an upload.
 * 384 MiB by default (a sparse file; about two seconds of disk here); EMULATOR_UPLOAD_MIB=1024 for more.
 * An emulator that buffered the upload would grow by at least its size, far past the bound.
 * The emulator runs in a child process so its peak RSS (VmHWM) is its own.
 */
const sizeMiB = Number(process.env.EMULATOR_UPLOAD_MIB ?? 384)
const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const node = join(repoRoot, 'node_modules/.bin/node')

const CHILD = `
import { startEmulator } from ${JSON.stringify(join(repoRoot, 'src/emulator/index.ts'))}
const emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 0 } })
process.stdout.write(emulator.url + '\\n')
process.stdin.resume()
process.stdin.on('end', async () => { await emulator.close(); process.exit(0) })
`

async function peakRssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024
}

describe(`a ${sizeMiB} MiB upload`, () => {
  it('keeps the emulator RSS flat', { timeout: 300_000 }, async () => {
    const scratch = await mkdtemp(join(tmpdir(), 'emulator-upload-'))
    const child = spawn(node, ['--input-type=module', '-e', CHILD], { stdio: ['pipe', 'pipe', 'inherit'] })
    try {
      const url = await new Promise<string>((resolveUrl, reject) => {
        child.stdout.once('data', (chunk: Buffer) => resolveUrl(chunk.toString().trim()))
        child.once('exit', (code) => reject(new Error(`emulator exited with ${code}`)))
      })
      const before = await peakRssMiB(child.pid!)
      // A sparse file: "PK" and then zeros, a zip in name only; the emulator refuses it (400)
      // after the whole upload is on its disk, which is the part measured here.
      const path = join(scratch, 'big.zip')
      const file = await open(path, 'w')
      await file.write(Buffer.from('PK\x03\x04'))
      await file.truncate(sizeMiB * 1024 * 1024)
      await file.close()
      const form = new FormData()
      for (const [name, value] of Object.entries({ mockFactHash: 'false', prover: 'svc_sharp', layout: 'auto' }))
        form.append(name, value)
      form.append('pieFile', await openAsBlob(path), 'pie.zip')
      const response = await request(`${url}/v1/l2/proving-query/proof-generation-verification?apiKey=k-upload`, {
        method: 'POST',
        body: form,
        headersTimeout: 300_000,
        bodyTimeout: 300_000,
      })
      const body = (await response.body.json()) as { message: string; details: string }
      expect(response.statusCode).toBe(400)
      expect(body.details).toMatch(/not a valid Cairo PIE/)
      const after = await peakRssMiB(child.pid!)
      // Observed: about +90 MiB whatever the size (buffers in flight and garbage not yet collected).
      expect(after - before).toBeLessThan(Math.min(200, sizeMiB / 2))
    } finally {
      child.stdin.end()
      await new Promise((resolveExit) => child.once('exit', resolveExit))
      await rm(scratch, { recursive: true, force: true })
    }
  })
})
