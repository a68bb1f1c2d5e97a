import { runEntry } from '../entry.ts'
import { run } from '../task.ts'

await runEntry(run)
