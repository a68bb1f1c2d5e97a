import { defineConfig } from 'vitest/config'
import base from './vitest.config.ts'

// The tests StrykerJS runs against each mutant (stryker.config.mjs): the in-process tests of the
// mutated modules and of the code that calls them (the HTTP client and polling for the classifier,
// the prepare step for the fact comparison, the JSON-RPC client for redaction, the CLI's own
// modules; the pipeline's decisions, the plan and reuse against an emulator in the test's own
// process). The end-to-end tests that spawn the CLI or the action's bundle run compiled code in
// another process, which a mutant of src/ never reaches; the whole suite would only make each run
// slower, and the chain's need a local EVM that a Node 20 install leaves out.
// The base's `projects` are left out: each project's own `include` (`test/**` for the unit one)
// replaces this one, and the whole suite ran. Every file here is isolated (vitest's default).
// (Not mergeConfig: it would append these globs to the base's `test/**`.)
const { projects: _projects, ...test } = base.test ?? {}

export default defineConfig({
  ...base,
  test: {
    ...test,
    include: [
      'test/unit/core/**/*.test.ts',
      'test/unit/pipeline/**/*.test.ts',
      'test/unit/pie/inspect/check*.test.ts',
      'test/unit/chain/rpc.test.ts',
      'test/unit/cli/**/*.test.ts',
    ],
    reporters: ['default'],
    outputFile: {},
  },
})
