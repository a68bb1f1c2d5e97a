import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NODE, olderNode, pretendNodeVersion, REPO_ROOT } from '../helpers/cli.ts'

const run = promisify(execFile)
/** The console's page, script and styles together, uncompressed (21 KiB when written: 4 + 13 + 4). */
const CONSOLE_BUDGET_BYTES = 40 * 1024
/** What installing the package may weigh, dependencies included (viem with ox alone is 82 MB; 109 MB when written, 333 MB before). */
const INSTALLED_BUDGET_BYTES = 130 * 1024 * 1024
/** The lifecycle scripts npm runs when a package is installed (`prepare` too, from a git URL or a folder). */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare']
const NODE_BIN_DIR = dirname(NODE)
/** npm and npx of the machine, with the project's Node 24 first on PATH (as `npm run` has it). */
const env = {
  ...process.env,
  PATH: `${NODE_BIN_DIR}:${process.env.PATH}`,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
}

/**
 * What `npm publish` would ship, installed in an empty project: the library imports as ESM with
 * its type declarations, and the `proving` bin works. `npm test` builds lib/ first.
 */
describe('the published package', () => {
  let consumer: string
  beforeAll(async () => {
    consumer = await mkdtemp(join(tmpdir(), 'proving-kit-consumer-'))
    await run('npm', ['pack', '--ignore-scripts', '--pack-destination', consumer], { cwd: REPO_ROOT, env })
    const tarball = (await readdir(consumer)).find((name) => name.endsWith('.tgz'))!
    await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }))
    await run('npm', ['install', '--prefer-offline', '--omit=dev', `./${tarball}`], { cwd: consumer, env })
  }, 180_000)

  afterAll(async () => {
    await rm(consumer, { recursive: true, force: true })
  })

  it('imports as ESM, with declarations for every export', async () => {
    const { stdout } = await run(
      NODE,
      [
        '--input-type=module',
        '-e',
        "const m = await import('proving-kit'); console.log(typeof m.ProvingClient, typeof m.validatePie, typeof m.startEmulator)",
      ],
      { cwd: consumer, env },
    )
    expect(stdout.trim()).toBe('function function undefined')
    const files = await readdir(join(consumer, 'node_modules/proving-kit/lib'))
    expect(files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts']))
  })

  it('has the sub-path entries, each with its declarations', async () => {
    const script = [
      "const emulator = await import('proving-kit/emulator')",
      "const pie = await import('proving-kit/pie')",
      "const chain = await import('proving-kit/chain')",
      "const testing = await import('proving-kit/testing')",
      "const schemas = await import('proving-kit/schemas')",
      'console.log([typeof emulator.startEmulator, typeof pie.packPie, typeof chain.checkFactOnEthereum, typeof testing.simulatedClock, typeof testing.clientClockFor, typeof schemas.taskBody.safeParse, typeof schemas.checkBatchQueryBody].join(" "))',
    ].join(';')
    const { stdout } = await run(NODE, ['--input-type=module', '-e', script], { cwd: consumer, env })
    expect(stdout.trim()).toBe('function function function function function function function')
    const root = join(consumer, 'node_modules/proving-kit')
    for (const declarations of [
      'lib/emulator/index.d.ts',
      'lib/pie/index.d.ts',
      'lib/chain/index.d.ts',
      'lib/schemas/index.d.ts',
      'lib/testing.d.ts',
    ]) {
      expect((await readdir(join(root, dirname(declarations)))).includes(declarations.split('/').at(-1)!)).toBe(true)
    }
  })

  it('serves the emulator console from the installed package (no build step), within its size budget', async () => {
    const script = [
      "const { startEmulator } = await import('proving-kit/emulator')",
      'const emulator = await startEmulator()',
      'const sizes = {}',
      "for (const path of ['/', '/_emulator/console/app.js', '/_emulator/console/app.css', '/_emulator/console/snapshot']) { const response = await fetch(emulator.url + path); sizes[path] = [response.status, response.headers.get('content-type'), (await response.arrayBuffer()).byteLength] }",
      'await emulator.close()',
      'console.log(JSON.stringify(sizes))',
    ].join(';')
    const { stdout } = await run(NODE, ['--input-type=module', '-e', script], { cwd: consumer, env })
    const sizes = JSON.parse(stdout) as Record<string, [number, string, number]>
    expect(Object.values(sizes).map(([status]) => status)).toEqual([200, 200, 200, 200])
    expect(sizes['/']![1]).toMatch(/^text\/html/)
    expect(sizes['/_emulator/console/app.js']![1]).toMatch(/^text\/javascript/)
    // The page, its script and styles: what a browser downloads before the first snapshot.
    const pageBytes = sizes['/']![2] + sizes['/_emulator/console/app.js']![2] + sizes['/_emulator/console/app.css']![2]
    expect(pageBytes).toBeLessThan(CONSOLE_BUDGET_BYTES)
  })

  it('puts a working `proving` on the PATH of npx', async () => {
    const { stdout } = await run(
      'npx',
      ['--no-install', 'proving', 'inspect', join(REPO_ROOT, 'examples/fib/pie.zip'), '--json'],
      {
        cwd: consumer,
        env,
      },
    )
    expect(JSON.parse(stdout).programHash).toBe('0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45')
  })

  it('its `proving` on a Node older than 22.17: one line naming the minimum, exit 2', async () => {
    const older = await olderNode()
    const bin = join(consumer, 'node_modules/proving-kit/bin/proving.js')
    const failed = await run(older?.path ?? NODE, [...(older ? [] : pretendNodeVersion('20.11.1')), bin, '--help'], {
      cwd: consumer,
      env,
    }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    )
    expect(failed?.code).toBe(2)
    expect(failed?.stdout).toBe('')
    expect(failed?.stderr).toMatch(/^proving: needs Node\.js 22\.17 or later; found Node\.js \d+\.\d+\.\d+ [^\n]*\n$/)
  })

  it("ships no tests, sources or bundles, nor the action's compiled code (dist/ runs the action)", async () => {
    const files = await readdir(join(consumer, 'node_modules/proving-kit'))
    expect(files.sort()).toEqual(['LICENSE', 'README.md', 'bin', 'lib', 'package.json'].sort())
    expect(await readdir(join(consumer, 'node_modules/proving-kit/lib'))).not.toContain('action')
  })

  it('runs no install-time script, and depends only on what lib/ loads (no @actions/*, no Octokit)', async () => {
    const manifest = JSON.parse(await readFile(join(consumer, 'node_modules/proving-kit/package.json'), 'utf8')) as {
      scripts?: Record<string, string>
      dependencies: Record<string, string>
    }
    expect(Object.keys(manifest.scripts ?? {}).filter((name) => INSTALL_SCRIPTS.includes(name))).toEqual([])
    expect(Object.keys(manifest.dependencies).filter((name) => /^@actions\/|^@octokit\//.test(name))).toEqual([])
    const installed = await readdir(join(consumer, 'node_modules'))
    expect(
      installed.filter((name) =>
        /^@(actions|octokit|azure|protobuf-ts|bufbuild)$|^typescript$|^apache-arrow$/.test(name),
      ),
    ).toEqual([])
  })

  it(`installs within ${INSTALLED_BUDGET_BYTES / 1024 / 1024} MB, dependencies included`, async () => {
    const { stdout } = await run('du', ['-sk', join(consumer, 'node_modules')], { env })
    const bytes = Number(stdout.split('\t')[0]) * 1024
    expect(bytes).toBeGreaterThan(10 * 1024 * 1024)
    expect(bytes).toBeLessThan(INSTALLED_BUDGET_BYTES)
  })

  // README's library example, as a user's project compiles it: strict, no skipLibCheck, with the
  // TypeScript of the day (5.x) and the next (7), and the @types/node of the Node the suite runs
  // on (24; 22 in CI's Node 22 run): a project on either LTS compiles it.
  const typesNode = `@types/node@${process.versions.node.split('.')[0]}`
  it(`type-checks README's library example under tsc --strict with TypeScript 5 and 7 and ${typesNode}, without skipLibCheck`, async () => {
    const project = join(consumer, 'typecheck')
    await mkdir(project, { recursive: true })
    await run(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-save',
        'typescript-5@npm:typescript@5',
        'typescript-7@npm:typescript@7',
        typesNode,
      ],
      { cwd: consumer, env },
    )
    const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8')
    const example = /## The library\n\n```ts\n([\s\S]*?)\n```/.exec(readme)?.[1]
    expect(example).toContain("from 'proving-kit'")
    await writeFile(join(project, 'example.ts'), `${example}\n`)
    const compilerOptions = {
      strict: true,
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      noEmit: true,
    }
    await writeFile(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['example.ts'] }))
    for (const typescript of ['typescript-5', 'typescript-7']) {
      const version = JSON.parse(await readFile(join(consumer, 'node_modules', typescript, 'package.json'), 'utf8'))
        .version as string
      expect(version.split('.')[0]).toBe(typescript.split('-')[1])
      const compiled = await run(NODE, [join(consumer, 'node_modules', typescript, 'bin/tsc'), '-p', project], {
        cwd: project,
        env,
      }).then(
        () => '',
        (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}`,
      )
      expect(compiled, `TypeScript ${version}`).toBe('')
    }
  }, 180_000)
})
