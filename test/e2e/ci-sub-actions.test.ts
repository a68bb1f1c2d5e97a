import { cpSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { REPO_ROOT } from '../helpers/run-action.ts'
import { readJob, runJob } from '../helpers/workflow-runner.ts'

/**
 * The `sub-actions` job of .github/workflows/ci.yml, run here as the runner runs it
 * (test/helpers/workflow-runner.ts): every sub-action with `uses:` against one emulator, their
 * outputs checked by the job's own shell steps. The emulator is this test's (port 0) instead of
 * the job's fixed port; everything else is the job as written.
 */
let emulator: RunningEmulator
beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 50, stepMs: 50 } })
})
afterAll(async () => {
  await emulator.close()
})

describe('ci.yml, job sub-actions', () => {
  it('names every action of the repository with uses:', () => {
    const used = new Set(
      readJob('.github/workflows/ci.yml', 'sub-actions').steps.flatMap((step) =>
        step.uses?.startsWith('./') ? [step.uses] : [],
      ),
    )
    for (const action of [
      './',
      './pack',
      './wait',
      './retry',
      './verify-proof',
      './bucket-create',
      './bucket-close',
      './task',
      './decommit',
      './storage-query',
      './api-key',
    ]) {
      if (action === './pack') continue // the `action` job packs
      expect(used, action).toContain(action)
    }
  })

  it('passes, every step as written', async () => {
    const workspace = mkdtempSync(join(tmpdir(), 'ci-workspace-'))
    cpSync(join(REPO_ROOT, 'examples'), join(workspace, 'examples'), { recursive: true })
    const results = await runJob('.github/workflows/ci.yml', 'sub-actions', {
      workspace,
      env: { EMULATOR_URL: emulator.url },
      skip: ['Start the emulator', "The emulator's log"],
    })
    const report = results
      .map(
        (result) =>
          `${result.outcome.padEnd(8)} ${result.step}${result.outcome === 'failure' ? `\n${result.log}` : ''}`,
      )
      .join('\n')
    const failures = results.filter((result) => result.outcome === 'failure').map((result) => result.step)
    // The two planned failures, and nothing else.
    expect(failures, report).toEqual([
      'Root action, which fails as planned',
      'wait/ with a timeout that is not a number',
    ])
    expect(
      results.filter((result) => result.outcome === 'skipped').map((result) => result.step),
      report,
    ).toEqual([
      // Pinned by commit SHA (the supply-chain policy of SECURITY.md).
      expect.stringMatching(/^actions\/checkout@[0-9a-f]{40}$/),
      expect.stringMatching(/^actions\/setup-node@[0-9a-f]{40}$/),
      'npm ci',
      'Start the emulator',
      "The emulator's log",
    ])
  }, 120_000)
})
