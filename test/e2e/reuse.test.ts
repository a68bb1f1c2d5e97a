import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/action/actions/main.ts'
import { ETHEREUM_NETWORKS } from '../../src/chain/index.ts'
import { computePieFacts } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, type TestEmulator } from '../helpers/emulator.ts'
import { type EvmNode, startEvmNode } from '../helpers/evm-node.ts'
import { unzipExample } from '../helpers/pie-fixtures.ts'
import { RecordingIO } from '../helpers/recording-io.ts'
import { generatedPie } from '../helpers/example-pie.ts'

/**
 * Prove only what is not proven yet (issue 32, 5): `--reuse auto` (the default) follows a DONE
 * query of this key that already proves the PIE, and the root action's `reuse` also takes the
 * PIE's fact already registered on chain. Every count is the emulator's own (GET
 * /_emulator/state: its submissions), never the client's word; every reused query is gated.
 */

let emulator: TestEmulator
let journal: string

beforeAll(async () => {
  emulator = await startTestEmulator({ apiKeys: [KEY] })
  journal = await mkdtemp(join(tmpdir(), 'journal-reuse-'))
})
afterAll(async () => {
  await emulator.close()
  await rm(journal, { recursive: true, force: true })
})

const submissions = async (): Promise<number> => (await emulator.control('GET', '/state')).counters.submissions
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: KEY, PROVING_JOURNAL_DIR: journal })
/** `proving prove FIXTURE_PIE --wait --json ...`: its exit code, its JSON and its stderr, and how many queries the emulator created for it. */
async function prove(...flags: string[]): Promise<{ code: number; json: any; stderr: string; created: number }> {
  const before = await submissions()
  const result = await runCli(['prove', FIXTURE_PIE, '--wait', '--json', ...flags], { env: env() })
  return {
    code: result.code,
    json: result.stdout ? JSON.parse(result.stdout) : undefined,
    stderr: result.stderr,
    created: (await submissions()) - before,
  }
}

describe('CLI: --reuse auto', () => {
  it('the same PIE proven twice: the second run creates no query, follows the first, and gates it (facts compared again)', async () => {
    const first = await prove('--reuse', 'never')
    expect(first.code, first.stderr).toBe(0)
    expect(first.created).toBe(1)
    expect(first.json.reused).toBe(false)
    const second = await prove()
    expect(second.code, second.stderr).toBe(0)
    expect(second.created).toBe(0)
    expect(second.json.provingQuery.id).toBe(first.json.provingQuery.id)
    expect(second.json.reused).toBe('query')
    expect(second.json.gate).toEqual({ ok: true, refusals: [] })
    expect(second.json.localFactCheck.ok).toBe(true)
    expect(second.stderr).toContain(
      `Reused query ${first.json.provingQuery.id}, created ${first.json.provingQuery.createdAt}`,
    )
    expect(second.stderr).not.toMatch(/Submitted: query/)
    // --reuse never always pays.
    const never = await prove('--reuse', 'never')
    expect(never.created).toBe(1)
    expect(never.json.reused).toBe(false)
  }, 60_000)

  it('without --wait, a reused query is reported as reused, with its id, and nothing is submitted', async () => {
    await prove()
    const before = await submissions()
    const result = await runCli(['prove', FIXTURE_PIE, '--json'], { env: env() })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ reused: 'query' })
    expect(await submissions()).toBe(before)
  }, 60_000)

  it('another layout, or another result kind (the general submission), is not reused', async () => {
    await prove()
    const layout = await prove('--layout', 'recursive')
    expect(layout.code, layout.stderr).toBe(0)
    expect(layout.created).toBe(1)
    expect(layout.json.reused).toBe(false)
    expect(layout.stderr).toMatch(/No earlier query reused/)
    const kind = await prove('--result', 'PROOF_GENERATION')
    expect(kind.code, kind.stderr).toBe(0)
    expect(kind.created).toBe(1)
    expect(kind.json.reused).toBe(false)
    // That one is reused by the same request.
    const again = await prove('--result', 'PROOF_GENERATION')
    expect(again.created).toBe(0)
    expect(again.json.provingQuery.id).toBe(kind.json.provingQuery.id)
  }, 90_000)

  it('a mocked DONE query is reused only where a mocked fact is allowed and asked for', async () => {
    const mocked = await prove('--mock-fact-hash', '--reuse', 'never', '--layout', 'small')
    expect(mocked.code, mocked.stderr).toBe(0)
    expect(mocked.json.provingQuery.isFactMocked).toBe(true)
    // A real proof is asked for: the mocked query does not stand for it, allowed or not.
    const real = await prove('--layout', 'small')
    expect(real.created).toBe(1)
    expect(real.json.provingQuery.isFactMocked).toBe(false)
    const allowed = await prove('--layout', 'small', '--allow-mocked-fact')
    expect(allowed.json.provingQuery.id).toBe(real.json.provingQuery.id)
    // A mocked one asked for (allowed by --mock-fact-hash): the newest mocked query is reused.
    const again = await prove('--mock-fact-hash', '--layout', 'small')
    expect(again.created).toBe(0)
    expect(again.json.provingQuery.id).toBe(mocked.json.provingQuery.id)
  }, 90_000)

  it("a DONE query whose facts differ from the PIE's, or whose mock state is not given, is never reused", async () => {
    const first = await prove('--reuse', 'never', '--layout', 'dex')
    const id = first.json.provingQuery.id
    await emulator.control('POST', `/queries/${id}/record`, { sharpFactHash: '0x1234' })
    const differ = await prove('--layout', 'dex')
    expect(differ.created).toBe(1)
    expect(differ.json.provingQuery.id).not.toBe(id)
    await emulator.control('POST', `/queries/${differ.json.provingQuery.id}/record`, { isFactMocked: null })
    const unknown = await prove('--layout', 'dex', '--allow-mocked-fact')
    expect(unknown.created).toBe(1)
    expect([id, differ.json.provingQuery.id]).not.toContain(unknown.json.provingQuery.id)
  }, 90_000)

  it('a PIE directory (streamed upload): reused before the upload ends, and the service creates no query', async () => {
    const dir = await unzipExample()
    await prove()
    const before = await submissions()
    const result = await runCli(['prove', dir, '--wait', '--json'], { env: env() })
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).reused).toBe('query')
    expect(await submissions()).toBe(before)
    await rm(dir, { recursive: true, force: true })
  }, 60_000)
})

describe('the root action: reuse', () => {
  const action = async (inputs: Record<string, string>, runId: string) => {
    const io = new RecordingIO({
      pie: FIXTURE_PIE,
      'base-url': emulator.url,
      'api-key': KEY,
      'timeout-minutes': '1',
      ...inputs,
    })
    io.env = {
      RUNNER_TEMP: await mkdtemp(join(tmpdir(), 'runner-temp-')),
      GITHUB_RUN_ID: runId,
      GITHUB_RUN_ATTEMPT: '1',
    }
    const before = await submissions()
    await run(io)
    return { io, created: (await submissions()) - before }
  }

  it('a later workflow run proving the same PIE: reused: query, its query-id, no submission, gated and said in the summary', async () => {
    const first = await action({ reuse: 'never' }, '100')
    expect(first.io.failed, first.io.logs.join('\n')).toBeUndefined()
    expect(first.created).toBe(1)
    expect(first.io.outputs.reused).toBe('false')
    const second = await action({}, '101')
    expect(second.io.failed, second.io.logs.join('\n')).toBeUndefined()
    expect(second.created).toBe(0)
    expect(second.io.outputs.reused).toBe('query')
    expect(second.io.outputs['query-id']).toBe(first.io.outputs['query-id'])
    expect(second.io.outputs['facts-verified']).toBe('true')
    expect(second.io.summary).toMatch(
      new RegExp(
        `\\*\\*Reused\\*\\* \\| yes: query ${first.io.outputs['query-id']}, created \\S+ already proves this PIE; nothing was submitted`,
      ),
    )
    expect(second.io.logs.join('\n')).toContain(`Reused query ${first.io.outputs['query-id']}`)
  }, 60_000)

  it('several PIEs: each one already proven is reused (results rows say so), gated, and nothing is submitted', async () => {
    await action({}, '150')
    const dir = await unzipExample()
    const batch = await action({ pie: `${FIXTURE_PIE}\n${dir}` }, '151')
    expect(batch.io.failed, batch.io.logs.join('\n')).toBeUndefined()
    expect(batch.created).toBe(0)
    const rows = JSON.parse(batch.io.outputs.results!) as { reused: string | false; facts: string; passed: boolean }[]
    expect(rows).toHaveLength(2)
    expect(rows.every((row) => row.reused === 'query' && row.facts === 'match' && row.passed)).toBe(true)
    const never = await action({ pie: `${FIXTURE_PIE}\n${dir}`, reuse: 'never' }, '152')
    // The directory packs to the same canonical zip: one digest, sent once.
    expect(never.created).toBe(1)
    expect(
      (JSON.parse(never.io.outputs.results!) as { reused: string | false }[]).every((row) => row.reused === false),
    ).toBe(true)
    await rm(dir, { recursive: true, force: true })
  }, 60_000)

  it('the general submission: a query of the same result kind is reused, under another run id (another dedup-id)', async () => {
    const first = await action({ result: 'PROOF_GENERATION', reuse: 'never' }, '200')
    expect(first.io.failed, first.io.logs.join('\n')).toBeUndefined()
    expect(first.created).toBe(1)
    const second = await action({ result: 'PROOF_GENERATION' }, '201')
    expect(second.created).toBe(0)
    expect(second.io.outputs.reused).toBe('query')
    expect(second.io.outputs['query-id']).toBe(first.io.outputs['query-id'])
  }, 60_000)
})

describe('the root action: already proven on chain', () => {
  let chainEmulator: TestEmulator
  let facts: { sharpFactHash: string; integrityFactHash: string }

  beforeAll(async () => {
    chainEmulator = await startTestEmulator({ apiKeys: [KEY] })
    const computed = await computePieFacts(FIXTURE_PIE)
    if ('invalid' in computed) throw new Error(computed.invalid)
    facts = computed
  })
  afterAll(async () => {
    await chainEmulator.close()
  })

  const count = async () => (await chainEmulator.control('GET', '/state')).counters.submissions
  const action = async (inputs: Record<string, string>) => {
    const io = new RecordingIO({
      pie: FIXTURE_PIE,
      'base-url': chainEmulator.url,
      'api-key': KEY,
      'timeout-minutes': '1',
      'onchain-timeout-minutes': '0.05',
      ...inputs,
    })
    io.env = { RUNNER_TEMP: await mkdtemp(join(tmpdir(), 'runner-temp-')) }
    const before = await count()
    await run(io)
    return { io, created: (await count()) - before }
  }

  it("Starknet (the emulator's endpoint): the Integrity fact registered under the policy passes with no submission; not registered, the PIE is proved", async () => {
    const starknet = { 'verify-onchain': 'starknet', 'starknet-rpc-url': `${chainEmulator.url}/starknet-rpc` }
    // Not registered yet: proved, then checked on chain as usual.
    const proved = await action({ ...starknet, layout: 'recursive' })
    expect(proved.io.failed, proved.io.logs.join('\n')).toBeUndefined()
    expect(proved.created).toBe(1)
    expect(proved.io.outputs.reused).toBe('false')
    expect(proved.io.logs.join('\n')).toMatch(/Not proven on chain yet: the PIE's Integrity fact/)
    await chainEmulator.control('POST', '/starknet/verifications', { fact: facts.integrityFactHash })
    const reused = await action(starknet)
    expect(reused.io.failed, reused.io.logs.join('\n')).toBeUndefined()
    expect(reused.created).toBe(0)
    expect(reused.io.outputs.reused).toBe('chain')
    expect(reused.io.outputs['query-id']).toBeUndefined()
    expect(reused.io.outputs['onchain-verified']).toBe('true')
    expect(JSON.parse(reused.io.outputs['onchain-details']!)[0]).toMatchObject({ chain: 'starknet', registered: true })
    expect(reused.io.logs.join('\n')).toMatch(
      /Already proven on chain: the PIE's Integrity fact 0x[0-9a-f]+ is registered on .*\(registry 0x[0-9a-f]+, block \d+, \d+ security bits\)/,
    )
    expect(reused.io.summary).toMatch(/Already proven on chain/)
    // A stricter policy than the registered verification: not reused, the PIE is proved.
    const strict = await action({ ...starknet, 'min-security-bits': '128', reuse: 'auto' })
    expect(strict.created).toBe(1)
    expect(strict.io.outputs.reused).toBe('false')
    // reuse: never always submits.
    const never = await action({ ...starknet, reuse: 'never' })
    expect(never.created).toBe(1)
  }, 90_000)

  describe('Ethereum (a real EVM node)', () => {
    let node: EvmNode

    beforeAll(async () => {
      node = await startEvmNode({ chainId: ETHEREUM_NETWORKS.sepolia.chainId })
    }, 120_000)
    afterAll(async () => {
      await node?.close()
    })

    it('the SHARP fact registered in the registry passes with no submission; in an empty registry, the PIE is proved', async () => {
      const registry = await node.deployRegistry()
      const empty = await node.deployRegistry()
      await node.registerFact(registry, `0x${BigInt(facts.sharpFactHash).toString(16).padStart(64, '0')}`)
      const rpc = { 'verify-onchain': 'ethereum', 'ethereum-rpc-url': node.rpcUrl() }
      const reused = await action({ ...rpc, 'fact-registry': registry })
      expect(reused.io.failed, reused.io.logs.join('\n')).toBeUndefined()
      expect(reused.created).toBe(0)
      expect(reused.io.outputs.reused).toBe('chain')
      expect(reused.io.logs.join('\n').toLowerCase()).toContain(`(registry ${registry.toLowerCase()}, block `)
      // Not in this registry, and no DONE query of this layout: the PIE is proved (and then
      // refused, as it is not registered there in time).
      const proved = await action({ ...rpc, 'fact-registry': empty, layout: 'dex' })
      expect(proved.created).toBe(1)
      expect(proved.io.outputs.reused).toBe('false')
      expect(proved.io.logs.join('\n')).toMatch(/Not proven on chain yet: the PIE's SHARP fact/)
    }, 120_000)
  })
})

describe('the root action, "Re-run jobs": a query an earlier attempt left running (issue 32)', () => {
  // An attempt stopped after its upload leaves its query running, and its journal (RUNNER_TEMP)
  // is gone with it; the L2 endpoint takes no dedup id. Queries run for a couple of seconds here.
  let slow: TestEmulator
  beforeAll(async () => {
    slow = await startTestEmulator({ apiKeys: [KEY], timing: { receivedMs: 0, stepMs: 300 } })
  })
  afterAll(async () => {
    await slow.close()
  })
  const created = async (): Promise<number> => (await slow.control('GET', '/state')).counters.submissions
  const attempt = async (pie: string, number: string, inputs: Record<string, string> = {}) => {
    const io = new RecordingIO({ pie, 'base-url': slow.url, 'api-key': KEY, 'timeout-minutes': '1', ...inputs })
    // Each attempt has a RUNNER_TEMP of its own, as on a runner: the earlier attempt's journal is not there.
    io.env = {
      RUNNER_TEMP: await mkdtemp(join(tmpdir(), 'runner-temp-')),
      GITHUB_RUN_ID: '7700',
      GITHUB_RUN_ATTEMPT: number,
    }
    const before = await created()
    await run(io)
    return { io, created: (await created()) - before }
  }

  it('attempt 2 of the same PIE waits for the running query, finds it proves the PIE, follows it: nothing paid again', async () => {
    const { zip } = await generatedPie({ seed: 41 })
    // Attempt 1 submitted and was stopped before its wait (wait: false stands for the kill).
    const first = await attempt(zip, '1', { wait: 'false' })
    expect(first.created).toBe(1)
    const queryId = first.io.outputs['query-id']!
    const second = await attempt(zip, '2')
    expect(second.io.failed, second.io.logs.join('\n')).toBeUndefined()
    expect(second.created).toBe(0)
    expect(second.io.outputs).toMatchObject({
      'query-id': queryId,
      status: 'DONE',
      reused: 'query',
      'facts-verified': 'true',
    })
    expect(second.io.logs.join('\n')).toContain(
      `This is a re-run: 1 query of this key with this PIE's program and settings was still running (${queryId})`,
    )
  })

  it("attempt 2 of another PIE of the same program: the running query's facts are not this PIE's, so it is proved; attempt 1 of a job never waits", async () => {
    const [{ zip: one }, { zip: other }] = await Promise.all([generatedPie({ seed: 42 }), generatedPie({ seed: 43 })])
    const first = await attempt(one, '1', { wait: 'false' })
    expect(first.created).toBe(1)
    const second = await attempt(other, '2')
    expect(second.io.failed, second.io.logs.join('\n')).toBeUndefined()
    expect(second.created).toBe(1)
    expect(second.io.outputs['query-id']).not.toBe(first.io.outputs['query-id'])
    expect(second.io.outputs.reused).toBe('false')
    expect(second.io.logs.join('\n')).toMatch(/still running when this re-run began ended without proving it/)
    // A first attempt does not wait for running queries (one of this PIE there is another job's):
    // the same PIE twice at once, each a first attempt, pays twice, as before.
    const { zip: third } = await generatedPie({ seed: 44 })
    expect((await attempt(third, '1', { wait: 'false' })).created).toBe(1)
    expect((await attempt(third, '1', { wait: 'false' })).created).toBe(1)
  })
})
