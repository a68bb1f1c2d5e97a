import { defineConfig } from 'vitest/config'

/** The files that share their worker's modules: end to end, over real HTTP and processes. */
const SHARED = ['test/e2e/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/browser/**/*.test.ts']
/** End-to-end files that keep a module graph of their own: they measure their process. */
const SHARED_EXCLUDED = ['test/e2e/emulator-upload.test.ts']

export default defineConfig({
  test: {
    // Which files run: each project's own `include` below (with `extends: true` a list given here
    // would be added to each project's, not replaced).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Four workers on two cores: most of the suite waits (poll intervals, real HTTP, child
    // processes), using about one core on average with two workers. Measured on the same tree:
    // two workers 338 s, four 198 s, four with both cores kept busy by two `yes` loops 278 s,
    // all green; every test waits for events, not for the machine's speed.
    maxWorkers: 4,
    // An emulator with a stateDir reads its state back after every save and fails when it
    // differs from memory (src/emulator/state.ts): a change that was not written is found by
    // every test that uses one, not by a user's restart. Child processes inherit it.
    env: { PROVING_EMULATOR_VERIFY_STATE: '1' },
    // GitHub's parsers import their JSON schemas without `with { type: 'json' }`, which Node refuses:
    // let Vite transform them (test/helpers/github-yaml.ts).
    server: { deps: { inline: ['@actions/workflow-parser', '@actions/languageservice', '@actions/expressions'] } },
    // The JSON report feeds the plain 'N passed, N failed' line .ci/run prints at the end.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
    // The end-to-end files (and the contract and browser ones) share their worker's modules
    // (isolate: false): each file imported the
    // emulator, the clients, the action and the CLI afresh, about 1.5 s of CPU each, 140 s of the
    // suite's 560 on two cores. They run one after another in a worker, start their own emulators
    // and restore what they change of the environment. Isolated still: the unit files (nock,
    // fake timers, module state set per file) and the one that measures a process's memory.
    projects: [
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: [...SHARED] } },
      { extends: true, test: { name: 'isolated-e2e', include: SHARED_EXCLUDED } },
      { extends: true, test: { name: 'e2e', include: SHARED, exclude: SHARED_EXCLUDED, isolate: false } },
    ],
  },
})
