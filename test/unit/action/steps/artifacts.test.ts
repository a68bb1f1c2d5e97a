import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeEach, describe, expect, it, vi } from 'vitest'

/**
 * @actions/artifact talks to the runner's results service (ACTIONS_RESULTS_URL, a Twirp API
 * with a JWT), which cannot be run here: its client is replaced, and what the step asks of it
 * is what is checked.
 */
const calls: { method: string; args: unknown[] }[] = []
let deleteOutcome: 'deleted' | 'not-found' | 'error' = 'deleted'

vi.mock('@actions/artifact', () => {
  class ArtifactNotFoundError extends Error {}
  class DefaultArtifactClient {
    async deleteArtifact(...args: unknown[]) {
      calls.push({ method: 'deleteArtifact', args })
      if (deleteOutcome === 'not-found') throw new ArtifactNotFoundError('Artifact not found for name: proof')
      if (deleteOutcome === 'error') throw new Error('Failed to DeleteArtifact: 500')
      return { id: 1 }
    }
    async uploadArtifact(...args: unknown[]) {
      calls.push({ method: 'uploadArtifact', args })
      return { id: 77, size: 10 }
    }
  }
  return { DefaultArtifactClient, ArtifactNotFoundError }
})

const { uploadArtifact } = await import('../../../../src/action/steps/artifacts.ts')

function files(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-files-'))
  const path = join(dir, 'pie.zip')
  writeFileSync(path, 'zip')
  return [path]
}

beforeEach(() => {
  calls.length = 0
  deleteOutcome = 'deleted'
})

describe('uploadArtifact', () => {
  it('passes retention-days and compression-level; without overwrite deletes nothing', async () => {
    const staging = mkdtempSync(join(tmpdir(), 'staging-'))
    const uploaded = await uploadArtifact('proof', files(), staging, {
      retentionDays: 5,
      compressionLevel: 0,
      overwrite: false,
    })
    expect(uploaded).toEqual({ id: 77, size: 10, files: ['pie.zip'] })
    expect(calls).toEqual([
      {
        method: 'uploadArtifact',
        args: ['proof', [join(staging, 'pie.zip')], staging, { compressionLevel: 0, retentionDays: 5 }],
      },
    ])
  })

  it('leaves retention to the repository when retention-days is omitted', async () => {
    const staging = mkdtempSync(join(tmpdir(), 'staging-'))
    await uploadArtifact('proof', files(), staging, { retentionDays: undefined, compressionLevel: 6, overwrite: false })
    expect(calls[0]!.args[3]).toEqual({ compressionLevel: 6 })
  })

  it('overwrite deletes the artifact of that name first; none there is fine; another failure stops the upload', async () => {
    const staging = mkdtempSync(join(tmpdir(), 'staging-'))
    await uploadArtifact('proof', files(), staging, { retentionDays: undefined, compressionLevel: 0, overwrite: true })
    expect(calls.map((call) => call.method)).toEqual(['deleteArtifact', 'uploadArtifact'])
    expect(calls[0]!.args).toEqual(['proof'])

    calls.length = 0
    deleteOutcome = 'not-found'
    await uploadArtifact('proof', files(), staging, { retentionDays: undefined, compressionLevel: 0, overwrite: true })
    expect(calls.map((call) => call.method)).toEqual(['deleteArtifact', 'uploadArtifact'])

    calls.length = 0
    deleteOutcome = 'error'
    await expect(
      uploadArtifact('proof', files(), staging, { retentionDays: undefined, compressionLevel: 0, overwrite: true }),
    ).rejects.toThrow(/DeleteArtifact/)
    expect(calls.map((call) => call.method)).toEqual(['deleteArtifact'])
  })
})
