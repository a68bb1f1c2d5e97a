import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ProvingClient } from '../../src/clients/proving.ts'
import { closeDefaultDispatcher } from '../../src/core/http.ts'
import { sha256File } from '../../src/pie/shared/digest.ts'
import { generatePie, packPie } from '../../src/pie/index.ts'
import { KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'

/**
 * `submitPie` of a multi-MiB pie.zip, as the CLI and the action send it: the emulator hashes the
 * upload as it arrives, and that digest must be the file's. Through the library's own agent the
 * read buffers are reused (src/core/upload-buffers.ts); through a caller's dispatcher they are
 * not. Both must deliver the same bytes.
 */

let dir: string
let zip: string
let zipSha256: string
let emulator: TestEmulator

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pk-upload-integrity-'))
  const pieDir = join(dir, 'pie')
  // ~24 MiB of memory cells: a pie.zip of several MiB, several read chunks.
  await generatePie({ outDir: pieDir, memoryBytes: 24 * 1024 * 1024, seed: 7 })
  zip = join(dir, 'pie.zip')
  await packPie(pieDir, zip)
  zipSha256 = await sha256File(zip)
  emulator = await startTestEmulator({ apiKeys: [KEY] })
}, 120_000)

afterAll(async () => {
  await closeDefaultDispatcher()
  await emulator?.close()
  await rm(dir, { recursive: true, force: true })
})

describe('submitPie of a multi-MiB pie.zip', () => {
  it('through the library’s own agent: the emulator receives the file’s bytes', async () => {
    const client = new ProvingClient({ baseUrl: emulator.url, apiKey: KEY, retry: { maxAttempts: 1 } })
    const progress: number[] = []
    const { provingQueryId } = await client.submitPie({
      pieZip: zip,
      onUploadProgress: ({ sentBytes }) => progress.push(sentBytes),
    })
    expect(emulator.state.queries[provingQueryId]!.files.pie!.sha256).toBe(zipSha256)
    expect(progress.length).toBeGreaterThan(3)
  })

  it('through a caller-supplied dispatcher: the same bytes', async () => {
    const { provingQueryId } = await emulator.client().submitPie({ pieZip: zip })
    expect(emulator.state.queries[provingQueryId]!.files.pie!.sha256).toBe(zipSha256)
  })
})
