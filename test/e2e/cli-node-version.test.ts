import { execFile } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { MINIMUM_NODE, NODE, olderNode, pretendNodeVersion, REPO_ROOT } from '../helpers/cli.ts'

/**
 * `proving` on a Node older than 22.17: one line saying what is needed and what was found, exit 2,
 * before any of the CLI's modules load (they fail to load on Node 20: node:fs/promises has no
 * `glob`). Run with a real older Node from the machine's PATH (the project's own is Node 24).
 * And a clone nobody built: the bin runs the sources, or says in one line what to do.
 */
const run = promisify(execFile)
const BIN = join(REPO_ROOT, 'bin', 'proving.js')
const VERSION = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version as string

async function proving(node: string, args: string[], nodeOptions: string[] = [], bin = BIN) {
  return run(node, [...nodeOptions, bin, ...args], { cwd: REPO_ROOT }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  )
}

const OLDER = await olderNode()
const refusal = (version: string) =>
  new RegExp(
    `^proving: needs Node\\.js 22\\.17 or later; found Node\\.js ${version.replace(/\./g, '\\.')} \\(/\\S+\\)\\. Install Node\\.js 24 or 22 \\(e\\.g\\. \`nvm install 24\`\\) and run it again\\.\n$`,
  )

describe('the Node version check', () => {
  it(`on an older Node (${OLDER ? `${OLDER.path}, ${OLDER.version}` : 'none on this machine: this Node told it is 20.11.1'}): one line, exit 2, no stack trace`, async () => {
    // Without an older Node on the machine, the same check is fed an older version string.
    const node = OLDER?.path ?? NODE
    const version = OLDER?.version ?? '20.11.1'
    const nodeOptions = OLDER ? [] : pretendNodeVersion(version)
    for (const args of [['--help'], ['--version'], ['prove', 'examples/fib/pie.zip']]) {
      const result = await proving(node, args, nodeOptions)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr).toMatch(refusal(version))
    }
  })

  it('the boundary is 22.17 (fs.glob stable): 22.16 is refused, 22.17 and 23 run', async () => {
    const refused = await proving(NODE, ['--version'], pretendNodeVersion('22.16.0'))
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(refusal('22.16.0'))
    for (const version of ['22.17.0', '23.0.0']) {
      expect(await proving(NODE, ['--version'], pretendNodeVersion(version)), version).toEqual({
        code: 0,
        stdout: `${VERSION}\n`,
        stderr: '',
      })
    }
  })

  it(`on this Node (${process.versions.node} runs the suite; the bin runs on ${NODE}) the bin runs the CLI`, async () => {
    expect(await proving(NODE, ['--version'])).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' })
  })

  it("the minimum in the bin is package.json's engines.node, and the suite's", () => {
    const engines = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).engines.node as string
    const minimum = /const MINIMUM_NODE = '(\d+\.\d+)'/.exec(readFileSync(BIN, 'utf8'))![1]
    expect(engines).toBe(`>=${minimum}`)
    expect(minimum).toBe(MINIMUM_NODE)
  })
})

describe('a clone without a build (no lib/)', () => {
  /** A copy of the repository's bin beside its sources and dependencies, with no lib/. */
  function unbuiltClone(options: { sources: boolean }): string {
    const root = mkdtempSync(join(tmpdir(), 'unbuilt-clone-'))
    mkdirSync(join(root, 'bin'))
    copyFileSync(BIN, join(root, 'bin', 'proving.js'))
    writeFileSync(join(root, 'package.json'), readFileSync(join(REPO_ROOT, 'package.json')))
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'))
    if (options.sources) symlinkSync(join(REPO_ROOT, 'src'), join(root, 'src'))
    return root
  }

  it('runs the CLI from the sources on a Node that strips types (no ERR_MODULE_NOT_FOUND)', async () => {
    const bin = join(unbuiltClone({ sources: true }), 'bin', 'proving.js')
    expect(await proving(NODE, ['--version'], [], bin)).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' })
    const help = await proving(NODE, ['--help'], [], bin)
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/^proving \S+: /)
  })

  it('where it cannot run them (types not stripped, or no sources), one line says what to do, exit 2', async () => {
    const root = unbuiltClone({ sources: true })
    const noStrip = await proving(NODE, ['--help'], ['--no-experimental-strip-types'], join(root, 'bin', 'proving.js'))
    expect(noStrip).toEqual({
      code: 2,
      stdout: '',
      stderr: `proving: this copy of proving-kit has no build (lib/cli/run.js is missing): run \`npm run build\` in ${root}/, or run the sources with \`node_modules/.bin/node src/cli/run.ts\`.\n`,
    })
    const bare = unbuiltClone({ sources: false })
    const noSources = await proving(NODE, ['--help'], [], join(bare, 'bin', 'proving.js'))
    expect(noSources).toEqual({
      code: 2,
      stdout: '',
      stderr: `proving: this copy of proving-kit has no build (lib/cli/run.js is missing): run \`npm run build\` in ${bare}/.\n`,
    })
  })
})
