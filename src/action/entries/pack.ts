import { runEntry } from '../entry.ts'
import { run } from '../pack.ts'

await runEntry(run)
