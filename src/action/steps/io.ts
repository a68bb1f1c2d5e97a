/**
 * The action's only contact with the runner. Every `run()` takes an `ActionIO`, so tests drive
 * it with a recording fake and the bundle drives it with @actions/core (`coreIO`). Every text
 * that leaves through it (logs, failure message, outputs, state, summary) is scrubbed of the
 * secrets registered with `setSecret` first, in every written form (core/redact.ts: percent-encoded,
 * JSON-escaped, base64): the runner masks them in logs too, but outputs, state and summary files
 * are ours to keep clean. Every log line, annotation and failure message
 * is also made safe for the runner's log (../../core/service-text.ts `forLog`): text a service
 * sent can never become a workflow command or a terminal escape, whichever call site logs it.
 */
import * as core from '@actions/core'
import { redact, SecretRedactor, secretForms } from '../../core/redact.ts'
import { forLog } from '../../core/service-text.ts'
import type { Logger } from '../../core/runtime.ts'
import type { ActionIO } from '../types.ts'

/** The runner, through @actions/core. */
export function coreIO(): ActionIO {
  const redactor = new SecretRedactor()
  const scrub = (text: string) => redact(text, redactor)
  const logLine = (text: string) => forLog(scrub(text))
  // The runner masks exact strings in the log: it is told every written form of the secret
  // (percent-encoded, JSON-escaped, base64); our own scrub matches them as patterns.
  const mask = (value: string) => {
    core.setSecret(value)
    for (const form of secretForms(value)) if (form !== value) core.setSecret(form)
    redactor.add(value)
  }
  return {
    getInput: (name) => core.getInput(name),
    setOutput: (name, value, options) => {
      if (options?.secret) {
        mask(value)
        core.setOutput(name, value)
        return
      }
      core.setOutput(name, scrub(value))
    },
    setSecret: (value) => {
      if (value) mask(value)
    },
    saveState: (name, value) => core.saveState(name, scrub(value)),
    getState: (name) => core.getState(name),
    debug: (message) => core.debug(logLine(message)),
    info: (message) => core.info(logLine(message)),
    warning: (message) => core.warning(logLine(message)),
    notice: (message) => core.notice(logLine(message)),
    error: (message) => core.error(logLine(message)),
    startGroup: (name) => core.startGroup(logLine(name)),
    endGroup: () => core.endGroup(),
    appendSummary: async (markdown) => {
      if (!process.env.GITHUB_STEP_SUMMARY) return
      await core.summary.addRaw(scrub(markdown), true).write()
      core.summary.emptyBuffer()
    },
    scrub,
    setFailed: (message) => core.setFailed(logLine(message)),
    env: process.env,
  }
}

/** The core library's Logger over the action's log: debug lines go to the runner's debug log. */
export function loggerFor(io: ActionIO): Logger {
  return {
    debug: (message) => io.debug(message),
    info: (message) => io.info(message),
    warn: (message) => io.warning(message),
    error: (message) => io.error(message),
  }
}

/**
 * Appends to the job summary. A summary that cannot be written only warns: the step must still
 * end as it should, since its outputs and failure message are what the next steps go by.
 */
export async function writeSummary(io: ActionIO, markdown: string): Promise<void> {
  try {
    await io.appendSummary(markdown)
  } catch (error) {
    io.warning(`Could not write the job summary: ${(error as Error).message}`)
  }
}
