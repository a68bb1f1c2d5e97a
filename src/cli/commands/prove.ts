import { checkLayout } from '../../clients/proving/forms.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { expandPieArguments } from '../../pipeline/pie-list.ts'
import { checkRequest, type StatementEndpoint, type StatementRequest } from '../../pipeline/statement/index.ts'
import { L2_LAYOUTS, LAYOUTS } from '../../schemas/proving-constants.ts'
import { defineCommand, parseInteger, SERVICE_OPTIONS } from '../context.ts'
import { withLocalEmulator } from '../local-emulator.ts'
import { provingClientFrom, timeoutFrom } from '../services.ts'
import {
  allowMockedFactFrom,
  DRY_RUN_OPTION,
  EXPECTED_PROGRAM_OPTION,
  expectedProgramHashFrom,
  GATE_OPTIONS,
  journalPolicyFrom,
  MOCKED_FACT_NOT_ALLOWED,
  REUSE_OPTION,
  reuseModeFrom,
  WAIT_OPTIONS,
} from '../shared/statement-flags.ts'
import { printPlan } from '../shared/plan-output.ts'
import { runStatements } from '../shared/statement-output.ts'
import { GENERAL_FIELD_OPTIONS, hasGeneralFields, readGeneralFields } from '../general-submission.ts'

const DEFAULT_CONCURRENCY = 4
const MAX_CONCURRENCY = 64

export const prove = defineCommand({
  path: ['prove'],
  args: '<pie>...',
  summary: 'Prove Cairo PIEs (pie.zip files, PIE directories or globs): L2 proof generation and verification.',
  details: [
    'A PIE directory is packed first; every PIE is validated before anything is uploaded.',
    'With --wait, the facts the service reports are checked against the ones computed locally, and the',
    'result is gated as the action gates it: a DONE proof without its facts, with a malformed hash, or whose',
    'fact is mocked or of unknown mock state (unless --allow-mocked-fact) exits 1. The gate expects what was',
    "asked (PROOF_VERIFICATION_ON_L2, or --result), never the record's word: a record whose result or step",
    'says another kind (a trace) is refused, naming both.',
    'Any general-submission flag (--bucket-id, --result, --external-id, ...) sends the PIE with the',
    'general submission (POST /proving-query) instead; in a bucket the query ends when the bucket does',
    '(`proving bucket close <id> --wait`).',
    `Several PIEs are a batch: at most --concurrency (default ${DEFAULT_CONCURRENCY}) are packed and uploaded at once,`,
    'one progress line per PIE on stderr, a table (or with --json an array) on stdout, and the exit code',
    'of the worst outcome (130 interrupted > 2 bad input > 3 service > 4 timeout > 1 failed > 0).',
    'The same PIE named twice (another spelling of its path, a copy) is sent once; its rows share the query.',
    "A run of a PIE already being submitted by another live run waits for that run's query and follows it.",
    'With --reuse auto (the default), a DONE query of this key that already proves the PIE (the same result',
    'kind, settings and facts, read from the newest 500 queries) is followed instead of paying again, and',
    'gated as if new; a mocked one only with --mock-fact-hash. --reuse never (or --new) always submits.',
  ],
  positionals: { min: 1, max: Number.POSITIVE_INFINITY },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    ...GATE_OPTIONS,
    ...REUSE_OPTION,
    ...EXPECTED_PROGRAM_OPTION,
    ...DRY_RUN_OPTION,
    layout: {
      type: 'string',
      valueName: '<layout>',
      description: `Cairo layout: ${L2_LAYOUTS.join(', ')}; with a general-submission flag, also ${LAYOUTS.filter((name) => !(L2_LAYOUTS as readonly string[]).includes(name)).join(', ')}.`,
      default: 'auto',
    },
    prover: {
      type: 'string',
      valueName: '<name>',
      description: 'Prover instance (L2 endpoint).',
      default: 'svc_sharp',
    },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash: no real on-chain verification (testing).' },
    new: {
      type: 'boolean',
      description:
        'Submit even when the local journal says this PIE was already submitted with these parameters (a second, paid query); no earlier query is reused.',
    },
    concurrency: {
      type: 'string',
      valueName: '<n>',
      description: `With several PIEs: how many are packed and uploaded at once, 1 to ${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY}).`,
    },
    ...GENERAL_FIELD_OPTIONS,
  },
  async run(context) {
    const prover = context.values.prover.trim()
    if (!prover)
      throw new InvalidInputError('--prover must not be empty; omit it to use svc_sharp.', { input: '--prover' })
    const concurrencyText = context.values.concurrency
    const concurrency =
      concurrencyText === undefined
        ? DEFAULT_CONCURRENCY
        : parseInteger(concurrencyText, 'concurrency', 1, MAX_CONCURRENCY)
    const mockFactHash = context.values['mock-fact-hash'] === true
    let endpoint: StatementEndpoint
    if (hasGeneralFields(context)) {
      // Into a bucket, a query is proved and then verified with the bucket's aggregate.
      const inBucket = context.values['bucket-id'] !== undefined
      const fields = readGeneralFields(context, { result: inBucket ? 'PROOF_GENERATION' : 'PROOF_VERIFICATION_ON_L2' })
      endpoint = {
        kind: 'general',
        layout: checkLayout(context.values.layout, 'general', '--layout'),
        mockFactHash,
        fields,
      }
    } else {
      // The endpoint's own list, before anything is packed or uploaded: the service refuses another.
      endpoint = { kind: 'l2', layout: checkLayout(context.values.layout, 'l2', '--layout'), prover, mockFactHash }
    }
    const request: StatementRequest = {
      pieInput: '<pie>',
      subjects: (await expandPieArguments(context.positionals)).map((path) => ({ kind: 'pie', path })),
      endpoint,
      policy: {
        wait: context.values.wait === true,
        timeoutMs: timeoutFrom(context),
        concurrency,
        gate: {
          allowMockedFact: allowMockedFactFrom(context),
          expectedProgramHash: expectedProgramHashFrom(context),
          verifyFacts: true,
          notAllowed: MOCKED_FACT_NOT_ALLOWED,
        },
        reuse: { mode: reuseModeFrom(context) },
        journal: journalPolicyFrom(context),
        streamDirectory: context.io.env.PROVING_STREAM_UPLOAD !== '0',
      },
    }
    // What the request cannot mean is refused before an emulator starts or a key is read.
    checkRequest(request)
    return withLocalEmulator(context, async (service) => {
      const client = provingClientFrom(context, { needsKey: true, ...service })
      return context.values['dry-run'] === true
        ? printPlan(context, client, request)
        : runStatements(context, client, request)
    })
  },
})
