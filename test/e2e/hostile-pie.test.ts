import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FormData } from 'undici'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PieBudgetError } from '../../src/pie/validate/budgets.ts'
import { parseJson, JsonBudgetError } from '../../src/pie/validate/json.ts'
import { SeenCells, SeenCellsBudgetError } from '../../src/pie/validate/memory.ts'
import { inspectPie, validatePie } from '../../src/pie/index.ts'
import { spawnCli } from '../helpers/cli.ts'
import { useEmulator } from '../helpers/emulator.ts'
import { jsonBombPie, metadataObjectBomb, sparseSegmentsPie } from '../helpers/hostile-pies.ts'
import { EXAMPLE_PIE, generatedPie } from '../helpers/example-pie.ts'

/**
 * Hostile pie.zip files (issue 13): each is refused with one line and exit 2 by a real
 * `proving validate` process whose V8 heap is capped at 256 MiB (a process that needed more would
 * die with exit 134, not exit 2), and with a 400 by the emulator, which then goes on serving.
 * Time and peak RSS are measured outside the suite (docs/reliability.md, "Budgets").
 */

let dir: string
const pies: Record<string, string> = {}
const HEAP_CAP = ['--max-old-space-size=256']

const hostile: [string, () => Promise<Uint8Array>, RegExp][] = [
  [
    "metadata.json inflating to 120M empty objects (the issue's zip bomb)",
    metadataObjectBomb,
    /metadata\.json inflates to 360000025 bytes, past its budget of 32 MiB/,
  ],
  [
    'metadata.json of 10M objects (30 MB) declared honestly under the size budget',
    () => jsonBombPie({ head: '{"program":{"data":[', unit: '{},', count: 10_000_000, tail: '{}]}}' }),
    /metadata\.json holds more than 100000 JSON objects/,
  ],
  [
    'metadata.json of 15M small integers (30 MB) (one BigInt each)',
    () => jsonBombPie({ head: '{"program":{"data":[', unit: '0,', count: 15_000_000, tail: '0]}}' }),
    /metadata\.json holds more than 2000000 JSON values/,
  ],
  [
    'additional_data.json of nested arrays',
    () =>
      jsonBombPie({
        entry: 'additional_data.json',
        head: '{"pedersen_builtin":[',
        unit: '[[]],',
        count: 6_000_000,
        tail: '[]]}',
      }),
    /additional_data\.json holds more than 600000 JSON arrays and objects/,
  ],
  [
    '16 segments of 2^30-1 with one cell per 32768-cell page',
    () => sparseSegmentsPie(),
    /memory\.bin holds more than 65536 cells scattered sparsely/,
  ],
]

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hostile-pie-'))
  for (const [name, make] of hostile) {
    const path = join(dir, `${Object.keys(pies).length}.zip`)
    await writeFile(path, await make())
    pies[name] = path
  }
}, 120_000)
afterAll(() => rm(dir, { recursive: true, force: true }))

describe('proving validate on hostile PIEs', () => {
  it.each(hostile)('%s: exit 2, one line naming the file and the budget', async (name, _make, reason) => {
    const run = await spawnCli(['validate', pies[name]!], { nodeOptions: HEAP_CAP }).done
    expect(run.code).toBe(2)
    const lines = run.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(reason)
    expect(lines[0]).toContain(pies[name]!)
  })

  it('the library: validatePie reports the budget as the one problem; inspectPie throws PieBudgetError (an InvalidInputError)', async () => {
    for (const [name, , reason] of hostile) {
      const result = await validatePie(pies[name]!)
      expect(result.valid).toBe(false)
      expect(result.problems).toHaveLength(1)
      expect(result.problems[0]).toMatch(reason)
    }
    await expect(inspectPie(pies[hostile[4]![0]]!)).rejects.toBeInstanceOf(PieBudgetError)
  })

  it('the example and a generated 1 MiB PIE are far inside every budget (cairo-lang and cairo-vm PIEs: test/interop/)', async () => {
    for (const pie of [EXAMPLE_PIE, (await generatedPie({ seed: 9, memoryBytes: 1024 * 1024 })).zip])
      expect((await validatePie(pie)).valid).toBe(true)
  })
})

describe('the emulator refuses hostile uploads with 400 and stays up', () => {
  const emulator = useEmulator({ apiKeys: ['k-hostile'] })
  it.each(hostile)('%s', async (name, _make, reason) => {
    const form = new FormData()
    for (const [field, value] of Object.entries({ mockFactHash: 'false', prover: 'svc_sharp', layout: 'auto' }))
      form.append(field, value)
    form.append(
      'pieFile',
      new Blob([await import('node:fs/promises').then((fs) => fs.readFile(pies[name]!))]),
      'pie.zip',
    )
    const answer = await emulator().call('POST', '/v1/l2/proving-query/proof-generation-verification', {
      query: { apiKey: 'k-hostile' },
      form,
    })
    expect(answer.status).toBe(400)
    expect(answer.body.details).toMatch(
      reason.source.includes('inflates') ? /inflates to \d+ bytes, past its budget/ : reason,
    )
    expect(answer.body.details).not.toContain(dir)
    const alive = await emulator().call('GET', '/is-alive')
    expect(alive.status).toBe(200)
  })
})

describe('the budgets themselves', () => {
  it('parseJson stops at the first value or object past its budget', () => {
    expect(() => parseJson('[1,2,3,4]', { maxNodes: 4 })).toThrow(JsonBudgetError)
    expect(parseJson('[1,2,3]', { maxNodes: 4 })).toEqual([1n, 2n, 3n])
    expect(() => parseJson('[{},{}]', { maxObjects: 1 })).toThrow(/more than 1 JSON objects/)
  })

  it('SeenCells: a dense trace stays in bitmap pages; sparse cells past the budget are exact, then refused', () => {
    const dense = new SeenCells({ baseBytes: 4096, bytesPerCell: 0.5, sparseCells: 10 })
    for (let offset = 0; offset < 100_000; offset++) expect(dense.mark(1, offset)).toBe(false)
    expect(dense.mark(1, 99_999)).toBe(true)
    expect(dense.sparseSize).toBe(0)
    const sparse = new SeenCells({ baseBytes: 4096, bytesPerCell: 0, sparseCells: 3 })
    expect(sparse.mark(1, 0)).toBe(false)
    expect(sparse.mark(2, 0)).toBe(false)
    expect(sparse.mark(2, 0)).toBe(true)
    expect(sparse.has(2, 0)).toBe(true)
    expect(sparse.has(2, 1)).toBe(false)
    expect(sparse.mark(3, 0)).toBe(false)
    expect(sparse.mark(4, 0)).toBe(false)
    expect(() => sparse.mark(5, 0)).toThrow(SeenCellsBudgetError)
    expect(sparse.bitmapBytes).toBe(4096)
  })
})
