import { runEntry } from '../entry.ts'
import { run } from '../post.ts'

await runEntry(run)
