import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { duplicatedUndici, unresolvedModules } from '../../../scripts/build-dist.ts'
import { REPO_ROOT } from '../../helpers/run-action.ts'

function fakeDist(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'fake-dist-'))
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true })
    writeFileSync(join(dir, name), text)
  }
  return dir
}

describe('the unresolved-module scan of check:dist', () => {
  it('finds each way ncc leaves a module out', async () => {
    const dir = fakeDist({
      'a/index.js': 'var e=new Error("Cannot find module \'left-pad\'");throw e.code="MODULE_NOT_FOUND",e',
      'b/index.js': 'module.exports=eval("require")("no-such-package")',
      'c/12.index.js': 'const x=e(import.meta.url)("some-package")',
      'd/index.js': "module.exports = __non_webpack_require__('UNKNOWN')",
    })
    const problems = await unresolvedModules(dir)
    expect(problems).toEqual([
      expect.stringContaining("dist/a/index.js holds an unresolved module: Cannot find module 'left-pad'"),
      expect.stringContaining('dist/a/index.js holds an unresolved module: MODULE_NOT_FOUND'),
      'dist/b/index.js requires "no-such-package" at run time: ncc could not bundle it',
      'dist/c/12.index.js leaves "some-package" to Node, which is not a builtin module',
      expect.stringContaining("dist/d/index.js holds an unresolved module: __non_webpack_require__('UNKNOWN')"),
    ])
  })

  it("finds a path that ncc's asset relocator rewrote into the build's folder", async () => {
    const dir = fakeDist({ 'a/7.index.js': 'u=a.ab+"check/"+i+"/pie.zip";const h=1' })
    expect(await unresolvedModules(dir)).toEqual([
      'dist/a/7.index.js rewrites a path into the build\'s folder ("check/"): ncc\'s asset relocator took a run-time path for a file',
    ])
  })

  it("accepts builtins and ws's optional add-ons", async () => {
    const dir = fakeDist({
      'a/index.js': 'e(import.meta.url)("node:fs");e(import.meta.url)("fs");try{eval("require")("bufferutil")}catch{}',
    })
    expect(await unresolvedModules(dir)).toEqual([])
  })

  it('the committed dist/ has none', async () => {
    expect(await unresolvedModules(join(REPO_ROOT, 'dist'))).toEqual([])
  })
})

describe('check:dist refuses a second undici', () => {
  const undiciGlobal = 'const s=Symbol.for("undici.globalDispatcher.1");function g(){return globalThis[s]}'

  it('names every chunk holding a copy when there are two or more, and how to fix it', async () => {
    const dir = fakeDist({ '584.index.js': `a;${undiciGlobal}`, '9118.index.js': `b;${undiciGlobal}`, 'index.js': 'c' })
    const [problem, ...rest] = await duplicatedUndici(dir)
    expect(rest).toEqual([])
    expect(problem).toContain('dist/ holds 2 copies of undici (dist/584.index.js, dist/9118.index.js)')
    expect(problem).toContain('`overrides` of package.json')
  })

  it('counts two copies bundled into one chunk, in either quote style', async () => {
    const dir = fakeDist({ '7.index.js': `${undiciGlobal};Symbol.for('undici.globalDispatcher.1')` })
    expect(await duplicatedUndici(dir)).toEqual([
      expect.stringContaining('2 copies of undici (dist/7.index.js, dist/7.index.js)'),
    ])
  })

  it('accepts one copy, and none', async () => {
    expect(await duplicatedUndici(fakeDist({ '6752.index.js': undiciGlobal, 'index.js': 'x' }))).toEqual([])
    expect(await duplicatedUndici(fakeDist({ 'index.js': 'x' }))).toEqual([])
  })

  it('the committed dist/ holds one undici', async () => {
    expect(await duplicatedUndici(join(REPO_ROOT, 'dist'))).toEqual([])
  })
})
