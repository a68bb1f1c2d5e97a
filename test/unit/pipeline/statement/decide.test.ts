import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Logger } from '../../../../src/core/runtime.ts'
import { inspectPie, type PieInspection } from '../../../../src/pie/index.ts'
import {
  type DecideContext,
  type Decision,
  decideReuse,
  decisionLine,
} from '../../../../src/pipeline/statement/decide.ts'
import type { StatementEndpoint, StatementPolicy } from '../../../../src/pipeline/statement/request.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../../../helpers/emulator.ts'
import { EXAMPLE, EXAMPLE_PIE } from '../../../helpers/example-pie.ts'

/**
 * What a run decides for a prepared statement before it pays, against the emulator over HTTP:
 * reuse what already proves it (on chain, or a DONE query of the key), name what a re-run's
 * earlier attempt left running, or submit; each with the reason a person is told.
 */

let emulator: TestEmulator
let inspection: PieInspection

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY] })
  inspection = await inspectPie(EXAMPLE_PIE, { sha256: false })
})
afterAll(() => emulator.close())
beforeEach(async () => {
  await emulator.control('POST', '/reset')
  await emulator.control('PUT', '/timing', { receivedMs: 0, stepMs: 0 })
})

const L2: StatementEndpoint = { kind: 'l2', layout: 'auto', prover: 'svc_sharp', mockFactHash: false }

function policy(overrides: Partial<StatementPolicy> = {}): StatementPolicy {
  return {
    wait: true,
    timeoutMs: 60_000,
    concurrency: 1,
    gate: { allowMockedFact: false, verifyFacts: true },
    reuse: { mode: 'auto' },
    ...overrides,
  }
}

function recorder(): Logger & { lines: string[] } {
  const lines: string[] = []
  const at = (level: string) => (line: string) => void lines.push(`${level}: ${line}`)
  return { lines, debug: () => {}, info: at('info'), warn: at('warn'), error: at('error') }
}

/** `pie`: null for a statement without one (a program, a program hash). */
function decide(options: Partial<DecideContext> = {}, pie: PieInspection | null = inspection): Promise<Decision> {
  // A run names each PIE by its digest, as ./run.ts does.
  const pieDigest = pie ? EXAMPLE.sha256 : undefined
  return decideReuse(pie ?? undefined, {
    client: emulator.client(),
    endpoint: L2,
    policy: policy(),
    logger: recorder(),
    pieDigest,
    ...options,
  })
}

/** The example PIE proven by a query of the key, DONE. */
async function provenQuery(fields: Record<string, string> = {}): Promise<string> {
  const id = await submitFixturePie(emulator, KEY, fields)
  await emulator.client().waitForQuery(id, { timeoutMs: 30_000 })
  return id
}

const lists = async () =>
  ((await emulator.control('GET', '/requests')).requests as { path: string }[]).filter((each) =>
    each.path.includes('proving-queries'),
  ).length

describe('decideReuse', () => {
  it('submits without looking when reuse is off, a new query is asked for, there is no PIE, or it is a proof', async () => {
    await provenQuery()
    await emulator.call('DELETE', '/_emulator/requests')
    const proof: StatementEndpoint = {
      kind: 'proof',
      stoneVersion: 'stone6',
      memoryVerification: 'relaxed',
      mockFactHash: false,
    }
    const decisions = [
      await decide({ policy: policy({ reuse: { mode: 'never' } }) }),
      await decide({ policy: policy({ journal: { dir: '/nonexistent', forceNew: true } }) }),
      await decide({}, null),
      await decide({ endpoint: proof }),
    ]
    expect(decisions).toEqual([
      { kind: 'submit', reason: 'reuse is off' },
      { kind: 'submit', reason: 'a new query was asked for' },
      { kind: 'submit', reason: 'there is no PIE to compare an earlier query with' },
      { kind: 'submit', reason: 'a proof verification is not reused' },
    ])
    // Nothing to tell a person: none of them looked at an earlier query.
    expect(decisions.map(decisionLine)).toEqual([undefined, undefined, undefined, undefined])
    expect(await lists()).toBe(0)
  })

  it('reuses a DONE query of the key that proves the PIE, and says which', async () => {
    const id = await provenQuery()
    const decision = await decide()
    expect(decision).toMatchObject({ kind: 'reuse-query', record: { id, status: 'DONE' } })
    const { createdAt } = (decision as Extract<Decision, { kind: 'reuse-query' }>).record
    expect(decision.reason).toBe(
      `query ${id}, created ${createdAt} is DONE and proves this PIE (same result kind, settings and facts)`,
    )
    expect(decisionLine(decision)).toBe(
      `Reused query ${id}, created ${createdAt} is DONE and proves this PIE (same result kind, settings and facts); nothing was submitted. It is gated as if new.`,
    )
  })

  it('the query must show what this submission would: its layout, its mock state, the expected program, the general result kind', async () => {
    await provenQuery()
    const looked = (decision: Decision) => expect(decision).toMatchObject({ kind: 'submit', looked: true })
    looked(await decide({ endpoint: { ...L2, layout: 'recursive' } }))
    looked(
      await decide({
        endpoint: { ...L2, mockFactHash: true },
        policy: policy({ gate: { allowMockedFact: true, verifyFacts: true } }),
      }),
    )
    looked(
      await decide({
        policy: policy({ gate: { allowMockedFact: false, verifyFacts: true, expectedProgramHash: '0x1234' } }),
      }),
    )
    // The general submission's result kind is PROOF_GENERATION unless given: an L2 query is not that.
    const general: StatementEndpoint = { kind: 'general', layout: 'auto', mockFactHash: false, fields: {} }
    looked(await decide({ endpoint: general }))
    expect(await decide({ endpoint: { ...general, fields: { result: 'PROOF_VERIFICATION_ON_L2' } } })).toMatchObject({
      kind: 'reuse-query',
    })
    // An L2 prover no record shows: reuse is off for it, before anything is listed.
    expect(await decide({ endpoint: { ...L2, prover: 'other_prover' } })).toMatchObject({
      kind: 'submit',
      looked: true,
      reason: expect.stringMatching(/prover other_prover/),
    })
  })

  it('a mocked query stands for a mocked submission only where mocked facts are allowed', async () => {
    await provenQuery({ mockFactHash: 'true' })
    const mocked = { endpoint: { ...L2, mockFactHash: true } }
    expect(
      await decide({ ...mocked, policy: policy({ gate: { allowMockedFact: true, verifyFacts: true } }) }),
    ).toMatchObject({ kind: 'reuse-query' })
    expect(
      await decide({ ...mocked, policy: policy({ gate: { allowMockedFact: false, verifyFacts: true } }) }),
    ).toMatchObject({ kind: 'submit', looked: true })
  })

  it('nothing proves it: submitted, and the person told why no earlier query was taken', async () => {
    await provenQuery({ layout: 'small' })
    const decision = await decide()
    expect(decision).toEqual({
      kind: 'submit',
      reason: 'none of the 1 queries of this key proves it',
      looked: true,
      quiet: undefined,
    })
    expect(decisionLine(decision)).toBe('No earlier query reused: none of the 1 queries of this key proves it.')
  })

  it('a list that cannot be read: submitted, and nothing said yet (the submission says it once it went through)', async () => {
    await emulator.control('POST', '/faults', {
      method: 'GET',
      path: '/docs/proving-queries',
      status: 401,
      body: { error: 'UNAUTHORIZED' },
      times: 10,
    })
    const decision = await decide()
    expect(decision).toMatchObject({
      kind: 'submit',
      looked: true,
      quiet: true,
      reason: expect.stringMatching(/could not be listed/),
    })
    expect(decisionLine(decision)).toBeUndefined()
  })
})

describe('decideReuse on a re-run (a plan: named, not waited for)', () => {
  const rerun = (known?: Set<string>) => policy({ reuse: { mode: 'auto', rerun: { sinceMs: 3_600_000, known } } })

  it('names the queries of this PIE an earlier attempt left running, the newest first', async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 60_000, stepMs: 60_000 })
    const one = await submitFixturePie(emulator)
    const single = await decide({ policy: rerun(), dryRun: true })
    expect(single).toEqual({
      kind: 'follow-running',
      ids: [one],
      reason: `a re-run: 1 query of this PIE's program and settings is still running (${one}); waited for and judged before anything is paid`,
    })
    expect(decisionLine(single)).toBeUndefined()
    const more = [await submitFixturePie(emulator), await submitFixturePie(emulator)]
    const three = await decide({ policy: rerun(), dryRun: true })
    expect(three).toMatchObject({ kind: 'follow-running', ids: [...[...more].reverse(), one] })
    expect(three.reason).toBe(
      `a re-run: 3 queries of this PIE's program and settings are still running (${[...more].reverse().join(', ')}, ${one}); waited for and judged before anything is paid`,
    )
    // Past three, the line names the newest three.
    more.push(await submitFixturePie(emulator))
    const several = await decide({ policy: rerun(), dryRun: true })
    const newest = [...more].reverse()
    expect(several).toMatchObject({ kind: 'follow-running', ids: [...newest, one] })
    expect(several.reason).toBe(
      `a re-run: 4 queries of this PIE's program and settings are still running (${newest.join(', ')}, ...); waited for and judged before anything is paid`,
    )
  })

  it("only queries created within the re-run's window are candidates", async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 60_000, stepMs: 60_000 })
    await submitFixturePie(emulator)
    // Older than the window by the time the re-run looks (waiting longer only makes it older).
    await new Promise((resolve) => setTimeout(resolve, 20))
    const decision = await decide({ policy: policy({ reuse: { mode: 'auto', rerun: { sinceMs: 5 } } }), dryRun: true })
    expect(decision).toMatchObject({ kind: 'submit', looked: true })
  })

  it('a running query is not looked for where the journal knows the PIE, on a first run, or for the general submission (its dedup id finds it)', async () => {
    await emulator.control('PUT', '/timing', { receivedMs: 60_000, stepMs: 60_000 })
    await submitFixturePie(emulator)
    const digest = 'a'.repeat(64)
    expect(await decide({ policy: rerun(new Set([digest])), pieDigest: digest, dryRun: true })).toMatchObject({
      kind: 'submit',
      looked: true,
    })
    // Another PIE's digest is known: this one is looked for.
    expect(await decide({ policy: rerun(new Set([digest])), pieDigest: 'b'.repeat(64), dryRun: true })).toMatchObject({
      kind: 'follow-running',
    })
    expect(await decide({ dryRun: true })).toMatchObject({ kind: 'submit', looked: true })
    const general: StatementEndpoint = {
      kind: 'general',
      layout: 'auto',
      mockFactHash: false,
      fields: { result: 'PROOF_VERIFICATION_ON_L2' },
    }
    expect(await decide({ endpoint: general, policy: rerun(), dryRun: true })).toMatchObject({
      kind: 'submit',
      looked: true,
    })
  })

  it('a FAILED query of this PIE an earlier attempt left is named for a retry', async () => {
    await emulator.control('POST', '/next-query', { outcome: 'fail', retriable: true })
    const failed = await submitFixturePie(emulator)
    await emulator
      .client()
      .waitForQuery(failed, { timeoutMs: 30_000 })
      .catch(() => {})
    const decision = await decide({ policy: rerun(), dryRun: true })
    expect(decision).toEqual({
      kind: 'follow-running',
      ids: [failed],
      retry: true,
      reason: `a re-run: query ${failed} of this PIE's program FAILED; it is retried and judged before anything is paid`,
    })
  })
})

describe('decideReuse with an on-chain policy', () => {
  const onchain = (rpc?: string) =>
    policy({
      onchain: {
        mode: 'starknet',
        timeoutMs: 60_000,
        starknetRpcUrl: rpc,
        expected: { securityBits: 96 },
        allowInsecureHttp: true,
      },
      emulatorUrl: emulator.url,
    })

  it("the PIE's fact already registered: reused from chain, nothing submitted", async () => {
    // The emulator registers a DONE L2 query's Integrity fact on its Starknet.
    await provenQuery()
    const logger = recorder()
    const decision = await decide({ policy: onchain(), logger })
    expect(decision).toMatchObject({
      kind: 'reuse-chain',
      reason: 'the fact this PIE gives is already registered on chain',
      outcomes: [{ chain: 'starknet', status: 'registered' }],
    })
    expect(decisionLine(decision)).toBeUndefined()
  })

  it("not registered yet: said, and the key's queries looked through", async () => {
    const logger = recorder()
    expect(await decide({ policy: onchain(), logger })).toMatchObject({ kind: 'submit', looked: true })
    expect(logger.lines).toEqual([
      expect.stringMatching(
        /^info: Not proven on chain yet: the PIE's Integrity fact 0x[0-9a-f]+ is not registered on /,
      ),
    ])
  })

  it('a chain that cannot be read: warned, proven (never reused on a read that failed)', async () => {
    const logger = recorder()
    expect(await decide({ policy: onchain(`${emulator.url}/no-rpc-here`), logger })).toMatchObject({
      kind: 'submit',
      looked: true,
    })
    expect(logger.lines).toEqual([
      expect.stringMatching(
        /^warn: Not reused from chain: whether the PIE's Integrity fact is already registered on Starknet could not be read \(.+\); proving it\.$/,
      ),
    ])
  })

  it('not looked up on chain for a mocked fact or with chain reuse off: only a query stands for it then', async () => {
    const id = await provenQuery()
    const logger = recorder()
    const chainOff = { ...onchain(), reuse: { mode: 'auto' as const, chain: false } }
    expect(await decide({ policy: chainOff, logger })).toMatchObject({ kind: 'reuse-query', record: { id } })
    const mocked = await decide({ policy: onchain(), endpoint: { ...L2, mockFactHash: true }, logger })
    expect(mocked).toMatchObject({ kind: 'submit', looked: true })
    expect(logger.lines).toEqual([])
  })
})
