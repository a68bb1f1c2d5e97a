#!/usr/bin/env node
// Plain JavaScript that parses on any Node, checked before the CLI is loaded: on an older Node the
// CLI's own modules fail while they load (node:fs/promises has no `glob` before Node 22), with a
// stack trace that says nothing of the version. The minimum is package.json's engines.node.
const MINIMUM_NODE_MAJOR = 24
const found = process.versions.node
if (Number(found.split('.')[0]) < MINIMUM_NODE_MAJOR) {
  process.stderr.write(
    `proving: needs Node.js ${MINIMUM_NODE_MAJOR} or later; found Node.js ${found} (${process.execPath}). Install Node.js ${MINIMUM_NODE_MAJOR} (e.g. \`nvm install ${MINIMUM_NODE_MAJOR}\`) and run it again.\n`,
  )
  process.exit(2)
}
await import('../lib/cli/run.js')
