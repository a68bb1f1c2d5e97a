/**
 * The job size the proving service expects for a number of Cairo steps: up to
 * 6.5M steps XS, up to 13M S, up to 30M M, above that L. Declaring less fails the job.
 */
import type { JobSize } from '../../schemas/proving-constants.ts'

export function jobSizeForSteps(nSteps: number): JobSize {
  if (nSteps <= 6_500_000) return 'XS'
  if (nSteps <= 13_000_000) return 'S'
  if (nSteps <= 30_000_000) return 'M'
  return 'L'
}
