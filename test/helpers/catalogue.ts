import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, it } from 'vitest'

/**
 * The reliability catalogues (docs/reliability.md): every fault the client must survive and
 * every bad input it must refuse is one table row, run as one test. A row counts as
 * - tried: the test ran;
 * - survived: it passed (the client recovered, or failed cleanly with the documented error);
 * - leaked: a secret reached an output, or a request left for a bad input (see `leak`).
 *
 * Each file prints `<title>: N tried / N survived / 0 leaked` when it ends. With
 * PROVING_CATALOGUE_DIR set, each file also writes its rows there as JSON, and
 * `node test/helpers/catalogue-report.ts <dir>` adds them up.
 */

export type CatalogueRow = { name: string; survived: boolean; leaked: boolean }

export class Catalogue {
  readonly title: string
  readonly rows = new Map<string, CatalogueRow>()

  constructor(title: string) {
    this.title = title
  }

  /** Records that a row leaked (then fails the test, so it cannot count as survived). */
  leak(name: string, what: string): never {
    const row = this.rows.get(name) ?? { name, survived: false, leaked: true }
    row.leaked = true
    row.survived = false
    this.rows.set(name, row)
    throw new Error(`${this.title} / ${name}: leaked ${what}`)
  }

  counts(): { tried: number; survived: number; leaked: number } {
    const rows = [...this.rows.values()]
    return {
      tried: rows.length,
      survived: rows.filter((row) => row.survived).length,
      leaked: rows.filter((row) => row.leaked).length,
    }
  }

  summary(): string {
    const { tried, survived, leaked } = this.counts()
    return `${this.title}: ${tried} tried / ${survived} survived / ${leaked} leaked`
  }
}

/**
 * A catalogue for this file: `row(name, test)` registers one test that counts as tried, and as
 * survived when it passes. The summary is printed (and written, see above) after the file.
 */
export function useCatalogue(title: string, options: { concurrent?: boolean } = {}) {
  const catalogue = new Catalogue(title)
  afterAll(() => {
    // Printed on purpose: the closing note of the release quotes these lines.
    console.log(catalogue.summary())
    const dir = process.env.PROVING_CATALOGUE_DIR
    if (dir) {
      mkdirSync(dir, { recursive: true })
      writeFileSync(
        join(dir, `${title.replace(/[^\w.-]+/g, '_')}.json`),
        JSON.stringify({ title, rows: [...catalogue.rows.values()] }, null, 2),
      )
    }
  })
  const define = options.concurrent ? it.concurrent : it
  const row = (name: string, test: () => Promise<void> | void, timeoutMs?: number) => {
    if (catalogue.rows.has(name)) throw new Error(`${title}: two rows named ${name}`)
    catalogue.rows.set(name, { name, survived: false, leaked: false })
    define(
      name,
      async () => {
        await test()
        const current = catalogue.rows.get(name)!
        if (!current.leaked) current.survived = true
      },
      timeoutMs,
    )
  }
  return { catalogue, row }
}

/** The first secret found in any of the texts, with where it was. */
export function findSecret(places: Record<string, string>, secrets: readonly string[]): string | undefined {
  for (const [where, text] of Object.entries(places)) {
    for (const secret of secrets) {
      if (secret && text.includes(secret)) return `${JSON.stringify(secret.slice(0, 12))}… in ${where}`
    }
  }
  return undefined
}
