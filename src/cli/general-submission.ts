/**
 * The general submission (POST /proving-query, a service extension) as the CLI offers it: the
 * flags of every field, read and checked before anything is packed or sent, shared by
 * `proving submit` (PIE, program + input, or program hash) and `proving prove` (PIEs, where a
 * general flag such as --bucket-id switches from the L2 endpoint to the general submission).
 */
import type { SubmitQueryOptions } from '../clients/proving.ts'
import { checkOpenEnum } from '../core/checks.ts'
import { InvalidInputError } from '../core/errors.ts'
import {
  CAIRO_VERSIONS,
  CAIRO_VMS,
  HINTS,
  JOB_SIZES,
  type JobSize,
  NETWORKS,
  RESULTS,
  SHARP_PROVERS,
} from '../schemas/proving-constants.ts'
import { type CommandContext, type OptionSpecs, parseInteger } from './context.ts'

/** Flags of the general submission's fields (the source of the program aside). */
export const GENERAL_FIELD_OPTIONS = {
  result: {
    type: 'string',
    valueName: '<kind>',
    description: `What the query is for: ${RESULTS.join(', ')}.`,
  },
  'cairo-version': {
    type: 'string',
    valueName: '<cairo0|cairo1>',
    description: 'Cairo version of the program (default cairo0).',
  },
  'cairo-vm': { type: 'string', valueName: '<rust|python>', description: 'Cairo VM that runs it (default rust).' },
  network: {
    type: 'string',
    valueName: '<TESTNET|MAINNET>',
    description: 'Network the proof is verified for (default TESTNET).',
  },
  'declared-job-size': {
    type: 'string',
    valueName: '<XS|S|M|L>',
    description: "Declared job size (default: from the PIE's n_steps; XS without a PIE). Too small fails the job.",
  },
  'external-id': { type: 'string', valueName: '<id>', description: 'Your own identifier for the query (searchable).' },
  'dedup-id': {
    type: 'string',
    valueName: '<id>',
    description:
      'Idempotency id: the same id never creates a second query (default: derived from the files and fields).',
  },
  hints: { type: 'string', valueName: '<name>', description: `Hints: ${HINTS.join(', ')}.` },
  'sharp-prover': { type: 'string', valueName: '<stone|stwo>', description: 'SHARP prover to use.' },
  'bucket-id': {
    type: 'string',
    valueName: '<id>',
    description: 'Add the query to this OPEN bucket (`proving bucket create`).',
  },
  'bucket-job-index': {
    type: 'string',
    valueName: '<n>',
    description: 'Index of the query in the bucket, from 0 (default: the next free one).',
  },
} as const satisfies OptionSpecs

/** The fields as the client takes them, the source and the signal aside. */
export type GeneralFields = Omit<
  SubmitQueryOptions,
  'pieZip' | 'programFile' | 'inputFile' | 'programHash' | 'signal' | 'declaredJobSize'
> & {
  declaredJobSize?: JobSize | undefined
}

/** Whether any flag of the general submission was given (so `prove` uses POST /proving-query). */
export function hasGeneralFields(context: CommandContext<typeof GENERAL_FIELD_OPTIONS>): boolean {
  return (Object.keys(GENERAL_FIELD_OPTIONS) as (keyof typeof GENERAL_FIELD_OPTIONS)[]).some(
    (name) => context.values[name] !== undefined,
  )
}

/** Reads and checks every general flag; every problem is an InvalidInputError naming its flag. */
export function readGeneralFields(
  context: CommandContext<typeof GENERAL_FIELD_OPTIONS>,
  defaults: { result?: string } = {},
): GeneralFields {
  const text = (name: keyof typeof GENERAL_FIELD_OPTIONS) => {
    const value = context.values[name]?.trim()
    if (value === '')
      throw new InvalidInputError(`--${name} must not be empty; omit it for the default.`, { input: `--${name}` })
    return value
  }
  const bucketJobIndex = text('bucket-job-index')
  const bucketId = text('bucket-id')
  if (bucketJobIndex !== undefined && bucketId === undefined) {
    throw new InvalidInputError('--bucket-job-index needs --bucket-id: the index is a position in that bucket.', {
      input: '--bucket-job-index',
    })
  }
  const externalId = text('external-id')
  const dedupId = text('dedup-id')
  if (dedupId !== undefined && dedupId.length > 128) {
    throw new InvalidInputError('--dedup-id is longer than 128 characters; use a shorter identifier.', {
      input: '--dedup-id',
    })
  }
  return {
    result: flagEnum(text('result') ?? defaults.result, 'result', RESULTS),
    cairoVersion: flagEnum(text('cairo-version'), 'cairo-version', CAIRO_VERSIONS),
    cairoVm: flagEnum(text('cairo-vm'), 'cairo-vm', CAIRO_VMS),
    network: flagEnum(text('network')?.toUpperCase(), 'network', NETWORKS),
    declaredJobSize: flagEnum(text('declared-job-size')?.toUpperCase(), 'declared-job-size', JOB_SIZES),
    externalId,
    dedupId,
    // Open lists: a newer hint or prover is sent as given, with a warning (production.md).
    hints: openFlag(context, text('hints'), 'hints', HINTS),
    sharpProver: openFlag(context, text('sharp-prover'), 'sharp-prover', SHARP_PROVERS),
    bucketId,
    bucketJobIndex:
      bucketJobIndex === undefined ? undefined : parseInteger(bucketJobIndex, 'bucket-job-index', 0, 2_147_483_647),
  }
}

/**
 * Cross-field checks the service would refuse anyway, refused here before any upload: cairo1
 * runs on the rust VM; an input file goes with cairo1 on rust or cairo0 on python.
 */
export function checkCombination(fields: GeneralFields, source: { hasInput: boolean }): void {
  if (fields.cairoVersion === 'cairo1' && fields.cairoVm === 'python') {
    throw new InvalidInputError('--cairo-version cairo1 runs on the rust VM only: drop --cairo-vm python.', {
      input: '--cairo-vm',
    })
  }
  if (source.hasInput && (fields.cairoVersion ?? 'cairo0') === 'cairo0' && (fields.cairoVm ?? 'rust') === 'rust') {
    throw new InvalidInputError(
      '--program-input is not supported for cairo0 on the rust VM: pass --cairo-version cairo1 (input.txt) or --cairo-vm python (input JSON).',
      { input: '--program-input' },
    )
  }
}

function openFlag(
  context: CommandContext,
  value: string | undefined,
  flag: string,
  known: readonly string[],
): string | undefined {
  return value === undefined ? undefined : checkOpenEnum(value, `--${flag}`, known, context.logger)
}

function flagEnum<T extends string>(value: string | undefined, flag: string, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined
  if (!(allowed as readonly string[]).includes(value)) {
    throw new InvalidInputError(`--${flag} must be one of ${allowed.join(', ')}; got ${JSON.stringify(value)}.`, {
      input: `--${flag}`,
    })
  }
  return value as T
}
