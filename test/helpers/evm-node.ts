import { type ChildProcess, spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'
import { createPublicClient, createWalletClient, http, type Address, type Hex } from 'viem'
import { REPO_ROOT } from './cli.ts'

/**
 * A real local EVM for the on-chain tests: Hardhat 3's simulated network (its EVM, EDR, is a
 * native binary shipped in an npm package per platform, of which npm installs only this
 * machine's; nothing is downloaded at test time), served over HTTP
 * by `hardhat node` in a child process on a free loopback port. Like a hosted provider, it
 * answers JSON-RPC on any path, so a URL such as `http://127.0.0.1:PORT/v3/<key>` works and the
 * tests can check that the key never reaches the output. Start-up takes ~2-3 s (loading
 * Hardhat), so each test file starts one node and shares it.
 *
 * The fact registry and a Satellite are compiled from Solidity at test time with solc-js (the
 * `solc` npm package: the compiler itself, as WebAssembly; no compiler download).
 */

const require = createRequire(import.meta.url)

export const FACT_REGISTRY_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

/// The part of SHARP's fact registry a checker reads (isValid), and a way for tests to register.
contract FactRegistry {
    mapping(bytes32 => bool) private verifiedFact;

    event FactRegistered(bytes32 fact);

    function isValid(bytes32 fact) external view returns (bool) {
        return verifiedFact[fact];
    }

    function registerFact(bytes32 fact) external {
        verifiedFact[fact] = true;
        emit FactRegistered(fact);
    }
}
`

/**
 * The part of Herodotus' Satellite a checker reads, with the real signature
 * (ICairoFactRegistryModule: `isCairoFactValid(bytes32 factHash, bool isMocked)`), and ways for
 * tests to register verified and mocked facts. Facts are kept apart by kind, as the Satellite
 * keeps them (a mocked fact is not a verified one).
 */
export const SATELLITE_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity ^0.8.0;

contract Satellite {
    mapping(bytes32 => bool) private verifiedFacts;
    mapping(bytes32 => bool) private mockedFacts;

    function isCairoFactValid(bytes32 factHash, bool isMocked) external view returns (bool) {
        return isMocked ? mockedFacts[factHash] : verifiedFacts[factHash];
    }

    function setCairoVerifiedFact(bytes32 factHash) external {
        verifiedFacts[factHash] = true;
    }

    function setCairoMockedFact(bytes32 factHash) external {
        mockedFacts[factHash] = true;
    }
}
`

export const SATELLITE_TEST_ABI = [
  {
    type: 'function',
    name: 'isCairoFactValid',
    stateMutability: 'view',
    inputs: [
      { name: 'factHash', type: 'bytes32' },
      { name: 'isMocked', type: 'bool' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'setCairoVerifiedFact',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'factHash', type: 'bytes32' }],
    outputs: [],
  },
  {
    type: 'function',
    name: 'setCairoMockedFact',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'factHash', type: 'bytes32' }],
    outputs: [],
  },
] as const

export const FACT_REGISTRY_TEST_ABI = [
  {
    type: 'function',
    name: 'isValid',
    stateMutability: 'view',
    inputs: [{ name: 'fact', type: 'bytes32' }],
    outputs: [{ name: '', type: 'bool' }],
  },
  {
    type: 'function',
    name: 'registerFact',
    stateMutability: 'nonpayable',
    inputs: [{ name: 'fact', type: 'bytes32' }],
    outputs: [],
  },
] as const

export type CompiledContract = { abi: unknown[]; bytecode: Hex; deployedBytecode: Hex }

let compiled: { FactRegistry: CompiledContract; Satellite: CompiledContract } | undefined

/** Compiles FactRegistry and Satellite with solc-js, in one run, once per test file (~0.7 s). */
export function compileContracts(): { FactRegistry: CompiledContract; Satellite: CompiledContract } {
  if (compiled) return compiled
  const solc = require('solc') as { compile(input: string): string }
  const input = {
    language: 'Solidity',
    sources: { 'FactRegistry.sol': { content: FACT_REGISTRY_SOURCE }, 'Satellite.sol': { content: SATELLITE_SOURCE } },
    settings: {
      // An EVM version every recent node runs, whatever the compiler's newest default.
      evmVersion: 'cancun',
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
    errors?: { severity: string; formattedMessage: string }[]
    contracts: Record<
      string,
      Record<string, { abi: unknown[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >
  }
  const errors = (output.errors ?? []).filter((error) => error.severity === 'error')
  if (errors.length) throw new Error(`solc: ${errors.map((error) => error.formattedMessage).join('\n')}`)
  const read = (file: string, name: string): CompiledContract => {
    const contract = output.contracts[file]![name]!
    return {
      abi: contract.abi,
      bytecode: `0x${contract.evm.bytecode.object}`,
      deployedBytecode: `0x${contract.evm.deployedBytecode.object}`,
    }
  }
  compiled = { FactRegistry: read('FactRegistry.sol', 'FactRegistry'), Satellite: read('Satellite.sol', 'Satellite') }
  return compiled
}

export type EvmNode = {
  /** `http://127.0.0.1:PORT/` */
  url: string
  /** The node's URL with a path, e.g. `rpcUrl('/v3/KEY')` for a provider-style URL with a key. */
  rpcUrl(path?: string): string
  chainId: number
  /** The first prefunded account (unlocked: the node signs for it). */
  account: Address
  deployRegistry(): Promise<Address>
  registerFact(registry: Address, fact: Hex): Promise<void>
  /** Puts the registry's code at an address (hardhat_setCode), e.g. the Sepolia default. */
  installRegistryAt(address: Address): Promise<void>
  deploySatellite(): Promise<Address>
  /** setCairoVerifiedFact, or setCairoMockedFact with `mocked`. */
  registerCairoFact(satellite: Address, fact: Hex, options?: { mocked?: boolean }): Promise<void>
  /** Puts the Satellite's code at an address, e.g. the Sepolia Satellite's. */
  installSatelliteAt(address: Address): Promise<void>
  setCode(address: Address, code: Hex): Promise<void>
  close(): Promise<void>
}

export async function startEvmNode(options: { chainId?: number } = {}): Promise<EvmNode> {
  const chainId = options.chainId ?? 31337
  // Hardhat 3 runs only from a config inside a project that installs it: the config goes into a
  // temporary folder under node_modules/.cache (git-ignored), its artifacts and cache beside it.
  const cacheDir = join(REPO_ROOT, 'node_modules', '.cache')
  mkdirSync(cacheDir, { recursive: true })
  const configDir = mkdtempSync(join(cacheDir, 'proving-kit-evm-'))
  const config = join(configDir, 'hardhat.config.mjs')
  const settings = {
    paths: { artifacts: join(configDir, 'artifacts'), cache: join(configDir, 'cache') },
    networks: { evm: { type: 'edr-simulated', chainType: 'l1', chainId, accounts: { count: 2 } } },
  }
  writeFileSync(config, `export default ${JSON.stringify(settings)}\n`)
  const cli = join(dirname(require.resolve('hardhat/package.json')), 'dist/src/cli.js')
  const child = spawn(
    process.execPath,
    [cli, '--config', config, 'node', '--network', 'evm', '--hostname', '127.0.0.1', '--port', '0'],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  let url: string
  try {
    url = await listeningUrl(child)
  } catch (error) {
    rmSync(configDir, { recursive: true, force: true })
    throw error
  }

  const transport = http(url, { retryCount: 0 })
  const publicClient = createPublicClient({ transport })
  const walletClient = createWalletClient({ transport })
  const [account] = await walletClient.getAddresses()
  const { FactRegistry: contract, Satellite: satellite } = compileContracts()

  const setCode = async (address: Address, code: Hex) => {
    await publicClient.request({ method: 'hardhat_setCode' as never, params: [address, code] as never })
  }
  return {
    url,
    rpcUrl: (path = '/') => `${url}${path.startsWith('/') ? path.slice(1) : path}`,
    chainId,
    account: account!,
    async deployRegistry() {
      const hash = await walletClient.deployContract({
        abi: contract.abi,
        bytecode: contract.bytecode,
        account: account!,
        chain: null,
      })
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      if (!receipt.contractAddress) throw new Error('deployment left no contract address')
      return receipt.contractAddress
    },
    async registerFact(registry, fact) {
      const hash = await walletClient.writeContract({
        address: registry,
        abi: FACT_REGISTRY_TEST_ABI,
        functionName: 'registerFact',
        args: [fact],
        account: account!,
        chain: null,
      })
      await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    },
    installRegistryAt: (address) => setCode(address, contract.deployedBytecode),
    async deploySatellite() {
      const hash = await walletClient.deployContract({
        abi: satellite.abi,
        bytecode: satellite.bytecode,
        account: account!,
        chain: null,
      })
      const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
      if (!receipt.contractAddress) throw new Error('deployment left no contract address')
      return receipt.contractAddress
    },
    async registerCairoFact(address, fact, options = {}) {
      const hash = await walletClient.writeContract({
        address,
        abi: SATELLITE_TEST_ABI,
        functionName: options.mocked ? 'setCairoMockedFact' : 'setCairoVerifiedFact',
        args: [fact],
        account: account!,
        chain: null,
      })
      await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 })
    },
    installSatelliteAt: (address) => setCode(address, satellite.deployedBytecode),
    setCode,
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
      }
      rmSync(configDir, { recursive: true, force: true })
    },
  }
}

function listeningUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = ''
    const timer = setTimeout(() => fail(new Error(`hardhat node did not start in 30 s: ${output}`)), 30_000)
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8')
      const match = /JSON-RPC server at (http:\/\/[\d.]+:\d+\/)/.exec(output)
      if (match) {
        clearTimeout(timer)
        child.off('exit', onExit)
        resolve(match[1]!)
      }
    }
    const fail = (error: Error) => {
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(error)
    }
    const onExit = (code: number | null) => fail(new Error(`hardhat node exited with ${code}: ${output}`))
    // Keep reading both pipes for the node's whole life: a full pipe would block it.
    child.stdout?.on('data', onData)
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')))
    child.once('error', fail)
    child.once('exit', onExit)
  })
}

/** A loopback port with nothing listening on it (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
