/**
 * The post step of every action that waits (root, wait, retry, verify-proof, task, decommit,
 * storage-query, bucket-close). The main step reports for itself, cancellation
 * included; this one only speaks when the main step was stopped before it could (killed after
 * the runner's grace period, out of memory, ...): the query id it saved is then the one thing a
 * person needs to pick the query up again. After the root action it also saves the journal to
 * the Actions cache when the main step was stopped before it did (the next attempt reads it back).
 */
import { writeSummary } from '../steps/io.ts'
import { STATE } from '../steps/state.ts'
import { docsBase, renderSummary, resumeSnippet, runUrl } from '../steps/summary.ts'
import type { ActionIO } from '../types.ts'

export async function run(io: ActionIO): Promise<void> {
  if (io.getState(STATE.journalCarry) && io.getState(STATE.journalSaved) !== 'true') {
    // @actions/cache loads only here, and only after a root step that kept a journal and did not save it.
    const { saveJournalAfterStop } = await import('../steps/journal-cache.ts')
    await saveJournalAfterStop(io)
  }
  if (io.getState(STATE.reported) === 'true') {
    // Killed after its report (during the decommitment that follows a passed gate, or before it
    // told GitHub): the check run it started is still in progress, and would stay so.
    if (Number(io.getState(STATE.checkRun)) > 0) {
      await concludeCheckRun(
        io,
        'The step reported, then stopped before it finished (cancelled or killed): see the job summary for what was done.',
      )
    } else {
      io.debug('The main step wrote its own report; nothing to add.')
    }
    return
  }
  const action = io.getState(STATE.action)
  if (!action) {
    io.debug('The main step saved no state (it did not start); nothing to report.')
    return
  }
  const subject = io.getState(STATE.subject)
  const queryId = io.getState(STATE.queryId)
  if (!queryId && subject) {
    // A task or a batch query: started on its service, which goes on with it.
    const followUp = io.getState(STATE.followUp)
    io.warning(
      `The ${action} step stopped before reporting; ${subject} may still be running on the service. ${followUp}`,
    )
    const markdown = renderSummary({
      action,
      outcome: 'cancelled',
      headline: `The step stopped before it could report (cancelled or killed). ${subject[0]!.toUpperCase()}${subject.slice(1)} had been started on the service, which goes on with it.`,
      rows: [],
      nextSteps: followUp ? [followUp] : undefined,
      runUrl: runUrl(io.env),
      docsBase: docsBase(io.env),
    })
    await writeSummary(io, markdown)
    await concludeCheckRun(io, markdown)
    return
  }
  const emulated = io.getState(STATE.emulated) === 'true'
  const baseUrl = io.getState(STATE.baseUrl) || undefined
  const minutes = Number(io.getState(STATE.timeoutMinutes)) || undefined
  const expectedResult = io.getState(STATE.expectedResult) || undefined
  if (queryId) {
    io.warning(
      emulated
        ? `The ${action} step stopped before reporting; query ${queryId} ran on the emulator inside it and is gone.`
        : `The ${action} step stopped before reporting; query ${queryId} may still be running. Resume with the wait sub-action: query-id ${queryId}.`,
    )
  } else {
    io.warning(`The ${action} step stopped before reporting, and before the service returned a query id.`)
  }
  const markdown = renderSummary({
    action,
    outcome: 'cancelled',
    headline: queryId
      ? `The step stopped before it could report (cancelled or killed). Query ${queryId} had been submitted.`
      : 'The step stopped before it could report (cancelled or killed), before the service returned a query id.',
    rows: [['Query', { code: queryId || undefined }]],
    nextSteps: queryId
      ? [
          emulated
            ? 'The query ran on the emulator inside the step: re-run the step.'
            : `Follow it with the \`wait\` sub-action and \`query-id: ${queryId}\` (below).`,
        ]
      : [
          "If the upload had started, a query may still have been created: check the service's list of queries before proving again.",
        ],
    snippet:
      queryId && !emulated
        ? {
            caption: 'To pick the query up again:',
            yaml: resumeSnippet(io.env, queryId, minutes, baseUrl, expectedResult),
          }
        : undefined,
    runUrl: runUrl(io.env),
    docsBase: docsBase(io.env),
    emulated,
  })
  await writeSummary(io, markdown)
  await concludeCheckRun(io, markdown)
}

/** A check run (`check-run: true`) the main step started and could not conclude (it clears the id once it has). */
async function concludeCheckRun(io: ActionIO, summary: string): Promise<void> {
  const id = Number(io.getState(STATE.checkRun))
  if (!Number.isInteger(id) || id <= 0) return
  // Octokit loads only here, and only after a killed step that had started a check run.
  const { concludeAbandonedCheckRun } = await import('../github/publish.ts')
  await concludeAbandonedCheckRun(io, id, summary)
}
