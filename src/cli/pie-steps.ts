import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { QueryResult } from '../clients/proving.ts'
import { InvalidInputError, InvalidPieError } from '../core/errors.ts'
import type { CommandContext } from './context.ts'

export type PreparedPie = {
  /** The pie.zip to upload (packed into a temporary folder when a directory was given). */
  zipPath: string
  /** Removes what was packed for the upload. */
  cleanup: () => Promise<void>
}

/** Packs a PIE directory, then validates the zip: a broken PIE is never uploaded. */
export async function preparePieForUpload(context: CommandContext, path: string): Promise<PreparedPie> {
  let info
  try {
    info = await stat(path)
  } catch {
    throw new InvalidInputError(`<pie>: nothing at ${path}; give a pie.zip or a PIE directory.`, { input: '<pie>' })
  }
  const pie = await import('../pie/index.ts')
  let zipPath = path
  let cleanup = async () => {}
  if (info.isDirectory()) {
    const folder = await mkdtemp(join(tmpdir(), 'proving-pack-'))
    cleanup = () => rm(folder, { recursive: true, force: true })
    zipPath = join(folder, 'pie.zip')
    const packed = await pie.packPie(path, zipPath, { signal: context.signal })
    context.progress(`Packed ${path} into a ${formatBytes(packed.sizeBytes)} pie.zip (sha256 ${packed.sha256}).`)
  } else if (!info.isFile()) {
    throw new InvalidInputError(`<pie>: ${path} is neither a file nor a directory; give a pie.zip or a PIE directory.`, {
      input: '<pie>',
    })
  }
  const validation = await pie.validatePie(zipPath)
  if (!validation.valid) {
    await cleanup()
    throw new InvalidPieError(`${path} is not a valid Cairo PIE (${validation.problems.length} problem(s)); nothing was uploaded.`, {
      input: '<pie>',
      problems: validation.problems,
    })
  }
  context.progress(`Validated ${path}.`)
  return { zipPath, cleanup }
}

export type FactCheckOutcome = { ok: boolean; summary: unknown }

/** After DONE: the program hash and facts the service reports against the local computation. */
export async function checkFactsAfterWait(
  context: CommandContext,
  result: QueryResult,
  prepared: PreparedPie,
): Promise<FactCheckOutcome> {
  const pie = await import('../pie/index.ts')
  const check = await pie.checkQueryFacts(result.provingQuery, prepared.zipPath)
  if (check.ok) {
    context.progress(
      `Facts checked locally: program hash matches (${check.programHashVariant}), ${check.checked.join(', ')} equal.`,
    )
  } else {
    for (const mismatch of check.mismatches) {
      context.io.stderr(
        `proving: ${mismatch.field} differs: the service says ${mismatch.actual}, the PIE gives ${mismatch.expected}.\n`,
      )
    }
  }
  return { ok: check.ok, summary: check }
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`
}
