/**
 * Checking facts on chain: SHARP facts in Ethereum's fact registry or Satellite, Integrity facts
 * (and their verifications) on Starknet's Satellite or Integrity's FactRegistry, and a bounded
 * wait for registration. Importing this
 * does not load viem: checkFactOnEthereum imports it when called.
 */
export {
  checkFactOnEthereum,
  DEFAULT_ETHEREUM_REGISTRY_KIND,
  ETHEREUM_NETWORKS,
  FACT_REGISTRY_ABI,
  SATELLITE_ABI,
  type CheckFactOnEthereumOptions,
  type EthereumNetworkInfo,
} from './ethereum.ts'
export {
  checkFactOnStarknet,
  decodeChainId,
  DEFAULT_STARKNET_REGISTRY_KIND,
  defaultStarknetRegistry,
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
  verificationsCalldata,
} from './integrity.ts'
export {
  waitForFactRegistration,
  describeNotYetRegistered,
  describeWhere,
  type FactWaitProgress,
  type WaitForFactOptions,
} from './wait.ts'
export { parseFact, toBytes32 } from './fact.ts'
export {
  CHAIN_NETWORKS,
  DEFAULT_MIN_SECURITY_BITS,
  ETHEREUM_REGISTRY_KINDS,
  STARKNET_REGISTRY_KINDS,
  type ChainNetwork,
  type EthereumRegistryKind,
  type RegistryKind,
  type StarknetRegistryKind,
  type CommonCheckOptions,
  type EthereumFactCheck,
  type ExpectedVerification,
  type IntegrityVerification,
  type JudgedVerification,
  type OnchainFactCheck,
  type StarknetFactCheck,
  type VerifierConfiguration,
} from './types.ts'
