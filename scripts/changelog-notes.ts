/**
 * Prints the notes of one version from CHANGELOG.md (the lines under its `## [X.Y.Z]` heading, up
 * to the next `## ` heading), for the GitHub release. Exits 1 when the version has no section or
 * an empty one: a release without notes is refused.
 *
 *   node scripts/changelog-notes.ts 1.2.3 [CHANGELOG.md]
 */
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

export function changelogNotes(changelog: string, version: string): string {
  const lines = changelog.split(/\r?\n/)
  const heading = new RegExp(`^## \\[?v?${version.replace(/\./g, '\\.')}\\]?(?:\\s|$)`)
  const start = lines.findIndex((line) => heading.test(line))
  if (start === -1)
    throw new Error(`CHANGELOG.md has no section for ${version} (a "## [${version}] - YYYY-MM-DD" heading)`)
  const end = lines.findIndex((line, index) => index > start && /^## /.test(line))
  const notes = lines
    .slice(start + 1, end === -1 ? undefined : end)
    .join('\n')
    .replace(/^\[[^\]]+\]: \S+$/gm, '')
    .trim()
  if (!notes) throw new Error(`CHANGELOG.md's section for ${version} is empty`)
  return `${notes}\n`
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [version, file = 'CHANGELOG.md'] = process.argv.slice(2)
  if (!version || !/^\d+\.\d+\.\d+$/.test(version)) {
    process.stderr.write('usage: node scripts/changelog-notes.ts <X.Y.Z> [CHANGELOG.md]\n')
    process.exit(2)
  }
  try {
    process.stdout.write(changelogNotes(readFileSync(file, 'utf8'), version))
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`)
    process.exit(1)
  }
}
