import { describe, expect, it } from 'vitest'
import { journalCarryOf, type StepInputs } from '../../../../src/action/steps/journal-cache.ts'
import { RecordingIO } from '../../../helpers/recording-io.ts'

/**
 * The journal's cache key: scoped to the run and to a digest of the repository, workflow, job,
 * step and what the step proves where (API key included, never written), one key per attempt.
 */
const ENV = {
  RUNNER_TEMP: '/home/runner/work/_temp',
  GITHUB_REPOSITORY: 'acme/widgets',
  GITHUB_WORKFLOW: 'release',
  GITHUB_JOB: 'prove',
  GITHUB_ACTION: '__proving-kit_proving-kit',
  GITHUB_RUN_ID: '9001',
  GITHUB_RUN_ATTEMPT: '1',
}
const API_KEY = 'pk_live_0123456789abcdef'
const INPUTS: StepInputs = {
  pie: 'out/pie.zip',
  'base-url': 'https://prover.example',
  layout: 'auto',
  prover: 'svc_sharp',
  'mock-fact-hash': false,
}

function carry(env: Record<string, string | undefined> = {}, inputs: StepInputs = {}) {
  const io = new RecordingIO({})
  io.env = { ...ENV, ...env }
  return journalCarryOf(io, { ...INPUTS, ...inputs }, '/home/runner/work/_temp/proving-kit/journal/9001-1')
}

describe('journalCarryOf', () => {
  it('one prefix for every attempt of the step, the attempt added by each save; the staging folder the same path each time', () => {
    const one = carry()!
    const two = carry({ GITHUB_RUN_ATTEMPT: '2' })!
    expect(one.prefix).toMatch(/^proving-kit-journal-9001-[0-9a-f]{32}-$/)
    expect(two.prefix).toBe(one.prefix)
    expect([one.attempt, two.attempt]).toEqual([1, 2])
    expect(two.staging).toBe(one.staging)
    expect(one.staging.startsWith('/home/runner/work/_temp/proving-kit/')).toBe(true)
  })

  it('another run, repository, workflow, job, step, PIE, service or setting is another prefix', () => {
    const base = carry()!.prefix
    const others = [
      carry({ GITHUB_RUN_ID: '9002' }),
      carry({ GITHUB_REPOSITORY: 'acme/gadgets' }),
      carry({ GITHUB_WORKFLOW: 'nightly' }),
      carry({ GITHUB_JOB: 'prove-arm' }),
      carry({ GITHUB_ACTION: '__proving-kit_proving-kit_2' }),
      carry({}, { pie: 'other/pie.zip' }),
      carry({}, { 'base-url': 'https://other.example' }),
      carry({}, { layout: 'recursive' }),
      carry({}, { 'mock-fact-hash': true }),
    ].map((each) => each!.prefix)
    expect(new Set([base, ...others]).size).toBe(others.length + 1)
  })

  it('names no secret, digested or not: the API key is not an input of the key (a listed cache key would let its guesses be tested)', () => {
    const made = carry({}, { 'api-key': API_KEY } as StepInputs)!
    expect(JSON.stringify(made)).not.toContain(API_KEY)
    expect(made.prefix).toBe(carry({}, { 'api-key': 'pk_live_fedcba9876543210' } as StepInputs)!.prefix)
  })

  it('no run to carry it in: no RUNNER_TEMP or no run id', () => {
    expect(carry({ RUNNER_TEMP: undefined })).toBeUndefined()
    expect(carry({ GITHUB_RUN_ID: undefined })).toBeUndefined()
  })
})
