import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { GitHubContext } from '../../../../src/action/github/context.ts'
import { gitHubClient } from '../../../../src/action/github/octokit.ts'
import { attachToRelease, OWNED_ASSETS, type ReleaseFile } from '../../../../src/action/github/release.ts'
import { startGitHubApi, type GitHubApiStandIn } from '../../../helpers/github-api.ts'

/**
 * The release's assets against the GitHub stand-in, which judges every request by GitHub's
 * published description: a run owns five names, and leaves each one its own or absent (issue 31).
 */
let github: GitHubApiStandIn
let context: GitHubContext
const folder = mkdtempSync(join(tmpdir(), 'release-'))

beforeAll(async () => {
  github = await startGitHubApi({ owner: 'octo', repo: 'app' })
  context = {
    owner: 'octo',
    repo: 'app',
    apiUrl: github.url,
    pullNumber: undefined,
    headSha: 'f'.repeat(40),
    fromFork: false,
    job: 'prove',
    workflow: 'CI',
  }
})
afterAll(async () => {
  await github.close()
})
afterEach(() => {
  expect(github.problems).toEqual([])
})

function files(run: string, names: string[]): ReleaseFile[] {
  return names.map((name) => {
    const path = join(folder, `${run}-${name}`)
    writeFileSync(path, `${name} of ${run}`)
    return { name, path, contentType: 'application/octet-stream' }
  })
}

const contents = (tag: string) =>
  Object.fromEntries(
    github.releases
      .find((release) => release.tag === tag)!
      .assets.map((asset) => [asset.name, asset.data.toString('utf8')]),
  )

describe('attachToRelease', () => {
  it("a re-run without a proof or a statement deletes the earlier run's; a foreign asset stays", async () => {
    github.addRelease({
      tag: 'v1',
      assets: [
        { name: 'NOTES.txt', data: 'by hand' },
        { name: 'proof.json.bak', data: 'not ours' },
      ],
    })
    const client = gitHubClient('ghs_unit_token', context)
    const first = await attachToRelease(client, context, 'v1', files('run A', [...OWNED_ASSETS]))
    expect(first.removed).toEqual([])
    expect(Object.keys(contents('v1')).sort()).toEqual([
      'NOTES.txt',
      'SHA256SUMS',
      'facts.intoto.json',
      'facts.json',
      'pie.zip',
      'proof.json',
      'proof.json.bak',
    ])

    // Run B: no proof.json listed by the service, attest off.
    const second = await attachToRelease(client, context, 'v1', files('run B', ['pie.zip', 'facts.json', 'SHA256SUMS']))
    expect(second.removed.sort()).toEqual(['facts.intoto.json', 'proof.json'])
    expect(second.assets.map((asset) => [asset.name, asset.replaced])).toEqual([
      ['pie.zip', true],
      ['facts.json', true],
      ['SHA256SUMS', true],
    ])
    expect(contents('v1')).toEqual({
      'NOTES.txt': 'by hand',
      'proof.json.bak': 'not ours',
      'pie.zip': 'pie.zip of run B',
      'facts.json': 'facts.json of run B',
      SHA256SUMS: 'SHA256SUMS of run B',
    })
  })

  it('refuses to attach a name it does not own, before deleting or uploading anything', async () => {
    const before = github.requests.length
    await expect(
      attachToRelease(gitHubClient('ghs_unit_token', context), context, 'v1', files('run C', ['NOTES.txt'])),
    ).rejects.toThrow(/NOTES\.txt is not an asset name the action owns/)
    expect(github.requests.slice(before).map((request) => request.operationId)).not.toContain(
      'repos/delete-release-asset',
    )
  })
})
