/**
 * The action's steps, by the name of their entry: `dist/<name>/index.js` is what an action.yml's
 * `runs.main` or `runs.post` points at (`main` is the root action's step, `post` the post step
 * of the root, `wait`, `verify-proof` and `retry`; every other name is its sub-action's folder).
 * A plain list, read by ./index.ts and by scripts/build-dist.ts.
 */
export const ACTION_NAMES = [
  'main',
  'post',
  'pack',
  'wait',
  'verify-proof',
  'retry',
  'bucket-close',
  'bucket-create',
  'task',
  'decommit',
  'storage-query',
  'api-key',
] as const

export type ActionName = (typeof ACTION_NAMES)[number]
