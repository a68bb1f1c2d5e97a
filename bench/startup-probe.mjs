// Preloaded with `node --import ./bench/startup-probe.mjs <bundle>` by figure 3 (a separate,
// unmeasured run): records every module file the process loads and whether anything turned on
// source maps, and writes it as JSON to $STARTUP_PROBE_OUT when the process exits.
import { registerHooks } from 'node:module'
import { writeFileSync } from 'node:fs'
import * as nodeModule from 'node:module'

const loaded = []
const initialPrepareStackTrace = Error.prepareStackTrace
registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith('file:')) loaded.push(url)
    return nextLoad(url, context)
  },
})

const sourceMapCalls = []
const originalSet = process.setSourceMapsEnabled?.bind(process)
if (originalSet) {
  process.setSourceMapsEnabled = (enabled) => {
    sourceMapCalls.push(`process.setSourceMapsEnabled(${enabled})`)
    return originalSet(enabled)
  }
}
// The CommonJS loader, for bundles that require() files (ESM imports go through the hook).
const originalRequireLoad = nodeModule.Module?._load
if (originalRequireLoad) {
  nodeModule.Module._load = function (request, parent, isMain) {
    if (request.startsWith('.') || request.startsWith('/')) {
      try {
        loaded.push(`require:${nodeModule.Module._resolveFilename(request, parent, isMain)}`)
      } catch {
        // unresolvable: the real call reports it
      }
    }
    return originalRequireLoad.call(this, request, parent, isMain)
  }
}

process.on('exit', () => {
  writeFileSync(
    process.env.STARTUP_PROBE_OUT,
    JSON.stringify({
      loaded,
      sourceMapCalls,
      sourceMapsEnabled: process.sourceMapsEnabled ?? null,
      prepareStackTraceReplaced: Error.prepareStackTrace !== initialPrepareStackTrace,
      execArgv: process.execArgv,
    }),
  )
})
