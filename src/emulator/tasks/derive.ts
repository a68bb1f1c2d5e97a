import { createHash } from 'node:crypto'
import type { DpOutput, MmrMeta, UsedMmrRecord } from '../../schemas/tasks.ts'
import { ALL_STAGES, type TaskPosition } from './pipeline.ts'
import type { StoredTask } from './store.ts'

/**
 * What the emulator makes up where a real service would compute something: the dp_output of a
 * full run (the data processor would produce it) or of a proving query whose dp_output was not
 * given, and the decommitment's transaction hash. All of it is a digest of the task's own
 * identifiers, so the same task always reads the same values.
 */

function digest(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('hex')
}

/** A felt-sized hex value (62 hex digits stay below the Stark prime). */
function felt(seed: string, label: string): string {
  return `0x${digest(seed, label)
    .slice(0, 62)
    .replace(/^0+(?=.)/, '')}`
}

/** A 128-bit half, as the high/low pairs of dp_output carry. */
function half(seed: string, label: string): string {
  return `0x${digest(seed, label)
    .slice(0, 32)
    .replace(/^0+(?=.)/, '')}`
}

function small(seed: string, label: string, modulo: number): string {
  return `0x${((Number.parseInt(digest(seed, label).slice(0, 8), 16) % modulo) + 1).toString(16)}`
}

/** One Poseidon MMR on the destination chain and one Keccak MMR on Ethereum mainnet. */
export function deriveDpOutput(seed: string, destinationChainId: string): DpOutput {
  return {
    mmr_metas: [
      {
        Poseidon: {
          chain_id: destinationChainId,
          id: small(seed, 'poseidon-id', 4096),
          root: felt(seed, 'poseidon-root'),
          size: small(seed, 'poseidon-size', 1_000_000),
        },
      },
      {
        Keccak: {
          chain_id: '0x1',
          id: small(seed, 'keccak-id', 4096),
          root_high: half(seed, 'keccak-root-high'),
          root_low: half(seed, 'keccak-root-low'),
          size: small(seed, 'keccak-size', 1_000_000),
        },
      },
    ],
    output_tree_root_high: half(seed, 'output-tree-root-high'),
    output_tree_root_low: half(seed, 'output-tree-root-low'),
    task_hash_high: half(seed, 'task-hash-high'),
    task_hash_low: half(seed, 'task-hash-low'),
  }
}

/** The program hash of a proving query the PIE did not reveal (a proof-only query). */
export function deriveProgramHash(seed: string): string {
  return felt(seed, 'program-hash')
}

export function deriveTransactionHash(seed: string): string {
  return `0x${digest(seed, 'decommitment-transaction')}`
}

/**
 * A used-MMR record from an MMR meta: Poseidon roots are one felt; Keccak roots are a 256-bit
 * value split into two 128-bit halves, joined back here.
 */
export function usedMmrOf(meta: MmrMeta): UsedMmrRecord {
  if ('Poseidon' in meta) {
    const { chain_id, id, root, size } = meta.Poseidon
    return { chain_id, hashing_function: 'poseidon', id, root, size }
  }
  const { chain_id, id, root_high, root_low, size } = meta.Keccak
  const joined = BigInt(root_high) * 2n ** 128n + BigInt(root_low)
  return { chain_id, hashing_function: 'keccak', id, root: `0x${joined.toString(16).padStart(64, '0')}`, size }
}

/**
 * The MMRs a task reports at `position`: a full task knows them once its chain proofs are
 * fetched (none before, nor when it failed at that stage or earlier); a decommitment-only task
 * from the start.
 */
export function knownMmrsOf(task: StoredTask, position: TaskPosition): UsedMmrRecord[] {
  const fetched = ALL_STAGES.indexOf('chain-proofs-fetch')
  const known =
    task.kind === 'decommitment' || position.stageIndex > fetched || position.status === 'ChainProofsFetchCompleted'
  return known ? task.dpOutput.mmr_metas.map(usedMmrOf) : []
}
