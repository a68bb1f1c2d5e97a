/**
 * Files attached to the release of a tag, after softprops/action-gh-release: the tag's release is
 * found (a draft one too, which the by-tag endpoint does not return), or created as a draft. Every
 * asset name the action owns (OWNED_ASSETS) is this run's or absent: one of ours of the same name
 * is replaced, and one this run does not attach (an earlier run's proof.json, its
 * facts.intoto.json when `attest` is now off) is deleted first, so a release never mixes two runs
 * and SHA256SUMS lists every asset of ours. No other asset is touched.
 */
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import type { GitHubContext } from './context.ts'
import { gitHubFailure, statusOf } from './errors.ts'
import type { GitHub } from './octokit.ts'

export type ReleaseFile = { name: string; path: string; contentType: string }
export type AttachedAsset = { name: string; id: number; size: number; url: string; replaced: boolean }
export type AttachedRelease = {
  url: string
  id: number
  draft: boolean
  created: boolean
  assets: AttachedAsset[]
  /** Assets of ours an earlier run attached that this one does not: deleted. */
  removed: string[]
}

/** The asset names the action owns on a release: each is this run's, or deleted. */
export const OWNED_ASSETS: readonly string[] = [
  'pie.zip',
  'proof.json',
  'facts.json',
  'facts.intoto.json',
  'SHA256SUMS',
]

const PERMISSION = 'contents: write'
/** Drafts are looked for among the newest releases only: a tag's draft is a recent one. */
const DRAFT_SEARCH_PAGES = 3

export async function attachToRelease(
  github: GitHub,
  context: GitHubContext,
  tag: string,
  files: ReleaseFile[],
): Promise<AttachedRelease> {
  const repo = { owner: context.owner, repo: context.repo }
  const { release, created } = await findOrCreateRelease(github, context, tag)
  let existing: { id: number; name: string }[]
  try {
    existing = await github.paginate(github.rest.repos.listReleaseAssets, {
      ...repo,
      release_id: release.id,
      per_page: 100,
    })
  } catch (error) {
    throw gitHubFailure(error, `list the assets of release ${tag}`, PERMISSION)
  }
  for (const file of files) {
    if (!OWNED_ASSETS.includes(file.name))
      throw new Error(`${file.name} is not an asset name the action owns (${OWNED_ASSETS.join(', ')}).`)
  }
  // An earlier run's asset this run does not replace goes first: from here on, no moment shows
  // it beside this run's SHA256SUMS.
  const removed: string[] = []
  for (const stale of existing.filter(
    (asset) => OWNED_ASSETS.includes(asset.name) && !files.some((file) => file.name === asset.name),
  )) {
    try {
      await github.rest.repos.deleteReleaseAsset({ ...repo, asset_id: stale.id })
    } catch (error) {
      if (statusOf(error) !== 404)
        throw gitHubFailure(error, `delete ${stale.name}, an earlier run's asset, from release ${tag}`, PERMISSION)
    }
    removed.push(stale.name)
  }
  const assets: AttachedAsset[] = []
  for (const file of files) {
    const previous = existing.find((asset) => asset.name === file.name)
    try {
      if (previous) await github.rest.repos.deleteReleaseAsset({ ...repo, asset_id: previous.id })
    } catch (error) {
      if (statusOf(error) !== 404)
        throw gitHubFailure(error, `replace asset ${file.name} of release ${tag}`, PERMISSION)
    }
    const size = (await stat(file.path)).size
    try {
      // The upload goes to the release's own upload_url (uploads.github.com), streamed from disk.
      const uploaded = await github.request({
        method: 'POST',
        url: release.upload_url,
        name: file.name,
        headers: { 'content-type': file.contentType, 'content-length': size },
        data: createReadStream(file.path),
      })
      const asset = uploaded.data as { id: number; size: number; browser_download_url: string }
      assets.push({
        name: file.name,
        id: asset.id,
        size: asset.size,
        url: asset.browser_download_url,
        replaced: previous !== undefined,
      })
    } catch (error) {
      throw gitHubFailure(error, `upload ${file.name} to release ${tag}`, PERMISSION)
    }
  }
  return { url: release.html_url, id: release.id, draft: release.draft, created, assets, removed }
}

type Release = { id: number; html_url: string; upload_url: string; draft: boolean; tag_name: string }

async function findOrCreateRelease(
  github: GitHub,
  context: GitHubContext,
  tag: string,
): Promise<{ release: Release; created: boolean }> {
  const repo = { owner: context.owner, repo: context.repo }
  try {
    const { data } = await github.rest.repos.getReleaseByTag({ ...repo, tag })
    return { release: data, created: false }
  } catch (error) {
    if (statusOf(error) !== 404) throw gitHubFailure(error, `read the release of tag ${tag}`, PERMISSION)
  }
  try {
    let page = 0
    for await (const { data } of github.paginate.iterator(github.rest.repos.listReleases, { ...repo, per_page: 100 })) {
      const draft = data.find((release) => release.draft && release.tag_name === tag)
      if (draft) return { release: draft, created: false }
      if (++page >= DRAFT_SEARCH_PAGES) break
    }
  } catch (error) {
    throw gitHubFailure(error, `list the releases of ${context.owner}/${context.repo}`, PERMISSION)
  }
  try {
    const { data } = await github.rest.repos.createRelease({ ...repo, tag_name: tag, name: tag, draft: true })
    return { release: data, created: true }
  } catch (error) {
    throw gitHubFailure(error, `create a draft release for tag ${tag}`, PERMISSION)
  }
}
