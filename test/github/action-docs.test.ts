import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { blocksOf, generate, renderTable, staleBlocks } from '../../scripts/action-docs.ts'
import { actionFiles } from '../helpers/github-yaml.ts'
import { REPO_ROOT } from '../helpers/cli.ts'

/**
 * docs/action.md has, in each action's own section (`## The root action`, `## pack/: ...`), a
 * table of every input (required, default, description) and one of every output, generated from
 * that action's action.yml (scripts/action-docs.ts) and equal to what it generates now: an input
 * added, renamed or described anew in an action.yml without `npm run docs:action` fails here.
 */
const docs = readFileSync(join(REPO_ROOT, 'docs/action.md'), 'utf8')

function sectionOf(dir: string): string | undefined {
  const start = dir === '' ? docs.indexOf('\n## The root action') : docs.indexOf(`\n## ${dir}/:`)
  if (start < 0) return undefined
  const end = docs.indexOf('\n## ', start + 4)
  return docs.slice(start, end < 0 ? undefined : end)
}

const actions = actionFiles().map((file) => {
  const dir = file.replace(/\/?action\.yml$/, '')
  const metadata = parse(readFileSync(join(REPO_ROOT, file), 'utf8')) as {
    inputs?: Record<string, unknown>
    outputs?: Record<string, unknown>
  }
  return [dir || '(root)', dir, metadata] as const
})

describe('docs/action.md: a table of every input and output of every action, generated from its action.yml', () => {
  it('finds the ten sub-actions and the root', () => {
    expect(actions.map(([name]) => name).sort()).toEqual(
      [
        '(root)',
        'api-key',
        'bucket-close',
        'bucket-create',
        'decommit',
        'pack',
        'retry',
        'storage-query',
        'task',
        'verify-proof',
        'wait',
      ].sort(),
    )
  })

  it.each(actions)('%s: its section holds both tables, and every input and output is a row', (_, dir, metadata) => {
    const section = sectionOf(dir)
    expect(section, `no section for ${dir || 'the root action'} in docs/action.md`).toBeDefined()
    expect(blocksOf(section!)).toEqual([
      { kind: 'inputs', action: dir || '.' },
      { kind: 'outputs', action: dir || '.' },
    ])
    const rows = new Set([...section!.matchAll(/^\| `([\w-]+)` \|/gm)].map((match) => match[1]))
    const missing = [...Object.keys(metadata.inputs ?? {}), ...Object.keys(metadata.outputs ?? {})].filter(
      (name) => !rows.has(name),
    )
    expect(missing).toEqual([])
  })

  it('every table is what its action.yml gives now (npm run docs:action writes them)', () => {
    expect(staleBlocks(docs)).toEqual([])
    expect(generate(docs)).toBe(docs)
  })

  it('a changed description, or a row edited by hand, is found stale', () => {
    const root = mkdtempSync(join(tmpdir(), 'action-docs-'))
    cpSync(join(REPO_ROOT, 'wait'), join(root, 'wait'), { recursive: true })
    cpSync(join(REPO_ROOT, 'action.yml'), join(root, 'action.yml'))
    writeFileSync(
      join(root, 'wait', 'action.yml'),
      readFileSync(join(root, 'wait', 'action.yml'), 'utf8').replace(
        /(\n {2}query-id:\n {4}description: )/,
        '$1Changed. ',
      ),
    )
    const waitOnly = docs.slice(docs.indexOf('\n## wait/:'), docs.indexOf('\n## verify-proof/:'))
    expect(staleBlocks(waitOnly, root)).toEqual([{ kind: 'inputs', action: 'wait' }])
    const edited = waitOnly.replace('| `query-id` | yes |', '| `query-id` | no |')
    expect(edited).not.toBe(waitOnly)
    expect(staleBlocks(edited)).toEqual([{ kind: 'inputs', action: 'wait' }])
    expect(generate(edited)).toBe(waitOnly)
  })

  it('a cell holds a description on one line, its pipes escaped; a default as code', () => {
    const root = mkdtempSync(join(tmpdir(), 'action-docs-'))
    writeFileSync(
      join(root, 'action.yml'),
      [
        'inputs:',
        '  mode:',
        '    description: |-',
        '      a | b',
        '      second line',
        "    default: '${{ github.token }}'",
        'outputs:',
        '  out:',
        '    description: x',
      ].join('\n'),
    )
    expect(renderTable({ kind: 'inputs', action: '.' }, root)).toBe(
      [
        '| Input | Required | Default | Description |',
        '|---|---|---|---|',
        '| `mode` | no | `${{ github.token }}` | a \\| b second line |',
      ].join('\n'),
    )
    expect(renderTable({ kind: 'outputs', action: '.' }, root)).toBe(
      ['| Output | Description |', '|---|---|', '| `out` | x |'].join('\n'),
    )
  })
})

describe('one release gate', () => {
  it('the README\'s release gate is the prove step of docs/action.md\'s "Gate a release on Sepolia"', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8')
    const gate = /## Gate a release[^\n]*\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(gate).toMatch(/uses: proving-kit\/proving-kit@v1/)
    const workflow = /## Gate a release on Sepolia\n[\s\S]*?```yaml\n([\s\S]*?)```/.exec(docs)![1]!
    const indented = gate!
      .trimEnd()
      .split('\n')
      .map((line) => `      ${line}`.trimEnd())
      .join('\n')
    expect(workflow).toContain(indented)
    // docs/onchain.md points there rather than giving a third one.
    expect(readFileSync(join(REPO_ROOT, 'docs/onchain.md'), 'utf8')).toContain('(action.md#gate-a-release-on-sepolia)')
  })
})
