import { runEntry } from '../entry.ts'
import { run } from '../decommit.ts'

await runEntry(run)
