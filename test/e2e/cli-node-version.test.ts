import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { NODE, olderNode, pretendNodeVersion, REPO_ROOT } from '../helpers/cli.ts'

/**
 * `proving` on a Node older than 24: one line saying what is needed and what was found, exit 2,
 * before any of the CLI's modules load (they fail to load on Node 20: node:fs/promises has no
 * `glob`). Run with a real older Node from the machine's PATH (the project's own is Node 24).
 */
const run = promisify(execFile)
const BIN = join(REPO_ROOT, 'bin', 'proving.js')

async function proving(node: string, args: string[], nodeOptions: string[] = []) {
  return run(node, [...nodeOptions, BIN, ...args], { cwd: REPO_ROOT }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  )
}

const OLDER = await olderNode()

describe('the Node version check', () => {
  it(`on an older Node (${OLDER ? `${OLDER.path}, ${OLDER.version}` : 'none on this machine: Node 24 told it is 20.11.1'}): one line, exit 2, no stack trace`, async () => {
    // Without an older Node on the machine, the same check is fed an older version string.
    const node = OLDER?.path ?? NODE
    const version = OLDER?.version ?? '20.11.1'
    const nodeOptions = OLDER ? [] : pretendNodeVersion(version)
    for (const args of [['--help'], ['--version'], ['prove', 'examples/fib/pie.zip']]) {
      const result = await proving(node, args, nodeOptions)
      expect(result.code, args.join(' ')).toBe(2)
      expect(result.stdout).toBe('')
      const line = new RegExp(`^proving: needs Node\\.js 24 or later; found Node\\.js ${version.replace(/\./g, '\\.')} \\(/\\S+\\)\\. Install Node\\.js 24 \\(e\\.g\\. \`nvm install 24\`\\) and run it again\\.\n$`)
      expect(result.stderr).toMatch(line)
    }
  })

  it('on Node 24 the bin runs the CLI (from the built lib/)', async () => {
    const result = await proving(NODE, ['--version'])
    expect(result).toEqual({ code: 0, stdout: `${JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version}\n`, stderr: '' })
  })

  it('the minimum in the bin is package.json\'s engines.node', () => {
    const engines = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).engines.node as string
    const minimum = /const MINIMUM_NODE_MAJOR = (\d+)/.exec(readFileSync(BIN, 'utf8'))![1]
    expect(engines).toBe(`>=${minimum}`)
  })
})
