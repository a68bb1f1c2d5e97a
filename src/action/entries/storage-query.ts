import { runEntry } from '../entry.ts'
import { run } from '../storage-query.ts'

await runEntry(run)
