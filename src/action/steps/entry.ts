/**
 * How a bundle runs a step: the runner's I/O, SIGINT/SIGTERM turned into an abort, and a bounded
 * exit. The runner cancels a step with SIGINT and follows with SIGTERM 7.5 s later (then kills):
 * on the first signal the wait stops and the step writes its outputs and summary, and the
 * process exits within 4 s whatever is still pending; a second signal exits at once.
 */
import { coreIO } from './io.ts'
import { closeClient } from './lazy.ts'
import type { ActionIO, RunOptions } from '../types.ts'

const GRACE_MS = 4_000

export async function runEntry(run: (io: ActionIO, options: RunOptions) => Promise<void>): Promise<void> {
  const io = coreIO()
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      process.exit(1)
    }
    io.info(`Received ${signal}: stopping, writing the outputs and the summary.`)
    controller.abort(new Error(`received ${signal}`))
    setTimeout(() => process.exit(1), GRACE_MS).unref()
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    await run(io, { signal: controller.signal })
  } catch (error) {
    // run() reports its own failures; this is a bug, still reported as a failure.
    io.setFailed(`Unexpected failure: ${error instanceof Error ? error.message : String(error)}`)
  }
  if (controller.signal.aborted) process.exitCode = 1
  await closeClient().catch(() => {})
  // Nothing is pending now; idle sockets or a stray timer must not hold the step open.
  setTimeout(() => process.exit(), 1_000).unref()
}
