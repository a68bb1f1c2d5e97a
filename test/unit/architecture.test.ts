import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, relative, resolve } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../helpers/cli.ts'

/**
 * The shape docs/architecture.md describes, checked from the sources: no import cycle anywhere in
 * src (type-only and lazy `import()` edges included), and each layer imports only the layers
 * below it. Read as text: every import in this project is a relative path ending in .ts.
 */
const SRC = join(REPO_ROOT, 'src')

function sourceFiles(dir = SRC): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [join(dir, entry.name)]
        : [],
  )
}

/** Every module a file imports: `import`, `import type`, `export ... from` and `import('...')`. */
function importsOf(file: string): { local: string[]; packages: string[] } {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '')
  const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'([^']+)'/gm)].map(
    (match) => match[1]!,
  )
  return {
    local: specifiers
      .filter((specifier) => specifier.startsWith('.'))
      .map((specifier) => resolve(dirname(file), specifier)),
    packages: specifiers.filter((specifier) => !specifier.startsWith('.') && !specifier.startsWith('node:')),
  }
}

const FILES = sourceFiles()
const GRAPH = new Map(FILES.map((file) => [file, importsOf(file)]))
const rel = (file: string) => relative(SRC, file)
const layerOf = (file: string) => (rel(file).includes('/') ? rel(file).split('/')[0]! : rel(file))

/** Tarjan's strongly connected components: any with two or more modules (or a self-import) is a cycle. */
function cycles(): string[][] {
  let index = 0
  const indices = new Map<string, number>()
  const low = new Map<string, number>()
  const onStack = new Set<string>()
  const stack: string[] = []
  const found: string[][] = []
  const visit = (node: string) => {
    indices.set(node, index)
    low.set(node, index++)
    stack.push(node)
    onStack.add(node)
    for (const next of GRAPH.get(node)?.local ?? []) {
      if (!indices.has(next)) {
        visit(next)
        low.set(node, Math.min(low.get(node)!, low.get(next)!))
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!))
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(rel(member))
      } while (member !== node)
      if (component.length > 1 || GRAPH.get(node)?.local.includes(node)) found.push(component.sort())
    }
  }
  for (const file of FILES) if (!indices.has(file)) visit(file)
  return found
}

/** What each layer may import (besides itself). The entries (index.ts, testing.ts) may import any library layer. */
const MAY_IMPORT: Record<string, string[]> = {
  core: [],
  schemas: ['core'],
  pie: ['core', 'schemas'],
  clients: ['core', 'schemas', 'pie'],
  chain: ['core', 'schemas', 'pie'],
  pipeline: ['core', 'schemas', 'pie', 'clients', 'chain'],
  emulator: ['core', 'schemas', 'pie', 'chain'],
  action: ['core', 'schemas', 'pie', 'clients', 'chain', 'pipeline', 'emulator'],
  cli: ['core', 'schemas', 'pie', 'clients', 'chain', 'pipeline', 'emulator'],
  'index.ts': ['core', 'schemas', 'pie', 'clients', 'pipeline'],
  'testing.ts': ['core', 'emulator'],
}

describe('the architecture of src', () => {
  it('reads every module and its imports', () => {
    expect(FILES.length).toBeGreaterThan(100)
    expect(GRAPH.get(join(SRC, 'index.ts'))!.local).toContain(join(SRC, 'clients', 'proving.ts'))
  })

  it('has no import cycle, type-only and lazy imports included', () => {
    expect(cycles()).toEqual([])
  })

  it('each layer imports only the layers below it', () => {
    const wrong: string[] = []
    for (const [file, { local }] of GRAPH) {
      const layer = layerOf(file)
      const allowed = MAY_IMPORT[layer]
      expect(allowed, `a layer docs/architecture.md does not name: ${layer}`).toBeDefined()
      for (const target of local) {
        const to = layerOf(target)
        if (to !== layer && !allowed!.includes(to)) wrong.push(`${rel(file)} -> ${rel(target)}`)
      }
    }
    expect(wrong).toEqual([])
  })

  it('only the action imports @actions/*; the core, schemas and clients name no host', () => {
    const users = [...GRAPH]
      .filter(([, { packages }]) => packages.some((name) => name.startsWith('@actions/')))
      .map(([file]) => layerOf(file))
    expect(new Set(users)).toEqual(new Set(['action']))
  })
})

/**
 * Every decision about a statement lives once, in src/pipeline: no host calls what submits, waits
 * for, retries or judges a proving query itself (the proving client's submissions, waits and
 * retries, the dedup chain, the gate, reuse, the fact comparison, the on-chain judgement, the
 * journal's submission). A host calls the statement pipeline (proveStatements, followQuery,
 * retryAndFollow) and shows what it reports. Read with TypeScript's own parser: every call whose
 * callee is, or ends in, one of these names. Tasks and storage-proof queries are out of scope.
 */
const HOST_FORBIDDEN_CALLS = new Set([
  'submitPie',
  'submitPieStream',
  'submitQuery',
  'submitProofVerification',
  'waitForQuery',
  'retryQuery',
  'retryFailedQuery',
  'resolveDedupId',
  'evaluateGate',
  'afterOnChainCheck',
  'findReusableQuery',
  'judgeCandidate',
  'submitWithJournal',
  'submitPieStreamed',
  'checkFacts',
  'compareQueryFacts',
  'checkQueryFacts',
  'judgeQuery',
  'judgeOnChain',
  'factsAlreadyOnChain',
  'decideReuse',
  'submitStatement',
])

/** `file:line name(` for each forbidden call in a source text. */
function forbiddenCalls(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined
      if (name && HOST_FORBIDDEN_CALLS.has(name)) {
        found.push(
          `${relative(REPO_ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${name}(`,
        )
      }
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('the hosts decide nothing about a statement', () => {
  const HOSTS = FILES.filter((file) => ['action', 'cli'].includes(layerOf(file)))

  it('no file of src/action or src/cli submits, waits for, retries or judges a proving query itself', () => {
    expect(HOSTS.length).toBeGreaterThan(40)
    expect(HOSTS.flatMap((file) => forbiddenCalls(file, readFileSync(file, 'utf8')))).toEqual([])
  })

  it('finds such a call, however it is spelled (a method, a lazy import, a bare function)', () => {
    const planted = [
      'await client.submitPie({ pieZip })',
      'const { evaluateGate } = await import("../../pipeline/gate.ts"); evaluateGate(record, undefined, options)',
      'waiting = services.client.waitForQuery(id, { signal })',
      'return submitWithJournal({ journal })',
    ].join('\n')
    expect(forbiddenCalls(join(SRC, 'cli', 'planted.ts'), planted).map((call) => call.split(' ')[1])).toEqual([
      'submitPie(',
      'evaluateGate(',
      'waitForQuery(',
      'submitWithJournal(',
    ])
  })
})

/** Every function of a source text longer than `limit` lines, as `file:line (n lines)`. */
function longFunctions(file: string, text: string, limit: number): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: string[] = []
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart()).line
      const lines = source.getLineAndCharacterOfPosition(node.end).line - first + 1
      if (lines > limit) found.push(`${relative(REPO_ROOT, file)}:${first + 1} (${lines} lines)`)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

describe('the house: small modules, short functions', () => {
  it('no function of src/action or src/cli is over 100 lines', () => {
    const hosts = FILES.filter((file) => ['action', 'cli'].includes(layerOf(file)))
    expect(hosts.flatMap((file) => longFunctions(file, readFileSync(file, 'utf8'), 100))).toEqual([])
  })

  it('finds a long function, a method and an arrow included', () => {
    const body = Array.from({ length: 101 }, (_, index) => `  step(${index})`).join('\n')
    const planted = `function a() {\n${body}\n}\nclass B { m() {\n${body}\n} }\nconst c = () => {\n${body}\n}\n`
    expect(longFunctions(join(SRC, 'cli', 'planted.ts'), planted, 100)).toHaveLength(3)
  })

  it('no file of src/pipeline has 500 lines or more', () => {
    const long = FILES.filter((file) => layerOf(file) === 'pipeline').filter(
      (file) => readFileSync(file, 'utf8').split('\n').length >= 500,
    )
    expect(long.map(rel)).toEqual([])
  })
})

/**
 * The lines of a tree of sources over `width` characters once formatted as the house formats
 * (biome at width 120, spaces, single quotes, no semicolons, trailing commas), in a copy and with
 * a configuration of its own: the same count before biome.json turns the formatter on and after.
 * What the formatter cannot break is what counts: a string, a template's text, a regular expression.
 */
function longLinesFormatted(sources: string, width: number): string[] {
  const copy = mkdtempSync(join(tmpdir(), 'proving-format-'))
  try {
    cpSync(sources, join(copy, 'src'), { recursive: true })
    const config = {
      vcs: { enabled: false },
      files: { includes: ['src/**'] },
      formatter: { enabled: true, lineWidth: 120, indentStyle: 'space', indentWidth: 2 },
      javascript: { formatter: { quoteStyle: 'single', semicolons: 'asNeeded', trailingCommas: 'all' } },
      linter: { enabled: false },
      assist: { enabled: false },
    }
    writeFileSync(join(copy, 'biome.json'), JSON.stringify(config))
    const biome = join(REPO_ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome')
    const run = spawnSync(process.execPath, [biome, 'format', '--write', `--config-path=${copy}`, 'src'], {
      cwd: copy,
      encoding: 'utf8',
    })
    expect(run.status, run.stderr).toBe(0)
    return sourceFiles(join(copy, 'src')).flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          line.length > width ? [`${relative(copy, file)}:${index + 1}: ${line.length} characters`] : [],
        ),
    )
  } finally {
    rmSync(copy, { recursive: true, force: true })
  }
}

describe('the house: lines a person can read', () => {
  it('at most 5 lines of src/ pass 200 characters once formatted (a message is a short line and its metaMessages)', () => {
    const long = longLinesFormatted(SRC, 200)
    expect(long.length, long.join('\n')).toBeLessThanOrEqual(5)
  })

  it('counts a long string the formatter cannot break, not a long call it breaks', () => {
    const planted = mkdtempSync(join(tmpdir(), 'proving-planted-'))
    try {
      mkdirSync(join(planted, 'core'))
      const args = Array.from({ length: 30 }, (_, index) => `argument${index}`).join(', ')
      writeFileSync(join(planted, 'core', 'call.ts'), `export const a = call(${args})\n`)
      writeFileSync(
        join(planted, 'core', 'message.ts'),
        `export const b = new Error(\`${'A sentence that goes on. '.repeat(10)}\${b}\`)\n`,
      )
      expect(longLinesFormatted(planted, 200)).toEqual([
        expect.stringMatching(/^src\/core\/message\.ts:\d+: \d+ characters$/),
      ])
    } finally {
      rmSync(planted, { recursive: true, force: true })
    }
  })
})

/**
 * The rooms of src/pie, in the order a PIE goes through them (docs/architecture.md, "The path of
 * a PIE"): a room imports only the rooms before it, and is entered only through its index.ts,
 * from the other rooms, src/pie/index.ts (the `proving-kit/pie` entry) and the rest of src alike.
 */
const PIE = join(SRC, 'pie')
const PIE_ROOMS = ['shared', 'read', 'validate', 'hash', 'facts', 'pack', 'inspect', 'generate']
/** The room of a module of src/pie, or undefined for src/pie/index.ts and modules outside src/pie. */
const roomOf = (file: string) => {
  const parts = relative(PIE, file).split('/')
  return parts.length > 1 && parts[0] !== '..' ? parts[0]! : undefined
}

/** Every import that breaks the rooms' rules, as `importer -> imported: why`. */
function roomViolations(graph: ReadonlyMap<string, { local: string[] }>): string[] {
  const wrong: string[] = []
  for (const [file, { local }] of graph) {
    const from = roomOf(file)
    for (const target of local) {
      const to = roomOf(target)
      if (to === undefined || to === from) continue
      if (target !== join(PIE, to, 'index.ts'))
        wrong.push(`${rel(file)} -> ${rel(target)}: not through pie/${to}/index.ts`)
      if (from !== undefined && PIE_ROOMS.indexOf(to) > PIE_ROOMS.indexOf(from))
        wrong.push(`${rel(file)} -> ${rel(target)}: ${from} comes before ${to}`)
    }
  }
  return wrong
}

describe('the rooms of src/pie', () => {
  it('src/pie holds its entry and the rooms, each with its index.ts', () => {
    const outside = FILES.filter(
      (file) => file.startsWith(`${PIE}/`) && file !== join(PIE, 'index.ts') && !PIE_ROOMS.includes(roomOf(file)!),
    )
    expect(outside.map(rel)).toEqual([])
    for (const room of PIE_ROOMS) expect(GRAPH.has(join(PIE, room, 'index.ts')), `src/pie/${room}/index.ts`).toBe(true)
  })

  it('a room imports only the rooms before it, and any room only through its index.ts', () => {
    expect(roomViolations(GRAPH)).toEqual([])
  })

  it('finds a room importing a later one, and an import past the index.ts of a room', () => {
    const graph = new Map([
      [join(PIE, 'read', 'source.ts'), { local: [join(PIE, 'validate', 'index.ts')] }],
      [join(SRC, 'pipeline', 'prepared-pie.ts'), { local: [join(PIE, 'pack', 'pack.ts')] }],
      [join(PIE, 'pack', 'pack.ts'), { local: [join(PIE, 'read', 'index.ts'), join(PIE, 'pack', 'crc32.ts')] }],
    ])
    expect(roomViolations(graph)).toEqual([
      'pie/read/source.ts -> pie/validate/index.ts: read comes before validate',
      'pipeline/prepared-pie.ts -> pie/pack/pack.ts: not through pie/pack/index.ts',
    ])
  })
})

/** Unit tests of something other than one module of src: the repository's files, or every action at once. */
const REPO_LEVEL_TESTS = [
  'architecture.test.ts',
  'changelog.test.ts',
  'suite.test.ts',
  'action/action-yml.test.ts',
  'action/one-behaviour.test.ts',
]

describe('the unit tests mirror src', () => {
  it('test/unit/<layer>/<module>[.<aspect>].test.ts tests src/<layer>/<module>.ts (or a script of the repository)', () => {
    const UNIT = join(REPO_ROOT, 'test', 'unit')
    const tests = sourceFiles(UNIT)
      .map((file) => relative(UNIT, file))
      .filter((file) => file.endsWith('.test.ts'))
    expect(tests.length).toBeGreaterThan(40)
    const orphans = tests.filter((file) => {
      if (REPO_LEVEL_TESTS.includes(file)) return false
      const module = `${dirname(file) === '.' ? '' : `${dirname(file)}/`}${file.split('/').at(-1)!.split('.')[0]}.ts`
      return !GRAPH.has(join(SRC, module)) && !existsSync(join(REPO_ROOT, module))
    })
    expect(orphans).toEqual([])
  })
})
