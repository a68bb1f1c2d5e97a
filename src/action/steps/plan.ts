/**
 * `dry-run: true`: the plan the statement pipeline computes by reading only, as the action shows
 * things: the `plan` output (JSON), a table in the job summary, and a failed step when the plan
 * holds a refusal (the run would fail). Nothing here decides; nothing that costs is sent.
 */
import type { ProvingClient } from '../../clients/proving.ts'
import { forSummaryCell } from '../../core/service-text.ts'
import { type PlanRow, planStatements, type StatementRequest } from '../../pipeline/statement/index.ts'
import type { ActionIO } from '../types.ts'
import { loggerFor } from './io.ts'
import type { QueryStep } from './query-step.ts'

export async function showPlan(
  io: ActionIO,
  step: QueryStep,
  client: ProvingClient,
  request: StatementRequest,
  signal: AbortSignal,
): Promise<void> {
  const rows = await planStatements(request, { client, logger: loggerFor(io), signal })
  for (const row of rows)
    io.info(`Plan for ${row.pie}: ${row.decision}${row.queryId ? ` (query ${row.queryId})` : ''}: ${row.reason}.`)
  step.outputs.set({ plan: JSON.stringify(rows) })
  step.facts = { kind: 'skipped', reason: '`dry-run` is true: nothing was submitted' }
  const paid = rows.filter((row) => row.decision === 'submit').length
  const refused = rows.filter((row) => row.decision === 'refuse')
  const others = rows.length - paid - refused.length
  step.extraRows.push([
    'Plan',
    `${rows.length} ${rows.length === 1 ? 'statement' : 'statements'}: ${paid} would be submitted (paid), ${others} reused, followed or retried, ${refused.length} refused`,
  ])
  step.sections.push(planMarkdown(rows))
  if (refused.length === 0) {
    await step.report({
      outcome: 'done',
      headline: `The plan: ${paid} of ${rows.length} would be submitted (paid); nothing was sent (\`dry-run\`).`,
      nextSteps: ['Run the step without `dry-run` to prove what the plan says.'],
    })
    return
  }
  await step.report({
    outcome: 'failed',
    headline: `The plan refuses ${refused.length} of ${rows.length}; nothing was sent (\`dry-run\`).`,
    problems: refused.map((row) => `${row.pie}: ${row.reason}`),
    failure: `The plan refuses ${refused[0]!.pie}: ${refused[0]!.reason}`,
  })
}

function planMarkdown(rows: PlanRow[]): string {
  return [
    '| # | PIE | decision | query | reason |',
    '|---|---|---|---|---|',
    ...rows.map(
      (row, index) =>
        `| ${index + 1} | ${forSummaryCell(row.pie, 'code')} | ${row.decision} | ${forSummaryCell(row.queryId ?? '', 'code')} | ${forSummaryCell(row.reason)} |`,
    ),
  ].join('\n')
}
