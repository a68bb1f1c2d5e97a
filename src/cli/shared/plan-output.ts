/**
 * `--dry-run`: the plan the statement pipeline computes by reading only, shown as the CLI shows
 * things: one line for one statement, a table for several, an array with --json; exit 1 when the
 * plan holds a refusal (the run would fail), 0 otherwise. Nothing here decides.
 */
import type { ProvingClient } from '../../clients/proving.ts'
import { serviceLine } from '../../core/service-text.ts'
import { type PlanRow, planStatements, type StatementRequest } from '../../pipeline/statement/index.ts'
import type { CommandContext } from '../context.ts'
import { EXIT } from '../exit-codes.ts'

export async function printPlan(
  context: CommandContext,
  client: ProvingClient,
  request: StatementRequest,
): Promise<number> {
  const rows = await planStatements(request, { client, logger: context.logger, signal: context.signal })
  context.print(request.subjects.length === 1 ? planLine(rows[0]!) : planTable(rows), rows)
  return rows.some((row) => row.decision === 'refuse') ? EXIT.remoteFailure : EXIT.ok
}

function planLine(row: PlanRow): string {
  return serviceLine(
    `Plan for ${row.pie}: ${row.decision}${row.queryId ? ` (query ${row.queryId})` : ''}: ${row.reason}. Nothing was sent (--dry-run).`,
  )
}

/** One row per statement, then what the run would pay for. */
export function planTable(rows: PlanRow[]): string {
  const cells = rows.map((row, index) => [String(index + 1), row.pie, row.decision, row.queryId ?? '-', row.reason])
  const header = ['#', 'PIE', 'decision', 'query', 'reason']
  const widths = header.map((title, column) =>
    cells.reduce((widest, row) => Math.max(widest, row[column]!.length), title.length),
  )
  const line = (values: string[]) =>
    serviceLine(
      values
        .map((value, column) => (column === values.length - 1 ? value : value.padEnd(widths[column]!)))
        .join('  ')
        .trimEnd(),
    )
  const paid = rows.filter((row) => row.decision === 'submit').length
  const refused = rows.filter((row) => row.decision === 'refuse').length
  const summary = `${rows.length} PIEs: ${paid} would be submitted (paid), ${rows.length - paid - refused} reused, followed or retried, ${refused} refused. Nothing was sent (--dry-run).`
  return [line(header), ...cells.map(line), summary].join('\n')
}
