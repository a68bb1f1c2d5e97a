/** What `proving fact check` runs, loaded when it runs (commands/fact.ts): the CLI starts without it. */
export { checkFactOnEthereum } from '../../chain/ethereum.ts'
export { assertFelt, parseFact } from '../../chain/fact.ts'
export { describeExpected, describeVerification } from '../../chain/integrity.ts'
export { rpcEndpoint } from '../../chain/rpc.ts'
export { checkFactOnStarknet } from '../../chain/starknet.ts'
export { describeNotYetRegistered, describeWhere, waitForFactRegistration } from '../../chain/wait.ts'
