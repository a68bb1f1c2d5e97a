import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { run } from '../../src/action/actions/main.ts'
import { ETHEREUM_NETWORKS, STARKNET_NETWORKS } from '../../src/chain/index.ts'
import { computePieFacts } from '../../src/emulator/index.ts'
import { FIXTURE_PIE } from '../helpers/emulator.ts'
import { closedPort, type EvmNode, startEvmNode } from '../helpers/evm-node.ts'
import { RecordingIO } from '../helpers/recording-io.ts'

/**
 * The root action's on-chain gate (`verify-onchain`), run() end to end: the PIE proved on the
 * in-process emulator, then its SHARP fact checked on a real local EVM (Hardhat's network, with
 * Sepolia's chain id and a fact registry compiled and deployed at test time) and its Integrity
 * fact on the emulator's Starknet endpoint. The gate passes when the fact is registered and fails when it is
 * not registered in time, or when the chain cannot be read.
 */

const SECRET = 'SECRETKEY123'

async function prove(inputs: Record<string, string>): Promise<RecordingIO> {
  const io = new RecordingIO({ pie: FIXTURE_PIE, emulator: 'true', ...inputs }, { scrub: true })
  await run(io)
  return io
}

describe('the root action with verify-onchain', () => {
  let node: EvmNode
  let sharpFact: `0x${string}`
  let registry: `0x${string}`
  let emptyRegistry: `0x${string}`
  let rpcUrl: string

  beforeAll(async () => {
    const facts = await computePieFacts(FIXTURE_PIE)
    if ('invalid' in facts) throw new Error(facts.invalid)
    sharpFact = `0x${BigInt(facts.sharpFactHash).toString(16).padStart(64, '0')}`
    node = await startEvmNode({ chainId: ETHEREUM_NETWORKS.sepolia.chainId })
    registry = await node.deployRegistry()
    emptyRegistry = await node.deployRegistry()
    await node.registerFact(registry, sharpFact)
    // Sepolia's real registry address, on this Sepolia-id chain, for the default-registry path.
    await node.installRegistryAt(ETHEREUM_NETWORKS.sepolia.factRegistry)
    await node.registerFact(ETHEREUM_NETWORKS.sepolia.factRegistry, sharpFact)
    // Sepolia's Satellite, holding the fact as a mock only (as a mockFactHash query leaves it).
    await node.installSatelliteAt(ETHEREUM_NETWORKS.sepolia.satellite)
    await node.registerCairoFact(ETHEREUM_NETWORKS.sepolia.satellite, sharpFact, { mocked: true })
    rpcUrl = node.rpcUrl(`/v3/${SECRET}`)
  })

  afterAll(async () => {
    await node?.close()
  })

  it('passes when the Integrity fact is registered on Starknet (the emulator endpoint)', async () => {
    const io = await prove({ 'verify-onchain': 'starknet' })
    expect(io.failed).toBeUndefined()
    expect(io.outputs['onchain-verified']).toBe('true')
    const [details] = JSON.parse(io.outputs['onchain-details']!)
    expect(details).toMatchObject({
      chain: 'starknet',
      registered: true,
      network: 'sepolia',
      chainId: 'SN_SEPOLIA',
      registry: STARKNET_NETWORKS.sepolia.satellite,
      registryKind: 'satellite',
      expected: { securityBits: 96 },
      fact: expect.stringMatching(/^0x[0-9a-f]+$/),
    })
    expect(io.summary).toMatch(
      /\*\*On chain\*\* \| ✅ Integrity fact registered \(Starknet sepolia, Satellite registry `0x421cd95f[0-9a-f]+`, block \d+\)/,
    )
  })

  it("reads Integrity's FactRegistry with registry-kind integrity", async () => {
    const io = await prove({ 'verify-onchain': 'starknet', 'registry-kind': 'integrity' })
    expect(io.failed).toBeUndefined()
    expect(JSON.parse(io.outputs['onchain-details']!)[0]).toMatchObject({
      registryKind: 'integrity',
      registry: STARKNET_NETWORKS.sepolia.factRegistry,
    })
  })

  it('fails the gate when no verification has min-security-bits or the verifier settings, saying what the registry holds', async () => {
    const bits = await prove({
      'verify-onchain': 'starknet',
      'min-security-bits': '128',
      'onchain-timeout-minutes': '0.02',
    })
    expect(bits.failed).toMatch(
      /^The Integrity fact 0x[0-9a-f]+ is not registered on Starknet sepolia \(registry 0x421cd95f[0-9a-f]+, last block \d+\) after 1s \(the registry holds 1 verification of this fact \(recursive\/keccak_160_lsb\/stone6\/relaxed, 96 security bits\), none with what is required \(at least 128 security bits\)\)\.$/,
    )
    expect(bits.outputs['onchain-verified']).toBe('false')
    const layout = await prove({
      'verify-onchain': 'starknet',
      'verifier-layout': 'small',
      'verifier-stone-version': 'stone6',
      'onchain-timeout-minutes': '0.02',
    })
    expect(layout.failed).toContain(
      'none with what is required (layout small, stone version stone6, at least 96 security bits)',
    )
  })

  it('passes when the SHARP fact is registered on Ethereum, and never shows the RPC URL', async () => {
    const io = await prove({ 'verify-onchain': 'ethereum', 'ethereum-rpc-url': rpcUrl, 'fact-registry': registry })
    expect(io.failed).toBeUndefined()
    expect(io.outputs['onchain-verified']).toBe('true')
    const [details] = JSON.parse(io.outputs['onchain-details']!)
    expect(details).toMatchObject({
      chain: 'ethereum',
      registered: true,
      fact: sharpFact,
      chainId: 11155111,
      network: 'sepolia',
    })
    expect(details.registry.toLowerCase()).toBe(registry.toLowerCase())
    expect(io.summary).toMatch(
      /✅ SHARP fact registered \(Ethereum sepolia, SHARP registry `0x[0-9a-fA-F]{40}`, block \d+\)/,
    )
    expect(io.everything()).not.toContain(SECRET)
  })

  it("passes with both, each on its network's known registry", async () => {
    const io = await prove({ 'verify-onchain': 'both', 'ethereum-rpc-url': rpcUrl })
    expect(io.failed).toBeUndefined()
    expect(
      JSON.parse(io.outputs['onchain-details']!).map((d: { chain: string; registered: boolean }) => [
        d.chain,
        d.registered,
      ]),
    ).toEqual([
      ['ethereum', true],
      ['starknet', true],
    ])
  })

  it('fails the gate when the fact is not registered in time', async () => {
    const io = await prove({
      'verify-onchain': 'ethereum',
      'ethereum-rpc-url': rpcUrl,
      'fact-registry': emptyRegistry,
      'onchain-timeout-minutes': '0.02',
    })
    expect(io.failed).toMatch(
      /^The SHARP fact 0x[0-9a-f]{64} is not registered on Ethereum sepolia \(registry 0x[0-9a-fA-F]{40}, last block \d+\) after 1s\.$/,
    )
    expect(io.outputs['onchain-verified']).toBe('false')
    expect(io.outputs['error-reason']).toBe(io.failed)
    expect(JSON.parse(io.outputs['onchain-details']!)[0]).toMatchObject({ registered: false, timedOut: true })
    expect(io.summary).toContain('❌ SHARP fact not registered within 1s')
    expect(io.summary).toContain('raise `onchain-timeout-minutes`')
    expect(io.logs.some((line) => /not registered yet on Ethereum sepolia/.test(line))).toBe(true)
    expect(io.everything()).not.toContain(SECRET)
  })

  it('fails the gate, with the reason, when the chain cannot be read', async () => {
    const down = `http://127.0.0.1:${await closedPort()}/v3/${SECRET}`
    const io = await prove({ 'verify-onchain': 'ethereum', 'ethereum-rpc-url': down, 'fact-registry': registry })
    expect(io.failed).toMatch(
      /^The SHARP fact could not be checked on Ethereum: Could not reach the Ethereum RPC at 127\.0\.0\.1:\d+/,
    )
    expect(io.outputs['onchain-verified']).toBe('false')
    expect(io.everything()).not.toContain(SECRET)
  })

  it('checks an allowed mocked fact among the mocked facts (Satellite, is_mocked = true)', async () => {
    const io = await prove({ 'verify-onchain': 'starknet', 'mock-fact-hash': 'true', 'allow-mocked-fact': 'true' })
    expect(io.failed).toBeUndefined()
    expect(io.outputs['onchain-verified']).toBe('true')
    expect(JSON.parse(io.outputs['onchain-details']!)[0]).toMatchObject({
      registered: true,
      mocked: true,
      registryKind: 'satellite',
    })
    expect(io.summary).toContain('✅ mocked Integrity fact registered (Starknet sepolia, Satellite registry')
  })

  it("checks an allowed mocked SHARP fact on Ethereum's Satellite, with isMocked = true", async () => {
    const io = await prove({
      'verify-onchain': 'ethereum',
      'ethereum-rpc-url': rpcUrl,
      'mock-fact-hash': 'true',
      'allow-mocked-fact': 'true',
    })
    expect(io.failed).toBeUndefined()
    expect(JSON.parse(io.outputs['onchain-details']!)[0]).toMatchObject({
      registered: true,
      mocked: true,
      registryKind: 'satellite',
      registry: ETHEREUM_NETWORKS.sepolia.satellite,
    })
    // The same fact is not among the Satellite's verified facts: a real proof needs more.
    const real = await prove({
      'verify-onchain': 'ethereum',
      'ethereum-rpc-url': rpcUrl,
      'registry-kind': 'satellite',
      'onchain-timeout-minutes': '0.02',
    })
    expect(real.failed).toMatch(
      /^The SHARP fact 0x[0-9a-f]{64} is not registered on Ethereum sepolia \(registry 0x396bF739f7b37D81f6CdD4571fDEF298150db88f/,
    )
    expect(real.everything()).not.toContain(SECRET)
  })

  it('refuses inputs that cannot work before packing anything', async () => {
    const noRpc = await prove({ 'verify-onchain': 'ethereum' })
    expect(noRpc.failed).toContain('`ethereum-rpc-url` is required with `verify-onchain: ethereum`')
    const bad = await prove({
      'verify-onchain': 'both',
      'ethereum-rpc-url': rpcUrl,
      'fact-registry': registry,
      'onchain-timeout-minutes': '0',
    })
    expect(bad.failed).toContain('`onchain-timeout-minutes` must be above 0')
    expect(bad.failed).toContain('`fact-registry` names one registry')
    const kind = await prove({
      'verify-onchain': 'both',
      'ethereum-rpc-url': rpcUrl,
      'registry-kind': 'integrity',
      'min-security-bits': '-1',
    })
    expect(kind.failed).toContain(
      "`registry-kind` integrity is Starknet's only, and `verify-onchain: both` checks both chains",
    )
    expect(kind.failed).toContain('`min-security-bits` must be a whole number from 0 to 4294967295')
    const mode = await prove({ 'verify-onchain': 'solana' })
    expect(mode.failed).toContain('`verify-onchain` must be one of none, ethereum, starknet, both')
    expect(bad.everything()).not.toContain(SECRET)
  })
})
