import { execFileSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  inTotoStatement,
  PREDICATE_TYPE,
  type ProvenFacts,
  serviceOrigin,
  sha256Sums,
  STATEMENT_TYPE,
} from '../../../../src/action/github/statement.ts'

const PIE_SHA256 = 'AB'.repeat(32)
const FACTS: ProvenFacts & { pie: { name: string; sha256: string } } = {
  queryId: 'q-1',
  status: 'DONE',
  programHash: '0x1',
  sharpFactHash: '0x2',
  integrityFactHash: '0x3',
  isFactMocked: false,
  onchain: [{ chain: 'ethereum', registry: '0xabc', blockNumber: '12', registered: true }],
  gate: { passed: true, refusals: [] },
  pie: { name: 'pie.zip', sha256: PIE_SHA256 },
  service: 'https://proving.example.com',
  emulated: false,
  run: 'https://github.com/o/r/actions/runs/1',
}

/**
 * The in-toto Statement layer v1 (github.com/in-toto/attestation, spec/v1/statement.md and
 * resource_descriptor.md / digest_set.md), written out here as its rules rather than read from
 * our code: the four fields, `_type` fixed, a non-empty subject of resource descriptors with a
 * name and a DigestSet (lowercase algorithm names, lowercase hex of the algorithm's length), a
 * predicateType that is a URI, a predicate that is an object.
 */
function inTotoProblems(statement: Record<string, unknown>): string[] {
  const problems: string[] = []
  const allowed = ['_type', 'subject', 'predicateType', 'predicate']
  for (const key of Object.keys(statement)) if (!allowed.includes(key)) problems.push(`unknown field ${key}`)
  if (statement._type !== 'https://in-toto.io/Statement/v1') problems.push('_type')
  const subject = statement.subject
  if (!Array.isArray(subject) || subject.length === 0) problems.push('subject must be a non-empty array')
  const lengths: Record<string, number> = { sha256: 64, sha512: 128, sha384: 96, sha1: 40 }
  for (const entry of (subject as Record<string, unknown>[]) ?? []) {
    if (typeof entry.name !== 'string' || !entry.name) problems.push('subject name')
    const digest = entry.digest as Record<string, unknown> | undefined
    if (!digest || typeof digest !== 'object' || Object.keys(digest).length === 0) problems.push('subject digest')
    for (const [algorithm, value] of Object.entries(digest ?? {})) {
      if (algorithm !== algorithm.toLowerCase()) problems.push(`algorithm ${algorithm} not lowercase`)
      if (typeof value !== 'string' || !/^[0-9a-f]+$/.test(value)) problems.push(`${algorithm} is not lowercase hex`)
      else if (lengths[algorithm] !== undefined && value.length !== lengths[algorithm])
        problems.push(`${algorithm} has ${value.length} digits`)
    }
  }
  if (typeof statement.predicateType !== 'string' || !URL.canParse(statement.predicateType))
    problems.push('predicateType must be a URI')
  const predicate = statement.predicate
  if (typeof predicate !== 'object' || predicate === null || Array.isArray(predicate))
    problems.push('predicate must be an object')
  return problems
}

describe('facts.intoto.json', () => {
  it('is an in-toto v1 Statement about pie.zip, its predicate facts.json', () => {
    const statement = inTotoStatement(FACTS)
    expect(inTotoProblems(JSON.parse(JSON.stringify(statement)))).toEqual([])
    expect(statement._type).toBe(STATEMENT_TYPE)
    expect(statement.subject).toEqual([{ name: 'pie.zip', digest: { sha256: PIE_SHA256.toLowerCase() } }])
    expect(statement.predicateType).toBe(PREDICATE_TYPE)
    expect(statement.predicate).toEqual(FACTS)
  })

  it('the judge above refuses what the spec refuses (so the pass above means something)', () => {
    const good = JSON.parse(JSON.stringify(inTotoStatement(FACTS))) as Record<string, unknown>
    expect(inTotoProblems({ ...good, _type: 'https://in-toto.io/Statement/v0.1' })).toEqual(['_type'])
    expect(inTotoProblems({ ...good, subject: [] })).toEqual(['subject must be a non-empty array'])
    expect(inTotoProblems({ ...good, subject: [{ name: 'pie.zip', digest: { SHA256: PIE_SHA256 } }] })).toEqual([
      'algorithm SHA256 not lowercase',
      'SHA256 is not lowercase hex',
    ])
    expect(inTotoProblems({ ...good, predicateType: 'facts' })).toEqual(['predicateType must be a URI'])
  })
})

describe('serviceOrigin', () => {
  it('keeps scheme, host and port: never a path, query or credentials', () => {
    expect(serviceOrigin('https://user:pass@proving.example.com:8443/v1/?apiKey=secret')).toBe(
      'https://proving.example.com:8443',
    )
    expect(serviceOrigin('not a url')).toBeNull()
    expect(serviceOrigin(undefined)).toBeNull()
  })
})

describe('SHA256SUMS', () => {
  it('is what `sha256sum -c` accepts', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sums-'))
    const files = { 'pie.zip': 'zip bytes', 'facts.json': '{}\n' }
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
    const sums = sha256Sums(
      Object.entries(files).map(([name, text]) => ({ name, sha256: createHash('sha256').update(text).digest('hex') })),
    )
    writeFileSync(join(dir, 'SHA256SUMS'), sums)
    expect(execFileSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir, encoding: 'utf8' })).toBe(
      'pie.zip: OK\nfacts.json: OK\n',
    )
  })
})
