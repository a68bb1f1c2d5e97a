// Mutation testing (issue 27): `npm run mutation`, not part of `npm test`.
// StrykerJS changes one thing at a time in the modules where a wrong answer costs most (the
// gate, the fact comparison, the failure classifier, the journal, redaction) and runs the unit
// tests that cover the change; a mutant that no test notices is a behaviour nobody asserts.
// scripts/mutation.ts runs this and refuses when any one module scores under 85%.
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
  ],
  // Type-level mutants (a changed type annotation) cannot fail at run time.
  ignoreStatic: false,
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
