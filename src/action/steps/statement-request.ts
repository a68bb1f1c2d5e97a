/**
 * The root action's inputs as a statement request (src/pipeline/statement): the PIEs (or the
 * program, or its hash), the endpoint and every policy. The action's documented defaults are
 * written here as policy (a re-run's window and the PIEs an earlier attempt's journal answers
 * for, the journal in RUNNER_TEMP, `reuse` from chain only without a decommitment), never as
 * code that decides.
 */
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { actionJournalDir } from '../../pipeline/journal.ts'
import type { StatementEndpoint, StatementRequest, StatementSubject } from '../../pipeline/statement/index.ts'
import type { L2Layout, Layout } from '../../schemas/proving-constants.ts'
import type { ActionIO, InputValues } from '../types.ts'
import { deriveActionDedupId, generalFields, usesGeneralSubmission } from './general-submission.ts'
import type { MAIN_INPUTS } from './inputs.ts'
import { onchainPolicyOf } from './onchain-inputs.ts'

type MainInputs = InputValues<typeof MAIN_INPUTS>

/**
 * How far back a re-run looks for a query an earlier attempt left running: a week (attempts of
 * a run can be re-run later; a query older than that which still runs is not an attempt's).
 */
export const RERUN_WINDOW_MS = 7 * 24 * 3_600_000

/**
 * `pies`: the `pie` input's paths, absolute (globs expanded). `known`: on a re-run, the PIEs
 * whose earlier attempt's journal was read back whole (./journal-cache.ts): the journal follows
 * what that attempt left of them, so no running query of the key is looked up for them.
 */
export function mainRequest(
  io: ActionIO,
  inputs: MainInputs,
  pies: string[],
  emulatorUrl: string | undefined,
  known?: ReadonlySet<string>,
): StatementRequest {
  const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
  const general = usesGeneralSubmission(inputs)
  const attempt = Number(io.env.GITHUB_RUN_ATTEMPT ?? '1')
  const journalDir = mainJournalDir(io, inputs)
  return {
    subjects: subjectsOf(inputs, pies, workspace),
    endpoint: endpointOf(io, inputs, general),
    policy: {
      // In a bucket the query ends with its bucket: `bucket-close` waits for it.
      wait: inputs.wait && inputs['bucket-id'] === undefined,
      timeoutMs: inputs['timeout-minutes'] * 60_000,
      concurrency: inputs.concurrency,
      gate: {
        allowMockedFact: inputs['allow-mocked-fact'],
        expectedProgramHash: inputs['expected-program-hash'],
        verifyFacts: inputs['verify-facts'],
      },
      reuse: {
        mode: inputs.reuse,
        // "Re-run jobs" after an attempt was stopped: its journal (RUNNER_TEMP) is gone unless
        // read back from the Actions cache, and then only its PIEs are known.
        rerun: attempt > 1 ? { sinceMs: RERUN_WINDOW_MS, known } : undefined,
        // A decommitment needs a query: then only a query can be reused.
        chain: inputs['decommit-destination-chain-id'] === undefined,
      },
      // The local journal (RUNNER_TEMP, per run and attempt; carried to the next attempt through
      // the Actions cache): a second submission of a PIE in this job, after one whose outcome is
      // unknown, is refused instead of paid for twice. The general submission's dedup chain does
      // the same across attempts; the emulator forgets.
      journal: journalDir === undefined ? undefined : { dir: journalDir, forceNew: false },
      onchain: onchainPolicyOf(inputs),
      // Kept after the step (the runner empties RUNNER_TEMP after the job): `pie-zip` stays usable.
      packDir: () => join(io.env.RUNNER_TEMP || tmpdir(), 'proving-kit', randomUUID()),
      emulatorUrl,
    },
  }
}

/** The step's journal folder (RUNNER_TEMP, per run and attempt), where it keeps one: the L2 endpoint, not the emulator. */
export function mainJournalDir(io: ActionIO, inputs: MainInputs): string | undefined {
  return !usesGeneralSubmission(inputs) && !inputs.emulator ? actionJournalDir(io.env) : undefined
}

function subjectsOf(inputs: MainInputs, pies: string[], workspace: string): StatementSubject[] {
  if (pies.length) return pies.map((path) => ({ kind: 'pie', path, label: relative(workspace, path) || path }))
  if (inputs.program !== undefined) {
    const inputFile = inputs['program-input'] === undefined ? undefined : resolve(workspace, inputs['program-input'])
    return [{ kind: 'program', programFile: resolve(workspace, inputs.program), inputFile, label: inputs.program }]
  }
  return [{ kind: 'program-hash', programHash: inputs['program-hash'] ?? '' }]
}

function endpointOf(io: ActionIO, inputs: MainInputs, general: boolean): StatementEndpoint {
  // The layout is checked against the endpoint's list with the other inputs (mainCrossCheck).
  if (!general)
    return {
      kind: 'l2',
      layout: inputs.layout as L2Layout,
      prover: inputs.prover,
      mockFactHash: inputs['mock-fact-hash'],
    }
  return {
    kind: 'general',
    layout: inputs.layout as Layout,
    mockFactHash: inputs['mock-fact-hash'],
    fields: { ...generalFields(inputs), declaredJobSize: inputs['declared-job-size'], dedupId: inputs['dedup-id'] },
    // A re-run of this job finds the query it already paid for: the id is derived from where the
    // step runs and what it proves, the run attempt left out (general.ts).
    deriveDedupId: (subject, settings) => deriveActionDedupId(io.env, subject, settings),
  }
}
