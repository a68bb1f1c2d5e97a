/**
 * The job size the proving service expects for a number of Cairo steps: up to
 * 6.5M steps XS, up to 13M S, up to 30M M, above that L. Declaring less fails the job.
 */
import type { JobSize } from '../../schemas/proving-constants.ts'

/**
 * The job size the proving service expects for a number of Cairo steps: XS up to 6,500,000, S up
 * to 13,000,000, M up to 30,000,000, L above.
 *
 * @param nSteps The run's steps.
 * @returns One of `JOB_SIZES`.
 * @example
 * ```ts
 * import { jobSizeForSteps } from 'proving-kit'
 *
 * jobSizeForSteps(10_000_000) // 'S'
 * ```
 */
export function jobSizeForSteps(nSteps: number): JobSize {
  if (nSteps <= 6_500_000) return 'XS'
  if (nSteps <= 13_000_000) return 'S'
  if (nSteps <= 30_000_000) return 'M'
  return 'L'
}
