import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep the pool small so end-to-end tests that spawn processes do not starve.
    maxWorkers: 2,
    // GitHub's parsers import their JSON schemas without `with { type: 'json' }`, which Node refuses:
    // let Vite transform them (test/helpers/github-yaml.ts).
    server: { deps: { inline: ['@actions/workflow-parser', '@actions/languageservice', '@actions/expressions'] } },
    // The JSON report feeds the plain 'N passed, N failed' line .ci/run prints at the end.
    reporters: ['default', 'json'],
    outputFile: { json: 'test-results.json' },
  },
})
