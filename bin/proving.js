#!/usr/bin/env node
import { main } from '../lib/cli/main.js'

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code
  },
  (error) => {
    process.stderr.write(`proving: unexpected failure: ${error?.message ?? error}\n`)
    process.exitCode = 3
  },
)
