import { InvalidInputError } from '../core/errors.ts'
import type { BooleanOption, CommandContext, SERVICE_OPTIONS } from './context.ts'

export type LocalService = { baseUrl?: string; apiKey?: string }

/**
 * With `--emulator`, runs the command against a built-in emulator started in this process and
 * stopped afterwards; the emulator module is loaded only then.
 */
export async function withLocalEmulator(
  context: CommandContext<typeof SERVICE_OPTIONS & { emulator: BooleanOption; wait: BooleanOption }>,
  run: (service: LocalService) => Promise<number>,
): Promise<number> {
  if (!context.values.emulator) return run({})
  const given = context.values['base-url']
  // Only an address given on the command line conflicts; a variable's or a profile's is set-up.
  const { activeProfile } = await import('./profiles.ts')
  if (
    given &&
    context.io.env.PROVING_BASE_URL !== given &&
    (await activeProfile(context.values.profile, context.io.env))?.profile.baseUrl !== given
  ) {
    throw new InvalidInputError('--emulator and --base-url exclude each other: drop one of them.', {
      input: '--emulator',
    })
  }
  const { startEmulator } = await import('../emulator/index.ts')
  const emulator = await startEmulator({ logger: context.logger })
  context.progress(`Emulator running at ${emulator.url}`)
  // A plan (--dry-run) creates no query: nothing to follow.
  if (context.values.wait !== true && (context.values as { 'dry-run'?: boolean })['dry-run'] !== true) {
    context.progress('Note: without --wait nothing can follow the query: the emulator stops when this command ends.')
  }
  try {
    return await run({ baseUrl: emulator.url, apiKey: context.values['api-key'] || 'emulator-local-key' })
  } finally {
    await emulator.close()
  }
}
