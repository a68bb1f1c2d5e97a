import { mkdtemp, rm } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { dedupIdAfterFailure, MAX_FAILED_RESUBMISSIONS } from '../../../../src/clients/proving/dedup.ts'
import { AbortedError, InvalidInputError } from '../../../../src/core/errors.ts'
import { silentLogger } from '../../../../src/core/runtime.ts'
import { SubmissionJournal } from '../../../../src/pipeline/journal.ts'
import type { PreparedPie } from '../../../../src/pipeline/prepared-pie.ts'
import { journalParts } from '../../../../src/pipeline/statement/submit.ts'
import { actedAs, type PlanRow, planStatements } from '../../../../src/pipeline/statement/plan.ts'
import type {
  StatementEndpoint,
  StatementPolicy,
  StatementRequest,
  StatementSubject,
} from '../../../../src/pipeline/statement/request.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../../../helpers/emulator.ts'
import { EXAMPLE, EXAMPLE_PIE, generatedPie } from '../../../helpers/example-pie.ts'

/**
 * The plan (`--dry-run`, `dry-run: true`, planStatements) against the emulator over HTTP: what a
 * run would do with each statement and why, by reading only: reuse, follow, retry, submit or
 * refuse, with the query it concerns. Nothing is submitted, retried or written by a plan.
 */

let emulator: TestEmulator
let root: string

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY] })
  root = await mkdtemp(join(tmpdir(), 'plan-'))
})
afterAll(async () => {
  await emulator.close()
  await rm(root, { recursive: true, force: true })
})
let journalDir: string
let cell = 0
beforeEach(async () => {
  await emulator.control('POST', '/reset')
  await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 60_000 })
  journalDir = join(root, `journal-${cell++}`)
})

const L2: StatementEndpoint = { kind: 'l2', layout: 'auto', prover: 'svc_sharp', mockFactHash: false }
const GENERAL: StatementEndpoint = {
  kind: 'general',
  layout: 'auto',
  mockFactHash: false,
  fields: { result: 'PROOF_VERIFICATION_ON_L2' },
}
const pie = (path = EXAMPLE_PIE, label?: string): StatementSubject => ({ kind: 'pie', path, label })

function request(
  subjects: StatementSubject[],
  options: { endpoint?: StatementEndpoint; policy?: Partial<StatementPolicy> } = {},
): StatementRequest {
  return {
    subjects,
    endpoint: options.endpoint ?? L2,
    policy: {
      wait: true,
      timeoutMs: 60_000,
      concurrency: 2,
      gate: { allowMockedFact: false, verifyFacts: true },
      reuse: { mode: 'auto' },
      journal: { dir: journalDir, forceNew: false },
      ...options.policy,
    },
  }
}

const plan = (req: StatementRequest): Promise<PlanRow[]> =>
  planStatements(req, { client: emulator.client(), logger: silentLogger })
const submissions = async (): Promise<number> => (await emulator.control('GET', '/state')).counters.submissions

/** What the journal of an earlier run of the example PIE to the L2 endpoint holds. */
async function journaled(entry: { provingQueryId?: string; state?: 'submitting' | 'submitted' }) {
  const journal = new SubmissionJournal(journalDir)
  await journal.open()
  const parts = journalParts({ sha256: EXAMPLE.sha256 } as PreparedPie, {
    client: emulator.client(),
    endpoint: L2,
    policy: request([]).policy,
    logger: silentLogger,
  })
  const key = journal.keyOf(parts)
  await journal.write({
    version: 1,
    key,
    ...parts,
    startedAt: Date.now(),
    state: entry.state ?? 'submitted',
    provingQueryId: entry.provingQueryId,
    serviceOffsetMs: 0,
  })
  return { journal, key }
}

async function failed(id: string, retriable: boolean): Promise<void> {
  await emulator.control('POST', `/queries/${id}/fail`, { retriable })
}

describe('planStatements', () => {
  it('one row per statement, in order: a PIE given twice is sent once, a bad PIE is refused with the reason', async () => {
    const before = await submissions()
    const rows = await plan(
      request([pie(EXAMPLE_PIE, 'first'), pie(EXAMPLE_PIE, 'again'), pie(join(root, 'missing.zip'), 'missing')]),
    )
    expect(rows).toEqual([
      { pie: 'first', decision: 'submit', reason: 'no query of this key was listed' },
      { pie: 'again', decision: 'follow', reason: 'the same PIE as first: sent once, its query shared' },
      { pie: 'missing', decision: 'refuse', reason: expect.stringMatching(/missing\.zip/) },
    ])
    expect(await submissions()).toBe(before)
  })

  it('two PIEs are two statements, each planned on its own', async () => {
    const other = await generatedPie({ seed: 4242 })
    const rows = await plan(
      request([pie(EXAMPLE_PIE, 'example'), pie(other.zip, 'other'), pie(other.dir, 'other, as a directory')]),
    )
    expect(rows.map((row) => [row.pie, row.decision])).toEqual([
      ['example', 'submit'],
      ['other', 'submit'],
      // The directory packs to the same pie.zip: the same PIE.
      ['other, as a directory', 'follow'],
    ])
  })

  it('the same PIE twice: the first in the order given carries the decision, whichever was prepared first', async () => {
    const other = await generatedPie({ seed: 4243 })
    // The directory is packed before it is read; the zip beside it is ready sooner.
    const rows = await plan(request([pie(other.dir, 'first, a directory'), pie(other.zip, 'second, its zip')]))
    expect(rows).toEqual([
      { pie: 'first, a directory', decision: 'submit', reason: 'no query of this key was listed' },
      {
        pie: 'second, its zip',
        decision: 'follow',
        reason: 'the same PIE as first, a directory: sent once, its query shared',
      },
    ])
  })

  it('property: the plan of any list of PIEs, repeats and directories among them, is the same at any concurrency', async () => {
    const a = await generatedPie({ seed: 4244 })
    const b = await generatedPie({ seed: 4245 })
    // Four forms of three statements: a's directory packs to a's zip.
    const forms = [
      { path: a.dir, statement: 'a' },
      { path: a.zip, statement: 'a' },
      { path: b.zip, statement: 'b' },
      { path: EXAMPLE_PIE, statement: 'example' },
    ]
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: forms.length - 1 }), { minLength: 1, maxLength: 5 }),
        fc.integer({ min: 2, max: 4 }),
        async (picks, concurrency) => {
          const subjects = picks.map((form, index) => pie(forms[form]!.path, `#${index} ${forms[form]!.statement}`))
          const policy = (concurrency: number) => ({ policy: { ...request([]).policy, concurrency } })
          const sequential = await plan(request(subjects, policy(1)))
          expect(await plan(request(subjects, policy(concurrency)))).toEqual(sequential)
          // In the order given: the first of each statement is planned, the others share its query.
          const first = new Map<string, string>()
          sequential.forEach((row, index) => {
            const statement = forms[picks[index]!]!.statement
            expect(row.pie).toBe(subjects[index]!.label)
            const earlier = first.get(statement)
            if (earlier === undefined) {
              first.set(statement, row.pie)
              expect(row.decision).toBe('submit')
            } else {
              expect(row).toEqual({
                pie: row.pie,
                decision: 'follow',
                reason: `the same PIE as ${earlier}: sent once, its query shared`,
              })
            }
          })
        },
      ),
      { numRuns: 12 },
    )
  })

  it('a cancelled plan is cancelled, not a table of refusals', async () => {
    const controller = new AbortController()
    controller.abort(new Error('Ctrl-C'))
    await expect(
      planStatements(request([pie()]), { client: emulator.client(), logger: silentLogger, signal: controller.signal }),
    ).rejects.toBeInstanceOf(AbortedError)
  })

  it('the wrong program is refused before anything is paid, naming both hashes', async () => {
    const [row] = await plan(
      request([pie()], {
        policy: { gate: { allowMockedFact: false, verifyFacts: true, expectedProgramHash: '0x1234' } },
      }),
    )
    expect(row).toEqual({
      pie: EXAMPLE_PIE,
      decision: 'refuse',
      reason: `The PIE's program hash is ${EXAMPLE.programHash}, not the expected 0x1234; nothing was submitted.`,
    })
  })

  it('a request that cannot mean anything throws, as a run would', async () => {
    await expect(plan(request([]))).rejects.toBeInstanceOf(InvalidInputError)
  })

  it('a DONE query that proves the PIE: reused, with its id', async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 0 })
    const id = await submitFixturePie(emulator)
    await emulator.client().waitForQuery(id, { timeoutMs: 30_000 })
    const [row] = await plan(request([pie()]))
    expect(row).toMatchObject({
      decision: 'reuse-query',
      queryId: id,
      reason: expect.stringMatching(new RegExp(`^query ${id}, created .* is DONE and proves this PIE`)),
    })
  })

  it('its fact already on chain: reused from chain, no query named', async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 0 })
    const id = await submitFixturePie(emulator)
    await emulator.client().waitForQuery(id, { timeoutMs: 30_000 })
    const onchain = {
      mode: 'starknet' as const,
      timeoutMs: 60_000,
      expected: { securityBits: 96 },
      allowInsecureHttp: true,
    }
    const [row] = await plan(request([pie()], { policy: { onchain, emulatorUrl: emulator.url } }))
    expect(row).toEqual({
      pie: EXAMPLE_PIE,
      decision: 'reuse-chain',
      reason: 'the fact this PIE gives is already registered on chain',
    })
  })

  it('a re-run: a query an earlier attempt left running is followed, a FAILED one retried', async () => {
    const rerun = { reuse: { mode: 'auto' as const, rerun: { sinceMs: 3_600_000 } } }
    const running = await submitFixturePie(emulator)
    expect(await plan(request([pie()], { policy: rerun }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'follow',
        queryId: running,
        reason: expect.stringMatching(/^a re-run: 1 query of this PIE's program/),
      },
    ])
    await failed(running, true)
    expect(await plan(request([pie()], { policy: rerun }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'retry',
        queryId: running,
        reason: expect.stringMatching(new RegExp(`^a re-run: query ${running} of this PIE's program FAILED`)),
      },
    ])
  })
})

describe('planStatements and the journal', () => {
  it('another run submitting this PIE now: its query is followed', async () => {
    const { journal, key } = await journaled({ state: 'submitting' })
    const lock = await journal.lock(key)
    expect(lock.taken).toBe(true)
    try {
      const [row] = await plan(request([pie()]))
      expect(row).toEqual({
        pie: EXAMPLE_PIE,
        decision: 'follow',
        reason: `another run is submitting this PIE now (pid ${process.pid} on ${hostname()}): its query is followed`,
      })
    } finally {
      if (lock.taken) await lock.release()
    }
  })

  it('an earlier upload that did not finish: the run looks for what it created', async () => {
    const { journal, key } = await journaled({ state: 'submitting' })
    const [row] = await plan(request([pie()]))
    expect(row).toEqual({
      pie: EXAMPLE_PIE,
      decision: 'follow',
      reason: `an earlier upload of this PIE did not finish (journal ${journal.pathOf(key)}): the run looks for the query it created and follows it, or refuses to pay twice`,
    })
  })

  it("an earlier run's query: followed while it runs, retried once FAILED with a retriable error, paid anew when it cannot be", async () => {
    const id = await submitFixturePie(emulator)
    await journaled({ provingQueryId: id })
    const whose = 'an earlier run of this PIE submitted it'
    expect(await plan(request([pie()]))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'follow',
        queryId: id,
        reason: `${whose} (query ${id}, IN_PROGRESS); nothing is sent again`,
      },
    ])
    await failed(id, true)
    expect(await plan(request([pie()]))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'retry',
        queryId: id,
        reason: `${whose}, and query ${id} FAILED with a retriable error: it is retried, nothing new paid for`,
      },
    ])
    const other = await submitFixturePie(emulator)
    await failed(other, false)
    await journaled({ provingQueryId: other })
    expect(await plan(request([pie()]))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'submit',
        reason: `${whose}, and query ${other} FAILED and cannot be retried: a new query is paid for`,
      },
    ])
  })

  it('FAILED, and the service does not say whether it may be retried: the retry endpoint decides', async () => {
    const id = await submitFixturePie(emulator)
    await journaled({ provingQueryId: id })
    await failed(id, true)
    const { isRetriable: _, ...silent } = (await emulator.client().getQuery(id)).provingQuery as Record<string, unknown>
    const reason = `an earlier run of this PIE submitted it, and query ${id} FAILED (the service did not say whether it is retriable: the retry endpoint decides): it is retried, nothing new paid for`
    // The plan reads the query twice there: its status, then its word on a retry.
    await emulator.control('POST', '/faults', {
      method: 'GET',
      path: `/proving-query/${id}`,
      status: 200,
      body: { provingQuery: silent },
      times: 2,
    })
    expect(await plan(request([pie()]))).toEqual([{ pie: EXAMPLE_PIE, decision: 'retry', queryId: id, reason }])
    // Its word on a retry could not be read at all: the same.
    await emulator.control('POST', '/faults', {
      method: 'GET',
      path: `/proving-query/${id}`,
      status: 500,
      skip: 1,
      times: 1,
    })
    expect(await plan(request([pie()]))).toEqual([{ pie: EXAMPLE_PIE, decision: 'retry', queryId: id, reason }])
  })

  it('a recorded query the service does not know: followed, its status unread (nothing is sent again)', async () => {
    await journaled({ provingQueryId: '00000000-0000-4000-8000-000000000000' })
    const [row] = await plan(request([pie()]))
    expect(row).toEqual({
      pie: EXAMPLE_PIE,
      decision: 'follow',
      queryId: '00000000-0000-4000-8000-000000000000',
      reason: expect.stringMatching(
        /\(query 00000000-0000-4000-8000-000000000000, status unread\); nothing is sent again$/,
      ),
    })
  })

  it('a new query asked for: submitted whatever the journal says', async () => {
    const id = await submitFixturePie(emulator)
    await journaled({ provingQueryId: id })
    const [row] = await plan(request([pie()], { policy: { journal: { dir: journalDir, forceNew: true } } }))
    expect(row).toEqual({
      pie: EXAMPLE_PIE,
      decision: 'submit',
      reason: 'a new query was asked for, whatever the journal says',
    })
  })

  it("without a journal (an emulator started for the run), an earlier run's record is not read", async () => {
    const id = await submitFixturePie(emulator)
    await journaled({ provingQueryId: id })
    const [row] = await plan(request([pie()], { policy: { journal: undefined } }))
    expect(row).toEqual({
      pie: EXAMPLE_PIE,
      decision: 'submit',
      reason: expect.stringMatching(/^none of the 1 queries of this key proves it/),
    })
  })
})

describe('planStatements and the dedup chain', () => {
  const dedup = (dedupId: string): StatementEndpoint =>
    ({ ...GENERAL, fields: { ...(GENERAL as { fields: object }).fields, dedupId } }) as StatementEndpoint
  const submitUnder = async (dedupId: string) =>
    (
      await emulator.client().submitQuery({
        pieZip: EXAMPLE_PIE,
        declaredJobSize: 'XS',
        result: 'PROOF_VERIFICATION_ON_L2',
        layout: 'auto',
        dedupId,
      })
    ).provingQueryId

  it('no query under the dedup id yet: submitted under it', async () => {
    expect(await plan(request([pie()], { endpoint: dedup('release-1') }))).toEqual([
      { pie: EXAMPLE_PIE, decision: 'submit', reason: 'no query has its dedup id release-1 yet' },
    ])
  })

  it('the query under it is followed; past a FAILED one that cannot be retried, the next link is', async () => {
    const first = await submitUnder('release-2')
    expect(await plan(request([pie()], { endpoint: dedup('release-2') }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'follow',
        queryId: first,
        reason: `the service has a query under its dedup id release-2 (query ${first}, IN_PROGRESS); nothing is sent again`,
      },
    ])
    await failed(first, false)
    const next = dedupIdAfterFailure('release-2', first)
    expect(await plan(request([pie()], { endpoint: dedup('release-2') }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'submit',
        reason: `the chain's FAILED queries cannot be retried: submitted under dedup id ${next}`,
      },
    ])
    const second = await submitUnder(next)
    await failed(second, true)
    expect(await plan(request([pie()], { endpoint: dedup('release-2') }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'retry',
        queryId: second,
        reason: `the service has a query under its dedup id ${next}, and query ${second} FAILED with a retriable error: it is retried, nothing new paid for`,
      },
    ])
  })

  it(`a chain FAILED more than ${MAX_FAILED_RESUBMISSIONS} times is refused: another dedup id is needed`, async () => {
    let dedupId = 'release-3'
    for (let link = 0; link < MAX_FAILED_RESUBMISSIONS; link++) {
      const id = await submitUnder(dedupId)
      await failed(id, false)
      dedupId = dedupIdAfterFailure(dedupId, id)
    }
    // FAILED as many times as a chain may be resubmitted: one more link is submitted.
    expect(await plan(request([pie()], { endpoint: dedup('release-3') }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'submit',
        reason: `the chain's FAILED queries cannot be retried: submitted under dedup id ${dedupId}`,
      },
    ])
    await failed(await submitUnder(dedupId), false)
    expect(await plan(request([pie()], { endpoint: dedup('release-3') }))).toEqual([
      { pie: EXAMPLE_PIE, decision: 'refuse', reason: 'the dedup chain FAILED too many times; give another dedup id' },
    ])
  })

  it("a derived dedup id: from the PIE's digest (the journal is the dedup id's then), or the program hash; a program's from its files", async () => {
    const derived: string[] = []
    const settings: Record<string, unknown>[] = []
    const deriving: StatementEndpoint = {
      ...GENERAL,
      deriveDedupId: (subject, given) => {
        derived.push(subject)
        settings.push(given)
        return `derived-${subject.replace(/[^a-z0-9]/g, '-')}`
      },
    } as StatementEndpoint
    const hash: StatementSubject = { kind: 'program-hash', programHash: EXAMPLE.programHash }
    const program: StatementSubject = { kind: 'program', programFile: join(root, 'program.json') }
    const id = await submitFixturePie(emulator)
    await journaled({ provingQueryId: id })
    const rows = await plan(request([pie(), hash, program], { endpoint: deriving, policy: { concurrency: 1 } }))
    expect(rows).toEqual([
      { pie: EXAMPLE_PIE, decision: 'submit', reason: `no query has its dedup id derived-pie-${EXAMPLE.sha256} yet` },
      {
        pie: EXAMPLE.programHash,
        decision: 'submit',
        reason: `no query has its dedup id derived-hash-${EXAMPLE.programHash} yet`,
      },
      {
        pie: join(root, 'program.json'),
        decision: 'submit',
        reason: 'a program is sent under a dedup id derived from its files',
      },
    ])
    expect(derived).toEqual([`pie:${EXAMPLE.sha256}`, `hash:${EXAMPLE.programHash}`])
    // From the settings the submission sends, as a run derives it: other settings, another query.
    expect(settings).toEqual([
      { result: 'PROOF_VERIFICATION_ON_L2', declaredJobSize: expect.any(String), layout: 'auto', mockFactHash: false },
      { result: 'PROOF_VERIFICATION_ON_L2', declaredJobSize: 'XS', layout: 'auto', mockFactHash: false },
    ])
  })

  it("the journal is read for a given dedup id, not for a derived one (the dedup id finds the earlier run's query then)", async () => {
    const id = await submitUnder('release-4')
    const parts = journalParts({ sha256: EXAMPLE.sha256 } as PreparedPie, {
      client: emulator.client(),
      endpoint: dedup('release-4'),
      policy: request([]).policy,
      logger: silentLogger,
    })
    const journal = new SubmissionJournal(journalDir)
    await journal.open()
    await journal.write({
      version: 1,
      key: journal.keyOf(parts),
      ...parts,
      startedAt: Date.now(),
      state: 'submitted',
      provingQueryId: id,
      serviceOffsetMs: 0,
    })
    expect(await plan(request([pie()], { endpoint: dedup('release-4') }))).toEqual([
      {
        pie: EXAMPLE_PIE,
        decision: 'follow',
        queryId: id,
        reason: `an earlier run of this PIE submitted it (query ${id}, IN_PROGRESS); nothing is sent again`,
      },
    ])
    const deriving = { ...dedup('release-4'), deriveDedupId: () => 'derived-4' } as StatementEndpoint
    const derivedParts = journalParts({ sha256: EXAMPLE.sha256 } as PreparedPie, {
      client: emulator.client(),
      endpoint: deriving,
      policy: request([]).policy,
      logger: silentLogger,
    })
    await journal.write({
      version: 1,
      key: journal.keyOf(derivedParts),
      ...derivedParts,
      startedAt: Date.now(),
      state: 'submitted',
      provingQueryId: id,
      serviceOffsetMs: 0,
    })
    expect(
      await plan(request([pie()], { endpoint: { ...GENERAL, deriveDedupId: () => 'derived-4' } as StatementEndpoint })),
    ).toEqual([{ pie: EXAMPLE_PIE, decision: 'submit', reason: 'no query has its dedup id derived-4 yet' }])
  })

  it('a general submission with no dedup id at all: submitted (the client derives one from the files)', async () => {
    expect(await plan(request([pie()], { endpoint: GENERAL }))).toEqual([
      { pie: EXAMPLE_PIE, decision: 'submit', reason: 'no query of this key was listed' },
    ])
  })

  it('a program under a given dedup id follows its chain like a PIE', async () => {
    const program: StatementSubject = { kind: 'program', programFile: join(root, 'program.json') }
    expect(await plan(request([program], { endpoint: dedup('release-5') }))).toEqual([
      { pie: join(root, 'program.json'), decision: 'submit', reason: 'no query has its dedup id release-5 yet' },
    ])
  })
})

describe('actedAs', () => {
  it("reads a run's outcome in the plan's words", () => {
    expect(actedAs({ decision: { kind: 'reuse-chain' }, ending: 'passed' })).toBe('reuse-chain')
    expect(actedAs({ submitted: { how: 'reused' }, ending: 'passed' })).toBe('reuse-query')
    expect(actedAs({ submitted: { how: 'followed' }, ending: 'passed' })).toBe('follow')
    expect(actedAs({ submitted: { how: 'retried' }, ending: 'passed' })).toBe('retry')
    expect(actedAs({ submitted: { how: 'submitted' }, ending: 'passed' })).toBe('submit')
    expect(actedAs({ ending: 'refused' })).toBe('refuse')
    expect(actedAs({ decision: { kind: 'submit' }, submitted: { how: 'unknown' }, ending: 'failed' })).toBe('refuse')
  })
})
