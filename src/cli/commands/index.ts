import type { CommandSpec } from '../context.ts'
import { bucketClose, bucketCreate, bucketGet } from './bucket.ts'
import { emulator } from './emulator.ts'
import { factCheck } from './fact.ts'
import { inspect, pack, validate } from './pie.ts'
import { prove } from './prove.ts'
import { verifyProof } from './verify-proof.ts'
import { queryDownload, queryGet, queryList, queryRetry, queryWait } from './query.ts'
import { submit } from './submit.ts'
import { journalClear, journalList } from './journal.ts'
import { configPathCommand, configShow } from './config.ts'
import { completionCommand } from './completion.ts'
import { storageQuery, storageStatus } from './storage.ts'
import { authKeysCreate, authKeysList, authKeysRevoke, authLogin } from './auth.ts'
import { TASK_COMMANDS } from './task.ts'

/** Every `proving` command; main.ts dispatches on the longest matching path. */
export const COMMANDS: CommandSpec[] = [
  validate,
  pack,
  inspect,
  prove,
  submit,
  verifyProof,
  queryGet,
  queryWait,
  queryRetry,
  queryList,
  queryDownload,
  bucketCreate,
  bucketClose,
  bucketGet,
  storageQuery,
  storageStatus,
  authLogin,
  authKeysCreate,
  authKeysList,
  authKeysRevoke,
  ...TASK_COMMANDS,
  factCheck,
  journalList,
  journalClear,
  configShow,
  configPathCommand,
  emulator,
  completionCommand(() => COMMANDS),
]
