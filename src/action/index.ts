/**
 * The one entry of the action's bundle (`dist/index.js`): every step of every action runs
 * through `runAction(name)`. An action.yml's `runs.main` / `runs.post` is a two-line file,
 * `dist/<name>/index.js` (written by scripts/build-dist.ts), that imports the bundle and calls
 * it with its name.
 *
 * Each action's module is a dynamic import, so ncc gives it (and whatever only it uses) chunks
 * of their own, read only by the step that runs it; what the actions share is on disk once.
 * This file itself holds only what every step needs: @actions/core, the signal handling and
 * the exit (./steps/entry.ts).
 */
import { runEntry } from './steps/entry.ts'
import type { ActionName } from './names.ts'
import type { ActionModule } from './types.ts'

const ACTIONS: Record<ActionName, () => Promise<ActionModule>> = {
  main: () => import('./actions/main.ts'),
  post: () => import('./actions/post.ts'),
  pack: () => import('./actions/pack.ts'),
  wait: () => import('./actions/wait.ts'),
  'verify-proof': () => import('./actions/verify-proof.ts'),
  retry: () => import('./actions/retry.ts'),
  'bucket-close': () => import('./actions/bucket-close.ts'),
  'bucket-create': () => import('./actions/bucket-create.ts'),
  task: () => import('./actions/task.ts'),
  decommit: () => import('./actions/decommit.ts'),
  'storage-query': () => import('./actions/storage-query.ts'),
  'api-key': () => import('./actions/api-key.ts'),
}

export async function runAction(name: ActionName): Promise<void> {
  const load = Object.hasOwn(ACTIONS, name) ? ACTIONS[name] : undefined
  if (!load) {
    // Only a hand-edited entry gets here: the generated ones name actions of this table.
    console.log(`::error::proving-kit has no action named ${JSON.stringify(name)}.`)
    process.exitCode = 1
    return
  }
  await runEntry(async (io, options) => (await load()).run(io, options))
}
