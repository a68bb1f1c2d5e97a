import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  checkFactOnStarknet,
  decodeVerifications,
  GET_ALL_VERIFICATIONS_SELECTOR,
  STARKNET_NETWORKS,
  waitForFactRegistration,
} from '../../src/chain/index.ts'
import { ChainError, InvalidInputError, WaitTimeoutError } from '../../src/core/errors.ts'
import { EMULATED_VERIFIER } from '../../src/emulator/starknet/routes.ts'
import { runCli } from '../helpers/cli.ts'
import { FIXTURE_PIE, KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'
import { closedPort } from '../helpers/evm-node.ts'

/**
 * The Starknet check end to end against the emulator's Starknet JSON-RPC endpoint: a PIE proved
 * and verified on L2 by the emulated service registers its Integrity fact, which
 * checkFactOnStarknet then finds through starknet_call, decodes and re-hashes.
 */

const SECRET = 'SECRETKEY123'
const UNKNOWN_FACT = '0x123456789abcdef'

async function provedFact(emulator: TestEmulator, fields: Record<string, string> = {}): Promise<string> {
  const id = await submitFixturePie(emulator, KEY, fields)
  const result = await emulator.client().waitForQuery(id, { timeoutMs: 10_000 })
  expect(result.provingQuery.status).toBe('DONE')
  return result.provingQuery.integrityFactHash!
}

describe('checkFactOnStarknet against the emulator', () => {
  let emulator: TestEmulator
  let rpcUrl: string
  let fact: string

  beforeAll(async () => {
    emulator = await startTestEmulator()
    rpcUrl = `${emulator.url}/starknet-rpc?x-provider-secret=${SECRET}`
    fact = await provedFact(emulator)
  })

  afterAll(async () => {
    await emulator?.close()
  })

  it('finds the verification of a proved PIE, re-hashed locally', async () => {
    const result = await checkFactOnStarknet({ rpcUrl, fact })
    expect(result).toMatchObject({
      chain: 'starknet',
      registered: true,
      network: 'sepolia',
      chainId: 'SN_SEPOLIA',
      // Production's facts reach Starknet through the Satellite, which reads Integrity's registry.
      registry: STARKNET_NETWORKS.sepolia.satellite,
      registryKind: 'satellite',
      mocked: false,
      expected: { securityBits: 96 },
      reason: null,
    })
    expect(result.verifications).toEqual([
      expect.objectContaining({ ...EMULATED_VERIFIER, hashMatches: true, meetsExpected: true }),
    ])
    expect(result.blockNumber).toBeGreaterThan(0)
    expect(JSON.stringify(result)).not.toContain(SECRET)
  })

  it('counts a verification only with the expected settings and enough security bits', async () => {
    const matching = await checkFactOnStarknet({
      rpcUrl,
      fact,
      network: 'sepolia',
      expected: {
        layout: 'recursive',
        hasher: 'keccak_160_lsb',
        stoneVersion: 'stone6',
        memoryVerification: 'relaxed',
        securityBits: 96,
      },
    })
    expect(matching.registered).toBe(true)

    const otherLayout = await checkFactOnStarknet({ rpcUrl, fact, expected: { layout: 'small' } })
    expect(otherLayout.registered).toBe(false)
    expect(otherLayout.reason).toBe(
      'the registry holds 1 verification of this fact (recursive/keccak_160_lsb/stone6/relaxed, 96 security bits), none with what is required (layout small, at least 96 security bits)',
    )

    const moreBits = await checkFactOnStarknet({ rpcUrl, fact, expected: { securityBits: 128 } })
    expect(moreBits.registered).toBe(false)
  })

  it("uses the query's layout when Integrity has a verifier for it", async () => {
    const id = await submitFixturePie(emulator, KEY, { layout: 'small' })
    const result = await emulator.client().waitForQuery(id, { timeoutMs: 10_000 })
    const check = await checkFactOnStarknet({
      rpcUrl,
      fact: result.provingQuery.integrityFactHash!,
      expected: { layout: 'small' },
    })
    expect(check.registered).toBe(true)
    // Same fact, proved twice with different layouts: two verifications, one per settings.
    expect(check.verifications.map((verification) => verification.layout).sort()).toEqual(['recursive', 'small'])
  })

  it('reports a fact nobody proved as not registered', async () => {
    const result = await checkFactOnStarknet({ rpcUrl, fact: UNKNOWN_FACT })
    expect(result.registered).toBe(false)
    expect(result.verifications).toEqual([])
    expect(result.reason).toBe('the registry holds no verification of this fact')
  })

  it('registers a mocked fact only among the mocked facts', async () => {
    const fresh = await startTestEmulator()
    try {
      const mocked = await provedFact(fresh, { mockFactHash: 'true' })
      const freshUrl = `${fresh.url}/starknet-rpc`
      expect((await checkFactOnStarknet({ rpcUrl: freshUrl, fact: mocked })).registered).toBe(false)
      expect(
        (await checkFactOnStarknet({ rpcUrl: freshUrl, fact: mocked, registryKind: 'integrity' })).registered,
      ).toBe(false)
      const satellite = await checkFactOnStarknet({ rpcUrl: freshUrl, fact: mocked, mocked: true })
      expect(satellite).toMatchObject({ registered: true, mocked: true, registry: STARKNET_NETWORKS.sepolia.satellite })
      const integrity = await checkFactOnStarknet({
        rpcUrl: freshUrl,
        fact: mocked,
        mocked: true,
        registryKind: 'integrity',
      })
      expect(integrity).toMatchObject({
        registered: true,
        mocked: true,
        registry: STARKNET_NETWORKS.sepolia.mockedFactRegistry,
      })
    } finally {
      await fresh.close()
    }
  })

  it("finds a Stwo proof's fact on the Satellite (the default), where production bridges it, and not in Integrity's FactRegistry", async () => {
    const fresh = await startTestEmulator()
    try {
      const { provingQueryId } = await fresh.client().submitQuery({
        pieZip: FIXTURE_PIE,
        result: 'PROOF_VERIFICATION_ON_L2',
        sharpProver: 'stwo',
        declaredJobSize: 'XS',
        dedupId: 'stwo-l2',
      })
      const done = await fresh.client().waitForQuery(provingQueryId, { timeoutMs: 10_000 })
      expect(done.provingQuery.status).toBe('DONE')
      expect(fresh.state.queries[provingQueryId]!.sharpProver).toBe('stwo')
      const stwoFact = done.provingQuery.integrityFactHash!
      const freshUrl = `${fresh.url}/starknet-rpc`
      const onSatellite = await checkFactOnStarknet({ rpcUrl: freshUrl, fact: stwoFact })
      expect(onSatellite).toMatchObject({ registered: true, registryKind: 'satellite' })
      const onIntegrity = await checkFactOnStarknet({ rpcUrl: freshUrl, fact: stwoFact, registryKind: 'integrity' })
      expect(onIntegrity).toMatchObject({
        registered: false,
        reason: 'the registry holds no verification of this fact',
      })
    } finally {
      await fresh.close()
    }
  })

  it("reads Integrity's FactRegistry with registryKind integrity", async () => {
    const result = await checkFactOnStarknet({ rpcUrl, fact, registryKind: 'integrity' })
    expect(result).toMatchObject({
      registered: true,
      registryKind: 'integrity',
      registry: STARKNET_NETWORKS.sepolia.factRegistry,
    })
  })

  it('does not count a verification with fewer than 96 security bits unless told so', async () => {
    const weakFact = '0xabcdef0123'
    const added = await emulator.control('POST', '/starknet/verifications', { fact: weakFact, securityBits: 1 })
    expect(added).toMatchObject({ verification: { securityBits: 1, layout: 'recursive' }, mocked: false })
    for (const registryKind of ['satellite', 'integrity'] as const) {
      const refused = await checkFactOnStarknet({ rpcUrl, fact: weakFact, registryKind })
      expect(refused.registered).toBe(false)
      expect(refused.verifications).toEqual([
        expect.objectContaining({ securityBits: 1, hashMatches: true, meetsExpected: false }),
      ])
      expect(refused.reason).toBe(
        'the registry holds 1 verification of this fact (recursive/keccak_160_lsb/stone6/relaxed, 1 security bits), none with what is required (at least 96 security bits)',
      )
      expect(
        (await checkFactOnStarknet({ rpcUrl, fact: weakFact, registryKind, expected: { securityBits: 1 } })).registered,
      ).toBe(true)
    }
  })

  it('refuses a registry address with no contract, and the wrong network', async () => {
    const noCode = await checkFactOnStarknet({ rpcUrl, fact, registry: '0x1234' }).catch((e) => e)
    expect(noCode).toBeInstanceOf(ChainError)
    expect(noCode.code).toBe('NO_CODE')
    expect(noCode.shortMessage).toMatch(/^No contract at 0x1234 on sepolia at block \d+/)

    const wrongChain = await checkFactOnStarknet({ rpcUrl, fact, network: 'mainnet' }).catch((e) => e)
    expect(wrongChain).toBeInstanceOf(ChainError)
    expect(wrongChain.code).toBe('WRONG_CHAIN')
    expect(wrongChain.shortMessage).toContain('on chain SN_SEPOLIA (sepolia), not mainnet (SN_MAIN)')
  })

  it('fails clearly when the RPC is unreachable or answers 503', async () => {
    const down = await checkFactOnStarknet({
      rpcUrl: `http://127.0.0.1:${await closedPort()}/rpc/v0_8?apikey=${SECRET}`,
      fact,
    }).catch((e) => e)
    expect(down).toBeInstanceOf(ChainError)
    expect(down.code).toBe('RPC_UNREACHABLE')
    expect(down.retryable).toBe(true)
    expect(`${down.message}${down.stack}`).not.toContain(SECRET)

    await emulator.control('POST', '/faults', { path: '/starknet-rpc', status: 503, times: 3 })
    const busy = await checkFactOnStarknet({ rpcUrl, fact }).catch((e) => e)
    await emulator.control('DELETE', '/faults')
    expect(busy).toBeInstanceOf(ChainError)
    expect(busy.status).toBe(503)
    expect(busy.retryable).toBe(true)
  })

  it('refuses an RPC that redirects, in one line naming it by host and where it led (issue 31)', async () => {
    // The redirect leads to the emulator's real endpoint, which would say "registered".
    const { createServer } = await import('node:http')
    const hostile = createServer((req, res) => {
      req.resume()
      res.writeHead(307, { location: rpcUrl.replace('127.0.0.1', 'localhost') }).end()
    })
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve))
    try {
      const host = `127.0.0.1:${(hostile.address() as import('node:net').AddressInfo).port}`
      const hostileUrl = `http://${host}/rpc/v0_8?apikey=${SECRET}`
      const error = await checkFactOnStarknet({ rpcUrl: hostileUrl, fact }).catch((e) => e)
      expect(error).toBeInstanceOf(ChainError)
      expect(error.code).toBe('RPC_REDIRECT')
      expect(error.retryable).toBe(false)
      const run = await runCli(['fact', 'check', fact, '--starknet-rpc', hostileUrl])
      expect(run.code).toBe(3)
      expect(run.stdout).not.toMatch(/registered/)
      expect(run.stderr).toContain(
        `The Starknet RPC at ${host} answered starknet_chainId with a 307 redirect to http://localhost:${new URL(emulator.url).port}`,
      )
      expect(run.stderr).toContain('(refused, not followed: the answer must come from the URL given)')
      expect(run.stdout + run.stderr).not.toContain(SECRET)
    } finally {
      await new Promise<void>((resolve) => hostile.close(() => resolve()))
    }
  })

  it('rejects a fact that is not a field element before any request', async () => {
    await expect(checkFactOnStarknet({ rpcUrl, fact: `0x${'f'.repeat(64)}` })).rejects.toBeInstanceOf(InvalidInputError)
    await expect(checkFactOnStarknet({ rpcUrl, fact, expected: { layout: 'x'.repeat(32) } })).rejects.toBeInstanceOf(
      InvalidInputError,
    )
  })

  it('waits for a registration that lands when the query is DONE, polling through a 503', async () => {
    const slow = await startTestEmulator({ timing: { receivedMs: 0, stepMs: 150 } })
    try {
      const id = await submitFixturePie(slow)
      // The service shows the fact only once DONE; the emulator knows it from the upload. The
      // registration lands at DONE, ~450 ms from now.
      const pending = slow.state.queries[id]!.facts.integrityFactHash!
      const attempts: number[] = []
      const result = await waitForFactRegistration(
        () => checkFactOnStarknet({ rpcUrl: `${slow.url}/starknet-rpc`, fact: pending }),
        {
          timeoutMs: 10_000,
          schedule: { minIntervalMs: 50, maxIntervalMs: 100 },
          onProgress: ({ attempt }) => {
            attempts.push(attempt)
            if (attempt === 1) void slow.control('POST', '/faults', { path: '/starknet-rpc', status: 503 })
          },
        },
      )
      expect(result.registered).toBe(true)
      expect(attempts.length).toBeGreaterThanOrEqual(2)
      expect(
        slow
          .requests()
          .filter((request) => request.path.startsWith('/starknet-rpc'))
          .map((request) => request.status),
      ).toContain(503)
    } finally {
      await slow.close()
    }
  })

  it('times out with the last answer when the fact never lands', async () => {
    const error = await waitForFactRegistration(() => checkFactOnStarknet({ rpcUrl, fact: UNKNOWN_FACT }), {
      timeoutMs: 200,
      schedule: { minIntervalMs: 50, maxIntervalMs: 100 },
    }).catch((e) => e)
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect(error.metaMessages.join('\n')).toContain('Last answer: the registry holds no verification of this fact.')
  })
})

describe("the emulator's Starknet JSON-RPC endpoint", () => {
  let emulator: TestEmulator
  beforeAll(async () => {
    emulator = await startTestEmulator()
  })
  afterAll(async () => {
    await emulator?.close()
  })

  const rpc = (body: unknown) => emulator.call('POST', '/starknet-rpc', { json: body })
  const callRequest = (overrides: Record<string, unknown> = {}) => ({
    contract_address: STARKNET_NETWORKS.sepolia.factRegistry,
    entry_point_selector: `0x${GET_ALL_VERIFICATIONS_SELECTOR.toString(16)}`,
    calldata: [UNKNOWN_FACT],
    ...overrides,
  })

  it('answers starknet_chainId and starknet_blockNumber', async () => {
    const chainId = await rpc({ jsonrpc: '2.0', id: 1, method: 'starknet_chainId', params: [] })
    expect(chainId.body).toEqual({ jsonrpc: '2.0', id: 1, result: '0x534e5f5345504f4c4941' })
    const block = await rpc({ jsonrpc: '2.0', id: 'b', method: 'starknet_blockNumber' })
    expect(block.body.result).toBeTypeOf('number')
  })

  it('answers starknet_call with params by name or by position, in the ABI encoding', async () => {
    const named = await rpc({
      jsonrpc: '2.0',
      id: 2,
      method: 'starknet_call',
      params: { request: callRequest(), block_id: 'latest' },
    })
    expect(named.body.result).toEqual(['0x0'])
    expect(decodeVerifications(named.body.result)).toEqual([])
    const positional = await rpc({ jsonrpc: '2.0', id: 3, method: 'starknet_call', params: [callRequest(), 'latest'] })
    expect(positional.body.result).toEqual(['0x0'])
  })

  it('answers JSON-RPC errors with the Starknet codes', async () => {
    const cases: [unknown, number][] = [
      [{ jsonrpc: '2.0', id: 4, method: 'starknet_getNonce', params: [] }, -32601],
      [
        {
          jsonrpc: '2.0',
          id: 5,
          method: 'starknet_call',
          params: { request: callRequest({ contract_address: '0x1' }), block_id: 'latest' },
        },
        20,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 6,
          method: 'starknet_call',
          params: { request: callRequest({ entry_point_selector: '0x2' }), block_id: 'latest' },
        },
        21,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 7,
          method: 'starknet_call',
          params: { request: callRequest(), block_id: { block_number: 10 ** 12 } },
        },
        24,
      ],
      [
        {
          jsonrpc: '2.0',
          id: 8,
          method: 'starknet_call',
          params: { request: callRequest({ calldata: [] }), block_id: 'latest' },
        },
        40,
      ],
      [{ jsonrpc: '2.0', id: 9, method: 'starknet_call', params: { block_id: 'latest' } }, -32602],
      [{ id: 10, method: 'starknet_chainId' }, -32600],
    ]
    for (const [body, code] of cases) {
      const answer = await rpc(body)
      expect(answer.status).toBe(200)
      expect(answer.body.error.code, JSON.stringify(body)).toBe(code)
    }
    const parse = await emulator.call('POST', '/starknet-rpc', {
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    })
    expect(parse.body.error.code).toBe(-32700)
  })

  it('refuses a control body that is not a verification, naming the field', async () => {
    const answer = await emulator.call('POST', '/_emulator/starknet/verifications', {
      json: { fact: '0x1', securityBits: -1 },
    })
    expect(answer.status).toBe(400)
    expect(answer.body.message).toBe('securityBits must be a whole number from 0 to 2^32 - 1.')
    const layout = await emulator.call('POST', '/_emulator/starknet/verifications', {
      json: { fact: '0x1', layout: 'x'.repeat(32) },
    })
    expect(layout.body.message).toBe('layout must be a Cairo short string (1 to 31 ASCII characters).')
  })

  it('answers a batch in order', async () => {
    const answer = await rpc([
      { jsonrpc: '2.0', id: 1, method: 'starknet_chainId' },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
    ])
    expect(answer.body.map((item: { id: number }) => item.id)).toEqual([1, 2])
    expect(answer.body[1].error.code).toBe(-32601)
  })
})

describe('proving fact check --starknet-rpc (in-process CLI)', () => {
  let emulator: TestEmulator
  let rpcUrl: string
  let fact: string

  beforeAll(async () => {
    emulator = await startTestEmulator()
    rpcUrl = `${emulator.url}/starknet-rpc?x-provider-secret=${SECRET}`
    fact = await provedFact(emulator)
  })
  afterAll(async () => {
    await emulator?.close()
  })

  const noSecret = (run: { stdout: string; stderr: string }) => expect(run.stdout + run.stderr).not.toContain(SECRET)

  it('exits 0 and lists the verifications', async () => {
    const run = await runCli([
      'fact',
      'check',
      fact,
      '--starknet-rpc',
      rpcUrl,
      '--network',
      'sepolia',
      '--min-security-bits',
      '96',
    ])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/chain\s+Starknet sepolia \(chain SN_SEPOLIA\)/)
    expect(run.stdout).toContain(`registry       ${STARKNET_NETWORKS.sepolia.satellite} (Satellite)`)
    expect(run.stdout).toMatch(/required\s+at least 96 security bits/)
    expect(run.stdout).toMatch(
      /verification\s+0x[0-9a-f]+\s+recursive\/keccak_160_lsb\/stone6\/relaxed, 96 security bits\s+\(ok\)/,
    )
    noSecret(run)
  })

  it('exits 1 when no verification has the expected settings', async () => {
    const run = await runCli(['fact', 'check', fact, '--starknet-rpc', rpcUrl, '--stone-version', 'stone5', '--json'])
    expect(run.code).toBe(1)
    const output = JSON.parse(run.stdout)
    expect(output.registered).toBe(false)
    expect(output.expected).toEqual({ stoneVersion: 'stone5', securityBits: 96 })
    noSecret(run)
  })

  it('exits 1 for a verification with 1 security bit, saying what it holds and what is required; 0 with --min-security-bits 1', async () => {
    const weakFact = '0xbeef'
    await emulator.control('POST', '/starknet/verifications', {
      fact: weakFact,
      securityBits: 1,
      layout: 'small',
      stoneVersion: 'stone5',
    })
    const refused = await runCli(['fact', 'check', weakFact, '--starknet-rpc', rpcUrl])
    expect(refused.code).toBe(1)
    expect(refused.stdout).toMatch(/registered\s+no/)
    expect(refused.stdout).toMatch(
      /small\/keccak_160_lsb\/stone5\/relaxed, 1 security bits\s+\(does not meet the requirement\)/,
    )
    expect(refused.stdout).toContain(
      'reason         the registry holds 1 verification of this fact (small/keccak_160_lsb/stone5/relaxed, 1 security bits), none with what is required (at least 96 security bits)',
    )
    const allowed = await runCli([
      'fact',
      'check',
      weakFact,
      '--starknet-rpc',
      rpcUrl,
      '--min-security-bits',
      '1',
      '--registry-kind',
      'integrity',
    ])
    expect(allowed.code).toBe(0)
    noSecret(refused)
  })

  it('exits 0 for a mocked fact with --mocked, 1 without', async () => {
    const id = await submitFixturePie(emulator, KEY, { mockFactHash: 'true', dedupId: 'mocked-cli' })
    await emulator.client().waitForQuery(id, { timeoutMs: 10_000 })
    const mocked = emulator.state.queries[id]!.facts.integrityFactHash!
    const other = await startTestEmulator()
    try {
      // A fresh emulator holds the mocked registration alone (here the same PIE was also proved for real).
      const onlyMocked = await submitFixturePie(other, KEY, { mockFactHash: 'true' })
      await other.client().waitForQuery(onlyMocked, { timeoutMs: 10_000 })
      const url = `${other.url}/starknet-rpc`
      expect((await runCli(['fact', 'check', mocked, '--starknet-rpc', url])).code).toBe(1)
      const run = await runCli(['fact', 'check', mocked, '--starknet-rpc', url, '--mocked'])
      expect(run.code).toBe(0)
      expect(run.stdout).toContain('(Satellite, mocked facts)')
    } finally {
      await other.close()
    }
  })

  it('exits 2 for a registry kind of the other chain', async () => {
    const run = await runCli(['fact', 'check', fact, '--starknet-rpc', rpcUrl, '--registry-kind', 'sharp'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('--registry-kind on Starknet must be integrity or satellite; got "sharp".')
  })

  it('exits 4 when the fact is still not registered at --timeout', async () => {
    const run = await runCli(['fact', 'check', UNKNOWN_FACT, '--starknet-rpc', rpcUrl, '--timeout', '1s'])
    expect(run.code).toBe(4)
    expect(run.stderr).toContain('the registry holds no verification of this fact')
    noSecret(run)
  })

  it('prints the last answer as JSON when --json times out', async () => {
    const run = await runCli(['fact', 'check', UNKNOWN_FACT, '--starknet-rpc', rpcUrl, '--timeout', '1s', '--json'])
    expect(run.code).toBe(4)
    expect(JSON.parse(run.stdout)).toMatchObject({ chain: 'starknet', registered: false, verifications: [] })
    // With --json the failure is one JSON object on stderr's last line (progress lines before it).
    const error = JSON.parse(run.stderr.trim().split('\n').at(-1)!).error
    expect(error).toMatchObject({ name: 'WaitTimeoutError', exitCode: 4 })
    expect(error.message).toMatch(
      /^Timed out after 1s waiting for fact 0x123456789abcdef to be registered on Starknet sepolia\./,
    )
    noSecret(run)
  })

  it('exits 3 for a registry address with no contract', async () => {
    const run = await runCli(['fact', 'check', fact, '--starknet-rpc', rpcUrl, '--fact-registry', '0xabc'])
    expect(run.code).toBe(3)
    expect(run.stderr).toContain('No contract at 0xabc')
    noSecret(run)
  })

  it('exits 2 for settings flags on Ethereum, and for a fact above the Stark prime', async () => {
    const eth = await runCli(['fact', 'check', fact, '--ethereum-rpc', rpcUrl, '--layout', 'small'])
    expect(eth.code).toBe(2)
    expect(eth.stderr).toContain('--layout applies to Integrity verifications on Starknet')
    const big = await runCli(['fact', 'check', `0x${'f'.repeat(64)}`, '--starknet-rpc', rpcUrl])
    expect(big.code).toBe(2)
    expect(big.stderr).toContain('<fact> is not a Starknet field element')
    noSecret(eth)
  })
})
