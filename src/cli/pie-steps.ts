import type { QueryResult } from '../clients/proving.ts'
import type { FactCheckResult } from '../pie/index.ts'
import { showValue } from '../pipeline/gate.ts'
import { computeFactsAhead, formatBytes, preparePie, type PreparedPie } from '../pipeline/prove.ts'
import type { CommandContext } from './context.ts'

export type { PreparedPie }

/** Packs a PIE directory, then validates the zip: a broken PIE is never uploaded. */
export async function preparePieForUpload(
  context: CommandContext,
  path: string,
  options: { inspect?: boolean; quiet?: boolean } = {},
): Promise<PreparedPie> {
  return preparePie(path, {
    inputName: '<pie>',
    signal: context.signal,
    onProgress: options.quiet ? undefined : context.progress,
    inspect: options.inspect,
  })
}

export type FactCheckOutcome = { ok: boolean; summary: unknown; check: FactCheckResult }

/** After DONE: the program hash and facts the service reports against the local computation. */
export async function checkFactsAfterWait(
  context: CommandContext,
  result: QueryResult,
  prepared: PreparedPie,
): Promise<FactCheckOutcome> {
  const { checkFacts } = await import('../pipeline/prove.ts')
  const check = await checkFacts(result.provingQuery, prepared)
  if (check.ok) {
    const program = check.checked.includes('programHash') ? `program hash matches (${check.programHashVariant}), ` : ''
    context.progress(`Facts checked locally: ${program}${check.checked.filter((field) => field !== 'programHash').join(', ')} equal.`)
  } else {
    if (check.mismatches.length === 0) context.io.stderr('proving: the service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent).\n')
    for (const mismatch of check.mismatches) {
      context.io.stderr(
        `proving: ${mismatch.field} differs: the service says ${showValue(mismatch.actual)}, the PIE gives ${mismatch.expected}.\n`,
      )
    }
  }
  return { ok: check.ok, summary: check, check }
}

export { computeFactsAhead, formatBytes }
