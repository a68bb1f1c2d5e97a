import { formatBytes, preparePie, type PreparedPie } from '../pipeline/prepared-pie.ts'
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

export { formatBytes }
