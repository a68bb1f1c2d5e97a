import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { changelogNotes } from '../../scripts/changelog-notes.ts'
import { NODE, REPO_ROOT } from '../helpers/cli.ts'

const CHANGELOG = [
  '# Changelog',
  '',
  '## [Unreleased]',
  '- next',
  '',
  '## [1.2.0] - 2026-01-02',
  '### Added',
  '- a thing',
  '',
  '## [1.1.0] - 2025-12-01',
  '- older',
  '',
].join('\n')

describe('release notes from CHANGELOG.md (scripts/changelog-notes.ts, run by the release workflow)', () => {
  it('takes exactly the lines of the version asked for', () => {
    expect(changelogNotes(CHANGELOG, '1.2.0')).toBe('### Added\n- a thing\n')
    expect(changelogNotes(CHANGELOG, '1.1.0')).toBe('- older\n')
  })

  it('refuses a version without a section, or with an empty one', () => {
    expect(() => changelogNotes(CHANGELOG, '1.3.0')).toThrow(/no section for 1\.3\.0/)
    expect(() => changelogNotes(CHANGELOG, '1.2')).toThrow(/no section/)
    expect(() => changelogNotes('## [2.0.0] - 2026-01-01\n\n## [1.0.0]\n- x', '2.0.0')).toThrow(/empty/)
  })

  it("the repository's CHANGELOG.md has a section for package.json's version; the script exits 1 without one", () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
    const notes = execFileSync(NODE, ['scripts/changelog-notes.ts', version], { cwd: REPO_ROOT, encoding: 'utf8' })
    expect(notes.trim().length).toBeGreaterThan(20)
    expect(() =>
      execFileSync(NODE, ['scripts/changelog-notes.ts', '99.0.0'], { cwd: REPO_ROOT, stdio: 'pipe' }),
    ).toThrow(/no section for 99\.0\.0/)
  })
})
