import { describe, expect, it } from 'vitest'
import { startGitHub, usesGitHub } from '../../../../src/action/steps/github.ts'
import { fakeIO } from '../../../helpers/run-action.ts'
import { modulesLoadedBy } from '../../../helpers/modules-loaded.ts'
import { QueryStep } from '../../../../src/action/steps/query-step.ts'

const OFF = {
  'github-token': 'ghs_unit',
  'release-tag': undefined,
  'pr-comment': false,
  'check-run': false,
  attest: false,
}

describe('the GitHub side loads only when asked for', () => {
  it("the root action's, wait/'s and bucket-close/'s modules load neither @actions/github, Octokit nor src/action/github/", () => {
    for (const entry of [
      './src/action/actions/main.ts',
      './src/action/actions/wait.ts',
      './src/action/actions/bucket-close.ts',
    ]) {
      const modules = modulesLoadedBy(entry)
      expect(modules, entry).toContain('src/action/steps/github.ts')
      expect(
        modules.filter(
          (path) => /^node_modules\/(@actions\/github|@octokit)\//.test(path) || path.startsWith('src/action/github/'),
        ),
        entry,
      ).toEqual([])
    }
  })

  it('with every feature off, starting does nothing and lets the step go on', async () => {
    const io = fakeIO()
    const step = new QueryStep(io, { action: 'Prove', signal: new AbortController().signal })
    expect(usesGitHub(OFF)).toBe(false)
    expect(
      await startGitHub(io, step, OFF, {
        subject: 'pie.zip',
        serviceUrl: () => undefined,
        signal: new AbortController().signal,
      }),
    ).toBe(true)
    expect(io.logs).toEqual([])
  })

  it('any one feature turns it on', () => {
    expect(usesGitHub({ ...OFF, 'release-tag': 'v1' })).toBe(true)
    expect(usesGitHub({ ...OFF, 'pr-comment': true })).toBe(true)
    expect(usesGitHub({ ...OFF, 'check-run': true })).toBe(true)
    expect(usesGitHub({ ...OFF, attest: true })).toBe(true)
  })
})
