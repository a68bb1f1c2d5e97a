import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { type CacheServiceStandIn, startCacheService } from '../helpers/cache-service.ts'

/**
 * test/helpers/cache-service.ts stands in for the runner's Actions cache (its Twirp API and the
 * blob storage it signs URLs for): checked here through @actions/cache itself, the package the
 * root action saves and restores its journal with, against what the real service is documented
 * and reported to do (entries written once, 409 on the same key; the newest prefix match; the
 * version; the branch and the default branch; a read-only token; a token it did not issue).
 */

let cache: CacheServiceStandIn
let root: string
/** What @actions/cache wrote to stdout itself (its workflow commands and notes). */
let written: string[] = []

beforeAll(async () => {
  cache = await startCacheService()
  root = await mkdtemp(join(tmpdir(), 'cache-stand-in-'))
})
afterAll(async () => {
  await cache.close()
  await rm(root, { recursive: true, force: true })
})
beforeEach(() => {
  written = []
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => written.push(String(chunk)) > 0)
})
afterEach(() => {
  vi.restoreAllMocks()
  vi.unstubAllEnvs()
})

describe("the stand-in answers as the runner's cache service does (through @actions/cache itself)", () => {
  it('an entry is written once; a restore takes the newest under a prefix, of its version, on its branch or the default branch', async () => {
    const { restoreCache, saveCache } = await import('@actions/cache')
    const temp = join(root, 'feature', '_temp')
    const dir = join(temp, 'files')
    await mkdir(dir, { recursive: true })
    await mkdir(join(root, 'feature', 'workspace'), { recursive: true })
    const token = cache.tokenFor({ ref: 'refs/heads/feature' })
    for (const [name, value] of Object.entries({
      ...cache.env(token),
      RUNNER_TEMP: temp,
      GITHUB_WORKSPACE: join(root, 'feature', 'workspace'),
    }))
      vi.stubEnv(name, value)
    await writeFile(join(dir, 'a.txt'), 'first')
    expect(await saveCache([dir], 'stand-in-2')).toBeGreaterThan(0)
    // The same key again: 409, which the package reports and returns -1 for.
    expect(await saveCache([dir], 'stand-in-2')).toBe(-1)
    expect(cache.requests.at(-1)).toMatchObject({ path: expect.stringMatching(/CreateCacheEntry$/), status: 409 })
    expect(written.join('')).toContain('Failed to save: Unable to reserve cache with key stand-in-2')
    await writeFile(join(dir, 'a.txt'), 'second')
    expect(await saveCache([dir], 'stand-in-10')).toBeGreaterThan(0)
    await rm(dir, { recursive: true })
    // The newest of the prefix's entries, not the last by name.
    expect(await restoreCache([dir], 'stand-in-', ['stand-in-'])).toBe('stand-in-10')
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('second')
    // Another path is another version: a miss.
    expect(await restoreCache([join(temp, 'elsewhere')], 'stand-in-')).toBeUndefined()
    // Another branch sees neither, but sees the default branch's entries.
    vi.stubEnv('ACTIONS_RUNTIME_TOKEN', cache.tokenFor({ ref: 'refs/heads/other' }))
    expect(await restoreCache([dir], 'stand-in-')).toBeUndefined()
    vi.stubEnv('ACTIONS_RUNTIME_TOKEN', cache.tokenFor({ ref: 'refs/heads/main' }))
    expect(await saveCache([dir], 'stand-in-main')).toBeGreaterThan(0)
    vi.stubEnv('ACTIONS_RUNTIME_TOKEN', cache.tokenFor({ ref: 'refs/heads/other' }))
    expect(await restoreCache([dir], 'stand-in-')).toBe('stand-in-main')
    // A read-only token cannot write.
    vi.stubEnv('ACTIONS_RUNTIME_TOKEN', cache.tokenFor({ ref: 'refs/heads/feature', readOnly: true }))
    expect(await saveCache([dir], 'stand-in-3')).toBe(-1)
    expect(written.join('')).toContain('cache write denied: token has no writable scopes')
    // A token it did not issue: 401, the restore reports a miss and warns.
    vi.stubEnv('ACTIONS_RUNTIME_TOKEN', 'not-a-token')
    expect(await restoreCache([dir], 'stand-in-')).toBeUndefined()
    expect(written.join('')).toMatch(/::warning::Failed to restore: .*401/)
  })
})
