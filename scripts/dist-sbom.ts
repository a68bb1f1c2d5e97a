/**
 * A CycloneDX SBOM (JSON, spec 1.5) of what dist/ bundles: the action runs dist/ as committed, so
 * its npm packages are not in any package.json a user installs, and `npm sbom` of the repository
 * would list the whole development tree. The packages are those ncc writes into
 * dist/licenses.txt (one entry per bundled package: its name, its license, its license text); each
 * version is the one package-lock.json installs (every version, when the lockfile holds several
 * copies of one name). The release workflow attaches it to the release and attests it; the
 * tarball's own SBOM is `npm sbom --omit dev --sbom-format cyclonedx`.
 *
 *   node scripts/dist-sbom.ts <version>   print the SBOM of dist/ for release <version> (package.json's)
 */
import { createHash, randomUUID } from 'node:crypto'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PACKAGE_NAME = /^(@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/

/** The bundled packages, as ncc's license plugin lists them: a name line after a blank line, then the license. */
export function bundledPackages(licenses: string): { name: string; license: string }[] {
  const lines = licenses.split('\n')
  const found = new Map<string, string>()
  lines.forEach((line, index) => {
    if ((index === 0 || lines[index - 1] === '') && PACKAGE_NAME.test(line) && index + 1 < lines.length) {
      if (!found.has(line)) found.set(line, (lines[index + 1] ?? '').trim())
    }
  })
  return [...found].map(([name, license]) => ({ name, license }))
}

/** The versions package-lock.json installs of each package name. */
export function lockedVersions(lock: { packages: Record<string, { version?: string }> }): Map<string, string[]> {
  const versions = new Map<string, string[]>()
  for (const [path, entry] of Object.entries(lock.packages)) {
    const name = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(path)?.[1]
    if (!name || !entry.version) continue
    const known = versions.get(name) ?? []
    if (!known.includes(entry.version)) versions.set(name, [...known, entry.version].sort())
  }
  return versions
}

function licenseOf(text: string): { license: { id: string } | { name: string } } | { expression: string } {
  if (/^[A-Za-z0-9.+-]+$/.test(text)) return { license: { id: text } }
  if (/\b(AND|OR|WITH)\b/.test(text)) return { expression: text.replace(/^\((.*)\)$/, '$1') }
  return { license: { name: text || 'unknown' } }
}

export async function distSbom(version: string): Promise<object> {
  const dist = join(ROOT, 'dist')
  const packages = bundledPackages(await readFile(join(dist, 'licenses.txt'), 'utf8'))
  const locked = lockedVersions(JSON.parse(await readFile(join(ROOT, 'package-lock.json'), 'utf8')))
  const missing = packages.filter((pkg) => !locked.has(pkg.name)).map((pkg) => pkg.name)
  if (missing.length)
    throw new Error(`dist/licenses.txt names packages package-lock.json does not install: ${missing.join(', ')}`)
  const files = (await readdir(dist, { recursive: true })).filter((file) => file.endsWith('.js')).sort()
  const hashes = await Promise.all(
    files.map(async (file) => ({
      file,
      sha256: createHash('sha256')
        .update(await readFile(join(dist, file)))
        .digest('hex'),
    })),
  )
  return {
    bomFormat: 'CycloneDX',
    specVersion: '1.5',
    serialNumber: `urn:uuid:${randomUUID()}`,
    version: 1,
    metadata: {
      timestamp: new Date().toISOString(),
      tools: { components: [{ type: 'application', name: 'proving-kit scripts/dist-sbom.ts' }] },
      component: {
        type: 'application',
        'bom-ref': 'proving-kit-dist',
        name: 'proving-kit action (dist/)',
        version,
        purl: `pkg:github/proving-kit/proving-kit@v${version}`,
        properties: hashes.map(({ file, sha256 }) => ({ name: `sha256:dist/${file}`, value: sha256 })),
      },
    },
    components: packages.flatMap(({ name, license }) =>
      locked.get(name)!.map((packageVersion) => ({
        type: 'library',
        'bom-ref': `pkg:npm/${name}@${packageVersion}`,
        name,
        version: packageVersion,
        purl: `pkg:npm/${name.replace(/^@/, '%40')}@${packageVersion}`,
        licenses: [licenseOf(license)],
      })),
    ),
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const version = process.argv[2]
  if (!version) {
    process.stderr.write('usage: node scripts/dist-sbom.ts <version>\n')
    process.exit(2)
  }
  process.stdout.write(`${JSON.stringify(await distSbom(version), null, 2)}\n`)
}
