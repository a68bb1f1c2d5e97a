import { mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { InvalidInputError, InvalidPieError } from '../../../../src/core/errors.ts'
import { assertValidPie, generatePie, validatePie } from '../../../../src/pie/index.ts'
import {
  buildZip,
  decodeCells,
  encodeCells,
  exampleFiles,
  removeTempDirs,
  tempDir,
  text,
  unzipExample,
  writeDir,
  zipOf,
  type Cell,
} from '../../../helpers/pie-fixtures.ts'
import { EXAMPLE_PIE } from '../../../helpers/example-pie.ts'

afterAll(removeTempDirs)

const PRIME = 3618502788666131213697322783095070105623107215331596699973092056135872020481n

describe('valid PIEs', () => {
  it('the example validates, as a zip, as bytes and as a directory', async () => {
    const zip = await validatePie(EXAMPLE_PIE)
    expect(zip).toMatchObject({ valid: true, problems: [] })
    expect(zip.summary).toMatchObject({ source: 'zip', builtins: ['output'], outputSize: 2 })
    expect((await validatePie(await readFile(EXAMPLE_PIE))).valid).toBe(true)
    const dir = await validatePie(await unzipExample())
    expect(dir).toMatchObject({ valid: true, summary: { source: 'directory' } })
    expect(dir.summary.memoryCells).toBe(zip.summary.memoryCells)
  })

  it('summarises the PIE', async () => {
    const { summary } = await validatePie(EXAMPLE_PIE)
    expect(summary).toMatchObject({
      version: '1.1',
      nSteps: 73,
      memoryCells: 102,
      programSize: 27,
      segments: [
        { name: 'program', index: 0, size: 27 },
        { name: 'execution', index: 1, size: 73 },
        { name: 'output', index: 2, size: 2 },
        { name: 'ret_fp', index: 3, size: 0 },
        { name: 'ret_pc', index: 4, size: 0 },
      ],
    })
    expect(summary.entries.map((e) => [e.name, e.method])).toEqual([
      ['metadata.json', 8],
      ['memory.bin', 8],
      ['additional_data.json', 8],
      ['execution_resources.json', 8],
      ['version.json', 8],
    ])
  })

  it('accepts a PIE without version.json (version 1.0)', async () => {
    const files = await exampleFiles()
    files.delete('version.json')
    const result = await validatePie(zipOf(files))
    expect(result).toMatchObject({ valid: true, summary: { version: '1.0' } })
  })

  it('accepts the generator output, large and tiny', async () => {
    for (const memoryBytes of [2 * 1024 * 1024, 4096]) {
      const dir = join(await tempDir(), 'gen')
      const generated = await generatePie({ outDir: dir, memoryBytes, seed: 5 })
      const result = await validatePie(dir)
      expect(result.problems).toEqual([])
      expect(result.summary.memoryCells).toBe(generated.cells)
    }
  })

  it('assertValidPie returns the summary of a valid PIE', async () => {
    await expect(assertValidPie(EXAMPLE_PIE)).resolves.toMatchObject({ nSteps: 73 })
  })

  // A segment's recorded size is the cells written in it, not a bound on the pointers into
  // it: cairo-lang's is_valid_memory_value checks a pointer's segment and lets its offset be
  // anything below 2^64 (is_concrete_address=False), cairo-vm's run_memory_validity_checks
  // checks no value at all. The Starknet OS writes such pointers (snos-sepolia-924016.zip holds
  // (15, 563) with segment 15 of size 557).
  it.each([
    ['one past the end of its segment', { segment: 2, offset: 3 }],
    ['far past the end of its segment', { segment: 1, offset: 2 ** 46 }],
    ['into ret_pc, a segment of size 0', { segment: 4, offset: 9 }],
  ])('accepts a pointer %s, as cairo-lang and cairo-vm do', async (_name, pointer) => {
    const files = editCells(await exampleFiles(), (cells) => setCell(cells, 1, 5, pointer))
    for (const input of [zipOf(files), await writeDir(await tempDir(), files)]) {
      expect(await validatePie(input)).toMatchObject({ valid: true, problems: [] })
    }
  })
  // Both readers load these as the same PIE (issue 33): junk above a pointer's 16 segment bits
  // (cairo-lang's RelocatableValue.from_bytes and cairo-vm's CairoPieMemory::from_bytes both
  // ignore bits 63 to 254), and keys in version.json besides "cairo_pie" (cairo-lang never reads
  // the file, cairo-vm's serde skips unknown keys).
  it('accepts an address written twice with the same value, and names the cell written with another', async () => {
    const same = editCells(await exampleFiles(), (cells) => [
      ...cells,
      { ...cells.find((c) => c.segment === 1 && c.offset === 10)! },
      { ...cells.find((c) => c.segment === 2 && c.offset === 1)! },
    ])
    for (const input of [zipOf(same), await writeDir(await tempDir(), same)]) {
      expect(await validatePie(input)).toMatchObject({ valid: true, problems: [] })
    }
    const other = editCells(await exampleFiles(), (cells) => [
      ...cells,
      { ...cells.find((c) => c.segment === 1 && c.offset === 10)! },
      { segment: 1, offset: 10, value: 12345n },
    ])
    expect((await validatePie(zipOf(other))).refusals).toEqual([
      {
        problem: expect.stringMatching(
          /^memory\.bin: cell at byte 4120 writes address \(1, 10\) again with another value; .* \[ambiguous: /,
        ),
        reason: 'ambiguous',
      },
    ])
  })

  it('accepts a pointer with junk above its segment bits, and version.json with extra keys', async () => {
    const files = editCells(await exampleFiles(), (cells) =>
      setCell(cells, 1, 5, (1n << 255n) | (1n << 254n) | (1n << 100n) | (1n << 63n) | (2n << 47n) | 1n),
    )
    files.set('version.json', '{"cairo_pie": "1.1", "note": "x"}')
    for (const input of [zipOf(files), await writeDir(await tempDir(), files)]) {
      expect(await validatePie(input)).toMatchObject({ valid: true, problems: [], refusals: [] })
    }
  })
})

// The five kinds of PIE cairo-lang v0.14.0.1 refused and `validate` passed (issue 33): each is now
// refused, saying cairo-lang refuses it, with that reason per problem in `refusals`.
describe('what cairo-lang refuses and cairo-vm loads', () => {
  it.each([
    [
      'an unknown key at the top of metadata.json',
      'metadata.json',
      (t: string) => t.replace('{', '{"extra": 1, '),
      /metadata\.json: the top level has unknown key "extra"; cairo-lang's schema allows only program, /,
    ],
    [
      'an unknown key in execution_resources.json',
      'execution_resources.json',
      (t: string) => t.replace('{', '{"n_steps_extra": 1, '),
      /execution_resources\.json: the top level has unknown key "n_steps_extra"/,
    ],
    [
      'an unknown key inside program',
      'metadata.json',
      (t: string) => t.replace('"program": {', '"program": {"hints": {}, '),
      /metadata\.json: program has unknown key "hints"; cairo-lang's schema allows only data, builtins, main, prime/,
    ],
    [
      'an unknown key inside a segment entry',
      'metadata.json',
      (t: string) => t.replace('"program_segment": {', '"program_segment": {"name": "p", '),
      /metadata\.json: program_segment has unknown key "name"; cairo-lang's schema allows only index, size/,
    ],
    [
      'non-ASCII bytes in additional_data.json',
      'additional_data.json',
      (t: string) => t.replace('{', '{"pedersen_builtin": [], "\u00e9": 1, ').replace('"\u00e9"', '"é"'),
      /additional_data\.json: byte \d+ is 0xc3, not ASCII; cairo-lang reads a PIE's JSON files as ASCII/,
    ],
  ])('%s', async (_name, file, change, rule) => {
    const files = edit(await exampleFiles(), file, change)
    const result = await validatePie(zipOf(files))
    expect(result.valid).toBe(false)
    const refusal = result.refusals.find((r) => rule.test(r.problem))
    expect(refusal, result.problems.join('\n')).toMatchObject({ reason: 'cairo-lang' })
    expect(refusal!.problem).toMatch(/ \[cairo-lang refuses it\]$/)
  })
})

// What cairo-lang loads but the project refuses, each with its reason (docs/pie-validation.md).
describe('stricter than cairo-lang, each with its reason', () => {
  it.each([
    [
      'n_steps as 72.0',
      'execution_resources.json',
      (t: string) => t.replace('"n_steps": 73', '"n_steps": 73.0'),
      'cairo-vm',
    ],
    [
      'a segment size as a string',
      'metadata.json',
      (t: string) =>
        t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3, "size": "0"}'),
      'cairo-vm',
    ],
    [
      'another prime (2^255 - 19, above every word)',
      'metadata.json',
      (t: string) =>
        t.replace(
          /"prime": \d+/,
          '"prime": 57896044618658097711785492504343953926634992332820282019728792003956564819949',
        ),
      'cairo-vm',
    ],
    [
      'an additional_data key that is no builtin',
      'additional_data.json',
      (t: string) => t.replace('{', '{"notes": [], '),
      'cairo-vm',
    ],
    [
      'output pages without gps_fact_topology',
      'additional_data.json',
      () => '{"output_builtin": {"pages": {"1": [1, 1]}, "attributes": {}}}',
      'unprovable',
    ],
    ['no output_builtin entry', 'additional_data.json', () => '{}', 'unprovable'],
    ['output_builtin null', 'additional_data.json', () => '{"output_builtin": null}', 'unprovable'],
    ['a key given twice', 'execution_resources.json', (t: string) => t.replace('{', '{"n_steps": 9, '), 'ambiguous'],
    // cairo-lang places the segment where the string says, so its cells are where they belong:
    // the one problem is cairo-vm's, not a cascade of cells "in no segment" blamed on cairo-lang.
    [
      'an index as a string',
      'metadata.json',
      (t: string) => t.replace('"execution_segment": {"index": 1,', '"execution_segment": {"index": "1",'),
      'cairo-vm',
    ],
    [
      'n_steps as 73.5 (marshmallow reads 73)',
      'execution_resources.json',
      (t: string) => t.replace('"n_steps": 73', '"n_steps": 73.5'),
      'cairo-vm',
    ],
  ])('%s: %s', async (_name, file, change, reason) => {
    const result = await validatePie(zipOf(edit(await exampleFiles(), file, change)))
    expect(result.valid).toBe(false)
    expect([...new Set(result.refusals.map((r) => r.reason))]).toEqual([reason])
  })

  it('a value at the prime is ambiguous, a duplicate address too, an unwritten output cell unprovable', async () => {
    const files = editCells(await exampleFiles(), (cells) => [
      ...setCell(cells, 1, 12, PRIME).filter((cell) => !(cell.segment === 2 && cell.offset === 1)),
      { segment: 1, offset: 10, value: 5n },
    ])
    const { refusals } = await validatePie(zipOf(files))
    expect(refusals).toEqual([
      {
        problem: expect.stringMatching(/holds 0x[0-9a-f]+, which is not below the prime .*\[ambiguous: /),
        reason: 'ambiguous',
      },
      { problem: expect.stringMatching(/writes address \(1, 10\) again.*\[ambiguous: /), reason: 'ambiguous' },
      {
        problem: expect.stringMatching(/output segment 2 \(size 2\) is not fully written.*\[unprovable: /),
        reason: 'unprovable',
      },
    ])
  })
})

type Files = Map<string, Uint8Array | string>
type Variant = [name: string, build: (files: Files) => Promise<Uint8Array | string> | Uint8Array | string, rule: RegExp]

const edit = (files: Files, name: string, change: (text: string) => string): Files => {
  const before = text(files.get(name) as Uint8Array)
  const after = change(before)
  if (after === before) throw new Error(`edit of ${name} changed nothing`)
  files.set(name, after)
  return files
}
const editCells = (files: Files, change: (cells: Cell[]) => Cell[]): Files => {
  files.set('memory.bin', encodeCells(change(decodeCells(files.get('memory.bin') as Uint8Array))))
  return files
}
const setCell = (cells: Cell[], segment: number, offset: number, value: Cell['value']) => {
  const cell = cells.find((c) => c.segment === segment && c.offset === offset)
  if (!cell) throw new Error(`no cell (${segment}, ${offset})`)
  cell.value = value
  return cells
}
const asZip = (files: Files) => zipOf(files)

// fib-cairo-lang-writer.zip: segments program 0 (31), execution 1 (61), output 2 (2), ret_fp 3, ret_pc 4.
const catalogue: Variant[] = [
  [
    'truncated memory',
    (f) => asZip(f.set('memory.bin', (f.get('memory.bin') as Uint8Array).subarray(0, 3753))),
    /memory\.bin: size 3753 bytes is not a multiple of 40; the last cell \(byte 3720\) is truncated/,
  ],
  [
    'bad pointer (unknown segment)',
    (f) => asZip(editCells(f, (c) => setCell(c, 1, 5, { segment: 9, offset: 0 }))),
    /memory\.bin: cell at byte \d+ holds a pointer into segment 9, which does not exist \(segments 0-4\)/,
  ],
  [
    'address outside its segment',
    (f) => asZip(editCells(f, (c) => [...c, { segment: 1, offset: 73, value: 5n }])),
    /memory\.bin: cell at byte 4080 has address \(1, 73\), past the end of segment 1 \(size 73\)/,
  ],
  [
    'address in a segment that does not exist',
    (f) => asZip(editCells(f, (c) => [...c, { segment: 7, offset: 0, value: 5n }])),
    /memory\.bin: cell at byte 4080 has address in segment 7, which does not exist \(segments 0-4\)/,
  ],
  [
    'duplicate address',
    (f) => asZip(editCells(f, (c) => [...c, { segment: 1, offset: 10, value: 5n }])),
    /memory\.bin: cell at byte 4080 writes address \(1, 10\) again/,
  ],
  [
    'address without the relocatable bit',
    (f) => {
      const memory = Buffer.from(f.get('memory.bin') as Uint8Array)
      memory[3760 - 1 - 32] = memory[3760 - 1 - 32]! & 0x7f
      return asZip(f.set('memory.bin', memory))
    },
    /cell at byte 3720 has address 0x[0-9a-f]+, which is not a relocatable address/,
  ],
  [
    'field element not below the prime',
    (f) => asZip(editCells(f, (c) => setCell(c, 1, 6, PRIME + 5n))),
    /memory\.bin: cell at byte \d+ holds 0x[0-9a-f]+, which is not below the prime/,
  ],
  [
    'stored (method 0) entry',
    (f) => buildZip([...f].map(([name, data]) => ({ name, data, method: name === 'memory.bin' ? 0 : 8 }))),
    /entry "memory\.bin" uses compression method 0 \(stored\); cairo-lang requires DEFLATE \(method 8\)/,
  ],
  ['extra entry', (f) => asZip(f.set('notes.txt', 'hello')), /extra entry "notes\.txt"/],
  [
    'folder prefix',
    (f) => buildZip([...f].map(([name, data]) => ({ name: `pie/${name}`, data }))),
    /entry "pie\/metadata\.json" is inside a folder; "metadata\.json" must sit at the root/,
  ],
  [
    'folder entry',
    (f) => buildZip([{ name: 'pie/', data: '' }, ...[...f].map(([name, data]) => ({ name, data }))]),
    /entry "pie\/" is a folder/,
  ],
  [
    '__MACOSX entry',
    (f) => buildZip([...[...f].map(([name, data]) => ({ name, data })), { name: '__MACOSX/._memory.bin', data: 'x' }]),
    /entry "__MACOSX\/\._memory\.bin" is macOS metadata/,
  ],
  [
    'duplicate entry',
    (f) =>
      buildZip([
        ...[...f].map(([name, data]) => ({ name, data })),
        { name: 'version.json', data: '{"cairo_pie": "1.1"}' },
      ]),
    /entry "version\.json" appears more than once/,
  ],
  [
    'missing file',
    (f) => {
      f.delete('memory.bin')
      return asZip(f)
    },
    /missing required entry "memory\.bin"/,
  ],
  ['not a zip', () => Buffer.from('{"this is": "json"}'), /does not start with "PK" \(first bytes 7b 22 74 68\)/],
  ['empty file', () => new Uint8Array(), /does not start with "PK" \(first bytes none: empty file\)/],
  [
    'CRC mismatch',
    (f) => {
      const zip = Buffer.from(asZip(f))
      const at = zip.indexOf(Buffer.from('memory.bin')) + 10 + 40 // inside memory.bin's compressed data
      zip[at] = zip[at]! ^ 0xff
      return zip
    },
    /memory\.bin: (CRC-32 mismatch|compressed data is corrupt)/,
  ],
  [
    'huge n_steps',
    (f) => asZip(edit(f, 'execution_resources.json', (t) => t.replace('"n_steps": 73', '"n_steps": 1073741824'))),
    /execution_resources\.json: n_steps = 1073741824; must satisfy 1 <= n_steps < 2\^30/,
  ],
  [
    'n_steps 0',
    (f) => asZip(edit(f, 'execution_resources.json', (t) => t.replace('"n_steps": 73', '"n_steps": 0'))),
    /execution_resources\.json: n_steps = 0; must satisfy 1 <= n_steps < 2\^30/,
  ],
  [
    'builtin counters wrong',
    (f) => asZip(edit(f, 'execution_resources.json', (t) => t.replace('"output_builtin": 2', '"pedersen_builtin": 2'))),
    /builtin_instance_counter keys must be exactly "output_builtin" \(one per program builtin\): missing "output_builtin"; unexpected "pedersen_builtin"/,
  ],
  [
    'negative builtin counter',
    (f) => asZip(edit(f, 'execution_resources.json', (t) => t.replace('"output_builtin": 2', '"output_builtin": -2'))),
    /builtin_instance_counter\.output_builtin = -2; must be an integer in \[0, 2\^30\)/,
  ],
  [
    'JSON rounded big integers in program data',
    (f) => asZip(f.set('metadata.json', JSON.stringify(JSON.parse(text(f.get('metadata.json') as Uint8Array))))),
    /metadata\.json: program\.data\[23\] is 3\.618502788666131\d*e\+75, not an integer/,
  ],
  [
    'a big integer rounded to a neighbouring integer',
    (f) => asZip(edit(f, 'metadata.json', (t) => t.replace('[290341444919459839,', '[290341444919459840,'))),
    /memory\.bin: program segment cell \(0, 0\) at byte 0 is 290341444919459839, but metadata\.json program\.data\[0\] = 290341444919459840/,
  ],
  [
    'program word not below the prime',
    (f) => asZip(edit(f, 'metadata.json', (t) => t.replace('[290341444919459839,', `[${PRIME},`))),
    /metadata\.json: program\.data\[0\] = 3618\d+ is not in \[0, prime\)/,
  ],
  [
    'prime too small',
    (f) => asZip(edit(f, 'metadata.json', (t) => t.replace(`"prime": ${PRIME}`, '"prime": 9223372036854775783'))),
    /metadata\.json: program\.prime = 9223372036854775783 is not above 2\^63/,
  ],
  [
    'builtins out of order',
    (f) =>
      asZip(edit(f, 'metadata.json', (t) => t.replace('"builtins": ["output"]', '"builtins": ["pedersen", "output"]'))),
    /program\.builtins: "output" comes after "pedersen", out of the canonical order/,
  ],
  [
    'unknown builtin',
    (f) =>
      asZip(edit(f, 'metadata.json', (t) => t.replace('"builtins": ["output"]', '"builtins": ["output", "sha256"]'))),
    /program\.builtins: unknown builtin "sha256"/,
  ],
  [
    'repeated builtin',
    (f) =>
      asZip(edit(f, 'metadata.json', (t) => t.replace('"builtins": ["output"]', '"builtins": ["output", "output"]'))),
    /program\.builtins: builtin "output" appears more than once/,
  ],
  [
    'builtin segments do not match the builtins',
    (f) =>
      asZip(
        edit(f, 'metadata.json', (t) => t.replace('"builtin_segments": {"output"', '"builtin_segments": {"pedersen"')),
      ),
    /builtin_segments lists \[pedersen\]; must list program\.builtins \[output\] in that order/,
  ],
  [
    'ret_fp segment not empty',
    (f) =>
      asZip(
        edit(f, 'metadata.json', (t) =>
          t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3, "size": 3}'),
        ),
      ),
    /metadata\.json: ret_fp_segment\.size is 3; must be 0/,
  ],
  [
    'segment index out of place',
    (f) =>
      asZip(
        edit(f, 'metadata.json', (t) =>
          t.replace('"execution_segment": {"index": 1', '"execution_segment": {"index": 7'),
        ),
      ),
    /metadata\.json: execution_segment\.index is 7; must be 1/,
  ],
  [
    'segment size of 2^30',
    (f) =>
      asZip(
        edit(f, 'metadata.json', (t) =>
          t.replace(
            '"execution_segment": {"index": 1, "size": 73}',
            '"execution_segment": {"index": 1, "size": 1073741824}',
          ),
        ),
      ),
    /execution_segment\.size is 1073741824; must be an integer in \[0, 2\^30\)/,
  ],
  [
    'program segment size differs from the data',
    (f) =>
      asZip(
        edit(f, 'metadata.json', (t) =>
          t.replace('"program_segment": {"index": 0, "size": 27}', '"program_segment": {"index": 0, "size": 26}'),
        ),
      ),
    /program_segment\.size is 26; must equal len\(program\.data\) = 27/,
  ],
  [
    'main out of range',
    (f) => asZip(edit(f, 'metadata.json', (t) => t.replace('"main": 6', '"main": 27'))),
    /metadata\.json: program\.main = 27 is outside program\.data \(0 <= main < 27\)/,
  ],
  [
    'metadata not JSON',
    (f) => asZip(edit(f, 'metadata.json', (t) => t.slice(0, 100))),
    /metadata\.json: not valid JSON: .* at character 100/,
  ],
  [
    'output segment not fully written',
    (f) => asZip(editCells(f, (c) => c.filter((cell) => !(cell.segment === 2 && cell.offset === 1)))),
    /memory\.bin: output segment 2 \(size 2\) is not fully written: 1 cell missing \(offsets 1\)/,
  ],
  [
    'output holds a pointer',
    (f) => asZip(editCells(f, (c) => setCell(c, 2, 0, { segment: 1, offset: 4 }))),
    /memory\.bin: output cell \(2, 0\) at byte \d+ holds a pointer \(1, 4\); program output must be field elements/,
  ],
  [
    'program segment cell changed',
    (f) => asZip(editCells(f, (c) => setCell(c, 0, 3, 5n))),
    /memory\.bin: program segment cell \(0, 3\) at byte 120 is 5, but metadata\.json program\.data\[3\] = 4/,
  ],
  [
    'program segment cell missing',
    (f) => asZip(editCells(f, (c) => c.filter((cell) => !(cell.segment === 0 && cell.offset === 26)))),
    /the program segment is not fully written: 1 cell missing \(offsets 26\)/,
  ],
  [
    'version.json wrong',
    (f) => asZip(f.set('version.json', '{"cairo_pie": "2.0"}')),
    /version\.json: must hold "cairo_pie": "1\.1" \(or be left out\); found cairo_pie = "2\.0" \[cairo-vm refuses it\]/,
  ],
  [
    'version.json of 1.0, which cairo-vm refuses',
    (f) => asZip(f.set('version.json', '{"cairo_pie": "1.0"}')),
    /version\.json: .* found cairo_pie = "1\.0" \[cairo-vm refuses it\]/,
  ],
  [
    'bad output pages',
    (f) => asZip(f.set('additional_data.json', '{"output_builtin": {"pages": {"1": [1, 1]}, "attributes": {}}}')),
    /additional_data\.json: output_builtin: output pages are declared but the gps_fact_topology attribute is missing/,
  ],
  [
    'output pages whose tree has two roots',
    (f) =>
      asZip(
        f.set(
          'additional_data.json',
          '{"output_builtin": {"pages": {"1": [1, 1]}, "attributes": {"gps_fact_topology": [2, 0]}}}',
        ),
      ),
    /additional_data\.json: output_builtin: fact topology: the tree does not end with a single root/,
  ],
  [
    'additional data not an object',
    (f) => asZip(f.set('additional_data.json', '[1, 2]')),
    /additional_data\.json: top level is an array; expected an object/,
  ],
  [
    'oversized version.json',
    (f) => asZip(f.set('version.json', `{"cairo_pie": "1.1"}${' '.repeat(10_000)}`)),
    /entry "version\.json" is 10020 bytes; cairo-lang accepts under 10000/,
  ],
  [
    'symlink in the directory',
    async (f) => {
      const dir = await writeDir(await tempDir(), f)
      const target = join(await tempDir(), 'elsewhere.json')
      await writeFile(target, f.get('version.json')!)
      await rm(join(dir, 'version.json'))
      await symlink(target, join(dir, 'version.json'))
      return dir
    },
    /"version\.json" is a symbolic link; PIE files must be regular files/,
  ],
  [
    'extra file and folder in the directory',
    async (f) => {
      const dir = await writeDir(await tempDir(), f)
      await mkdir(join(dir, '__MACOSX'))
      return dir
    },
    /extra folder "__MACOSX"/,
  ],
  [
    'file missing from the directory',
    async (f) => {
      f.delete('execution_resources.json')
      return writeDir(await tempDir(), f)
    },
    /missing required file "execution_resources\.json"/,
  ],
]

describe('corrupted PIEs: each is rejected naming the rule', () => {
  it('the catalogue is large', () => {
    expect(catalogue.length).toBeGreaterThanOrEqual(25)
  })

  it.each(catalogue)('%s', async (_name, build, rule) => {
    const input = await build(await exampleFiles())
    const result = await validatePie(input)
    expect(result.valid).toBe(false)
    expect(
      result.problems.some((line) => rule.test(line)),
      result.problems.join('\n'),
    ).toBe(true)
    for (const line of result.problems) expect(line).not.toContain('\n')
  })
})

describe('problem reporting', () => {
  it('reports every problem, capped, with a count of the rest', async () => {
    const files = await exampleFiles()
    editCells(files, (cells) => [
      ...cells,
      ...Array.from({ length: 200 }, (_, k) => ({ segment: 9, offset: k, value: 1n })),
    ])
    edit(files, 'execution_resources.json', (t) => t.replace('"n_steps": 73', '"n_steps": 0'))
    const result = await validatePie(zipOf(files), { maxProblems: 20 })
    expect(result.valid).toBe(false)
    // A flood of one rule is capped so other rules stay visible.
    expect(result.problems.filter((line) => line.includes('segment 9'))).toHaveLength(10)
    expect(result.problems.some((line) => line.includes('n_steps = 0'))).toBe(true)
    expect(result.problems.at(-1)).toBe('... and 190 more problems')
  })

  it('assertValidPie throws InvalidPieError with the problems', async () => {
    const files = await exampleFiles()
    edit(files, 'metadata.json', (t) => t.replace('"main": 6', '"main": 27'))
    const dir = await writeDir(await tempDir(), files)
    const error = await assertValidPie(dir).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(InvalidPieError)
    expect((error as InvalidPieError).problems).toEqual([expect.stringMatching(/program\.main = 27/)])
    expect((error as InvalidPieError).message).toMatch(/is not a valid Cairo PIE \(1 problem\)/)
  })

  it('throws InvalidInputError when there is nothing at the path', async () => {
    await expect(validatePie(join(await tempDir(), 'nothing.zip'))).rejects.toBeInstanceOf(InvalidInputError)
  })
})

describe('memory.bin fed by another reader (the packer)', () => {
  // Cells of every kind the scan's fast path must hand to the full check: a duplicate, an
  // address past its segment, an unknown segment, pointers into no segment or too wide (and one
  // far past its segment, which is valid), values at and above the prime, a non-relocatable
  // address; around them, ordinary cells it takes itself.
  const oddCells = (cells: Cell[]): Uint8Array => {
    // Execution cells (1, 10..15) keep their addresses and get odd values.
    setCell(cells, 1, 10, { segment: 7, offset: 0 })
    setCell(cells, 1, 11, { segment: 12, offset: 74 })
    setCell(cells, 1, 15, { segment: 1, offset: 2 ** 40 })
    setCell(cells, 1, 12, PRIME)
    setCell(cells, 1, 13, PRIME + 1n)
    // Junk above the segment bits, which cairo-lang and cairo-vm ignore: a pointer into segment 9.
    setCell(cells, 1, 14, (1n << 255n) | (1n << 200n) | (9n << 47n))
    const extra: Cell[] = [
      { segment: 1, offset: 3, value: 5n },
      { segment: 1, offset: 73, value: 1n },
      { segment: 9, offset: 0, value: 1n },
      { segment: 3, offset: 0, value: 1n },
      { segment: 1, offset: 20, value: 7n },
    ]
    const memory = Buffer.from(encodeCells([...cells, ...extra]))
    // The relocatable bit cleared in the last cell's address.
    memory[memory.length - 40 + 7]! &= 0x7f
    return memory
  }

  it('finds the same problems as reading the file, aligned or not, in any chunking', async () => {
    const files = await exampleFiles()
    const memory = oddCells(decodeCells(files.get('memory.bin') as Uint8Array))
    files.set('memory.bin', memory)
    const dir = await writeDir(await tempDir(), files)
    const expected = await validatePie(dir, { maxProblems: 100 })
    expect(expected.valid).toBe(false)
    expect(expected.problems.length).toBeGreaterThanOrEqual(10)
    const feed = async function* (chunkSize: number, shift: number) {
      for (let at = 0; at < memory.length; at += chunkSize) {
        const piece = memory.subarray(at, at + chunkSize)
        // `shift` bytes in front: a chunk at an address that is not a multiple of 4 takes the cell-by-cell path.
        const holder = new Uint8Array(piece.length + shift)
        holder.set(piece, shift)
        yield holder.subarray(shift)
      }
    }
    for (const [chunkSize, shift] of [
      [memory.length, 0],
      [memory.length, 1],
      [4096, 0],
      [1000, 2],
      [40 * 7, 0],
    ] as const) {
      const fed = await validatePie(dir, { maxProblems: 100, memoryChunks: feed(chunkSize, shift) })
      expect(fed.problems, `${chunkSize} bytes a chunk, shifted by ${shift}`).toEqual(expected.problems)
      expect(fed.summary.memoryCells).toBe(expected.summary.memoryCells)
    }
  })
})
