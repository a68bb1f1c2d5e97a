/**
 * Workflow artifacts through @actions/artifact (loaded lazily: only `upload-artifacts: true`
 * needs it, and it is the largest dependency of the action).
 */
import { copyFile, link, mkdir, rm } from 'node:fs/promises'
import { basename, join } from 'node:path'

export type UploadedArtifact = { id: number | undefined; size: number | undefined; files: string[] }

/**
 * Uploads files as one artifact. @actions/artifact takes files under one root folder, so they
 * are linked (or copied, across file systems) into a staging folder first.
 */
export async function uploadArtifact(name: string, files: string[], stagingDir: string): Promise<UploadedArtifact> {
  await rm(stagingDir, { recursive: true, force: true })
  await mkdir(stagingDir, { recursive: true })
  const staged: string[] = []
  for (const file of files) {
    const target = join(stagingDir, basename(file))
    await link(file, target).catch(() => copyFile(file, target))
    staged.push(target)
  }
  const { DefaultArtifactClient } = await import('@actions/artifact')
  const response = await new DefaultArtifactClient().uploadArtifact(name, staged, stagingDir)
  return { id: response.id, size: response.size, files: staged.map((file) => basename(file)) }
}
