import { readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../helpers/cli.ts'

/**
 * The library's documentation, as a user's editor shows it on hover: every export of every entry
 * of package.json `exports` has a summary; every function and every public method of the clients
 * has an `@example`, a `@param` for each parameter and a `@returns`; every property of an options
 * type says what it does; and every `@example` compiles against the package as a user imports it
 * (`proving-kit`, `proving-kit/pie`, ...), all in one TypeScript program. The doc comments of the
 * library speak to a library user: no file outside the repository, no issue number, no host's
 * words (a command, a flag, an action's input).
 */

/** What a user imports, and the source each name stands for. */
const ENTRIES: Record<string, string> = {
  'proving-kit': 'src/index.ts',
  'proving-kit/pie': 'src/pie/index.ts',
  'proving-kit/schemas': 'src/schemas/index.ts',
  'proving-kit/chain': 'src/chain/index.ts',
  'proving-kit/emulator': 'src/emulator/index.ts',
  'proving-kit/testing': 'src/testing.ts',
}
/** The classes whose every public method is documented like a function. */
const CLIENTS = ['ProvingClient', 'TaskClient', 'StorageProofClient', 'AccountClient', 'HttpClient']

/** References to texts a user does not have, issue numbers and the toolkit's internal words. */
const ELSEWHERE = /interface\.md|contract\.md|pie-and-facts\.md|production\.md|[Ii]ssue [0-9]+|#[0-9]+\b|\broom/
/** Words of the toolkit's other hosts: its command line and its GitHub Action. */
const HOST_WORDS =
  /\bCLI\b|\bGitHub Action\b|\bthe action\b|(?:^|[\s`(])--[a-z]|\b(?:step|job) summary\b|\baction inputs?\b/i

const abs = (file: string) => join(REPO_ROOT, file)
const parsed = ts.getParsedCommandLineOfConfigFile(
  abs('tsconfig.json'),
  {},
  { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
)!
const options: ts.CompilerOptions = {
  ...parsed.options,
  noEmit: true,
  paths: Object.fromEntries(Object.entries(ENTRIES).map(([name, file]) => [name, [abs(file)]])),
}

type Documented = {
  /** `proving-kit/pie: inspectPie`, `proving-kit: ProvingClient.waitForQuery`. */
  name: string
  where: string
  summary: string
  tags: readonly ts.JSDocTag[]
  /**
   * Set for a function or a method: its parameters' names (a destructured one is `undefined`), and
   * whether it returns anything.
   */
  callable?: { params: (string | undefined)[]; returns: boolean }
}

const tagText = (tag: ts.JSDocTag) => ts.getTextOfJSDocComment(tag.comment) ?? ''
const whereOf = (node: ts.Node) => {
  const file = node.getSourceFile()
  return `${file.fileName.slice(REPO_ROOT.length)}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}`
}
/** The doc comment of a declaration (a variable's sits on its statement). */
function docsOf(node: ts.Node): { summary: string; tags: readonly ts.JSDocTag[] } {
  const jsDocs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc)
  const summary = jsDocs
    .map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? '')
    .join('\n')
    .trim()
  return { summary, tags: jsDocs.flatMap((doc) => doc.tags ?? []) }
}

function callableOf(checker: ts.TypeChecker, node: ts.SignatureDeclaration): Documented['callable'] {
  const signature = checker.getSignatureFromDeclaration(node)!
  const returned = checker.getReturnTypeOfSignature(signature)
  const awaited = checker.getAwaitedType(returned) ?? returned
  return {
    params: node.parameters.map((param) => (ts.isIdentifier(param.name) ? param.name.text : undefined)),
    returns: !(awaited.flags & (ts.TypeFlags.Void | ts.TypeFlags.Undefined)),
  }
}

/**
 * Every documented thing of the public surface: each entry's exports, the clients' members, the
 * options types' properties.
 */
function surfaceOf(program: ts.Program): { items: Documented[]; options: Documented[] } {
  const checker = program.getTypeChecker()
  const items: Documented[] = []
  const optionProps: Documented[] = []
  const seen = new Set<ts.Node>()
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const module = checker.getSymbolAtLocation(program.getSourceFile(abs(file))!)!
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
      const declaration = target.declarations?.[0]
      if (!declaration || seen.has(declaration)) continue
      seen.add(declaration)
      const name = `${entry}: ${symbol.name}`
      const docs = docsOf(declaration)
      const item: Documented = { name, where: whereOf(declaration), ...docs }
      if (ts.isFunctionDeclaration(declaration)) item.callable = callableOf(checker, declaration)
      if (
        ts.isVariableDeclaration(declaration) &&
        declaration.initializer &&
        ts.isArrowFunction(declaration.initializer)
      ) {
        item.callable = callableOf(checker, declaration.initializer)
      }
      items.push(item)
      if (ts.isClassDeclaration(declaration)) {
        for (const member of declaration.members) {
          if (!member.name || ts.isPrivateIdentifier(member.name) || ts.isConstructorDeclaration(member)) continue
          if (ts.getCombinedModifierFlags(member) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue
          if (ts.isPropertyDeclaration(member) && member.name.getText() === 'name') continue
          const memberItem: Documented = {
            name: `${name}.${member.name.getText()}`,
            where: whereOf(member),
            ...docsOf(member),
          }
          if (CLIENTS.includes(symbol.name) && ts.isMethodDeclaration(member))
            memberItem.callable = callableOf(checker, member)
          items.push(memberItem)
        }
      }
      if (/Options$/.test(symbol.name) && target.flags & ts.SymbolFlags.Type) {
        for (const property of checker.getDeclaredTypeOfSymbol(target).getProperties()) {
          const node = property.declarations?.[0]
          if (!node || seen.has(node)) continue
          seen.add(node)
          optionProps.push({ name: `${name}.${property.name}`, where: whereOf(node), ...docsOf(node) })
        }
      }
    }
  }
  return { items, options: optionProps }
}

/** The code of each ```ts fence of an `@example`. */
const fencesOf = (text: string) => [...text.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)

const program = ts.createProgram(Object.values(ENTRIES).map(abs), options)
const surface = surfaceOf(program)

/** Each example as a module of its own under test/, importing the package by its published names. */
const examples = surface.items.flatMap((item) =>
  item.tags
    .filter((tag) => tag.tagName.text === 'example')
    .flatMap((tag) => fencesOf(tagText(tag)))
    .map((code, index) => ({
      item,
      file: abs(`test/unit/doc-example-${item.name.replace(/[^\w]+/g, '-')}-${index}.ts`),
      code: `${code}\nexport {}\n`,
    })),
)

/**
 * Request options whose values the client checks at run time are typed as those values: each of
 * these calls must fail to compile, on the wrong value it quotes.
 */
const WRONG_VALUES: Record<string, { code: string; value: string }> = {
  'submitPie: a layout of the general submission only': {
    value: 'plain',
    code: "await client.submitPie({ pieZip: 'pie.zip', layout: 'plain' })",
  },
  'submitQuery: a layout no endpoint takes': {
    value: 'fast',
    code: "await client.submitQuery({ declaredJobSize: 'XS', pieZip: 'pie.zip', layout: 'fast' })",
  },
  'submitQuery: a result kind': {
    value: 'PROOF_VERIFICATION_ON_MARS',
    code:
      "await client.submitQuery({ declaredJobSize: 'XS', programHash: '0x1', " +
      "result: 'PROOF_VERIFICATION_ON_MARS' })",
  },
  'submitQuery: a Cairo VM': {
    value: 'java',
    code: "await client.submitQuery({ declaredJobSize: 'XS', programHash: '0x1', cairoVm: 'java' })",
  },
  'submitQuery: a Cairo version': {
    value: 'cairo2',
    code: "await client.submitQuery({ declaredJobSize: 'XS', programHash: '0x1', cairoVersion: 'cairo2' })",
  },
  'submitQuery: a job size': {
    value: 'XL',
    code: "await client.submitQuery({ declaredJobSize: 'XL', programHash: '0x1' })",
  },
  'submitProofVerification: a Stone version': {
    value: 'stone7',
    code:
      "await client.submitProofVerification({ proof: 'proof.json', stoneVersion: 'stone7', " +
      "memoryVerification: 'strict' })",
  },
  'submitProofVerification: a memory verification': {
    value: 'lax',
    code:
      "await client.submitProofVerification({ proof: 'proof.json', stoneVersion: 'stone6', " +
      "memoryVerification: 'lax' })",
  },
  'listQueries: a network': { value: 'DEVNET', code: "await client.listQueries({ network: 'DEVNET' })" },
  'listTasks: a task status': {
    value: 'Done',
    code: "await new TaskClient({ baseUrl: 'https://tasks.example' }).listTasks({ status: 'Done' })",
  },
  "proveStatements: an endpoint's layout": {
    value: 'fast',
    code:
      "await proveStatements({ subjects: [], endpoint: { kind: 'l2', layout: 'fast', prover: 'svc_sharp', " +
      'mockFactHash: false }, policy: {} as StatementPolicy }, { client, logger: silentLogger })',
  },
}
const wrongValues = Object.entries(WRONG_VALUES).map(([name, { code, value }], index) => ({
  name,
  value,
  file: abs(`test/unit/doc-wrong-value-${index}.ts`),
  code: [
    "import { proveStatements, ProvingClient, silentLogger, type StatementPolicy, TaskClient } from 'proving-kit'",
    "const client = new ProvingClient({ baseUrl: 'https://proving.example', apiKey: 'key' })",
    code,
    'export {}',
    '',
  ].join('\n'),
}))

/** One program over the entries, the examples and the wrong values: the diagnostics of each file written here. */
function compile(): Map<string, { source: ts.SourceFile; diagnostics: readonly ts.Diagnostic[] }> {
  const byFile = new Map([...examples, ...wrongValues].map((file) => [file.file, file.code]))
  const host = ts.createCompilerHost(options)
  const { getSourceFile, fileExists, readFile } = host
  host.fileExists = (file) => byFile.has(file) || fileExists(file)
  host.readFile = (file) => byFile.get(file) ?? readFile(file)
  host.getSourceFile = (file, language, ...rest) => {
    const code = byFile.get(file)
    return code === undefined ? getSourceFile(file, language, ...rest) : ts.createSourceFile(file, code, language, true)
  }
  const compiled = ts.createProgram({
    rootNames: [...Object.values(ENTRIES).map(abs), ...byFile.keys()],
    options,
    host,
    oldProgram: program,
  })
  return new Map(
    [...byFile.keys()].map((file) => {
      const source = compiled.getSourceFile(file)!
      return [
        file,
        {
          source,
          diagnostics: [...compiled.getSyntacticDiagnostics(source), ...compiled.getSemanticDiagnostics(source)],
        },
      ]
    }),
  )
}
let compiled: ReturnType<typeof compile> | undefined
const compiledFile = (file: string) => (compiled ??= compile()).get(file)!

function exampleDiagnostics(): string[] {
  return examples.flatMap((example) => {
    const { source, diagnostics } = compiledFile(example.file)
    return diagnostics.map((diagnostic) => {
      const line = diagnostic.start === undefined ? 0 : source.getLineAndCharacterOfPosition(diagnostic.start).line + 1
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ')
      return `${example.item.name} (${example.item.where}), example line ${line}: ${message}`
    })
  })
}

/** Every class a `@throws {Name}` may name: the errors the entries export. */
const exportedNames = new Set(surface.items.map((item) => item.name.split(': ')[1]!))

describe('the library documented for its users', () => {
  it('every export of every entry, and every public member of its classes, has a summary', () => {
    const deprecated = (item: Documented) => item.tags.some((tag) => tag.tagName.text === 'deprecated')
    expect(
      surface.items.filter((item) => !item.summary && !deprecated(item)).map((item) => `${item.name} (${item.where})`),
    ).toEqual([])
  })

  it('every property of an options type says what it does', () => {
    expect(surface.options.filter((item) => !item.summary).map((item) => `${item.name} (${item.where})`)).toEqual([])
  })

  it('every function and client method has an @example, a @param for each parameter and a @returns', () => {
    const problems = surface.items.flatMap((item) => {
      if (!item.callable) return []
      const tagged = (name: string) => item.tags.filter((tag) => tag.tagName.text === name)
      // `@param options.signal` documents `options` too: a property of the object it is.
      const params = new Set(
        tagged('param').map((tag) => (ts.isJSDocParameterTag(tag) ? tag.name.getText().split('.')[0] : '')),
      )
      return [
        ...(fencesOf(tagged('example').map(tagText).join('\n')).length ? [] : ['no ```ts @example']),
        ...item.callable.params
          .filter((param) => param !== undefined && !params.has(param))
          .map((param) => `no @param ${param}`),
        ...(item.callable.returns && !tagged('returns').length ? ['no @returns'] : []),
      ].map((problem) => `${item.name} (${item.where}): ${problem}`)
    })
    expect(problems).toEqual([])
  })

  it('every @throws names an error class the package exports', () => {
    const named = surface.items.flatMap((item) =>
      item.tags
        .filter((tag) => tag.tagName.text === 'throws')
        .map((tag) => ({ item, type: ts.isJSDocThrowsTag(tag) ? tag.typeExpression?.type.getText() : undefined })),
    )
    expect(
      named.filter(({ type }) => !type || !exportedNames.has(type)).map(({ item, type }) => `${item.name}: ${type}`),
    ).toEqual([])
  })

  it('every @example compiles against the package as a user imports it', { timeout: 60_000 }, () => {
    expect(examples.length).toBeGreaterThan(0)
    expect(exampleDiagnostics()).toEqual([])
  })

  it.each(wrongValues)('$name does not compile', { timeout: 60_000 }, ({ file, value }) => {
    const messages = compiledFile(file).diagnostics.map((diagnostic) =>
      ts.flattenDiagnosticMessageText(diagnostic.messageText, ' '),
    )
    expect(messages).toEqual([expect.stringContaining(`'"${value}"'`)])
  })

  it("the surface's doc comments speak of options and results, not of a host's commands, flags or inputs", () => {
    const texts = [...surface.items, ...surface.options].flatMap((item) =>
      [item.summary, ...item.tags.filter((tag) => tag.tagName.text !== 'example').map(tagText)]
        .filter((text) => HOST_WORDS.test(text))
        .map((text) => `${item.name} (${item.where}): ${HOST_WORDS.exec(text)![0].trim()}`),
    )
    expect(texts).toEqual([])
  })

  it('no doc comment of the library (the action and the CLI aside) cites an outside text or an issue', () => {
    const files = execFileSync('git', ['ls-files', 'src/*.ts', ':!src/action/**', ':!src/cli/**'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    })
      .trim()
      .split('\n')
    const hits = files.flatMap((file) =>
      [...readFileSync(abs(file), 'utf8').matchAll(/\/\*\*[\s\S]*?\*\//g)].flatMap((comment) =>
        comment[0]
          .split('\n')
          .filter((line) => ELSEWHERE.test(line))
          .map((line) => `${file}: ${line.trim()}`),
      ),
    )
    expect(hits).toEqual([])
  })
})
