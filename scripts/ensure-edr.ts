/**
 * The local EVM of the chain tests (Hardhat 3's EDR) ships its native binary as an optional
 * dependency per platform that declares `engines: node >= 22`. npm skips such an optional
 * dependency when the npm that installs runs on an older Node (a machine whose own Node is 20:
 * the project's Node 24 comes from node_modules, after the install), and Hardhat then fails with
 * "Plugin builtin:node is not installed". `npm test` runs this first: when this platform's
 * binary is missing, it installs that one package at the version EDR pins, without saving it
 * and without install scripts; otherwise it does nothing.
 *
 *   node scripts/ensure-edr.ts
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { arch, platform } from 'node:process'

const require = createRequire(import.meta.url)

function platformPackage(): string | undefined {
  if (platform === 'linux') {
    const musl =
      (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
        ?.glibcVersionRuntime === undefined
    if (arch === 'x64' || arch === 'arm64') return `@nomicfoundation/edr-linux-${arch}-${musl ? 'musl' : 'gnu'}`
  }
  if (platform === 'darwin' && (arch === 'x64' || arch === 'arm64')) return `@nomicfoundation/edr-darwin-${arch}`
  if (platform === 'win32' && arch === 'x64') return '@nomicfoundation/edr-win32-x64-msvc'
  return undefined
}

const name = platformPackage()
// EDR's exports map hides its package.json: found from its entry, which sits at its root.
let root: string
try {
  root = dirname(require.resolve('@nomicfoundation/edr'))
} catch {
  process.exit(0) // no EDR installed at all: nothing of ours to mend
}
const edr = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  optionalDependencies?: Record<string, string>
}
const version = name ? edr.optionalDependencies?.[name] : undefined
if (!name || !version) process.exit(0) // a platform EDR does not build for
// Beside EDR in the same node_modules, where its loader looks first.
if (!existsSync(join(root, '..', name.split('/')[1]!, 'package.json'))) {
  process.stderr.write(
    `ensure-edr: ${name} is missing (npm skips it on a Node older than 22); installing ${name}@${version} without saving it.\n`,
  )
  const npm = process.env.npm_execpath
  const [command, args] = npm ? [process.execPath, [npm]] : ['npm', []]
  execFileSync(
    command,
    [
      ...args,
      'install',
      '--no-save',
      '--ignore-scripts',
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${name}@${version}`,
    ],
    { stdio: 'inherit' },
  )
}
