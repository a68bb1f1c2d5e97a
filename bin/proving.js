#!/usr/bin/env node
// Plain JavaScript that parses on any Node, checked before the CLI is loaded: on an older Node the
// CLI's own modules fail while they load (node:fs/promises has no `glob` before Node 22, and it is
// stable from 22.17), with a stack trace that says nothing of the version. The minimum is
// package.json's engines.node: Node 22.17 or later (every maintained LTS: 22 and 24).
import { existsSync } from 'node:fs'

const MINIMUM_NODE = '22.17'
const found = process.versions.node
const [major, minor] = found.split('.').map(Number)
const [needMajor, needMinor] = MINIMUM_NODE.split('.').map(Number)
if (major < needMajor || (major === needMajor && minor < needMinor)) {
  process.stderr.write(
    `proving: needs Node.js ${MINIMUM_NODE} or later; found Node.js ${found} (${process.execPath}). Install Node.js 24 or 22 (e.g. \`nvm install 24\`) and run it again.\n`,
  )
  process.exit(2)
}

const built = new URL('../lib/cli/run.js', import.meta.url)
const sources = new URL('../src/cli/run.ts', import.meta.url)
if (existsSync(built)) {
  await import(built.href)
} else if (existsSync(sources) && process.features.typescript) {
  // A clone that was not built (no lib/): its sources run as they are, on a Node that strips
  // types (22.18 and later, 24). The installed package always has lib/ and no sources.
  await import(sources.href)
} else {
  const root = new URL('..', import.meta.url).pathname
  const sourcesToo = existsSync(sources) ? ', or run the sources with `node_modules/.bin/node src/cli/run.ts`' : ''
  process.stderr.write(
    `proving: this copy of proving-kit has no build (lib/cli/run.js is missing): run \`npm run build\` in ${root}${sourcesToo}.\n`,
  )
  process.exit(2)
}
