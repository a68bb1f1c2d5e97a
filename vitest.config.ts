import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
})
