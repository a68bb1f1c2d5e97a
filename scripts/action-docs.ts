/**
 * docs/action.md's tables of inputs and outputs, generated from each action.yml: one table of
 * every input (required, default, description) and one of every output, between markers that
 * name the action, so the docs say exactly what the metadata says (as actions/checkout's README
 * is generated from its action.yml). test/github/action-docs.test.ts keeps them equal in npm test.
 *
 *   node scripts/action-docs.ts           rewrite the tables in docs/action.md
 *   node scripts/action-docs.ts --check   exit 1, naming each table that differs, without writing
 *
 * The markers, on lines of their own; `.` is the root action:
 *
 *   <!-- action-docs inputs wait -->
 *   ...the generated table...
 *   <!-- /action-docs -->
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parse } from 'yaml'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const DOC = 'docs/action.md'

type Metadata = {
  inputs?: Record<string, { description?: string; required?: boolean; default?: string | number | boolean } | null>
  outputs?: Record<string, { description?: string } | null>
}

export type Block = { kind: 'inputs' | 'outputs'; action: string }

const BEGIN = /^<!-- action-docs (inputs|outputs) (\S+) -->$/
const END = '<!-- /action-docs -->'

/** The action.yml of an action: `.` is the root's, else its folder's. */
export function actionFile(action: string): string {
  return action === '.' ? 'action.yml' : `${action}/action.yml`
}

function readMetadata(action: string, root: string): Metadata {
  return parse(readFileSync(join(root, actionFile(action)), 'utf8')) as Metadata
}

/** A description as one table cell: its lines joined, pipes escaped. */
function cell(text: string | undefined): string {
  return (text ?? '')
    .trim()
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|')
}

/** A default as the workflow writes it, as code (`${{ github.token }}`, `'120'` as `120`). */
function defaultCell(value: unknown): string {
  if (value === undefined || value === null || value === '') return ''
  const text = String(value)
  const fence = text.includes('`') ? '``' : '`'
  return `${fence}${text.replace(/\|/g, '\\|')}${fence}`
}

/** The table of one action's inputs or outputs, in the order of its action.yml. */
export function renderTable(block: Block, root = ROOT): string {
  const metadata = readMetadata(block.action, root)
  if (block.kind === 'inputs') {
    const rows = Object.entries(metadata.inputs ?? {}).map(
      ([name, input]) =>
        `| \`${name}\` | ${input?.required === true ? 'yes' : 'no'} | ${defaultCell(input?.default)} | ${cell(input?.description)} |`,
    )
    return rows.length
      ? ['| Input | Required | Default | Description |', '|---|---|---|---|', ...rows].join('\n')
      : '(no inputs)'
  }
  const rows = Object.entries(metadata.outputs ?? {}).map(
    ([name, output]) => `| \`${name}\` | ${cell(output?.description)} |`,
  )
  return rows.length ? ['| Output | Description |', '|---|---|', ...rows].join('\n') : '(no outputs)'
}

/** The blocks a Markdown text holds, in order; a block opened and never closed is an error. */
export function blocksOf(markdown: string): Block[] {
  const blocks: Block[] = []
  let open: Block | undefined
  for (const [index, line] of markdown.split('\n').entries()) {
    const begin = BEGIN.exec(line)
    if (begin) {
      if (open) throw new Error(`${DOC}:${index + 1}: a block opens inside ${open.kind} of ${open.action}`)
      open = { kind: begin[1] as Block['kind'], action: begin[2]! }
    } else if (line === END) {
      if (!open) throw new Error(`${DOC}:${index + 1}: ${END} closes nothing`)
      blocks.push(open)
      open = undefined
    }
  }
  if (open) throw new Error(`${DOC}: the ${open.kind} of ${open.action} is never closed (${END})`)
  return blocks
}

/** The Markdown with every block's table generated anew from its action.yml. */
export function generate(markdown: string, root = ROOT): string {
  blocksOf(markdown)
  const lines = markdown.split('\n')
  const out: string[] = []
  for (let index = 0; index < lines.length; index++) {
    const begin = BEGIN.exec(lines[index]!)
    out.push(lines[index]!)
    if (!begin) continue
    while (lines[index + 1] !== END) index++
    out.push('', renderTable({ kind: begin[1] as Block['kind'], action: begin[2]! }, root), '')
  }
  return out.join('\n')
}

/** The blocks whose table differs from what their action.yml gives. */
export function staleBlocks(markdown: string, root = ROOT): Block[] {
  const fresh = generate(markdown, root)
  const split = (text: string) => text.split(/^<!-- action-docs .*$/m).slice(1)
  const [now, then] = [split(markdown), split(fresh)]
  return blocksOf(markdown).filter((_, index) => now[index] !== then[index])
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const path = join(ROOT, DOC)
  const markdown = readFileSync(path, 'utf8')
  if (process.argv.includes('--check')) {
    const stale = staleBlocks(markdown)
    if (stale.length) {
      process.stderr.write(
        `${DOC} does not say what the action.yml files say: ${stale.map((block) => `the ${block.kind} of ${actionFile(block.action)}`).join(', ')}. Run \`npm run docs:action\`.\n`,
      )
      process.exit(1)
    }
  } else {
    writeFileSync(path, generate(markdown))
  }
}
