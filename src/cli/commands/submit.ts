import { checkLayout } from '../../clients/proving/forms.ts'
import { InvalidInputError } from '../../core/errors.ts'
import { checkRequest, type StatementRequest, type StatementSubject } from '../../pipeline/statement/index.ts'
import { LAYOUTS } from '../../schemas/proving-constants.ts'
import { defineCommand, SERVICE_OPTIONS } from '../context.ts'
import { withLocalEmulator } from '../local-emulator.ts'
import { provingClientFrom, timeoutFrom } from '../services.ts'
import {
  allowMockedFactFrom,
  DRY_RUN_OPTION,
  EXPECTED_PROGRAM_OPTION,
  expectedProgramHashFrom,
  GATE_OPTIONS,
  MOCKED_FACT_NOT_ALLOWED,
  REUSE_OPTION,
  reuseModeFrom,
  WAIT_OPTIONS,
} from '../shared/statement-flags.ts'
import { printPlan } from '../shared/plan-output.ts'
import { runStatements } from '../shared/statement-output.ts'
import { checkCombination, GENERAL_FIELD_OPTIONS, readGeneralFields } from '../general-submission.ts'

export const submit = defineCommand({
  path: ['submit'],
  args: '[<pie>]',
  summary:
    'General submission (service extension): a PIE, a program with its input, or a program hash, with every field.',
  details: [
    'Exactly one source: <pie> (pie.zip or PIE directory, validated first), --program <program.json>',
    '(with --program-input: input.txt for cairo1, JSON for cairo0 on the python VM), or --program-hash.',
    '--result picks what the query is for; TRACE_GENERATION makes a trace and has no fact to check.',
    'With --wait the gate expects that kind (PROOF_GENERATION without --result): a record claiming',
    'another is refused.',
    'A dedup id (given, or derived from the files and fields) makes sending again safe: the service',
    'keeps one query per dedup id, and after a lost answer the existing query is looked up first.',
    "With --wait and a PIE, the facts the service reports are checked against the PIE's.",
    'With a PIE and --reuse auto (the default), a DONE query of this key that already proves it (the same',
    'result kind, settings and facts) is followed instead of paying again, and gated as if new.',
    'Examples:',
    '  proving submit pie.zip --result PROOF_VERIFICATION_ON_L1 --network TESTNET --wait',
    '  proving submit --program program.json --program-input input.txt --cairo-version cairo1 \\',
    '    --declared-job-size S',
    '  proving submit --program-hash 0x1234... --result TRACE_GENERATION',
  ],
  positionals: { min: 0, max: 1 },
  options: {
    ...SERVICE_OPTIONS,
    ...WAIT_OPTIONS,
    ...GATE_OPTIONS,
    ...REUSE_OPTION,
    ...EXPECTED_PROGRAM_OPTION,
    ...DRY_RUN_OPTION,
    program: {
      type: 'string',
      valueName: '<program.json>',
      description: 'Compiled program to run and prove (instead of a PIE).',
    },
    'program-input': {
      type: 'string',
      valueName: '<file>',
      description: 'Input of --program: input.txt (cairo1) or JSON (cairo0, python VM).',
    },
    'program-hash': {
      type: 'string',
      valueName: '<0x...>',
      description: 'Hash of a program the service already has (instead of a PIE).',
    },
    layout: {
      type: 'string',
      valueName: '<layout>',
      description: `Cairo layout: ${LAYOUTS.join(', ')}.`,
      default: 'auto',
    },
    'mock-fact-hash': { type: 'boolean', description: 'Mock the fact hash: no real on-chain verification (testing).' },
    ...GENERAL_FIELD_OPTIONS,
  },
  async run(context) {
    const pieArg = context.positionals[0]
    const program = context.values.program?.trim() || undefined
    const programInput = context.values['program-input']?.trim() || undefined
    const programHash = context.values['program-hash']?.trim() || undefined
    const sources = [pieArg && '<pie>', program && '--program', programHash && '--program-hash'].filter(Boolean)
    if (sources.length !== 1) {
      throw new InvalidInputError(
        sources.length === 0
          ? 'Nothing to submit: give a <pie>, --program <program.json> or --program-hash <0x...>.'
          : `Give one source only, not ${sources.join(' and ')}.`,
        { input: '<pie>' },
      )
    }
    if (programInput && !program) {
      throw new InvalidInputError('--program-input goes with --program: give the program it is the input of.', {
        input: '--program-input',
      })
    }
    if (programHash !== undefined && !/^0x[0-9a-fA-F]{1,64}$/.test(programHash)) {
      throw new InvalidInputError(
        `--program-hash must be 0x-prefixed hex of at most 64 digits; got ${JSON.stringify(programHash.slice(0, 80))}.`,
        {
          input: '--program-hash',
        },
      )
    }
    const fields = readGeneralFields(context)
    checkCombination(fields, { hasInput: programInput !== undefined })
    const subject: StatementSubject = pieArg
      ? { kind: 'pie', path: pieArg }
      : program
        ? { kind: 'program', programFile: program, inputFile: programInput }
        : { kind: 'program-hash', programHash: programHash! }
    if (!pieArg && fields.declaredJobSize === undefined) {
      context.progress(
        'Declared job size XS (no PIE to measure): pass --declared-job-size if the run has more than 6.5M steps.',
      )
    }
    const request: StatementRequest = {
      pieInput: '<pie>',
      subjects: [subject],
      endpoint: {
        kind: 'general',
        layout: checkLayout(context.values.layout, 'general', '--layout'),
        mockFactHash: context.values['mock-fact-hash'] === true,
        // The gate expects what --result asked for (the service's default when absent), whatever the record says.
        fields,
      },
      policy: {
        wait: context.values.wait === true,
        timeoutMs: timeoutFrom(context),
        concurrency: 1,
        gate: {
          allowMockedFact: allowMockedFactFrom(context),
          expectedProgramHash: expectedProgramHashFrom(context),
          verifyFacts: true,
          notAllowed: MOCKED_FACT_NOT_ALLOWED,
        },
        reuse: { mode: reuseModeFrom(context) },
      },
    }
    checkRequest(request)
    return withLocalEmulator(context, async (service) => {
      const client = provingClientFrom(context, { needsKey: true, ...service })
      return context.values['dry-run'] === true
        ? printPlan(context, client, request)
        : runStatements(context, client, request)
    })
  },
})
