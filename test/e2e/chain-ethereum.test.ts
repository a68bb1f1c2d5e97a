import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkFactOnEthereum, ETHEREUM_NETWORKS, waitForFactRegistration } from '../../src/chain/index.ts'
import { ChainError, InvalidInputError, WaitTimeoutError } from '../../src/core/errors.ts'
import { runCli } from '../helpers/cli.ts'
import { closedPort, type EvmNode, startEvmNode } from '../helpers/evm-node.ts'

/**
 * The Ethereum check against a real EVM: Hardhat's network (`hardhat node`, EDR) on loopback,
 * with a fact registry compiled by solc-js and deployed at test time. The node runs with
 * Sepolia's chain id, and the registry's code is also installed at Sepolia's real registry
 * address, so the default-address path is exercised as well as an explicit one. One node serves
 * the whole file (it takes ~2-3 s to start).
 */

const SECRET = 'SECRETKEY123'
const fact = (): `0x${string}` => `0x${randomBytes(32).toString('hex')}`

let node: EvmNode
let registry: `0x${string}`
let registered: `0x${string}`
let rpcUrl: string
let satellite: `0x${string}`
let verifiedOnSatellite: `0x${string}`
let mockedOnSatellite: `0x${string}`

beforeAll(async () => {
  node = await startEvmNode({ chainId: ETHEREUM_NETWORKS.sepolia.chainId })
  registry = await node.deployRegistry()
  registered = fact()
  await node.registerFact(registry, registered)
  await node.installRegistryAt(ETHEREUM_NETWORKS.sepolia.factRegistry)
  await node.registerFact(ETHEREUM_NETWORKS.sepolia.factRegistry, registered)
  rpcUrl = node.rpcUrl(`/v3/${SECRET}`)
  satellite = await node.deploySatellite()
  verifiedOnSatellite = fact()
  mockedOnSatellite = fact()
  await node.registerCairoFact(satellite, verifiedOnSatellite)
  await node.registerCairoFact(satellite, mockedOnSatellite, { mocked: true })
  await node.installSatelliteAt(ETHEREUM_NETWORKS.sepolia.satellite)
  await node.registerCairoFact(ETHEREUM_NETWORKS.sepolia.satellite, verifiedOnSatellite)
  await node.registerCairoFact(ETHEREUM_NETWORKS.sepolia.satellite, mockedOnSatellite, { mocked: true })
})

afterAll(async () => {
  await node?.close()
})

describe('checkFactOnEthereum against a local EVM node', () => {
  it('finds a registered fact, and says where it looked', async () => {
    const result = await checkFactOnEthereum({ rpcUrl, registry, fact: registered })
    expect(result).toMatchObject({
      chain: 'ethereum',
      registered: true,
      fact: registered,
      chainId: 11155111,
      network: 'sepolia',
      registry: expect.stringMatching(new RegExp(`^${registry}$`, 'i')),
    })
    expect(result.blockNumber).toBeGreaterThan(0)
    expect(result.rpc).toBe(new URL(rpcUrl).host)
    expect(JSON.stringify(result)).not.toContain(SECRET)
  })

  it('reports a fact that is not registered', async () => {
    const result = await checkFactOnEthereum({ rpcUrl, registry, fact: fact() })
    expect(result.registered).toBe(false)
  })

  it('pads a short fact to bytes32', async () => {
    const result = await checkFactOnEthereum({ rpcUrl, registry, fact: '0x1' })
    expect(result.fact).toBe(`0x${'0'.repeat(63)}1`)
    expect(result.registered).toBe(false)
  })

  it("uses the network's default registry when none is given", async () => {
    const result = await checkFactOnEthereum({ rpcUrl, network: 'sepolia', fact: registered })
    expect(result.registry).toBe(ETHEREUM_NETWORKS.sepolia.factRegistry)
    expect(result.registered).toBe(true)
  })

  it('refuses an RPC on another chain than the one named', async () => {
    const error = await checkFactOnEthereum({ rpcUrl, registry, network: 'mainnet', fact: registered }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.code).toBe('WRONG_CHAIN')
    expect(error.shortMessage).toContain('chain 11155111 (sepolia), not mainnet (chain 1)')
    expect(error.retryable).toBe(false)
  })

  it('refuses a registry address that holds no code', async () => {
    const empty = `0x${'42'.repeat(20)}`
    const error = await checkFactOnEthereum({ rpcUrl, registry: empty, fact: registered }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.code).toBe('NO_CODE')
    expect(error.shortMessage).toMatch(/^No contract at 0x4242/)
  })

  it('says a contract that is not a registry is not one', async () => {
    // Code that is not a fact registry: a single INVALID opcode, so every call reverts.
    const address = `0x${'77'.repeat(20)}` as const
    await node.setCode(address, '0xfe')
    const error = await checkFactOnEthereum({ rpcUrl, registry: address, fact: registered }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.code).toBe('NOT_A_REGISTRY')
  })

  it('fails clearly, and without the URL, when the RPC is unreachable', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v3/${SECRET}`
    const error = await checkFactOnEthereum({ rpcUrl: url, registry, fact: registered }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.code).toBe('RPC_UNREACHABLE')
    expect(error.retryable).toBe(true)
    expect(error.shortMessage).toMatch(/^Could not reach the Ethereum RPC at 127\.0\.0\.1:\d+ \(eth_chainId\)/)
    expect(`${error.message}\n${error.stack}\n${String(error.cause?.message)}`).not.toContain(SECRET)
  })

  it('rejects bad input before any request', async () => {
    await expect(checkFactOnEthereum({ rpcUrl, registry, fact: `0x${'f'.repeat(65)}` })).rejects.toBeInstanceOf(
      InvalidInputError,
    )
    await expect(checkFactOnEthereum({ rpcUrl, registry: '0x1234', fact: registered })).rejects.toBeInstanceOf(
      InvalidInputError,
    )
    // Mixed case with a broken checksum is a typo, not an address.
    const broken = ETHEREUM_NETWORKS.sepolia.factRegistry.replace('D28', 'd28')
    await expect(checkFactOnEthereum({ rpcUrl, registry: broken, fact: registered })).rejects.toBeInstanceOf(
      InvalidInputError,
    )
  })

  it('waits for a registration that lands while waiting', async () => {
    const later = fact()
    const seen: number[] = []
    const result = await waitForFactRegistration(() => checkFactOnEthereum({ rpcUrl, registry, fact: later }), {
      timeoutMs: 10_000,
      schedule: { minIntervalMs: 50, maxIntervalMs: 100 },
      onProgress: ({ attempt }) => {
        seen.push(attempt)
        if (attempt === 2) void node.registerFact(registry, later)
      },
    })
    expect(result.registered).toBe(true)
    expect(seen.slice(0, 2)).toEqual([1, 2])
  })

  it('times out when the fact never lands, with the last block seen', async () => {
    const error = await waitForFactRegistration(() => checkFactOnEthereum({ rpcUrl, registry, fact: fact() }), {
      timeoutMs: 300,
      schedule: { minIntervalMs: 50, maxIntervalMs: 100 },
    }).catch((e) => e)
    expect(error).toBeInstanceOf(WaitTimeoutError)
    expect(error.shortMessage).toMatch(/waiting for fact 0x[0-9a-f]{64} to be registered on Ethereum sepolia/)
    expect(error.lastSeen.registered).toBe(false)
  })
})

describe('checkFactOnEthereum on a Satellite (isCairoFactValid(bytes32,bool), compiled by solc)', () => {
  it('finds a verified fact with isMocked = false, and not a mocked one', async () => {
    const verified = await checkFactOnEthereum({
      rpcUrl,
      registry: satellite,
      registryKind: 'satellite',
      fact: verifiedOnSatellite,
    })
    expect(verified).toMatchObject({ registered: true, registryKind: 'satellite', mocked: false })
    const mocked = await checkFactOnEthereum({
      rpcUrl,
      registry: satellite,
      registryKind: 'satellite',
      fact: mockedOnSatellite,
    })
    expect(mocked.registered).toBe(false)
  })

  it('finds a mocked fact with isMocked = true, and not a verified one', async () => {
    const mocked = await checkFactOnEthereum({
      rpcUrl,
      registry: satellite,
      registryKind: 'satellite',
      mocked: true,
      fact: mockedOnSatellite,
    })
    expect(mocked).toMatchObject({ registered: true, registryKind: 'satellite', mocked: true })
    const verified = await checkFactOnEthereum({
      rpcUrl,
      registry: satellite,
      registryKind: 'satellite',
      mocked: true,
      fact: verifiedOnSatellite,
    })
    expect(verified.registered).toBe(false)
  })

  it("uses Sepolia's published Satellite by default, and the Satellite for mocked facts", async () => {
    const result = await checkFactOnEthereum({ rpcUrl, registryKind: 'satellite', fact: verifiedOnSatellite })
    expect(result).toMatchObject({ registry: ETHEREUM_NETWORKS.sepolia.satellite, registered: true })
    const mocked = await checkFactOnEthereum({ rpcUrl, mocked: true, fact: mockedOnSatellite })
    expect(mocked).toMatchObject({
      registry: ETHEREUM_NETWORKS.sepolia.satellite,
      registryKind: 'satellite',
      registered: true,
    })
  })

  it('says which contract it expected when the kind does not fit the address', async () => {
    const onSharp = await checkFactOnEthereum({ rpcUrl, registry, registryKind: 'satellite', fact: registered }).catch(
      (e) => e,
    )
    expect(onSharp).toBeInstanceOf(ChainError)
    expect(onSharp.code).toBe('NOT_A_REGISTRY')
    expect(onSharp.shortMessage).toContain('did not answer isCairoFactValid(bytes32,bool)')
    const onSatellite = await checkFactOnEthereum({ rpcUrl, registry: satellite, fact: registered }).catch((e) => e)
    expect(onSatellite.code).toBe('NOT_A_REGISTRY')
    expect(onSatellite.shortMessage).toContain('did not answer isValid(bytes32)')
  })

  it("refuses a mocked fact on SHARP's registry, which holds none", async () => {
    const error = await checkFactOnEthereum({
      rpcUrl,
      registryKind: 'sharp',
      mocked: true,
      fact: mockedOnSatellite,
    }).catch((e) => e)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(error.shortMessage).toContain("SHARP's fact registry holds no mocked facts")
  })
})

describe('proving fact check --ethereum-rpc (in-process CLI)', () => {
  const noSecret = (run: { stdout: string; stderr: string }) => expect(run.stdout + run.stderr).not.toContain(SECRET)

  it('exits 0 for a registered fact and prints chain, registry and block', async () => {
    const run = await runCli(['fact', 'check', registered, '--ethereum-rpc', rpcUrl, '--fact-registry', registry])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/registered\s+yes/)
    expect(run.stdout).toMatch(/chain\s+Ethereum sepolia \(chain 11155111\)/)
    expect(run.stdout).toMatch(new RegExp(`registry\\s+${registry}`, 'i'))
    expect(run.stdout).toMatch(/block\s+\d+/)
    noSecret(run)
  })

  it('prints the check as JSON with --json', async () => {
    const run = await runCli([
      'fact',
      'check',
      registered,
      '--ethereum-rpc',
      rpcUrl,
      '--fact-registry',
      registry,
      '--json',
    ])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe('')
    const output = JSON.parse(run.stdout)
    expect(output).toMatchObject({ chain: 'ethereum', registered: true, chainId: 11155111, network: 'sepolia' })
    noSecret(run)
  })

  it('takes the RPC from PROVING_ETHEREUM_RPC_URL', async () => {
    const run = await runCli(['fact', 'check', registered, '--fact-registry', registry], {
      env: { PROVING_ETHEREUM_RPC_URL: rpcUrl },
    })
    expect(run.code).toBe(0)
    noSecret(run)
  })

  it('exits 1 for a fact that is not registered', async () => {
    const run = await runCli(['fact', 'check', fact(), '--ethereum-rpc', rpcUrl, '--fact-registry', registry])
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/registered\s+no/)
    noSecret(run)
  })

  it('exits 4 when the fact is still not registered at --timeout', async () => {
    const run = await runCli([
      'fact',
      'check',
      fact(),
      '--ethereum-rpc',
      rpcUrl,
      '--fact-registry',
      registry,
      '--timeout',
      '1',
    ])
    expect(run.code).toBe(4)
    expect(run.stderr).toMatch(/not registered yet on Ethereum sepolia \(block \d+\)/)
    expect(run.stderr).toMatch(/Timed out after 1s waiting for fact/)
    noSecret(run)
  })

  it('exits 3 when the registry address holds no code', async () => {
    const run = await runCli([
      'fact',
      'check',
      registered,
      '--ethereum-rpc',
      rpcUrl,
      '--fact-registry',
      `0x${'42'.repeat(20)}`,
    ])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/No contract at 0x4242/)
    noSecret(run)
  })

  it('exits 3 on a wrong chain', async () => {
    const run = await runCli(['fact', 'check', registered, '--ethereum-rpc', rpcUrl, '--network', 'mainnet'])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/on chain 11155111 \(sepolia\), not mainnet \(chain 1\)/)
  })

  it('exits 3 when the RPC is unreachable, without printing its URL even with --debug', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v3/${SECRET}`
    const run = await runCli([
      'fact',
      'check',
      registered,
      '--ethereum-rpc',
      url,
      '--fact-registry',
      registry,
      '--debug',
    ])
    expect(run.code).toBe(3)
    expect(run.stderr).toMatch(/Could not reach the Ethereum RPC at 127\.0\.0\.1:\d+/)
    noSecret(run)
  })

  it('exits 2 naming the argument for a fact that is not 0x hex of at most 32 bytes', async () => {
    for (const bad of ['1234', '0xzz', `0x${'a'.repeat(65)}`]) {
      const run = await runCli(['fact', 'check', bad, '--ethereum-rpc', rpcUrl])
      expect(run.code).toBe(2)
      expect(run.stderr).toContain('<fact> must be 0x followed by 1 to 64 hex digits')
    }
  })

  it('checks the Satellite with --registry-kind satellite, and mocked facts with --mocked', async () => {
    const verified = await runCli([
      'fact',
      'check',
      verifiedOnSatellite,
      '--ethereum-rpc',
      rpcUrl,
      '--registry-kind',
      'satellite',
    ])
    expect(verified.code).toBe(0)
    expect(verified.stdout).toMatch(new RegExp(`registry\\s+${ETHEREUM_NETWORKS.sepolia.satellite} \\(Satellite\\)`))
    const mockedAsVerified = await runCli([
      'fact',
      'check',
      mockedOnSatellite,
      '--ethereum-rpc',
      rpcUrl,
      '--registry-kind',
      'satellite',
    ])
    expect(mockedAsVerified.code).toBe(1)
    const mocked = await runCli(['fact', 'check', mockedOnSatellite, '--ethereum-rpc', rpcUrl, '--mocked'])
    expect(mocked.code).toBe(0)
    expect(mocked.stdout).toMatch(/\(Satellite, mocked facts\)/)
    noSecret(mocked)
  })

  it('exits 2 for a registry kind of the other chain, or --mocked on SHARP', async () => {
    const integrity = await runCli([
      'fact',
      'check',
      registered,
      '--ethereum-rpc',
      rpcUrl,
      '--registry-kind',
      'integrity',
    ])
    expect(integrity.code).toBe(2)
    expect(integrity.stderr).toContain('--registry-kind on Ethereum must be sharp or satellite; got "integrity".')
    const sharpMocked = await runCli([
      'fact',
      'check',
      registered,
      '--ethereum-rpc',
      rpcUrl,
      '--registry-kind',
      'sharp',
      '--mocked',
    ])
    expect(sharpMocked.code).toBe(2)
    expect(sharpMocked.stderr).toContain("SHARP's fact registry holds no mocked facts")
    const bits = await runCli(['fact', 'check', registered, '--ethereum-rpc', rpcUrl, '--min-security-bits', '96'])
    expect(bits.code).toBe(2)
    expect(bits.stderr).toContain('--min-security-bits applies to Integrity verifications on Starknet')
  })

  it('exits 2 without exactly one RPC', async () => {
    const none = await runCli(['fact', 'check', registered])
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('No RPC')
    const both = await runCli(['fact', 'check', registered, '--ethereum-rpc', rpcUrl, '--starknet-rpc', rpcUrl])
    expect(both.code).toBe(2)
    expect(both.stderr).toContain('exactly one of --ethereum-rpc and --starknet-rpc')
    noSecret(both)
  })
})

describe('an Ethereum RPC that redirects (issue 31)', () => {
  // A hostile RPC on loopback: every request is answered with a 307 to another origin, the real
  // node, which would say "registered". fetch follows a 307 with the same POST body on its own.
  let hostile: import('node:http').Server
  let hostileUrl: string
  let target: string

  beforeAll(async () => {
    const { createServer } = await import('node:http')
    hostile = createServer((req, res) => {
      req.resume()
      res.writeHead(307, { location: target }).end()
    })
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve))
    hostileUrl = `http://127.0.0.1:${(hostile.address() as import('node:net').AddressInfo).port}/v3/${SECRET}`
  })
  afterAll(async () => {
    await new Promise<void>((resolve) => hostile?.close(() => resolve()))
  })

  it("is refused in one line naming the RPC by host and the redirect; the other origin's answer never becomes the verdict", async () => {
    for (const to of [node.rpcUrl('/'), node.rpcUrl('/').replace('127.0.0.1', 'localhost')]) {
      target = to
      const run = await runCli(['fact', 'check', registered, '--ethereum-rpc', hostileUrl, '--fact-registry', registry])
      expect(run.code).toBe(3)
      expect(run.stdout).not.toMatch(/registered/)
      const host = new URL(hostileUrl).host
      const redirect = new URL(to)
      expect(run.stderr).toContain(
        `The Ethereum RPC at ${host} answered eth_chainId with a 307 redirect to http://${redirect.host}`,
      )
      expect(run.stderr).toContain('(refused, not followed: the answer must come from the URL given)')
      expect(run.stderr.trim().split('\n')[0]).toMatch(/refused, not followed/)
      noSecretIn(run)
    }
    const error = await checkFactOnEthereum({ rpcUrl: hostileUrl, fact: registered, registry }).catch((e) => e)
    expect(error).toBeInstanceOf(ChainError)
    expect(error.code).toBe('RPC_REDIRECT')
    expect(error.retryable).toBe(false)
  })
})

function noSecretIn(run: { stdout: string; stderr: string }): void {
  expect(run.stdout + run.stderr).not.toContain(SECRET)
}
