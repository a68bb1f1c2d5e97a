import { runEntry } from '../entry.ts'
import { run } from '../main.ts'

await runEntry(run)
