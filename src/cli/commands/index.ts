import type { CommandSpec } from '../context.ts'
import { bucketClose, bucketCreate, bucketGet } from './bucket.ts'
import { emulator } from './emulator.ts'
import { prove, verifyProof } from './prove.ts'
import { queryGet, queryList, queryRetry, queryWait } from './query.ts'

/** Every `proving` command; main.ts dispatches on the longest matching path. */
export const COMMANDS: CommandSpec[] = [
  prove,
  verifyProof,
  queryGet,
  queryWait,
  queryRetry,
  queryList,
  bucketCreate,
  bucketClose,
  bucketGet,
  emulator,
]
