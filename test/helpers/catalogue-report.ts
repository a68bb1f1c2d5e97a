/**
 * Adds up the reliability catalogues written by a test run with PROVING_CATALOGUE_DIR set
 * (see ./catalogue.ts and docs/reliability.md):
 *
 *   PROVING_CATALOGUE_DIR=/tmp/catalogue npx vitest run test/e2e/reliability-* test/e2e/bad-input-* test/e2e/secrets.test.ts
 *   node test/helpers/catalogue-report.ts /tmp/catalogue
 *
 * Prints one line per catalogue and one per family (fault, bad-input, secrets), each as
 * `tried / survived / leaked`; exits 1 unless every family reads N / N / 0.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

type Row = { name: string; survived: boolean; leaked: boolean }

const dir = process.argv[2] ?? process.env.PROVING_CATALOGUE_DIR
if (!dir) {
  console.error('usage: node test/helpers/catalogue-report.ts <dir written with PROVING_CATALOGUE_DIR>')
  process.exit(2)
}

const families = new Map<string, Row[]>()
for (const file of readdirSync(dir)
  .filter((name) => name.endsWith('.json'))
  .sort()) {
  const { title, rows } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { title: string; rows: Row[] }
  console.log(line(title, rows))
  const family = title.startsWith('fault catalogue')
    ? 'fault catalogue'
    : title.startsWith('bad-input')
      ? 'bad-input catalogue'
      : title
  families.set(family, [...(families.get(family) ?? []), ...rows])
}
console.log('')
let clean = true
for (const [family, rows] of families) {
  console.log(line(`${family} (total)`, rows))
  if (rows.some((row) => !row.survived || row.leaked)) clean = false
}
process.exitCode = clean ? 0 : 1

function line(title: string, rows: Row[]): string {
  const survived = rows.filter((row) => row.survived).length
  const leaked = rows.filter((row) => row.leaked).length
  return `${title}: ${rows.length} tried / ${survived} survived / ${leaked} leaked`
}
