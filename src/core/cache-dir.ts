import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * The user's cache folder for proving-kit (`sub` inside it), as each system names it:
 * %LOCALAPPDATA% on Windows, ~/Library/Caches on macOS, $XDG_CACHE_HOME or ~/.cache elsewhere.
 * What a run keeps for the next: the submission journal, the CLI's compiled modules.
 */
export function userCacheDir(env: Record<string, string | undefined>, sub: string): string {
  if (process.platform === 'win32' && env.LOCALAPPDATA) return join(env.LOCALAPPDATA, 'proving-kit', sub)
  if (process.platform === 'darwin') return join(env.HOME ?? homedir(), 'Library', 'Caches', 'proving-kit', sub)
  return join(env.XDG_CACHE_HOME || join(env.HOME ?? homedir(), '.cache'), 'proving-kit', sub)
}
