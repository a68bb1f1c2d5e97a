#!/usr/bin/env node
import { enableCompileCache } from './compile-cache.ts'

// Before the CLI's modules load (hence the dynamic imports): they are compiled from the cache.
enableCompileCache()
const [{ closeDefaultDispatcher }, { closeDeflatePools }, { main }] = await Promise.all([
  import('../core/http.ts'),
  import('../pie/pack/index.ts'),
  import('./main.ts'),
])

/** How long the process may outlive its command's work before it is made to exit. */
const EXIT_GRACE_MS = 5_000

const code = await main(process.argv.slice(2))
// No `process.exit` while worker threads or sockets live: exiting with a deflate worker (or a
// V8 helper thread it keeps busy) running can hang in Node's shutdown for good
// (nodejs/node#54918; `proving pack` hung once in ~100 runs). The pools' workers and the shared
// agent's keep-alive sockets are ended first, then the process ends on its own with the code.
await Promise.all([closeDeflatePools(), closeDefaultDispatcher()])
process.exitCode = code
// The last resort, for a handle this code does not know of (a library's timer, a stray socket):
// unref'd, it never holds the process itself, and fires only if something else still does five
// seconds after the command's work is done. A hang there costs a CI job its whole time limit.
setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref()
