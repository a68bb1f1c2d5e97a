/**
 * The release gate: whether a finished query is a result a release may rely on. Pure: it judges
 * the record the service returned (and the local fact check, when one was made) and lists every
 * reason to refuse, so a host can show them all at once.
 */
import { serviceLine } from '../core/service-text.ts'
import type { FactCheckResult } from '../pie/index.ts'

export type GateOptions = {
  /** A mocked fact (no real on-chain verification) passes only when allowed. */
  allowMockedFact: boolean
  /** The program hash the query must have proved (0x hex); any value when absent. */
  expectedProgramHash?: string | undefined
}

export type GateRecord = {
  status: string
  programHash?: string | null | undefined
  isFactMocked?: boolean | null | undefined
  errorReason?: string | null | undefined
}

export type GateRefusal = {
  kind: 'failed' | 'not-done' | 'mocked-fact' | 'program-hash' | 'fact-mismatch' | 'not-on-chain'
  message: string
}

export function evaluateGate(
  record: GateRecord,
  factCheck: FactCheckResult | undefined,
  options: GateOptions,
): GateRefusal[] {
  if (record.status === 'FAILED') {
    return [
      {
        kind: 'failed',
        // The service's reason is data: one line, whatever it holds (core/service-text.ts).
        message: `The query FAILED: ${serviceLine(record.errorReason?.trim() || 'the service gave no reason')}.`,
      },
    ]
  }
  if (record.status !== 'DONE') {
    return [{ kind: 'not-done', message: `The query is ${serviceLine(record.status, 200)}, not DONE.` }]
  }
  const refusals: GateRefusal[] = []
  if (record.isFactMocked === true && !options.allowMockedFact) {
    refusals.push({
      kind: 'mocked-fact',
      message: 'The fact is mocked: nothing was verified on chain, and `allow-mocked-fact` is false.',
    })
  }
  if (options.expectedProgramHash !== undefined) {
    const reported = record.programHash
    if (!reported) {
      refusals.push({
        kind: 'program-hash',
        message: `The service reported no program hash, so it cannot be checked against the expected ${options.expectedProgramHash}.`,
      })
    } else if (!sameFelt(reported, options.expectedProgramHash)) {
      refusals.push({
        kind: 'program-hash',
        message: `The program hash is ${reported}, not the expected ${options.expectedProgramHash}.`,
      })
    }
  }
  if (factCheck && !factCheck.ok) {
    const lines = factCheck.mismatches.map(
      (mismatch) => `${mismatch.field}: the service says ${mismatch.actual}, the PIE gives ${mismatch.expected}`,
    )
    refusals.push({
      kind: 'fact-mismatch',
      message: `What the service says it proved differs from the PIE: ${lines.join('; ')}.`,
    })
  }
  return refusals
}

/** Two hashes as field elements: case and leading zeros do not matter. */
export function sameFelt(a: string, b: string): boolean {
  const parse = (text: string) => {
    const trimmed = text.trim()
    if (!/^(0x[0-9a-fA-F]+|\d+)$/.test(trimmed)) return undefined
    return BigInt(trimmed)
  }
  const left = parse(a)
  const right = parse(b)
  return left !== undefined && left === right
}
