/**
 * patches/@actions+core+*.patch (applied by patch-package before the bundle is built: `npm run
 * bundle`, `npm run check:dist`, and `npm test`; no install script applies it): @actions/core
 * loads its OIDC client, and with it @actions/http-client and a whole undici, only when
 * getIDToken is called, instead of on every action start (figure 3 of bench/results.md).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../../helpers/run-action.ts'

const coreFile = join(REPO_ROOT, 'node_modules', '@actions', 'core', 'lib', 'core.js')

describe('the @actions/core patch', () => {
  const saved = { url: process.env.ACTIONS_ID_TOKEN_REQUEST_URL, token: process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN }
  afterEach(() => {
    if (saved.url === undefined) delete process.env.ACTIONS_ID_TOKEN_REQUEST_URL
    else process.env.ACTIONS_ID_TOKEN_REQUEST_URL = saved.url
    if (saved.token === undefined) delete process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN
    else process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN = saved.token
  })

  it('is applied: core.js has no static import of its OIDC client', () => {
    const text = readFileSync(coreFile, 'utf8')
    expect(text).not.toMatch(/^import .* from '\.\/oidc-utils\.js';?$/m)
    expect(text).toContain("import('./oidc-utils.js')")
  })

  it('getIDToken still reaches the OIDC client, loaded on first use', async () => {
    delete process.env.ACTIONS_ID_TOKEN_REQUEST_URL
    delete process.env.ACTIONS_ID_TOKEN_REQUEST_TOKEN
    const core = await import('@actions/core')
    // The OIDC client's own refusal: only reached if the lazy import resolved.
    await expect(core.getIDToken('proving-kit')).rejects.toThrow(/ACTIONS_ID_TOKEN_REQUEST_(URL|TOKEN)/)
  })

  it('the action bundle starts without undici: its shared index.js holds none', () => {
    const bundle = readFileSync(join(REPO_ROOT, 'dist', 'index.js'), 'utf8')
    expect(bundle).toContain('getIDToken')
    expect(bundle).not.toContain('undici.error.UND_ERR')
    expect(bundle).not.toContain('ACTIONS_ID_TOKEN_REQUEST_URL')
    // The OIDC client is still bundled, in a chunk of its own that getIDToken imports.
    const chunks = readdirSync(join(REPO_ROOT, 'dist')).filter((name) => /^\d+\.index\.js$/.test(name))
    const oidc = chunks.filter((name) =>
      readFileSync(join(REPO_ROOT, 'dist', name), 'utf8').includes('ACTIONS_ID_TOKEN_REQUEST_URL'),
    )
    expect(oidc).toHaveLength(1)
  })
})
