/**
 * Figure 8: the cost of `import { ProvingClient } from 'proving-kit'` for a library user, next to
 * `import 'undici'` (what any HTTP client in Node loads anyway) and `node -e 0`. Each is an ES
 * module file of an app whose node_modules holds proving-kit and its dependencies as an install
 * leaves them (symlinks to this repository and to its node_modules), so the package resolves
 * through its `exports` to the compiled lib/index.js, as an installed user gets it. First one
 * unmeasured run with bench/startup-probe.mjs preloaded (lib.ts `probeStartup`): the module
 * files that import loads, by package. Then separate processes with the project's Node, spawned
 * directly, runs alternating, after a warm-up: the three above, and each other dependency that
 * import loads, imported alone (where the time above undici goes). And the peak RSS of the
 * three (GNU time), reported.
 *
 * Target (issue 16): <= 150 ms above `import 'undici'`.
 */
import { existsSync, readFileSync, statSync } from 'node:fs'
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { pathToFileURL } from 'node:url'
import {
  ensureBuilt,
  type FigureContext,
  type FigureResult,
  fmt,
  fmtMiB,
  measure,
  median,
  NODE,
  probeStartup,
  ROOT,
  RUN_DIR,
  table,
} from './lib.ts'

const TARGET_MS = 150

/** The app's script that imports one dependency's files alone. */
const scriptOf = (name: string) => `${name.replace(/\W/g, '_')}.js`

/** Which package a loaded file belongs to: `node_modules/<name>` (scoped too), or this package's lib/. */
function packageOf(path: string): string {
  const parts = relative(ROOT, path).split(sep)
  const at = parts.lastIndexOf('node_modules')
  if (at === -1) return parts[0] === 'lib' ? 'proving-kit (lib/)' : relative(ROOT, path)
  const name = parts[at + 1]!
  return name.startsWith('@') ? `${name}/${parts[at + 2]}` : name
}

export async function figureImport(ctx: FigureContext): Promise<FigureResult> {
  const started = performance.now()
  const runs = ctx.quick ? 5 : 21
  const build = ensureBuilt(ctx)
  if (build.from !== 'lib')
    throw new Error(
      `lib/ could not be built (${build.note ?? 'no lib/index.js'}): the import is measured on the compiled entry`,
    )

  // An app with proving-kit installed: the package and its dependencies side by side in node_modules.
  const app = join(RUN_DIR, 'import-app')
  await rm(app, { recursive: true, force: true })
  await mkdir(join(app, 'node_modules'), { recursive: true })
  const dependencies = Object.keys(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> })
      .dependencies,
  )
  await symlink(ROOT, join(app, 'node_modules', 'proving-kit'), 'dir')
  for (const name of dependencies) {
    await mkdir(dirname(join(app, 'node_modules', name)), { recursive: true })
    await symlink(join(ROOT, 'node_modules', name), join(app, 'node_modules', name), 'dir')
  }
  await writeFile(
    join(app, 'package.json'),
    `${JSON.stringify({ name: 'import-app', private: true, type: 'module' })}\n`,
  )
  await writeFile(
    join(app, 'undici.js'),
    "import { request } from 'undici'\nif (typeof request !== 'function') process.exit(1)\n",
  )
  await writeFile(
    join(app, 'proving-kit.js'),
    "import { ProvingClient } from 'proving-kit'\nif (typeof ProvingClient !== 'function') process.exit(1)\n",
  )

  // What the import loads (one unmeasured run): the files, by package.
  const loaded = (await probeStartup(['proving-kit.js'], { cwd: app })).files.filter(
    (path) => !path.startsWith(app) && existsSync(path),
  )
  const byPackage = new Map<string, { files: number; bytes: number }>()
  for (const path of loaded) {
    const name = packageOf(path)
    const entry = byPackage.get(name) ?? { files: 0, bytes: 0 }
    entry.files++
    entry.bytes += statSync(path).size
    byPackage.set(name, entry)
  }
  const packages = [...byPackage].sort((a, b) => b[1].bytes - a[1].bytes)
  // The other dependencies that import loads, each imported alone: where the time above undici goes.
  const others = dependencies.filter((name) => name !== 'undici' && byPackage.has(name))
  // Each one's files that the import loaded (a package's root is not always importable).
  for (const name of others) {
    const files = loaded.filter((path) => packageOf(path) === name)
    await writeFile(
      join(app, scriptOf(name)),
      files.map((path) => `import ${JSON.stringify(pathToFileURL(path).href)}\n`).join(''),
    )
  }

  const variants: [string, string[]][] = [
    ['`node -e 0`', ['-e', '0']],
    ["`import 'undici'`", ['undici.js']],
    ["`import { ProvingClient } from 'proving-kit'`", ['proving-kit.js']],
    ...others.map((name): [string, string[]] => [
      `${name}'s files alone (${byPackage.get(name)!.files}, with what they import)`,
      [scriptOf(name)],
    ]),
  ]

  // Warm-up (the files in the page cache, as on any run after the first), and each must succeed.
  for (const [, args] of variants) await measure(NODE, args, { cwd: app, bare: true })
  const times: number[][] = variants.map(() => [])
  for (let k = 0; k < runs; k++) {
    for (const [index, [, args]] of variants.entries()) {
      times[index]!.push((await measure(NODE, args, { cwd: app, bare: true })).ms)
    }
  }
  const [bareMs, undiciMs, kitMs] = times.map(median) as [number, number, number]
  const above = kitMs - undiciMs
  ctx.log(
    `  node -e 0 ${fmt(bareMs, 0)} ms; import 'undici' ${fmt(undiciMs, 0)} ms; import proving-kit ${fmt(kitMs, 0)} ms (+${fmt(above, 0)} ms)`,
  )

  // Peak RSS of the first three, one more run each (GNU time; not the timed runs).
  const rss: number[] = []
  for (const [, args] of variants.slice(0, 3)) rss.push((await measure(NODE, args, { cwd: app })).rssKiB)

  const body = [
    `An app with proving-kit and its dependencies in its node_modules (symlinks to this repository, whose \`exports\` give lib/index.js, and to its node_modules: undici ${JSON.parse(readFileSync(join(ROOT, 'node_modules', 'undici', 'package.json'), 'utf8')).version}); each line is an ES module file of that app, run by the project's Node (${process.version}), spawned directly, medians of ${runs} runs each, alternating, after a warm-up. Below the third line: the files of each other dependency that the import loads, alone (with what they import in turn). Peak RSS: one more run each, under GNU time.`,
    '',
    table(
      ['process', 'median', 'min', 'max', 'above', 'peak RSS'],
      variants.map(([label], index) => [
        label,
        `${fmt(median(times[index]!), 0)} ms`,
        `${fmt(Math.min(...times[index]!), 0)} ms`,
        `${fmt(Math.max(...times[index]!), 0)} ms`,
        index === 0
          ? ''
          : `+${fmt(median(times[index]!) - median(times[index === 2 ? 1 : 0]!), 0)} ms (${index === 2 ? 'undici' : '`node -e 0`'})`,
        index < 3 ? fmtMiB(rss[index]!) : '',
      ]),
    ),
    '',
    `What \`import { ProvingClient } from 'proving-kit'\` loads (${loaded.length} files, ${fmt(packages.reduce((sum, [, p]) => sum + p.bytes, 0) / 1024, 0)} KiB):`,
    '',
    table(
      ['package', 'files', 'size'],
      packages.map(([name, p]) => [name, p.files, `${fmt(p.bytes / 1024, 0)} KiB`]),
    ),
  ].join('\n')

  return {
    id: 8,
    title: "Import cost: `import { ProvingClient } from 'proving-kit'` vs `import 'undici'`",
    body,
    checks: [
      {
        name: "time above `import 'undici'`",
        value: `+${fmt(above, 0)} ms (${fmt(kitMs / undiciMs)}x: ${fmt(kitMs, 0)} vs ${fmt(undiciMs, 0)} ms)`,
        target: `<= ${TARGET_MS} ms`,
        pass: above <= TARGET_MS,
      },
      {
        name: 'peak RSS of the import',
        value: `${fmtMiB(rss[2]!)} (undici alone ${fmtMiB(rss[1]!)})`,
        target: 'reported',
        pass: null,
      },
    ],
    notes: [
      `The ratio (${fmt(kitMs / undiciMs)}x) moves less with the machine's load than the difference: \`node -e 0\` took ${fmt(bareMs, 0)} ms in this run (38 ms on a quiet machine of this kind, shared/perf-notes.md).`,
      `Where the time above undici goes (each alone, above \`node -e 0\`; they overlap where they share files): ${others
        .map(
          (name) =>
            `${name} +${fmt(median(times[variants.findIndex(([, args]) => args[0] === scriptOf(name))]!) - bareMs, 0)} ms`,
        )
        .join(
          ', ',
        )}, besides the library's own ${byPackage.get('proving-kit (lib/)')?.files ?? 0} modules. The main entry re-exports the PIE toolkit (its hashes load @scure/starknet and @noble/curves) and every client's zod schemas: loading those on first use would take them off this path.`,
    ],
    seconds: (performance.now() - started) / 1000,
  }
}
