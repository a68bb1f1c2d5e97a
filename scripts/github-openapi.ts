/**
 * Writes test/helpers/github-openapi.json, the part of GitHub's published REST description (the
 * `@octokit/openapi` package's generated/api.github.com.json, 13 MB of a 385 MB package) that the
 * GitHub API stand-in (test/helpers/github-api.ts) judges requests and answers by: every path and
 * method with its operationId and server (so any request GitHub documents is still found, and one
 * the stand-in does not serve still gets its 501), and, for each operation the stand-in serves
 * (its `case '<operationId>':` lines), the whole operation with every component it refers to.
 * The package is fetched with `npm pack` (checked against the registry's integrity) into a
 * temporary folder, so it is not a dependency of the repository.
 *
 *   node scripts/github-openapi.ts            rewrite it from the version it records
 *   node scripts/github-openapi.ts 23.1.0     rewrite it from another version of @octokit/openapi
 *   node scripts/github-openapi.ts --check    fail if it is not what its recorded version gives
 *                                             (`npm run check:github-openapi`, run by CI)
 */
import { execFileSync } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const SUBSET = join(ROOT, 'test', 'helpers', 'github-openapi.json')
const STAND_IN = join(ROOT, 'test', 'helpers', 'github-api.ts')
const PACKAGE = '@octokit/openapi'
const DOCUMENT = 'package/generated/api.github.com.json'
const METHODS = ['get', 'post', 'put', 'patch', 'delete']

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type Operation = { operationId: string; servers?: Json } & Record<string, Json>
type Document = {
  info: Record<string, Json>
  servers: Json
  paths: Record<string, Record<string, Json>>
  components: Record<string, Record<string, Json>>
}

/** The operations the stand-in serves: its `case '<operationId>':` lines. */
export async function servedOperations(): Promise<string[]> {
  const source = await readFile(STAND_IN, 'utf8')
  return [...new Set([...source.matchAll(/case '([a-z0-9-]+\/[a-z0-9-]+)':/g)].map((match) => match[1]!))].sort()
}

/** The recorded version of @octokit/openapi, from the subset's `info`. */
async function recordedVersion(): Promise<string> {
  const subset = JSON.parse(await readFile(SUBSET, 'utf8')) as Document
  const source = subset.info['x-source']
  const version = typeof source === 'string' ? /@octokit\/openapi@([^ ]+) /.exec(source)?.[1] : undefined
  if (!version) throw new Error(`${SUBSET} records no @octokit/openapi version in info.x-source`)
  return version
}

async function fetchDocument(version: string): Promise<Document> {
  const dir = await mkdtemp(join(tmpdir(), 'github-openapi-'))
  try {
    const out = execFileSync('npm', ['pack', `${PACKAGE}@${version}`, '--pack-destination', dir, '--json'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    const tarball = (JSON.parse(out) as { filename: string }[])[0]!.filename.replace(/^@/, '').replace(/\//, '-')
    execFileSync('tar', ['-xzf', join(dir, tarball), '-C', dir, DOCUMENT])
    return JSON.parse(await readFile(join(dir, DOCUMENT), 'utf8')) as Document
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Every `#/components/...` reference in a value, followed through the components it names. */
function referencedComponents(document: Document, roots: Json[]): Record<string, Record<string, Json>> {
  const kept: Record<string, Record<string, Json>> = {}
  const queue = [...roots]
  while (queue.length) {
    const value = queue.pop()
    if (Array.isArray(value)) queue.push(...value)
    else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string') {
          const [, kind, name] = /^#\/components\/([^/]+)\/(.+)$/.exec(child) ?? []
          if (!kind || !name) throw new Error(`unexpected reference ${child}`)
          if (kept[kind]?.[name] !== undefined) continue
          const target = document.components[kind]?.[name]
          if (target === undefined) throw new Error(`${child} is not in the document`)
          ;(kept[kind] ??= {})[name] = target
          queue.push(target)
        } else queue.push(child)
      }
    }
  }
  // Sorted: the file is deterministic whatever order the walk took.
  return Object.fromEntries(
    Object.keys(kept)
      .sort()
      .map((kind) => [
        kind,
        Object.fromEntries(
          Object.keys(kept[kind]!)
            .sort()
            .map((name) => [name, kept[kind]![name]!]),
        ),
      ]),
  )
}

export function subsetOf(document: Document, version: string, served: string[]): string {
  const paths: Document['paths'] = {}
  const full: Json[] = []
  const found = new Set<string>()
  for (const [template, methods] of Object.entries(document.paths)) {
    for (const [method, raw] of Object.entries(methods)) {
      if (!METHODS.includes(method)) continue
      const operation = raw as Operation
      const entry: Record<string, Json> = served.includes(operation.operationId)
        ? operation
        : { operationId: operation.operationId, ...(operation.servers ? { servers: operation.servers } : {}) }
      if (served.includes(operation.operationId)) {
        found.add(operation.operationId)
        full.push(operation)
      }
      ;(paths[template] ??= {})[method] = entry
    }
  }
  const missing = served.filter((id) => !found.has(id))
  if (missing.length)
    throw new Error(`the stand-in serves operations GitHub's description lacks: ${missing.join(', ')}`)
  const subset = {
    openapi: (document as unknown as { openapi: string }).openapi,
    info: {
      title: document.info.title ?? null,
      version: document.info.version ?? null,
      'x-source': `${PACKAGE}@${version} generated/api.github.com.json, reduced by scripts/github-openapi.ts`,
      'x-served-operations': served,
    },
    servers: document.servers,
    paths,
    components: referencedComponents(document, full),
  }
  return `${JSON.stringify(subset, null, 1)}\n`
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const check = process.argv.includes('--check')
  const version = process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? (await recordedVersion())
  const text = subsetOf(await fetchDocument(version), version, await servedOperations())
  if (check) {
    const committed = await readFile(SUBSET, 'utf8').catch(() => '')
    if (committed !== text) {
      process.stderr.write(
        `${SUBSET} is not what ${PACKAGE}@${version} gives for the operations the stand-in serves: run node scripts/github-openapi.ts\n`,
      )
      process.exit(1)
    }
    process.stdout.write(`${SUBSET} is current (${PACKAGE}@${version})\n`)
  } else {
    await writeFile(SUBSET, text)
    process.stdout.write(`wrote ${SUBSET} from ${PACKAGE}@${version} (${Buffer.byteLength(text)} bytes)\n`)
  }
}
