/**
 * Workflow artifacts through @actions/artifact (loaded lazily: only `upload-artifacts: true`
 * needs it, and it is the largest dependency of the action).
 */
import { copyFile, link, mkdir, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'

export type UploadedArtifact = { id: number | undefined; size: number | undefined; files: string[] }

export type ArtifactOptions = {
  /** Days the artifact is kept (1-90); the repository's setting when undefined. */
  retentionDays: number | undefined
  /** zlib level of the artifact's zip, 0-9: 0 by default, pie.zip being deflated already. */
  compressionLevel: number
  /** Delete an artifact of the same name from this run first (a re-run's, an earlier step's). */
  overwrite: boolean
  /** proof.json over plain http from another machine (`allow-insecure-http`). */
  allowInsecureHttp?: boolean | undefined
}

/**
 * Uploads files as one artifact. @actions/artifact takes files under one root folder, so they
 * are linked (or copied, across file systems) into a staging folder first.
 */
export async function uploadArtifact(
  name: string,
  files: string[],
  stagingDir: string,
  options: ArtifactOptions,
): Promise<UploadedArtifact> {
  await rm(stagingDir, { recursive: true, force: true })
  await mkdir(stagingDir, { recursive: true })
  const staged: string[] = []
  for (const file of files) {
    const target = join(stagingDir, basename(file))
    await link(file, target).catch(() => copyFile(file, target))
    staged.push(target)
  }
  const { DefaultArtifactClient, ArtifactNotFoundError } = await import('@actions/artifact')
  const client = new DefaultArtifactClient()
  if (options.overwrite) {
    // As actions/upload-artifact does it: artifact names are unique in a run.
    await client.deleteArtifact(name).catch((error: unknown) => {
      if (!(error instanceof ArtifactNotFoundError)) throw error
    })
  }
  const response = await client.uploadArtifact(name, staged, stagingDir, {
    compressionLevel: options.compressionLevel,
    ...(options.retentionDays === undefined ? {} : { retentionDays: options.retentionDays }),
  })
  return { id: response.id, size: response.size, files: staged.map((file) => basename(file)) }
}
