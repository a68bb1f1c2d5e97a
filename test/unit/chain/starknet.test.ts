import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { encodeVerifications, GET_ALL_VERIFICATIONS_SELECTOR, makeVerification } from '../../../src/chain/integrity.ts'
import { checkFactOnStarknet, decodeChainId, STARKNET_NETWORKS } from '../../../src/chain/starknet.ts'
import { ChainError } from '../../../src/core/errors.ts'

/**
 * checkFactOnStarknet against a scripted JSON-RPC server on loopback: the requests it sends
 * (method, params, pinned block, URL path and query, auth) and how it reads each kind of answer.
 */

type Seen = { method: string; params: any; url: string; authorization: string | undefined }
type Script = (
  method: string,
  params: any,
) => { result?: unknown; error?: { code: number; message: string; data?: unknown } }

const FACT = 0x1c446d13efc5a3a16387eeec2c9347e9fd44e195b178916e1bd27c0a18220f1n
const SN_SEPOLIA = '0x534e5f5345504f4c4941'
const SETTINGS = {
  layout: 'recursive',
  hasher: 'keccak_160_lsb',
  stoneVersion: 'stone6',
  memoryVerification: 'relaxed',
  securityBits: 96,
}

let server: Server
let base: string
let seen: Seen[] = []
let script: Script

const node =
  (answers: Record<string, unknown>, call?: Script): Script =>
  (method, params) => {
    if (method === 'starknet_call' && call) return call(method, params)
    return method in answers ? { result: answers[method] } : { error: { code: -32601, message: 'Method not found' } }
  }

beforeAll(async () => {
  server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
    seen.push({
      method: body.method,
      params: body.params,
      url: req.url ?? '',
      authorization: req.headers.authorization,
    })
    const answer = script(body.method, body.params)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, ...answer }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

beforeEach(() => {
  seen = []
})

describe('checkFactOnStarknet (scripted node)', () => {
  it('reads chain id and block, then calls the Satellite at that block, real facts (is_mocked = 0)', async () => {
    const verification = makeVerification(FACT, SETTINGS)
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 812_345 }, () => ({
      result: encodeVerifications([verification]),
    }))
    const result = await checkFactOnStarknet({
      rpcUrl: `${base.replace('http://', 'http://ignored@')}/rpc/v0_8?apikey=abc123456789`,
      fact: '0x1c446d13efc5a3a16387eeec2c9347e9fd44e195b178916e1bd27c0a18220f1',
    })
    expect(result).toMatchObject({ registered: true, chainId: 'SN_SEPOLIA', network: 'sepolia', blockNumber: 812_345 })
    expect(seen.map((s) => s.method)).toEqual(['starknet_chainId', 'starknet_blockNumber', 'starknet_call'])
    expect(seen[2]!.params).toEqual({
      request: {
        contract_address: STARKNET_NETWORKS.sepolia.satellite,
        entry_point_selector: `0x${GET_ALL_VERIFICATIONS_SELECTOR.toString(16)}`,
        calldata: [`0x${FACT.toString(16)}`, '0x0'],
      },
      block_id: { block_number: 812_345 },
    })
    expect(result).toMatchObject({
      registryKind: 'satellite',
      mocked: false,
      registry: STARKNET_NETWORKS.sepolia.satellite,
    })
    // The URL's path and query reach the node as given; its user goes in a Basic header.
    expect(seen.every((s) => s.url === '/rpc/v0_8?apikey=abc123456789')).toBe(true)
    expect(seen[0]!.authorization).toBe(`Basic ${Buffer.from('ignored:').toString('base64')}`)
  })

  it("calls Integrity's FactRegistry, or its mocked one, with the fact alone", async () => {
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 9 }, () => ({ result: ['0x0'] }))
    const integrity = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1', registryKind: 'integrity' })
    expect(integrity).toMatchObject({
      registryKind: 'integrity',
      mocked: false,
      registry: STARKNET_NETWORKS.sepolia.factRegistry,
    })
    expect(seen[2]!.params.request).toMatchObject({
      contract_address: STARKNET_NETWORKS.sepolia.factRegistry,
      calldata: ['0x1'],
    })
    seen = []
    const mocked = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1', registryKind: 'integrity', mocked: true })
    expect(mocked).toMatchObject({
      registryKind: 'integrity',
      mocked: true,
      registry: STARKNET_NETWORKS.sepolia.mockedFactRegistry,
    })
    expect(seen[2]!.params.request).toMatchObject({
      contract_address: STARKNET_NETWORKS.sepolia.mockedFactRegistry,
      calldata: ['0x1'],
    })
    seen = []
    await checkFactOnStarknet({ rpcUrl: base, fact: '0x1', mocked: true })
    expect(seen[2]!.params.request).toMatchObject({
      contract_address: STARKNET_NETWORKS.sepolia.satellite,
      calldata: ['0x1', '0x1'],
    })
  })

  it('needs an address where no mocked FactRegistry is published, and refuses an unknown kind', async () => {
    script = node({ starknet_chainId: '0x534e5f4d41494e', starknet_blockNumber: 9 }, () => ({ result: ['0x0'] }))
    await expect(
      checkFactOnStarknet({ rpcUrl: base, fact: '0x1', registryKind: 'integrity', mocked: true }),
    ).rejects.toThrow("Chain SN_MAIN has no known Integrity's mocked FactRegistry")
    await expect(checkFactOnStarknet({ rpcUrl: base, fact: '0x1', registryKind: 'sharp' as never })).rejects.toThrow(
      'registryKind must be one of integrity, satellite on Starknet; got "sharp".',
    )
  })

  it('requires 96 security bits unless told otherwise, and says what the registry holds', async () => {
    const weak = makeVerification(FACT, { ...SETTINGS, securityBits: 1 })
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 9 }, () => ({
      result: encodeVerifications([weak]),
    }))
    const fact = `0x${FACT.toString(16)}`
    const refused = await checkFactOnStarknet({ rpcUrl: base, fact })
    expect(refused).toMatchObject({ registered: false, expected: { securityBits: 96 } })
    expect(refused.reason).toBe(
      'the registry holds 1 verification of this fact (recursive/keccak_160_lsb/stone6/relaxed, 1 security bits), none with what is required (at least 96 security bits)',
    )
    // Settings given without security bits keep the 96-bit floor.
    expect((await checkFactOnStarknet({ rpcUrl: base, fact, expected: { layout: 'recursive' } })).registered).toBe(
      false,
    )
    expect((await checkFactOnStarknet({ rpcUrl: base, fact, expected: { securityBits: 1 } })).registered).toBe(true)
  })

  it('needs a registry address on a chain it does not know', async () => {
    script = node({ starknet_chainId: '0x534e5f494e544547524154494f4e', starknet_blockNumber: 1 }, () => ({
      result: ['0x0'],
    }))
    await expect(checkFactOnStarknet({ rpcUrl: base, fact: '0x1' })).rejects.toThrow(
      /Chain SN_INTEGRATION has no known Satellite/,
    )
    const result = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1', registry: '0x0abc' })
    expect(result).toMatchObject({ network: null, chainId: 'SN_INTEGRATION', registry: '0xabc', registered: false })
  })

  it('says a contract that fails the call is not the registry', async () => {
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 7 }, () => ({
      error: {
        code: 40,
        message: 'Contract error',
        data: { revert_error: 'Entry point 0x3731... not found in contract.' },
      },
    }))
    const error = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1' }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.code).toBe('NOT_A_REGISTRY')
    expect(error.details).toContain('Entry point 0x3731... not found in contract.')
  })

  it('says an answer that does not decode is not from the registry', async () => {
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 7 }, () => ({ result: ['0x1', '0x2'] }))
    const error = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1' }).catch((e) => e)
    expect(error.code).toBe('NOT_A_REGISTRY')
    expect(error.shortMessage).toMatch(/with data that is not a list of verifications/)
  })

  it('says an endpoint without starknet methods is not a Starknet node', async () => {
    script = node({})
    const error = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1' }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.shortMessage).toMatch(/does not know starknet_chainId: is it a Starknet JSON-RPC endpoint\?/)
  })

  it('rejects a malformed result', async () => {
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 'latest' })
    const error = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1' }).catch((e) => e)
    expect(error.code).toBe('RPC_BAD_RESULT')
    expect(error.shortMessage).toContain('answered starknet_blockNumber with an unexpected result')
  })

  it('treats a missing block as worth another try', async () => {
    script = node({ starknet_chainId: SN_SEPOLIA, starknet_blockNumber: 7 }, () => ({
      error: { code: 24, message: 'Block not found' },
    }))
    const error = await checkFactOnStarknet({ rpcUrl: base, fact: '0x1' }).catch((e) => e)
    expect(error.retryable).toBe(true)
  })
})

describe('Starknet chain ids', () => {
  it('decodes short strings and keeps anything else as hex', () => {
    expect(decodeChainId(0x534e5f5345504f4c4941n)).toBe('SN_SEPOLIA')
    expect(decodeChainId(0x534e5f4d41494en)).toBe('SN_MAIN')
    expect(decodeChainId(0x1n)).toBe('0x1')
    expect(decodeChainId(0n)).toBe('0x0')
  })
})
