import { runEntry } from '../entry.ts'
import { run } from '../verify-proof.ts'

await runEntry(run)
