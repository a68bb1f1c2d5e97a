import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { NODE, REPO_ROOT } from '../../helpers/cli.ts'

/**
 * viem costs ~400 ms at start-up (perf-notes.md): the library entry and the CLI's command table
 * must not load it; only a call to checkFactOnEthereum does. Checked in a fresh process with a
 * resolve hook that records every module resolved inside viem.
 */
describe('viem is loaded lazily', () => {
  it('is not resolved by importing the library or the CLI commands, only by an Ethereum check', () => {
    const script = `
      import { registerHooks } from 'node:module'
      const seen = new Set()
      registerHooks({ resolve(specifier, context, next) {
        const result = next(specifier, context)
        if (result.url.includes('/node_modules/viem/')) seen.add(result.url)
        return result
      } })
      await import('./src/index.ts')
      await import('./src/cli/commands/index.ts')
      const before = seen.size
      const { checkFactOnEthereum } = await import('./src/chain/index.ts')
      await checkFactOnEthereum({ rpcUrl: 'http://127.0.0.1:1/', fact: '0x1', requestTimeoutMs: 1 }).catch(() => {})
      console.log(JSON.stringify({ before, after: seen.size }))
    `
    const output = execFileSync(NODE, ['--input-type=module', '-e', script], { cwd: REPO_ROOT, encoding: 'utf8' })
    const { before, after } = JSON.parse(output.trim().split('\n').at(-1)!)
    expect(before).toBe(0)
    expect(after).toBeGreaterThan(0)
  })
})
