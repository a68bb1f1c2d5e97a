import { runEntry } from '../entry.ts'
import { run } from '../wait.ts'

await runEntry(run)
