import type { DecommitmentBodyInput, DpOutput, TaskBodyInput } from '../../src/schemas/tasks.ts'

/** Bodies for the task-service tests: valid as interface.md describes them, small enough to read. */

export const SEPOLIA = '0xaa36a7'
export const STARKNET_PRIME = '0x800000000000011000000000000000000000000000000000000000000000001'

export function compiledClass() {
  return {
    bytecode: ['0xa0680017fff8000', '0x7', '0x482680017ffa8000', '0x208b7fff7fff7ffe'],
    bytecode_segment_lengths: [4],
    compiler_version: '2.10.0',
    entry_points_by_type: {
      CONSTRUCTOR: [],
      EXTERNAL: [
        {
          builtins: ['range_check', 'poseidon'],
          offset: 0,
          selector: '0xe2054f8a912367e38a22ce773328ff8aabf8082c4120bad9ef085e1dbf29a7',
        },
      ],
      L1_HANDLER: [],
    },
    hints: [],
    prime: STARKNET_PRIME,
    pythonic_hints: [],
  }
}

export function dpOutput(): DpOutput {
  return {
    mmr_metas: [
      { Poseidon: { chain_id: SEPOLIA, id: '0x1a', root: '0x4a1b2c', size: '0x3e8' } },
      { Keccak: { chain_id: '0x1', id: '0x2b', root_high: '0x11', root_low: '0x22', size: '0x7d0' } },
    ],
    output_tree_root_high: '0x5c',
    output_tree_root_low: '0x6d',
    task_hash_high: '0x7e',
    task_hash_low: '0x8f',
  }
}

export function taskBody(overrides: Partial<TaskBodyInput> = {}): TaskBodyInput {
  return {
    destination_chain_id: SEPOLIA,
    input: { compiled_class: compiledClass(), injected_state: {}, params: ['0x1', '0x2'] },
    program_hash: '0x3b8a4c0e7d1f2a9b',
    task_inputs: [
      { value: '0x5', visibility: 'public' },
      { value: '0x9', visibility: 'private' },
    ],
    ...overrides,
  }
}

export function decommitmentBody(overrides: Partial<DecommitmentBodyInput> = {}): DecommitmentBodyInput {
  return { proving_query_id: 'q-123', destination_chain_id: SEPOLIA, ...overrides }
}

/**
 * One body per class of bad input, with the words the rejection must contain. Used by the
 * client's unit tests (nothing sent) and the emulator's end-to-end tests (400 before queueing).
 */
export const BAD_TASK_BODIES: { name: string; body: unknown; problem: RegExp }[] = [
  {
    name: 'decimal chain id',
    body: taskBody({ destination_chain_id: '11155111' }),
    problem: /destination_chain_id must be 0x-prefixed hex, got "11155111"/,
  },
  {
    name: 'missing chain id',
    body: { ...taskBody(), destination_chain_id: undefined },
    problem: /destination_chain_id is required/,
  },
  { name: 'missing input', body: { ...taskBody(), input: undefined }, problem: /input is required/ },
  {
    name: 'missing program hash',
    body: { ...taskBody(), program_hash: undefined },
    problem: /program_hash is required/,
  },
  {
    name: 'bad program hash',
    body: taskBody({ program_hash: '0xZZ' }),
    problem: /program_hash must be 0x-prefixed hex, got "0xZZ"/,
  },
  { name: 'empty hex', body: taskBody({ program_hash: '0x' }), problem: /program_hash must be 0x-prefixed hex/ },
  {
    name: 'param not hex',
    body: taskBody({ input: { compiled_class: compiledClass(), injected_state: {}, params: ['12'] } }),
    problem: /input\.params\[0\] must be 0x-prefixed hex, got "12"/,
  },
  {
    name: 'param of wrong type',
    body: taskBody({ input: { compiled_class: compiledClass(), injected_state: {}, params: [7 as never] } }),
    problem: /input\.params\[0\] must be a string, got number 7/,
  },
  {
    name: 'bad visibility',
    body: taskBody({ task_inputs: [{ value: '0x1', visibility: 'secret' as never }] }),
    problem: /task_inputs\[0\]\.visibility must be "public" or "private", got "secret"/,
  },
  {
    name: 'task input value not hex',
    body: taskBody({ task_inputs: [{ value: 'ten', visibility: 'public' }] }),
    problem: /task_inputs\[0\]\.value must be 0x-prefixed hex, got "ten"/,
  },
  {
    name: 'bad selector',
    body: taskBody({
      input: {
        compiled_class: {
          ...compiledClass(),
          entry_points_by_type: {
            CONSTRUCTOR: [],
            EXTERNAL: [{ builtins: [], offset: 0, selector: 'main' }],
            L1_HANDLER: [],
          },
        },
        injected_state: {},
        params: [],
      },
    }),
    problem: /input\.compiled_class\.entry_points_by_type\.EXTERNAL\[0\]\.selector must be 0x-prefixed hex, got "main"/,
  },
  {
    name: 'missing entry point type',
    body: taskBody({
      input: {
        compiled_class: { ...compiledClass(), entry_points_by_type: { CONSTRUCTOR: [], EXTERNAL: [] } as never },
        injected_state: {},
        params: [],
      },
    }),
    problem: /input\.compiled_class\.entry_points_by_type\.L1_HANDLER is required/,
  },
  {
    name: 'negative offset',
    body: taskBody({
      input: {
        compiled_class: {
          ...compiledClass(),
          entry_points_by_type: {
            CONSTRUCTOR: [],
            EXTERNAL: [{ builtins: [], offset: -1, selector: '0x1' }],
            L1_HANDLER: [],
          },
        },
        injected_state: {},
        params: [],
      },
    }),
    problem: /EXTERNAL\[0\]\.offset must be at least 0/,
  },
  {
    name: 'bad prime',
    body: taskBody({
      input: {
        compiled_class: {
          ...compiledClass(),
          prime: '3618502788666131213697322783095070105623107215331596699973092056135872020481',
        },
        injected_state: {},
        params: [],
      },
    }),
    problem: /input\.compiled_class\.prime must be 0x-prefixed hex/,
  },
  {
    name: 'webhook not a URL',
    body: taskBody({ webhook_url: 'hooks.example.com/x' }),
    problem: /webhook_url must be an absolute http\(s\) URL, got "hooks\.example\.com\/x"/,
  },
  // Unknown fields pass through (production.md); the documented optional ones are typed.
  {
    name: 'is_mock not a boolean',
    body: { ...taskBody(), is_mock: 'yes' },
    problem: /is_mock must be a boolean, got "yes"/,
  },
  {
    name: 'schedule_tx_hash not hex',
    body: { ...taskBody(), schedule_tx_hash: 'abc' },
    problem: /schedule_tx_hash must be 0x-prefixed hex, got "abc"/,
  },
  { name: 'not an object', body: [], problem: /the body must be an object, got an array/ },
]

export const BAD_DECOMMITMENT_BODIES: { name: string; body: unknown; problem: RegExp }[] = [
  {
    name: 'missing proving query id',
    body: { destination_chain_id: SEPOLIA },
    problem: /proving_query_id is required/,
  },
  {
    name: 'empty proving query id',
    body: decommitmentBody({ proving_query_id: '  ' }),
    problem: /proving_query_id must not be empty/,
  },
  {
    name: 'decimal chain id',
    body: decommitmentBody({ destination_chain_id: '11155111' }),
    problem: /destination_chain_id must be 0x-prefixed hex, got "11155111"/,
  },
  { name: 'missing chain id', body: { proving_query_id: 'q-1' }, problem: /destination_chain_id is required/ },
  {
    name: 'bad program hash',
    body: decommitmentBody({ program_hash: '123' }),
    problem: /program_hash must be 0x-prefixed hex, got "123"/,
  },
  {
    name: 'MMR meta with no key',
    body: decommitmentBody({ dp_output: { ...dpOutput(), mmr_metas: [{} as never] } }),
    problem: /dp_output\.mmr_metas\[0\] must have exactly one key, Poseidon or Keccak; it has none/,
  },
  {
    name: 'MMR meta with both keys',
    body: decommitmentBody({
      dp_output: { ...dpOutput(), mmr_metas: [{ ...dpOutput().mmr_metas[0]!, ...dpOutput().mmr_metas[1]! } as never] },
    }),
    problem: /dp_output\.mmr_metas\[0\] must have exactly one key, Poseidon or Keccak; it has both/,
  },
  {
    name: 'MMR meta of unknown hashing',
    body: decommitmentBody({ dp_output: { ...dpOutput(), mmr_metas: [{ Sha256: {} } as never] } }),
    problem: /dp_output\.mmr_metas\[0\]\.Sha256 is not a known field/,
  },
  {
    name: 'Keccak meta with a Poseidon root',
    body: decommitmentBody({
      dp_output: {
        ...dpOutput(),
        mmr_metas: [{ Keccak: { chain_id: '0x1', id: '0x1', root: '0x1', size: '0x1' } } as never],
      },
    }),
    problem: /dp_output\.mmr_metas\[0\]\.Keccak\.root_high is required/,
  },
  {
    name: 'dp_output field not hex',
    body: decommitmentBody({ dp_output: { ...dpOutput(), task_hash_low: '42' } }),
    problem: /dp_output\.task_hash_low must be 0x-prefixed hex, got "42"/,
  },
  {
    name: 'dp_output field missing',
    body: decommitmentBody({ dp_output: { ...dpOutput(), output_tree_root_high: undefined as never } }),
    problem: /dp_output\.output_tree_root_high is required/,
  },
  {
    name: 'webhook of another scheme',
    body: decommitmentBody({ webhook_url: 'ftp://hooks.example.com' }),
    problem: /webhook_url must be an absolute http\(s\) URL/,
  },
]
