import { readdirSync, readFileSync } from 'node:fs'
import { join, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import { defineConfig, type Plugin } from 'vitest/config'

/**
 * The files that take longest on two cores (measured: a minute to twenty seconds each), started
 * first whatever the run's cache holds, so that no long file starts last and alone (a fresh
 * clone, CI, has no cache: vitest then orders by file size). The rest follow in vitest's order.
 */
const LONGEST_FIRST = [
  'test/e2e/action-github.test.ts',
  'test/e2e/cli-ux.test.ts',
  'test/e2e/secrets.test.ts',
  'test/e2e/journal-races-and-reruns.test.ts',
  'test/e2e/action-prove.test.ts',
  'test/unit/pie/hash/pedersen.test.ts',
  'test/e2e/reliability-reads.test.ts',
  'test/contract/cli-action.full-and-nulls.test.ts',
  'test/e2e/chain-gate.test.ts',
  'test/e2e/action-buckets.test.ts',
  'test/e2e/submission-journal.test.ts',
  'test/e2e/package.test.ts',
  'test/unit/pie/generate/generate.test.ts',
  'test/e2e/action-subactions.test.ts',
  'test/e2e/retry-on-rerun.test.ts',
  'test/browser/console.test.ts',
  'test/contract/cli-action.minimal-and-extras.test.ts',
  'test/e2e/wait-deadlines.test.ts',
  'test/interop/oracle.test.ts',
  'test/e2e/reuse.test.ts',
  'test/unit/suite.test.ts',
]

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(path))
      return index < 0 ? LONGEST_FIRST.length : index
    }
    return sorted
      .map((file, order) => ({ file, order }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.order - b.order)
      .map(({ file }) => file)
  }
}

/** The files that share their worker's modules: end to end, over real HTTP and processes. */
const SHARED = ['test/e2e/**/*.test.ts', 'test/contract/**/*.test.ts', 'test/browser/**/*.test.ts']
/** End-to-end files that keep a module graph of their own: they measure their process. */
const SHARED_EXCLUDED = ['test/e2e/emulator-upload.test.ts']
/**
 * Unit files that keep a module graph of their own: they intercept HTTP (nock), fake timers,
 * spy on or replace modules and globals, set the process's request budget or environment, or
 * close the shared agent. Read from the files themselves, so a new one that does is isolated
 * without anyone listing it. Every other unit file shares its worker's modules too.
 */
const PROCESS_WIDE =
  /nock|useFakeTimers|vi\.mock|vi\.spyOn|vi\.stub|process\.env\.[A-Za-z_]+ ?=|delete process\.env|\.configure\(|closeDefaultDispatcher|setDefaultDispatcher|process\.exitCode|process\.on\(|globalThis|process\.chdir|requestBudgetFor/
const ROOT = fileURLToPath(new URL('.', import.meta.url))
const ISOLATED_UNIT = readdirSync(join(ROOT, 'test/unit'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/unit/${file.split(sep).join('/')}`)
  .filter((file) => PROCESS_WIDE.test(readFileSync(join(ROOT, file), 'utf8')))
  .sort()

/**
 * GitHub's parsers, which the tests inline (server.deps.inline below), ship source maps that
 * point to sources they do not ship (`../src/*.ts`): Vite warned once per file, "Sourcemap for
 * ... points to missing source files", 155 lines that buried the suite's own notes. They are
 * loaded here without their source maps: their stack traces name the .js files, which exist.
 */
const INLINED_WITHOUT_SOURCES = /\/node_modules\/@actions\/(?:workflow-parser|languageservice|expressions)\/.*\.js$/
const inlinedWithoutSourceMaps: Plugin = {
  name: 'inlined-without-source-maps',
  enforce: 'pre',
  load(id) {
    const file = id.split('?')[0]!
    if (!INLINED_WITHOUT_SOURCES.test(file)) return null
    return { code: readFileSync(file, 'utf8').replace(/\n\/\/# sourceMappingURL=\S+\s*$/, '\n'), map: null }
  },
}

export default defineConfig({
  plugins: [inlinedWithoutSourceMaps],
  test: {
    // Which files run: each project's own `include` below (with `extends: true` a list given here
    // would be added to each project's, not replaced).
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Four workers on two cores: most end-to-end files wait (poll intervals, real HTTP, child
    // processes) while the unit files compute. With three, a fresh clone (no caches: CI) left a
    // core idle as two files waited (322 s against 291 s with four); a warm tree favoured three
    // (276 s against 284 s). Every test waits for events, not for the machine's speed.
    maxWorkers: 4,
    sequence: { sequencer: LongestFirst },
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
    // and restore what they change of the environment. So do the unit files but those listed in
    // ISOLATED_UNIT (nock, fake timers, module state set per file), in a project of their own,
    // and the one that measures a process's memory.
    projects: [
      { extends: true, test: { name: 'isolated', include: [...ISOLATED_UNIT, ...SHARED_EXCLUDED] } },
      {
        extends: true,
        test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: [...SHARED, ...ISOLATED_UNIT], isolate: false },
      },
      { extends: true, test: { name: 'e2e', include: SHARED, exclude: SHARED_EXCLUDED, isolate: false } },
    ],
  },
})
