import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CallData, Contract, constants, hash, RpcError, RpcProvider, shortString } from 'starknet'
import {
  checkFactOnStarknet,
  decodeVerifications,
  GET_ALL_VERIFICATIONS,
  GET_ALL_VERIFICATIONS_SELECTOR,
  selectorFromName,
  STARKNET_NETWORKS,
  verificationsCalldata,
} from '../../src/chain/index.ts'
import { EMULATED_VERIFIER } from '../../src/emulator/starknet/routes.ts'
import { KEY, startTestEmulator, submitFixturePie, type TestEmulator } from '../helpers/emulator.ts'

/**
 * Our Starknet encoding judged by an implementation we did not write: starknet.js (the `starknet`
 * npm package) computes the selectors, encodes the calldata and decodes the answers from the
 * contracts' ABIs, and its RpcProvider talks to the emulator's endpoint as it talks to a node, so
 * the emulator's answers and errors must have the shapes of the Starknet JSON-RPC specification
 * (starknet_call's request and result, the error objects and their codes).
 *
 * The ABIs below are the Cairo interfaces as the compiler would emit them, written from
 * HerodotusDev/integrity (src/contracts/fact_registry_interface.cairo: VerificationListElement,
 * get_all_verifications_for_fact_hash) and HerodotusDev/satellite
 * (cairo/src/cairo_fact_registry.cairo: the same getter with `is_mocked: bool`, isCairoFactValid).
 */

const ELEMENT = 'integrity::contracts::fact_registry_interface::VerificationListElement'
const CONFIG = 'integrity::settings::VerifierConfiguration'
const TYPES = [
  {
    type: 'struct',
    name: CONFIG,
    members: [
      { name: 'layout', type: 'core::felt252' },
      { name: 'hasher', type: 'core::felt252' },
      { name: 'stone_version', type: 'core::felt252' },
      { name: 'memory_verification', type: 'core::felt252' },
    ],
  },
  {
    type: 'struct',
    name: ELEMENT,
    members: [
      { name: 'verification_hash', type: 'core::felt252' },
      { name: 'security_bits', type: 'core::integer::u32' },
      { name: 'verifier_config', type: CONFIG },
    ],
  },
  {
    type: 'struct',
    name: `core::array::Span::<${ELEMENT}>`,
    members: [{ name: 'snapshot', type: `@core::array::Array::<${ELEMENT}>` }],
  },
  {
    type: 'enum',
    name: 'core::bool',
    variants: [
      { name: 'False', type: '()' },
      { name: 'True', type: '()' },
    ],
  },
]
const INTEGRITY_ABI = [
  ...TYPES,
  {
    type: 'interface',
    name: 'integrity::contracts::fact_registry_interface::IFactRegistry',
    items: [
      {
        type: 'function',
        name: GET_ALL_VERIFICATIONS,
        inputs: [{ name: 'fact_hash', type: 'core::felt252' }],
        outputs: [{ type: `core::array::Array::<${ELEMENT}>` }],
        state_mutability: 'view',
      },
    ],
  },
]
const SATELLITE_ABI = [
  ...TYPES,
  {
    type: 'interface',
    name: 'satellite::cairo_fact_registry::ICairoFactRegistry',
    items: [
      {
        type: 'function',
        name: 'isCairoFactValid',
        inputs: [
          { name: 'fact_hash', type: 'core::felt252' },
          { name: 'is_mocked', type: 'core::bool' },
        ],
        outputs: [{ type: 'core::bool' }],
        state_mutability: 'view',
      },
      {
        type: 'function',
        name: GET_ALL_VERIFICATIONS,
        inputs: [
          { name: 'fact_hash', type: 'core::felt252' },
          { name: 'is_mocked', type: 'core::bool' },
        ],
        outputs: [{ type: `core::array::Span::<${ELEMENT}>` }],
        state_mutability: 'view',
      },
    ],
  },
]

/** The FELT of the Starknet JSON-RPC specification (starknet_api_openrpc.json, components.schemas.FELT). */
const SPEC_FELT = /^0x(0|[a-fA-F1-9]{1}[a-fA-F0-9]{0,62})$/

type DecodedElement = {
  verification_hash: bigint
  security_bits: bigint
  verifier_config: { layout: bigint; hasher: bigint; stone_version: bigint; memory_verification: bigint }
}

/** starknet.js's decoding, in our record's shape, for comparison. */
function fromStarknetJs(elements: DecodedElement[]) {
  const text = (felt: bigint) => shortString.decodeShortString(`0x${felt.toString(16)}`)
  return elements.map((element) => ({
    verificationHash: `0x${element.verification_hash.toString(16)}`,
    securityBits: Number(element.security_bits),
    layout: text(element.verifier_config.layout),
    hasher: text(element.verifier_config.hasher),
    stoneVersion: text(element.verifier_config.stone_version),
    memoryVerification: text(element.verifier_config.memory_verification),
  }))
}

describe('selectors and calldata, against starknet.js', () => {
  it('computes the same entry point selectors', () => {
    for (const name of [GET_ALL_VERIFICATIONS, 'isCairoFactValid', 'get_verification']) {
      expect(`0x${selectorFromName(name).toString(16)}`).toBe(hash.getSelectorFromName(name))
    }
    expect(`0x${GET_ALL_VERIFICATIONS_SELECTOR.toString(16)}`).toBe(hash.getSelectorFromName(GET_ALL_VERIFICATIONS))
  })

  it("encodes the calldata as each contract's ABI says", () => {
    const fact = 0x1c446d13efc5a3a16387eeec2c9347e9fd44e195b178916e1bd27c0a18220f1n
    const integrity = new CallData(INTEGRITY_ABI).compile(GET_ALL_VERIFICATIONS, { fact_hash: fact })
    expect(verificationsCalldata(fact, 'integrity', false)).toEqual(integrity.map(BigInt))
    const satellite = new CallData(SATELLITE_ABI)
    for (const isMocked of [false, true]) {
      const encoded = satellite.compile(GET_ALL_VERIFICATIONS, { fact_hash: fact, is_mocked: isMocked })
      expect(verificationsCalldata(fact, 'satellite', isMocked)).toEqual(encoded.map(BigInt))
    }
  })
})

describe("the emulator's Starknet endpoint through starknet.js's RpcProvider", () => {
  let emulator: TestEmulator
  let provider: RpcProvider
  let fact: string
  let mockedFact: string

  beforeAll(async () => {
    emulator = await startTestEmulator()
    provider = new RpcProvider({ nodeUrl: `${emulator.url}/starknet-rpc` })
    const proved = await submitFixturePie(emulator, KEY)
    const mocked = await submitFixturePie(emulator, KEY, { mockFactHash: 'true', dedupId: 'mocked-run' })
    const client = emulator.client()
    fact = (await client.waitForQuery(proved, { timeoutMs: 10_000 })).provingQuery.integrityFactHash!
    await client.waitForQuery(mocked, { timeoutMs: 10_000 })
    // Same PIE, so the same fact: registered once for real and once as a mock.
    mockedFact = emulator.state.queries[mocked]!.facts.integrityFactHash!
    // A weak verification of another fact, as anyone could register one.
    await emulator.control('POST', '/starknet/verifications', { fact: '0x77', securityBits: 1 })
  })

  afterAll(async () => {
    await emulator?.close()
  })

  it('is Sepolia, with a spec version starknet.js supports', async () => {
    expect(await provider.getChainId()).toBe(constants.StarknetChainId.SN_SEPOLIA)
    expect(typeof (await provider.getBlockNumber())).toBe('number')
    expect(await provider.getSpecVersion()).toMatch(/^0\.\d+\.\d+$/)
  })

  it("answers Integrity's getter as starknet.js decodes it, and as our decoder reads it", async () => {
    const contract = new Contract({
      abi: INTEGRITY_ABI,
      address: STARKNET_NETWORKS.sepolia.factRegistry,
      providerOrAccount: provider,
    })
    const decoded = (await contract.call(GET_ALL_VERIFICATIONS, [fact])) as DecodedElement[]
    expect(fromStarknetJs(decoded)).toEqual([expect.objectContaining({ ...EMULATED_VERIFIER })])
    const raw = await provider.callContract({
      contractAddress: STARKNET_NETWORKS.sepolia.factRegistry,
      entrypoint: GET_ALL_VERIFICATIONS,
      calldata: [fact],
    })
    expect(decodeVerifications(raw)).toEqual(fromStarknetJs(decoded))
    // starknet_call's result is an array of FELT: the spec's pattern, no leading zeros.
    for (const felt of raw) expect(felt).toMatch(SPEC_FELT)
  })

  it("answers the Satellite's getters with is_mocked as starknet.js encodes them", async () => {
    const satellite = new Contract({
      abi: SATELLITE_ABI,
      address: STARKNET_NETWORKS.sepolia.satellite,
      providerOrAccount: provider,
    })
    const real = fromStarknetJs((await satellite.call(GET_ALL_VERIFICATIONS, [fact, false])) as DecodedElement[])
    const mocked = fromStarknetJs((await satellite.call(GET_ALL_VERIFICATIONS, [mockedFact, true])) as DecodedElement[])
    expect(real).toHaveLength(1)
    expect(mocked).toHaveLength(1)
    expect(await satellite.call('isCairoFactValid', [fact, false])).toBe(true)
    expect(await satellite.call('isCairoFactValid', [mockedFact, true])).toBe(true)
    expect(await satellite.call('isCairoFactValid', ['0x77', false])).toBe(false) // 1 bit < the Satellite's 96
    expect(fromStarknetJs((await satellite.call(GET_ALL_VERIFICATIONS, ['0x77', false])) as DecodedElement[])).toEqual([
      expect.objectContaining({ securityBits: 1 }),
    ])

    // Our check reads the same through its own encoder and decoder.
    const ours = await checkFactOnStarknet({ rpcUrl: `${emulator.url}/starknet-rpc`, fact: mockedFact, mocked: true })
    expect(ours).toMatchObject({
      registered: true,
      registryKind: 'satellite',
      mocked: true,
      registry: STARKNET_NETWORKS.sepolia.satellite,
    })
    expect(ours.verifications.map(({ hashMatches, meetsExpected, ...verification }) => verification)).toEqual(mocked)
  })

  it("answers errors with the specification's codes and messages, as starknet.js names them", async () => {
    const noContract = await provider
      .callContract({ contractAddress: '0x1', entrypoint: GET_ALL_VERIFICATIONS, calldata: ['0x1'] })
      .catch((e) => e)
    expect(noContract).toBeInstanceOf(RpcError)
    expect(noContract.isType('CONTRACT_NOT_FOUND')).toBe(true)
    const noEntryPoint = await provider
      .callContract({ contractAddress: STARKNET_NETWORKS.sepolia.satellite, entrypoint: 'register_fact', calldata: [] })
      .catch((e) => e)
    expect(noEntryPoint.isType('ENTRYPOINT_NOT_FOUND')).toBe(true)
    const badArguments = await provider
      .callContract({
        contractAddress: STARKNET_NETWORKS.sepolia.satellite,
        entrypoint: GET_ALL_VERIFICATIONS,
        calldata: ['0x1'],
      })
      .catch((e) => e)
    expect(badArguments.isType('CONTRACT_ERROR')).toBe(true)
    const noBlock = await provider
      .callContract(
        {
          contractAddress: STARKNET_NETWORKS.sepolia.factRegistry,
          entrypoint: GET_ALL_VERIFICATIONS,
          calldata: ['0x1'],
        },
        10 ** 12,
      )
      .catch((e) => e)
    expect(noBlock.isType('BLOCK_NOT_FOUND')).toBe(true)
    // The messages are the specification's fixed strings (starknet_api_openrpc.json's errors).
    expect(
      [noContract, noEntryPoint, badArguments, noBlock].map((error: RpcError) => [
        error.baseError.code,
        error.baseError.message,
      ]),
    ).toEqual([
      [20, 'Contract not found'],
      [21, 'Requested entrypoint does not exist in the contract'],
      [40, 'Contract error'],
      [24, 'Block not found'],
    ])
    expect(badArguments.baseError.data).toEqual({ revert_error: expect.any(String) })
  })
})
