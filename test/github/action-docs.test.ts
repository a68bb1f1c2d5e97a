import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { actionFiles } from '../helpers/github-yaml.ts'
import { REPO_ROOT } from '../helpers/cli.ts'

/**
 * Every input and output of every action.yml is named in docs/action.md, in that action's own
 * section (`## The root action`, `## pack/: ...`): one added to an action.yml without its docs
 * fails here.
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
  const metadata = parse(readFileSync(join(REPO_ROOT, file), 'utf8')) as { inputs?: Record<string, unknown>; outputs?: Record<string, unknown> }
  return [dir || '(root)', dir, metadata] as const
})

describe('docs/action.md names every input and output of every action', () => {
  it('finds the ten sub-actions and the root', () => {
    expect(actions.map(([name]) => name).sort()).toEqual(
      ['(root)', 'api-key', 'bucket-close', 'bucket-create', 'decommit', 'pack', 'retry', 'storage-query', 'task', 'verify-proof', 'wait'].sort(),
    )
  })

  it.each(actions)('%s', (_, dir, metadata) => {
    const section = sectionOf(dir)
    expect(section, `no section for ${dir || 'the root action'} in docs/action.md`).toBeDefined()
    const missing = [
      ...Object.keys(metadata.inputs ?? {}).map((name) => ['input', name] as const),
      ...Object.keys(metadata.outputs ?? {}).map((name) => ['output', name] as const),
    ]
      .filter(([, name]) => !section!.includes(`\`${name}\``))
      .map(([kind, name]) => `${kind} ${name}`)
    expect(missing).toEqual([])
  })
})
