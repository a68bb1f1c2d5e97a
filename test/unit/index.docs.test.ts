import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import * as entry from '../../src/index.ts'
import { REPO_ROOT } from '../helpers/cli.ts'

/**
 * The doc comments of the public entry points reach users through the .d.ts files: they speak
 * of what a user can call, not of the repository's tests or internal layout, and a
 * `{@link Name}` names something the package exports.
 */
const PUBLIC = [
  'src/index.ts',
  'src/pie/index.ts',
  'src/clients/proving.ts',
  'src/clients/tasks.ts',
  'src/clients/storage-proof.ts',
  'src/clients/account.ts',
  'src/core/errors.ts',
  'src/schemas/proving.ts',
  'src/pie/pack/pack.ts',
]
const docComments = (file: string) =>
  [...readFileSync(join(REPO_ROOT, file), 'utf8').matchAll(/\/\*\*[\s\S]*?\*\//g)].map((match) => match[0])

describe('public doc comments speak to users', () => {
  it.each(PUBLIC)('%s: no test file, no internal layout', (file) => {
    for (const comment of docComments(file)) expect(comment).not.toMatch(/\btest\/|\.test\.ts|\brooms?\b/)
  })

  it.each(PUBLIC)('%s: every {@link} names an export of the package', (file) => {
    for (const comment of docComments(file)) {
      for (const link of comment.matchAll(/\{@link ([\w.]+)\}/g))
        expect(Object.keys(entry), link[1]).toContain(link[1]!.split('.')[0])
    }
  })

  it('packPie has a doc comment', () => {
    expect(readFileSync(join(REPO_ROOT, 'src/pie/pack/pack.ts'), 'utf8')).toMatch(
      /\*\/\nexport async function packPie\(/,
    )
  })
})
