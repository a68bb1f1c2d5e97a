import { runEntry } from '../entry.ts'
import { run } from '../api-key.ts'

await runEntry(run)
