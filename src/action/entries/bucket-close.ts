import { runEntry } from '../entry.ts'
import { run } from '../bucket-close.ts'

await runEntry(run)
