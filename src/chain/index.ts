/**
 * Checking facts on chain: SHARP facts in Ethereum's fact registry, Integrity facts (and their
 * verifications) in Starknet's FactRegistry, and a bounded wait for registration. Importing this
 * does not load viem: checkFactOnEthereum imports it when called.
 */
export {
  checkFactOnEthereum,
  ETHEREUM_NETWORKS,
  FACT_REGISTRY_ABI,
  type CheckFactOnEthereumOptions,
  type EthereumNetworkInfo,
} from './ethereum.ts'
export {
  checkFactOnStarknet,
  decodeChainId,
  STARKNET_NETWORKS,
  type CheckFactOnStarknetOptions,
  type StarknetNetworkInfo,
} from './starknet.ts'
export {
  decodeVerifications,
  encodeVerifications,
  judgeVerifications,
  makeVerification,
  selectorFromName,
  GET_ALL_VERIFICATIONS,
  GET_ALL_VERIFICATIONS_SELECTOR,
  VerificationDecodeError,
} from './integrity.ts'
export { waitForFactRegistration, describeWhere, type FactWaitProgress, type WaitForFactOptions } from './wait.ts'
export { parseFact, toBytes32 } from './fact.ts'
export {
  CHAIN_NETWORKS,
  type ChainNetwork,
  type CommonCheckOptions,
  type EthereumFactCheck,
  type ExpectedVerification,
  type IntegrityVerification,
  type JudgedVerification,
  type OnchainFactCheck,
  type StarknetFactCheck,
  type VerifierConfiguration,
} from './types.ts'
