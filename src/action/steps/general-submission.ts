/**
 * The root action's general submission (POST /proving-query): which inputs switch to it, the
 * fields it sends, and the default `dedup-id`, derived from where the step runs and what it
 * proves so that a re-run of the same job (a new run attempt) finds the query it already paid
 * for instead of paying twice, while another job, workflow, run or PIE gets its own.
 */
import { createHash } from 'node:crypto'
import type { SubmitQueryOptions } from '../../clients/proving.ts'
import type { ResultKind } from '../../schemas/proving-constants.ts'
import type { GENERAL_INPUTS } from './inputs.ts'
import type { InputValues } from '../types.ts'

type GeneralValues = Partial<InputValues<typeof GENERAL_INPUTS>>

/** Inputs that only the general submission has: any of them sends the query through it. */
export const GENERAL_ONLY = [
  'result',
  'cairo-version',
  'cairo-vm',
  'program',
  'program-input',
  'program-hash',
  'network',
  'declared-job-size',
  'external-id',
  'dedup-id',
  'hints',
  'sharp-prover',
  'bucket-id',
  'bucket-job-index',
] as const satisfies readonly (keyof typeof GENERAL_INPUTS)[]

export function usesGeneralSubmission(values: GeneralValues): boolean {
  return GENERAL_ONLY.some((name) => values[name] !== undefined)
}

/** The result a query sent through the general submission targets when `result` is omitted. */
export function defaultResult(values: GeneralValues): ResultKind {
  // In a bucket, the proof is verified with the bucket's aggregate; alone, on L2 like the L2 endpoint.
  return values['bucket-id'] !== undefined ? 'PROOF_GENERATION' : 'PROOF_VERIFICATION_ON_L2'
}

/** The fields, the source (pie, program or hash) and the job size aside. */
export function generalFields(
  values: GeneralValues,
): Omit<SubmitQueryOptions, 'declaredJobSize' | 'signal'> & { hints?: string | undefined } {
  return {
    result: values.result ?? defaultResult(values),
    cairoVersion: values['cairo-version'],
    cairoVm: values['cairo-vm'],
    network: values.network,
    externalId: values['external-id'],
    hints: values.hints,
    sharpProver: values['sharp-prover'],
    bucketId: values['bucket-id'],
    bucketJobIndex: values['bucket-job-index'],
  }
}

/**
 * `gh-` and 40 hex digits of SHA-256 over the repository, workflow, run id, job and what is
 * proved (the PIE's digest, or the program's, or the program hash) with the fields. The run
 * attempt is left out on purpose: "Re-run jobs" gives the same id, so the service keeps one
 * query. A matrix proves different PIEs (different digests) or is told apart by `external-id`.
 */
export function deriveActionDedupId(
  env: Record<string, string | undefined>,
  subject: string,
  fields: Record<string, unknown>,
): string {
  const where = ['GITHUB_REPOSITORY', 'GITHUB_WORKFLOW', 'GITHUB_RUN_ID', 'GITHUB_JOB'].map(
    (name) => `${name}=${env[name] ?? ''}`,
  )
  const what = Object.keys(fields)
    .filter((key) => fields[key] !== undefined)
    .sort()
    .map((key) => `${key}=${String(fields[key])}`)
  return `gh-${createHash('sha256')
    .update([...where, `subject=${subject}`, ...what].join('\n'))
    .digest('hex')
    .slice(0, 40)}`
}
