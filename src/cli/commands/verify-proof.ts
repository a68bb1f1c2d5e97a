/** `proving verify-proof`: an existing proof file verified on L2, through the statement pipeline. */
import { InvalidInputError } from '../../core/errors.ts'
import type { StatementRequest } from '../../pipeline/statement/index.ts'
import { MEMORY_VERIFICATIONS, STONE_VERSIONS } from '../../schemas/proving-constants.ts'
import { defineCommand, SERVICE_OPTIONS } from '../context.ts'
import { withLocalEmulator } from '../local-emulator.ts'
import { provingClientFrom, timeoutFrom } from '../services.ts'
import {
  allowMockedFactFrom,
  checkFlagEnum,
  GATE_OPTIONS,
  MOCKED_FACT_NOT_ALLOWED,
  WAIT_OPTIONS,
} from '../shared/statement-flags.ts'
import { runStatements } from '../shared/statement-output.ts'

export const verifyProof = defineCommand({
  path: ['verify-proof'],
  args: '<proof.json>',
  summary: 'Submit an existing proof file for verification on L2.',
  details: [
    'With --wait, the result is gated as `prove --wait` gates it, less the local fact check (no PIE):',
    'exit 0 only when the query is DONE, a PROOF_VERIFICATION_ON_L2 proof whatever its record says,',
    'with its facts, well formed, and a fact that is not mocked',
    'and whose mock state the service gives; a mocked fact or an unknown mock state passes with',
    '--allow-mocked-fact (--mock-fact-hash implies it). FAILED or refused: exit 1, each refusal',
    'on stderr, naming the field.',
  ],
  positionals: { min: 1, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    wait: {
      type: 'boolean',
      description: 'Wait for the query to finish, then gate it (exit 0 DONE and passed, 1 FAILED or refused).',
    },
    ...GATE_OPTIONS,
    'stone-version': {
      type: 'string',
      valueName: '<stone5|stone6>',
      description: 'Prover version of the proof (shared-prover proofs need stone6).',
    },
    'memory-verification': {
      type: 'string',
      valueName: '<strict|relaxed|cairo1>',
      description: 'Memory verification: strict (preferred for Cairo 0), relaxed (some bootloaders), cairo1.',
    },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash (testing).' },
  },
  async run(context) {
    for (const flag of ['stone-version', 'memory-verification'] as const) {
      if (!context.values[flag]) {
        throw new InvalidInputError(
          `--${flag} is required: see \`proving verify-proof --help\` for the allowed values.`,
          {
            input: `--${flag}`,
          },
        )
      }
    }
    const request: StatementRequest = {
      subjects: [{ kind: 'proof', path: context.positionals[0]! }],
      endpoint: {
        kind: 'proof',
        stoneVersion: checkFlagEnum(context.values['stone-version'], 'stone-version', STONE_VERSIONS),
        memoryVerification: checkFlagEnum(
          context.values['memory-verification'],
          'memory-verification',
          MEMORY_VERIFICATIONS,
        ),
        mockFactHash: context.values['mock-fact-hash'] === true,
      },
      policy: {
        wait: context.values.wait === true,
        timeoutMs: timeoutFrom(context),
        concurrency: 1,
        gate: {
          allowMockedFact: allowMockedFactFrom(context),
          verifyFacts: false,
          notAllowed: MOCKED_FACT_NOT_ALLOWED,
        },
        reuse: { mode: 'never' },
      },
    }
    return withLocalEmulator(context, async (service) =>
      runStatements(context, provingClientFrom(context, { needsKey: true, ...service }), request),
    )
  },
})
