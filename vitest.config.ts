import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: keep the pool small so end-to-end tests that spawn processes do not starve.
    maxWorkers: 2,
    reporters: ['default'],
  },
})
