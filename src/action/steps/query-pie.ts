/**
 * The PIE side of a query step, shared by the root action and `wait/` (given `pie`): prepare
 * the pie.zip (a directory is packed into RUNNER_TEMP, then the zip is validated and, for the
 * fact check, inspected) and set its outputs; after DONE, check the facts the service reports
 * against what the PIE gives. The PIE toolkit loads here, on first use.
 */
import { randomUUID } from 'node:crypto'
import { tmpdir } from 'node:os'
import { isAbsolute, join, relative, resolve } from 'node:path'
import type { Judgement } from '../../pipeline/statement/index.ts'
import type { PreparedPie } from '../../pipeline/prepared-pie.ts'
import type { QueryStep } from './query-step.ts'
import type { ActionIO } from '../types.ts'
import { showValue } from '../../pipeline/gate.ts'

/** Packs (a directory), validates and, with `inspect`, inspects the PIE; sets `pie-zip`, `pie-sha256` and the local `program-hash`. */
export async function preparePieForStep(
  io: ActionIO,
  step: QueryStep,
  path: string,
  options: { signal: AbortSignal; inspect: boolean },
): Promise<PreparedPie> {
  const { preparePie } = await import('../../pipeline/prepared-pie.ts')
  io.startGroup('Preparing the PIE')
  let pie: PreparedPie
  const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
  try {
    pie = await preparePie(resolve(workspace, path), {
      inputName: 'pie',
      signal: options.signal,
      onProgress: (line) => io.info(line),
      // Kept after the step (the runner empties RUNNER_TEMP after the job): `pie-zip` stays usable.
      packDir: join(io.env.RUNNER_TEMP || tmpdir(), 'proving-kit', randomUUID()),
      inspect: options.inspect,
    })
  } finally {
    io.endGroup()
  }
  step.pie = { zipPath: pie.zipPath, sha256: pie.sha256, shown: shownPath(workspace, path, pie.packed) }
  step.outputs.set({ 'pie-zip': pie.zipPath, 'pie-sha256': pie.sha256 })
  if (pie.inspection) {
    step.localProgramHash = pie.inspection.programHash
    step.outputs.set({ 'program-hash': pie.inspection.programHash })
  }
  return pie
}

/**
 * What the judgement found of the facts, logged and noted for the summary: compared (each
 * difference an error line), none due (a trace), or not compared and why, in the action's words.
 */
export function showFacts(
  io: ActionIO,
  step: QueryStep,
  judgement: Judgement,
  options: { expectedLabel: string; noPie: string },
): void {
  const result = judgement.factCheck
  const record = judgement.result.provingQuery
  step.outputs.set({ 'facts-verified': String(result?.ok === true) })
  if (result) {
    step.facts = { kind: 'checked', result }
    if (result.ok) {
      io.info(`Facts checked locally: ${result.checked.join(', ') || 'nothing reported'} equal what the PIE gives.`)
      return
    }
    if (result.mismatches.length === 0)
      io.error(
        'The service reported no fact to compare with the PIE (sharpFactHash and integrityFactHash are null or absent).',
      )
    for (const mismatch of result.mismatches) {
      io.error(
        `${mismatch.field} differs: the service says ${showValue(mismatch.actual)}, the PIE gives ${mismatch.expected}.`,
      )
    }
    return
  }
  if (judgement.facts === 'none') {
    step.facts = {
      kind: 'skipped',
      reason: `a ${options.expectedLabel} query generates a trace, not a proof: it has no fact`,
    }
    io.info(`No fact to check: a ${options.expectedLabel} query generates a trace, not a proof.`)
    return
  }
  const reason =
    record.status !== 'DONE' ? `the query is ${record.status}` : step.pie ? '`verify-facts` is false' : options.noPie
  step.facts = { kind: 'skipped', reason }
}

/**
 * The `pie` input as a list: one path, several (one per line), or globs (`build/**\/pie.zip`),
 * relative to the workspace; each pattern must match something. Returned relative as given
 * (globs: as matched, sorted).
 */
export async function expandPieInput(io: ActionIO, text: string): Promise<string[]> {
  const { expandPieArguments } = await import('../../pipeline/pie-list.ts')
  const items = text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean)
  const workspace = io.env.GITHUB_WORKSPACE || process.cwd()
  return expandPieArguments(
    items.map((item) => resolve(workspace, item)),
    'pie',
  )
}

/**
 * The PIE as the summary names it: relative to the workspace, as a workflow writes it
 * (`build/pie.zip`; a directory: `build/pie (packed)`), not the runner's absolute path; one
 * outside the workspace keeps its absolute path.
 */
export function shownPath(workspace: string, given: string, packed: boolean): string {
  const absolute = resolve(workspace, given)
  const inside = relative(resolve(workspace), absolute)
  const shown = inside && !inside.startsWith('..') && !isAbsolute(inside) ? inside : absolute
  return packed ? `${shown} (packed)` : shown
}
