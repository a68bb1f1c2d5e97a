/**
 * The suite's CLI and library cases again on Node 22, the other maintained LTS the CLI and the
 * library support (package.json's engines: 22.17 or later): vitest itself runs on Node 22, so the
 * library is imported there, and so do the CLI, the bin and the installed package the tests start
 * (PROVING_TEST_NODE, test/helpers/cli.ts). The actions run on node24 only and are not among them.
 *
 * Node 22 comes from the npm registry (the `node` package, as the project's own Node 24 does),
 * installed beside the project in node_modules/.cache/node22, once. Runs after `npm test` (in
 * .ci/run and ci.yml), which builds lib/ for the bin and the package cases; it builds it itself
 * when lib/ is missing.
 *
 *   node scripts/test-node22.ts [more vitest arguments]
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PREFIX = join(ROOT, 'node_modules', '.cache', 'node22')
const NODE22 = join(PREFIX, 'node_modules', '.bin', 'node')

/** The CLI's and the library's cases: their units, the CLI end to end, the bin and the installed package. */
const NODE22_CASES = [
  'test/unit/cli',
  'test/unit/clients',
  'test/unit/core',
  'test/unit/pie',
  'test/unit/pipeline',
  'test/unit/schemas',
  'test/unit/chain',
  'test/unit/emulator',
  'test/unit/index',
  'test/e2e/cli-',
  'test/e2e/tasks-cli.test.ts',
  'test/e2e/account-cli.test.ts',
  'test/e2e/query-download.test.ts',
  'test/e2e/prove-dir-one-pass.test.ts',
  'test/e2e/exit-no-hang.test.ts',
  'test/e2e/package.test.ts',
]

const npm = process.env.npm_execpath
const [npmCommand, npmArgs] = npm ? [process.execPath, [npm]] : ['npm', []]

if (!existsSync(NODE22)) {
  mkdirSync(PREFIX, { recursive: true })
  // The `node` package installs its binary with an install script: allowed for it alone, as the
  // project's package.json allows it for Node 24.
  writeFileSync(
    join(PREFIX, 'package.json'),
    `${JSON.stringify({ name: 'node22', private: true, allowScripts: { node: true } }, null, 2)}\n`,
  )
  process.stderr.write(`test-node22: installing node@22 into ${PREFIX}\n`)
  execFileSync(
    npmCommand,
    [...npmArgs, 'install', '--no-save', '--no-audit', '--no-fund', '--loglevel=error', 'node@22'],
    { cwd: PREFIX, stdio: 'inherit' },
  )
}
const version = execFileSync(NODE22, ['--version'], { encoding: 'utf8' }).trim()
if (!/^v22\./.test(version)) throw new Error(`test-node22: ${NODE22} is ${version}, not Node 22`)

if (!existsSync(join(ROOT, 'lib', 'cli', 'run.js')))
  execFileSync(npmCommand, [...npmArgs, 'run', 'build'], { cwd: ROOT, stdio: 'inherit' })

process.stderr.write(`test-node22: the CLI and library cases on Node ${version}\n`)
const run = spawnSync(
  NODE22,
  // The default reporter only: npm test's JSON report (test-results.json, for .ci/summary.mjs) stays as it was.
  [
    join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
    'run',
    '--reporter=default',
    ...NODE22_CASES,
    ...process.argv.slice(2),
  ],
  { cwd: ROOT, stdio: 'inherit', env: { ...process.env, PROVING_TEST_NODE: NODE22 } },
)
process.exit(run.status ?? 1)
