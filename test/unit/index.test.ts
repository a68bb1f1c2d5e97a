import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../helpers/cli.ts'
import { modulesLoadedBy } from '../helpers/modules-loaded.ts'

/**
 * What each entry of the package loads, in a fresh process with a resolve hook that records every
 * module: the main entry (what `import { ProvingClient } from 'proving-kit'` runs) must load no
 * emulator module, neither busboy (the emulator's multipart parser) nor viem, nor @actions/*, nor
 * zod (the clients load their schemas with the first request: bench figure 8).
 */
const packages = (modules: string[]) =>
  new Set(
    modules
      .filter((path) => path.startsWith('node_modules/'))
      .map((path) =>
        path
          .split('/')
          .slice(1, path.split('/')[1]!.startsWith('@') ? 3 : 2)
          .join('/'),
      ),
  )

describe('the entries of the package', () => {
  it('the main entry loads the clients without the emulator, busboy, viem, @actions or zod', () => {
    const modules = modulesLoadedBy('./src/index.ts')
    expect(modules).toContain('src/clients/proving.ts')
    expect(modules.filter((path) => path.startsWith('src/emulator/'))).toEqual([])
    expect(modules.filter((path) => path.startsWith('src/action/') || path.startsWith('src/cli/'))).toEqual([])
    // The statement pipeline (proveStatements, followQuery) loads when first called, not with the entry.
    expect(
      modules.filter(
        (path) =>
          path.startsWith('src/pipeline/statement/') ||
          path === 'src/pipeline/journal.ts' ||
          path.startsWith('src/pipeline/journal/'),
      ),
    ).toEqual([])
    const loaded = packages(modules)
    for (const name of ['busboy', 'viem', '@actions/core', '@actions/artifact', 'zod', '@scure/starknet'])
      expect(loaded).not.toContain(name)
    expect(
      modules.filter((path) => /^src\/schemas\/(proving|tasks|storage-proof|account|open-enum|index)\.ts$/.test(path)),
    ).toEqual([])
  })

  it('the CLI starts without undici, zod, viem, @scure/starknet or the emulator: a command loads what only it needs', () => {
    const modules = modulesLoadedBy('./src/cli/run.ts', ['--version'])
    expect(modules).toContain('src/cli/commands/fact.ts')
    expect(modules).toContain('src/core/http.ts')
    expect(modules.filter((path) => path.startsWith('src/emulator/') || path.startsWith('src/chain/starknet'))).toEqual(
      [],
    )
    // undici comes with the first request (src/core/dispatcher.ts): ~150 ms a command that
    // talks to no service never pays.
    expect(modules).not.toContain('src/core/dispatcher.ts')
    const loaded = packages(modules)
    for (const name of ['undici', 'zod', 'viem', '@scure/starknet', '@noble/curves', 'busboy', '@actions/core'])
      expect(loaded).not.toContain(name)
  })

  it('proving-kit/schemas gives every schema and body check, with zod', () => {
    const modules = modulesLoadedBy('./src/schemas/index.ts')
    expect(packages(modules)).toContain('zod')
    expect(modules.filter((path) => path.startsWith('src/clients/') || path.startsWith('src/emulator/'))).toEqual([])
  })

  it('proving-kit/testing gives the clocks without starting to load the emulator', () => {
    const modules = modulesLoadedBy('./src/testing.ts')
    expect(modules.filter((path) => path.startsWith('src/emulator/'))).toEqual(['src/emulator/clock.ts'])
    expect([...packages(modules)]).toEqual([])
  })

  it('proving-kit/pie needs no HTTP: neither undici nor the clients', () => {
    const modules = modulesLoadedBy('./src/pie/index.ts')
    expect(modules.filter((path) => path.startsWith('src/clients/') || path.startsWith('src/emulator/'))).toEqual([])
    expect(packages(modules)).not.toContain('undici')
  })

  it('every sub-path of package.json exports names its compiled module and its declarations, built from src', () => {
    const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string; import: string }>
    }
    const entries = Object.entries(manifest.exports).filter(([path]) => path !== './package.json')
    expect(entries.map(([path]) => path).sort()).toEqual([
      '.',
      './chain',
      './emulator',
      './pie',
      './schemas',
      './testing',
    ])
    for (const [, target] of entries) {
      if (typeof target === 'string') throw new Error(`an entry without types: ${target}`)
      expect(target.types).toBe(target.import.replace(/\.js$/, '.d.ts'))
      // lib/x.js is compiled from src/x.ts (tsconfig.build.json: rootDir src, outDir lib).
      const source = join(REPO_ROOT, target.import.replace(/^\.\/lib\//, 'src/').replace(/\.js$/, '.ts'))
      expect(() => readFileSync(source)).not.toThrow()
    }
  })
})
