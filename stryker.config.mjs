// Mutation testing: `npm run mutation`, not part of `npm test` (it takes minutes).
// StrykerJS changes one thing at a time in the modules where a wrong answer costs most (the
// gate, the fact comparison, the failure classifier, the journal, redaction) and runs the unit
// tests that cover the change; a mutant that no test notices is a behaviour nobody asserts.
// The tests are the in-process ones of vitest.mutation.config.ts, which need nothing `npm ci`
// leaves out on any Node (no local EVM, no patched package). scripts/mutation.ts runs this and
// refuses when any one module scores under 85%.
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutation.config.ts' },
  coverageAnalysis: 'perTest',
  mutate: [
    'src/pipeline/gate.ts',
    'src/pie/inspect/check.ts',
    'src/core/classify.ts',
    'src/pipeline/journal/*.ts',
    'src/core/redact.ts',
    'src/pipeline/statement/decide.ts',
    'src/pipeline/statement/plan.ts',
    'src/pipeline/key-queries.ts',
    'src/pipeline/reuse.ts',
  ],
  // Static mutants (in code run once, as its module loads: constants, tables, regular
  // expressions) are run too, each in a fresh module graph: slower, but a table no test reads is
  // a behaviour nobody asserts.
  ignoreStatic: false,
  // Nothing type-checks in the sandbox (vitest strips types without checking them; no checker
  // plugin is configured), so Stryker's default, a `// @ts-nocheck` atop every JavaScript and
  // TypeScript file it copies, would only change files: dist/'s step entries among them, which a
  // test compares byte for byte with what the bundle script writes.
  disableTypeChecks: false,
  concurrency: 2,
  timeoutMS: 20_000,
  dryRunTimeoutMinutes: 15,
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
  reporters: ['clear-text', 'progress', 'json', 'html'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  htmlReporter: { fileName: 'reports/mutation/mutation.html' },
  clearTextReporter: { allowColor: false, logTests: false, maxTestsToLog: 0 },
  thresholds: { high: 90, low: 85, break: null },
}
