import { execFile } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { NODE, REPO_ROOT } from '../helpers/cli.ts'
import { PIE_FIXTURES } from '../helpers/pie-fixtures.ts'

/**
 * The suite runs whole on a plain clone: only the interop suite (test/interop/) reads
 * ../shared/fixtures, and nothing else skips. A static check, so a new test that reaches for the
 * shared fixtures (or skips itself) fails here, on every machine, not only where ../shared is absent.
 */
function testFiles(dir = join(REPO_ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? testFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [relative(REPO_ROOT, join(dir, entry.name))]
        : [],
  )
}

const SHARED = /shared\/fixtures|\bFIXTURES\b|fixturePath|unzipFixture|fixtureFiles|FIBONACCI_COMPILED|PIE_FIXTURES/
const SKIPS = /\b(?:describe|it|test)\.(?:skip|skipIf|runIf|todo)\b|\bctx\.skip\(|\.skip\(\)/
/** Where the shared fixtures may be named: the interop suite, its helper, and this file. */
const MAY_NAME_SHARED = ['test/interop/', 'test/helpers/pie-fixtures.ts', 'test/unit/suite.test.ts']
/**
 * Where a test may skip: those, the one place the browser suite reports itself skipped (saying
 * why, on the console) on a machine without Debian's chromium (issue 26), the one place the
 * oracle test does without cairo-lang's Python environment (issue 33), and the summary's
 * cases under GitHub's cmark-gfm, which micromark's GFM judges on every machine as well.
 */
const MAY_SKIP = [
  ...MAY_NAME_SHARED,
  'test/helpers/browser.ts',
  'test/helpers/oracle.ts',
  'test/unit/action/steps/summary.gfm.test.ts',
]

describe('the suite on a plain clone', () => {
  const files = testFiles()

  it('only the interop suite reads ../shared/fixtures', () => {
    const readers = files.filter(
      (file) =>
        !MAY_NAME_SHARED.some((allowed) => file.startsWith(allowed)) &&
        SHARED.test(readFileSync(join(REPO_ROOT, file), 'utf8')),
    )
    expect(readers).toEqual([])
  })

  it('nothing skips but the interop suite (with its reason)', () => {
    const skipping = files.filter(
      (file) =>
        !MAY_SKIP.some((allowed) => file.startsWith(allowed)) &&
        SKIPS.test(readFileSync(join(REPO_ROOT, file), 'utf8')),
    )
    expect(skipping).toEqual([])
  })

  it('the checks above find what they look for', () => {
    expect(SHARED.test("const PIE = '../shared/fixtures/pie/x.zip'")).toBe(true)
    expect(SHARED.test('await unzipFixture()')).toBe(true)
    expect(SKIPS.test("it.skip('x', () => {})")).toBe(true)
    expect(SKIPS.test('describe.skipIf(!present)')).toBe(true)
    expect(files).toContain('test/interop/fixtures.test.ts')
  })
})

describe('the interop suite where the fixtures are absent', () => {
  it('says why it is skipped on the console, not only in the JSON report', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'no-fixtures-'))
    const run = promisify(execFile)
    // Only the console reporter: this run writes no test-results.json over the outer run's.
    const { stdout, stderr } = await run(
      NODE,
      [join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'), 'run', 'test/interop/fixtures.test.ts', '--reporter=default'],
      {
        cwd: REPO_ROOT,
        env: { ...process.env, PROVING_TEST_FIXTURES: elsewhere, CI: '1' },
      },
    )
    const output = `${stdout}\n${stderr}`.replaceAll(/\s+/g, ' ')
    expect(output).toContain(`The interop suite is skipped: ${join(elsewhere, 'pie')} is absent`)
    // ...and where its fixtures come from, and where to put them.
    expect(output).toContain('test/interop/FIXTURES.md lists each file, where it comes from and its SHA-256')
    expect(output).toContain('PROVING_TEST_FIXTURES')
    const listed = readFileSync(join(REPO_ROOT, 'test/interop/FIXTURES.md'), 'utf8')
    for (const name of PIE_FIXTURES) expect(listed).toContain(`pie/${name}`)
  }, 60_000)
})

describe('the oracle test where cairo-lang is absent', () => {
  it('says why it is skipped on the console, and fails instead where the system tools are required', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'no-oracle-'))
    const run = promisify(execFile)
    const args = [
      join(REPO_ROOT, 'node_modules/vitest/vitest.mjs'),
      'run',
      'test/interop/oracle.test.ts',
      '--reporter=default',
    ]
    const env = { ...process.env, PROVING_TEST_ORACLE: elsewhere, CI: '1', PROVING_REQUIRE_SYSTEM_TOOLS: '' }
    const { stdout, stderr } = await run(NODE, args, { cwd: REPO_ROOT, env })
    expect(`${stdout}\n${stderr}`).toMatch(/The oracle test is skipped: .* is absent/)
    const required = await run(NODE, args, { cwd: REPO_ROOT, env: { ...env, PROVING_REQUIRE_SYSTEM_TOOLS: '1' } }).then(
      () => 'passed',
      (error: { stdout: string; stderr: string }) => `${error.stdout}\n${error.stderr}`,
    )
    expect(required).toMatch(/PROVING_REQUIRE_SYSTEM_TOOLS=1 requires it/)
  }, 120_000)
})
