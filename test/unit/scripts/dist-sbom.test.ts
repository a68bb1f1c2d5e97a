/**
 * scripts/dist-sbom.ts: the CycloneDX SBOM of what dist/ bundles, which the release workflow
 * attaches and attests. Read from the committed dist/licenses.txt and package-lock.json.
 */
import { readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { bundledPackages, distSbom } from '../../../scripts/dist-sbom.ts'
import { REPO_ROOT } from '../../helpers/run-action.ts'

type Component = { name: string; version: string; purl: string; licenses: unknown[] }
type Bom = {
  bomFormat: string
  specVersion: string
  metadata: { component: { version: string; properties: { name: string; value: string }[] } }
  components: Component[]
}

describe('the SBOM of dist/', () => {
  it("reads the packages of ncc's licenses file: a name after a blank line, then its license", () => {
    const text = [
      '@actions/core',
      'MIT',
      'The MIT License',
      '',
      'Copyright x',
      '',
      'zod',
      'MIT',
      'text',
      '',
      'not a package name!',
      'x',
      '',
    ].join('\n')
    expect(bundledPackages(text)).toEqual([
      { name: '@actions/core', license: 'MIT' },
      { name: 'zod', license: 'MIT' },
    ])
  })

  it('lists every bundled package with its locked version and purl, and the SHA-256 of every bundle file', async () => {
    const bom = (await distSbom('9.9.9')) as Bom
    expect(bom).toMatchObject({ bomFormat: 'CycloneDX', specVersion: '1.5' })
    expect(bom.metadata.component.version).toBe('9.9.9')
    const names = bom.components.map((component) => component.name)
    expect(names).toEqual(expect.arrayContaining(['@actions/core', '@actions/github', 'undici', 'zod', 'viem']))
    expect(names).not.toContain('vitest')
    for (const component of bom.components) {
      expect(component.version, component.name).toMatch(/^\d+\.\d+\.\d+/)
      expect(component.purl).toBe(`pkg:npm/${component.name.replace(/^@/, '%40')}@${component.version}`)
      expect(component.licenses).toHaveLength(1)
    }
    const files = readdirSync(join(REPO_ROOT, 'dist'), { recursive: true })
      .map(String)
      .filter((file) => file.endsWith('.js'))
    expect(bom.metadata.component.properties.map((property) => property.name).sort()).toEqual(
      files.map((file) => `sha256:dist/${file}`).sort(),
    )
    expect(bom.metadata.component.properties.every((property) => /^[0-9a-f]{64}$/.test(property.value))).toBe(true)
  })
})
