import { runEntry } from '../entry.ts'
import { run } from '../retry.ts'

await runEntry(run)
