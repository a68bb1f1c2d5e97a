/**
 * Mutants of a valid PIE for the differential test against cairo-lang (test/interop/oracle.test.ts):
 * one change each, across the zip container, each JSON file and its nested schemas (program,
 * segment entries, output pages), memory.bin's encoding, the segment table and the builtins.
 * Some are valid (a reordered zip, extra keys where both readers ignore them), most are not;
 * the oracle, not this file, says which. Built from the committed example PIE
 * (examples/fib/pie.zip: fibonacci with the output builtin; segments program 0 of 27 words,
 * execution 1 of 73 cells, output 2 of 2, ret_fp 3, ret_pc 4).
 */
import zlib from 'node:zlib'
import { buildZip, decodeCells, encodeCells, type Cell, type ZipSpecEntry } from './pie-fixtures.ts'
import { cloneModel, parseZip, writeZip, type ModelEntry, type ZipModel } from './zip-model.ts'

export type MutantArea =
  | 'zip'
  | 'metadata'
  | 'program'
  | 'segments'
  | 'builtins'
  | 'execution_resources'
  | 'additional_data'
  | 'version'
  | 'memory'
  | 'pages'
  | 'json numbers'

export type Mutant = { name: string; area: MutantArea; zip: Uint8Array }

const PRIME = 2n ** 251n + 17n * 2n ** 192n + 1n
const ORDER = ['metadata.json', 'memory.bin', 'additional_data.json', 'execution_resources.json', 'version.json']

type Files = Map<string, Uint8Array | string>

const textOf = (data: Uint8Array | string | undefined): string =>
  typeof data === 'string' ? data : Buffer.from(data ?? []).toString('latin1')

/** The files with one replaced (a text edit that must change something). */
function editText(files: Files, name: string, change: (text: string) => string): Files {
  const before = textOf(files.get(name))
  const after = change(before)
  if (after === before) throw new Error(`mutant: the edit of ${name} changed nothing`)
  return new Map(files).set(name, Buffer.from(after, 'latin1'))
}

const zipFiles = (files: Files, order = ORDER): Uint8Array =>
  buildZip(order.filter((name) => files.has(name)).map((name) => ({ name, data: files.get(name)! })))

function editCells(files: Files, change: (cells: Cell[]) => Cell[]): Files {
  return new Map(files).set('memory.bin', encodeCells(change(decodeCells(files.get('memory.bin') as Uint8Array))))
}

function setValue(cells: Cell[], segment: number, offset: number, value: Cell['value']): Cell[] {
  const cell = cells.find((c) => c.segment === segment && c.offset === offset)
  if (!cell) throw new Error(`mutant: no cell (${segment}, ${offset})`)
  cell.value = value
  return cells
}

/** memory.bin with raw bytes changed in place. */
function editMemory(files: Files, change: (memory: Buffer) => Buffer): Files {
  return new Map(files).set('memory.bin', change(Buffer.from(files.get('memory.bin') as Uint8Array)))
}

/** A cell with a raw 256-bit value (any bits), appended or replacing cell `index`. */
function rawValue(memory: Buffer, index: number, value: bigint): Buffer {
  for (let k = 0; k < 4; k++)
    memory.writeBigUInt64LE((value >> BigInt(64 * k)) & 0xffffffffffffffffn, 40 * index + 8 + 8 * k)
  return memory
}

function cellIndex(files: Files, segment: number, offset: number): number {
  const index = decodeCells(files.get('memory.bin') as Uint8Array).findIndex(
    (c) => c.segment === segment && c.offset === offset,
  )
  if (index < 0) throw new Error(`mutant: no cell (${segment}, ${offset})`)
  return index
}

/** Every mutant of `base` (the example PIE's files). */
export function pieMutants(base: Files): Mutant[] {
  const out: Mutant[] = []
  const add = (area: MutantArea, name: string, zip: Uint8Array | Files) =>
    out.push({ area, name, zip: zip instanceof Map ? zipFiles(zip) : zip })
  const meta = (change: (t: string) => string) => editText(base, 'metadata.json', change)
  const resources = (change: (t: string) => string) => editText(base, 'execution_resources.json', change)
  const additional = (text: string) => new Map(base).set('additional_data.json', text)
  const version = (text: string) => new Map(base).set('version.json', text)
  const entries = (files: Files = base): ZipSpecEntry[] =>
    ORDER.filter((n) => files.has(n)).map((name) => ({ name, data: files.get(name)! }))

  // The zip container.
  add('zip', 'the example as it is', base)
  add('zip', 'entries in cairo-vm order (version.json first)', zipFiles(base, ['version.json', ...ORDER.slice(0, 4)]))
  add(
    'zip',
    'memory.bin stored, not deflated',
    buildZip(entries().map((e) => (e.name === 'memory.bin' ? { ...e, method: 0 } : e))),
  )
  add(
    'zip',
    'metadata.json stored, not deflated',
    buildZip(entries().map((e) => (e.name === 'metadata.json' ? { ...e, method: 0 } : e))),
  )
  add('zip', 'an extra entry', buildZip([...entries(), { name: 'notes.txt', data: 'x' }]))
  add('zip', 'a __MACOSX entry', buildZip([...entries(), { name: '__MACOSX/._metadata.json', data: 'x' }]))
  add('zip', 'a folder entry', buildZip([...entries(), { name: 'pie/', data: '' }]))
  add('zip', 'every entry inside a folder', buildZip(entries().map((e) => ({ ...e, name: `pie/${e.name}` }))))
  add('zip', 'no version.json', zipFiles(base, ORDER.slice(0, 4)))
  add(
    'zip',
    'no additional_data.json',
    zipFiles(
      base,
      ORDER.filter((n) => n !== 'additional_data.json'),
    ),
  )
  add(
    'zip',
    'no execution_resources.json',
    zipFiles(
      base,
      ORDER.filter((n) => n !== 'execution_resources.json'),
    ),
  )
  add(
    'zip',
    'no memory.bin',
    zipFiles(
      base,
      ORDER.filter((n) => n !== 'memory.bin'),
    ),
  )
  add(
    'zip',
    'metadata.json twice, identical',
    buildZip([...entries(), { name: 'metadata.json', data: base.get('metadata.json')! }]),
  )
  add(
    'zip',
    'execution_resources.json twice, differing',
    buildZip([
      ...entries(),
      {
        name: 'execution_resources.json',
        data: textOf(base.get('execution_resources.json')).replace('"n_steps": 73', '"n_steps": 74'),
      },
    ]),
  )
  add('zip', 'junk before the first entry', Buffer.concat([Buffer.from('junk'), zipFiles(base)]))
  add('zip', 'version.json of 10,020 bytes', version(`{"cairo_pie": "1.1"}${' '.repeat(10_000)}`))

  // metadata.json's top level.
  add(
    'metadata',
    'an unknown key at the top',
    meta((t) => t.replace('{', '{"extra": 1, ')),
  )
  add(
    'metadata',
    'keys in another order',
    meta((t) => t.replace(/^\{("program": \{.*?\}), (.*)\}$/, '{$2, $1}')),
  )
  add(
    'metadata',
    'pretty-printed',
    meta((t) => t.replaceAll(', "', ',\n  "')),
  )
  add(
    'metadata',
    'extra_segments missing',
    meta((t) => t.replace(', "extra_segments": []', '')),
  )
  add(
    'metadata',
    'extra_segments an object',
    meta((t) => t.replace('"extra_segments": []', '"extra_segments": {}')),
  )
  add(
    'metadata',
    'builtin_segments an array',
    meta((t) =>
      t.replace(
        '"builtin_segments": {"output": {"index": 2, "size": 2}}',
        '"builtin_segments": [{"index": 2, "size": 2}]',
      ),
    ),
  )
  add(
    'metadata',
    'the top level an array',
    meta((t) => `[${t}]`),
  )
  add(
    'metadata',
    'not JSON (cut short)',
    meta((t) => t.slice(0, 100)),
  )
  add(
    'metadata',
    'a key given twice (the second wins in both readers)',
    meta((t) => t.replace('{', '{"execution_segment": {"index": 9, "size": 1}, ')),
  )
  add(
    'metadata',
    'a non-ASCII byte in a key',
    meta((t) => t.replace('{', '{"caf\u00e9": 1, ')),
  )

  // The program (StrippedProgram).
  add(
    'program',
    'an unknown key (hints)',
    meta((t) => t.replace('"program": {', '"program": {"hints": {}, ')),
  )
  add(
    'program',
    'a word as a decimal string',
    meta((t) => t.replace('"data": [290341444919459839,', '"data": ["290341444919459839",')),
  )
  add(
    'program',
    'a word as a float',
    meta((t) => t.replace(/"data": \[(\d+), 1, /, '"data": [$1, 1.0, ')),
  )
  add(
    'program',
    'a word rounded through a double',
    meta((t) => t.replace('"data": [290341444919459839,', '"data": [2.9034144491945984e+17,')),
  )
  add(
    'program',
    'a word equal to the prime',
    meta((t) => t.replace(/"data": \[(\d+), 1, /, `"data": [$1, ${PRIME}, `)),
  )
  add(
    'program',
    'a negative word',
    meta((t) => t.replace(/"data": \[(\d+), 1, /, '"data": [$1, -1, ')),
  )
  add(
    'program',
    'main = len(data)',
    meta((t) => t.replace('"main": 6', '"main": 27')),
  )
  add(
    'program',
    'main negative',
    meta((t) => t.replace('"main": 6', '"main": -1')),
  )
  add(
    'program',
    'main as a string',
    meta((t) => t.replace('"main": 6', '"main": "6"')),
  )
  add(
    'program',
    'main as 6.0',
    meta((t) => t.replace('"main": 6', '"main": 6.0')),
  )
  add(
    'program',
    'another prime, below the words',
    meta((t) => t.replace(/"prime": \d+/, '"prime": 18446744073709551629')),
  )
  add(
    'program',
    'another prime, above every word (2^255 - 19)',
    meta((t) =>
      t.replace(
        /"prime": \d+/,
        '"prime": 57896044618658097711785492504343953926634992332820282019728792003956564819949',
      ),
    ),
  )
  add(
    'program',
    'the prime as a string',
    meta((t) => t.replace(/"prime": (\d+)/, '"prime": "$1"')),
  )
  add(
    'program',
    'a prime below 2^63',
    meta((t) => t.replace(/"prime": \d+/, '"prime": 65537')),
  )
  add(
    'program',
    'builtins a string',
    meta((t) => t.replace('"builtins": ["output"]', '"builtins": "output"')),
  )
  add(
    'program',
    'builtins missing',
    meta((t) => t.replace('"builtins": ["output"], ', '')),
  )
  add(
    'program',
    'data missing',
    meta((t) => t.replace(/"data": \[[^\]]*\], /, '')),
  )

  // The segment table (SegmentInfo entries).
  add(
    'segments',
    'an unknown key in program_segment',
    meta((t) => t.replace('"program_segment": {', '"program_segment": {"name": "p", ')),
  )
  add(
    'segments',
    'an unknown key in a builtin segment',
    meta((t) => t.replace('"output": {"index": 2', '"output": {"used": 2, "index": 2')),
  )
  add(
    'segments',
    'an extra segment',
    meta((t) => t.replace('"extra_segments": []', '"extra_segments": [{"index": 5, "size": 0}]')),
  )
  add(
    'segments',
    'an unknown key in an extra segment',
    meta((t) => t.replace('"extra_segments": []', '"extra_segments": [{"index": 5, "size": 0, "origin": 1}]')),
  )
  add(
    'segments',
    'an extra segment out of place',
    meta((t) => t.replace('"extra_segments": []', '"extra_segments": [{"index": 6, "size": 0}]')),
  )
  add(
    'segments',
    'a size as a string',
    meta((t) => t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3, "size": "0"}')),
  )
  add(
    'segments',
    'a size as 0.0',
    meta((t) => t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3, "size": 0.0}')),
  )
  add(
    'segments',
    'an index as a string',
    meta((t) => t.replace('"execution_segment": {"index": 1,', '"execution_segment": {"index": "1",')),
  )
  add(
    'segments',
    'execution smaller than its cells',
    meta((t) =>
      t.replace('"execution_segment": {"index": 1, "size": 73}', '"execution_segment": {"index": 1, "size": 60}'),
    ),
  )
  add(
    'segments',
    'execution larger than its cells',
    meta((t) =>
      t.replace('"execution_segment": {"index": 1, "size": 73}', '"execution_segment": {"index": 1, "size": 80}'),
    ),
  )
  add(
    'segments',
    'ret_fp not empty',
    meta((t) => t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3, "size": 3}')),
  )
  add(
    'segments',
    'ret_pc out of place',
    meta((t) => t.replace('"ret_pc_segment": {"index": 4,', '"ret_pc_segment": {"index": 5,')),
  )
  add(
    'segments',
    'the program segment shorter than the data',
    meta((t) =>
      t.replace('"program_segment": {"index": 0, "size": 27}', '"program_segment": {"index": 0, "size": 26}'),
    ),
  )
  add(
    'segments',
    'a size of 2^30',
    meta((t) =>
      t.replace(
        '"execution_segment": {"index": 1, "size": 73}',
        '"execution_segment": {"index": 1, "size": 1073741824}',
      ),
    ),
  )
  add(
    'segments',
    'a negative size',
    meta((t) => t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3, "size": -1}')),
  )
  add(
    'segments',
    'a segment entry missing its size',
    meta((t) => t.replace('"ret_fp_segment": {"index": 3, "size": 0}', '"ret_fp_segment": {"index": 3}')),
  )

  // Builtins: the program's list, its segments and its counters together.
  const withPedersen = (t: string) =>
    t
      .replace('"builtins": ["output"]', '"builtins": ["output", "pedersen"]')
      .replace(
        '"output": {"index": 2, "size": 2}}',
        '"output": {"index": 2, "size": 2}, "pedersen": {"index": 3, "size": 0}}',
      )
      .replace('"ret_fp_segment": {"index": 3,', '"ret_fp_segment": {"index": 4,')
      .replace('"ret_pc_segment": {"index": 4,', '"ret_pc_segment": {"index": 5,')
  const pedersenCounter = (t: string) =>
    t.replace('{"output_builtin": 2}', '{"output_builtin": 2, "pedersen_builtin": 0}')
  add(
    'builtins',
    'a second builtin, declared everywhere',
    editText(meta(withPedersen), 'execution_resources.json', pedersenCounter),
  )
  add(
    'builtins',
    'a second builtin out of the canonical order',
    editText(
      meta((t) =>
        withPedersen(t)
          .replace('"builtins": ["output", "pedersen"]', '"builtins": ["pedersen", "output"]')
          .replace(
            '"builtin_segments": {"output": {"index": 2, "size": 2}, "pedersen": {"index": 3, "size": 0}}',
            '"builtin_segments": {"pedersen": {"index": 2, "size": 0}, "output": {"index": 3, "size": 2}}',
          ),
      ),
      'execution_resources.json',
      pedersenCounter,
    ),
  )
  add('builtins', 'a second builtin without its counter', meta(withPedersen))
  add(
    'builtins',
    'a second builtin without its segment',
    editText(
      meta((t) => t.replace('"builtins": ["output"]', '"builtins": ["output", "pedersen"]')),
      'execution_resources.json',
      pedersenCounter,
    ),
  )
  add(
    'builtins',
    'an unknown builtin',
    meta((t) => t.replace('"builtins": ["output"]', '"builtins": ["output", "fancy"]')),
  )
  add(
    'builtins',
    'a builtin twice',
    meta((t) => t.replace('"builtins": ["output"]', '"builtins": ["output", "output"]')),
  )
  add(
    'builtins',
    'a counter missing',
    resources((t) => t.replace('"output_builtin": 2', '')),
  )
  add(
    'builtins',
    'a counter for a builtin the program lacks',
    resources((t) => t.replace('"output_builtin": 2', '"output_builtin": 2, "pedersen_builtin": 0')),
  )
  add(
    'builtins',
    'a negative counter',
    resources((t) => t.replace('"output_builtin": 2', '"output_builtin": -2')),
  )
  add(
    'builtins',
    'a counter as a string',
    resources((t) => t.replace('"output_builtin": 2', '"output_builtin": "2"')),
  )
  add(
    'builtins',
    'a counter of 2^30',
    resources((t) => t.replace('"output_builtin": 2', '"output_builtin": 1073741824')),
  )
  add(
    'builtins',
    'a builtin segment under another name',
    meta((t) => t.replace('"builtin_segments": {"output":', '"builtin_segments": {"range_check":')),
  )

  // execution_resources.json.
  add(
    'execution_resources',
    'an unknown key',
    resources((t) => t.replace('{', '{"n_steps_extra": 1, ')),
  )
  add(
    'execution_resources',
    'n_steps as 73.0',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": 73.0')),
  )
  add(
    'execution_resources',
    'n_steps as 73.5',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": 73.5')),
  )
  add(
    'execution_resources',
    'n_steps as a string',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": "73"')),
  )
  add(
    'execution_resources',
    'n_steps as true',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": true')),
  )
  add(
    'execution_resources',
    'n_steps 0',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": 0')),
  )
  add(
    'execution_resources',
    'n_steps 2^30',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": 1073741824')),
  )
  add(
    'execution_resources',
    'n_steps missing',
    resources((t) => t.replace('"n_steps": 73, ', '')),
  )
  add(
    'execution_resources',
    'n_memory_holes missing',
    resources((t) => t.replace(', "n_memory_holes": 0', '')),
  )
  add(
    'execution_resources',
    'n_memory_holes -1',
    resources((t) => t.replace('"n_memory_holes": 0', '"n_memory_holes": -1')),
  )
  add(
    'execution_resources',
    'n_memory_holes as a string',
    resources((t) => t.replace('"n_memory_holes": 0', '"n_memory_holes": "0"')),
  )
  add(
    'execution_resources',
    'a key given twice',
    resources((t) => t.replace('{', '{"n_steps": 9, ')),
  )
  add(
    'execution_resources',
    'builtin_instance_counter missing',
    resources((t) => t.replace('"builtin_instance_counter": {"output_builtin": 2}, ', '')),
  )
  add(
    'execution_resources',
    'the top level an array',
    resources((t) => `[${t}]`),
  )
  add(
    'execution_resources',
    'not JSON',
    resources((t) => t.slice(0, 20)),
  )
  add(
    'execution_resources',
    'a non-ASCII byte',
    resources((t) => t.replace('{', '{"\u00e9": 1, ')),
  )

  // additional_data.json.
  add(
    'additional_data',
    'a non-ASCII key',
    additional('{"output_builtin": {"pages": {}, "attributes": {}}, "caf\u00e9": 1}'),
  )
  add(
    'additional_data',
    'a non-ASCII character as a \\u escape',
    additional('{"output_builtin": {"pages": {}, "attributes": {}}, "caf\\u00e9": 1}'),
  )
  add(
    'additional_data',
    'a key of 1000 characters',
    additional(`{"output_builtin": {"pages": {}, "attributes": {}}, "${'k'.repeat(1000)}": 1}`),
  )
  add(
    'additional_data',
    'a key that is no builtin',
    additional('{"output_builtin": {"pages": {}, "attributes": {}}, "notes": []}'),
  )
  add(
    'additional_data',
    'an empty pedersen_builtin',
    additional('{"output_builtin": {"pages": {}, "attributes": {}}, "pedersen_builtin": []}'),
  )
  add('additional_data', 'the top level an array', additional('[1, 2]'))
  add('additional_data', 'not JSON', additional('{"output_builtin": '))
  add('additional_data', 'empty', additional('{}'))
  add('additional_data', 'output_builtin null', additional('{"output_builtin": null}'))
  add('additional_data', 'output_builtin without attributes', additional('{"output_builtin": {"pages": {}}}'))
  add(
    'additional_data',
    'a key given twice',
    additional(
      '{"output_builtin": {"pages": {}, "attributes": {}}, "output_builtin": {"pages": {}, "attributes": {}}}',
    ),
  )

  // version.json.
  add('version', 'cairo_pie 1.0', version('{"cairo_pie": "1.0"}'))
  add('version', 'cairo_pie 2.0', version('{"cairo_pie": "2.0"}'))
  add('version', 'an extra key', version('{"cairo_pie": "1.1", "note": "x"}'))
  add('version', 'a string, not an object', version('"1.1"'))
  add('version', 'an empty object', version('{}'))
  add('version', 'not JSON', version('{"cairo_pie": '))
  add('version', 'a non-ASCII byte', version('{"cairo_pie": "1.1", "note": "caf\u00e9"}'))
  add('version', 'pretty-printed', version('{\n  "cairo_pie": "1.1"\n}\n'))

  // memory.bin.
  const cells = (change: (c: Cell[]) => Cell[]) => editCells(base, change)
  add(
    'memory',
    'truncated mid-cell',
    editMemory(base, (m) => m.subarray(0, m.length - 7)),
  )
  add('memory', 'empty', new Map(base).set('memory.bin', new Uint8Array()))
  add(
    'memory',
    'cells in reverse order',
    cells((c) => c.reverse()),
  )
  add(
    'memory',
    'an address written twice, same value',
    cells((c) => [...c, { ...c.find((x) => x.segment === 1 && x.offset === 10)! }]),
  )
  add(
    'memory',
    'an address written twice, different values',
    cells((c) => [...c, { segment: 1, offset: 10, value: 5n }]),
  )
  add(
    'memory',
    'a value equal to the prime',
    cells((c) => setValue(c, 1, 12, PRIME)),
  )
  add(
    'memory',
    'a value above the prime',
    cells((c) => setValue(c, 1, 12, PRIME + 5n)),
  )
  add(
    'memory',
    'the largest non-pointer value (2^255 - 1)',
    editMemory(base, (m) => rawValue(m, cellIndex(base, 1, 12), (1n << 255n) - 1n)),
  )
  add(
    'memory',
    'a pointer into no segment',
    cells((c) => setValue(c, 1, 12, { segment: 9, offset: 0 })),
  )
  add(
    'memory',
    'a pointer with junk in bits 63 to 254',
    editMemory(base, (m) =>
      rawValue(m, cellIndex(base, 1, 12), (1n << 255n) | (1n << 200n) | (1n << 63n) | (1n << 47n) | 3n),
    ),
  )
  add(
    'memory',
    'a pointer with junk in bit 63 alone',
    editMemory(base, (m) => rawValue(m, cellIndex(base, 1, 12), (1n << 255n) | (1n << 63n) | (2n << 47n) | 1n)),
  )
  add(
    'memory',
    'a pointer whose junk names segment 9 above bit 63',
    editMemory(base, (m) => rawValue(m, cellIndex(base, 1, 12), (1n << 255n) | (9n << 64n) | (1n << 47n))),
  )
  add(
    'memory',
    'a pointer far past its segment',
    cells((c) => setValue(c, 1, 12, { segment: 1, offset: 2 ** 46 })),
  )
  add(
    'memory',
    'an address without bit 63',
    editMemory(
      base,
      (m) => (m.writeUInt8(m.readUInt8(40 * cellIndex(base, 1, 12) + 7) & 0x7f, 40 * cellIndex(base, 1, 12) + 7), m),
    ),
  )
  add(
    'memory',
    'an address in no segment',
    cells((c) => [...c, { segment: 7, offset: 0, value: 5n }]),
  )
  add(
    'memory',
    'an address past its segment',
    cells((c) => [...c, { segment: 1, offset: 73, value: 5n }]),
  )
  add(
    'memory',
    'a cell in ret_pc, a segment of size 0',
    cells((c) => [...c, { segment: 4, offset: 0, value: 5n }]),
  )
  add(
    'memory',
    'a program cell changed',
    cells((c) => setValue(c, 0, 3, 5n)),
  )
  add(
    'memory',
    'a program cell missing',
    cells((c) => c.filter((x) => !(x.segment === 0 && x.offset === 26))),
  )
  add(
    'memory',
    'a program cell holding a pointer',
    cells((c) => setValue(c, 0, 3, { segment: 1, offset: 0 })),
  )
  add(
    'memory',
    'an output cell holding a pointer',
    cells((c) => setValue(c, 2, 0, { segment: 1, offset: 4 })),
  )
  add(
    'memory',
    'an output cell missing',
    cells((c) => c.filter((x) => !(x.segment === 2 && x.offset === 1))),
  )
  add(
    'memory',
    'an execution cell missing',
    cells((c) => c.filter((x) => !(x.segment === 1 && x.offset === 12))),
  )

  // The output's pages (output_builtin in additional_data.json).
  const pages = (pagesJson: string, attributes: string) =>
    additional(`{"output_builtin": {"pages": ${pagesJson}, "attributes": ${attributes}}}`)
  add('pages', 'two pages with their topology', pages('{"1": [1, 1]}', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add('pages', 'pages without gps_fact_topology', pages('{"1": [1, 1]}', '{}'))
  add('pages', 'gps_fact_topology without pages', pages('{}', '{"gps_fact_topology": [1, 0]}'))
  add('pages', 'page 1 starting at 0', pages('{"1": [0, 2]}', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add('pages', 'pages short of the output', pages('{"1": [1, 0]}', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add('pages', 'page ids from 2', pages('{"2": [1, 1]}', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add('pages', 'a page as an object', pages('{"1": {"start": 1, "size": 1}}', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add('pages', 'a topology of odd length', pages('{"1": [1, 1]}', '{"gps_fact_topology": [2, 1, 0]}'))
  add('pages', 'a topology with two roots', pages('{"1": [1, 1]}', '{"gps_fact_topology": [2, 0]}'))
  add('pages', 'a page id that is no integer', pages('{"a": [1, 1]}', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add('pages', 'pages as an array', pages('[[1, 1]]', '{"gps_fact_topology": [2, 1, 0, 2]}'))
  add(
    'pages',
    'another attribute beside the topology',
    pages('{"1": [1, 1]}', '{"gps_fact_topology": [2, 1, 0, 2], "other": [1]}'),
  )
  add(
    'pages',
    'an attribute that is no list of integers',
    pages('{"1": [1, 1]}', '{"gps_fact_topology": [2, 1, 0, 2], "other": "x"}'),
  )

  // Builtins' additional data of every shape (cairo-vm's BuiltinAdditionalData variants, and none of them).
  const data = (key: string, json: string) =>
    additional(`{"output_builtin": {"pages": {}, "attributes": {}}, "${key}": ${json}}`)
  add('additional_data', 'pedersen_builtin as [segment, offset] pairs', data('pedersen_builtin', '[[3, 0], [3, 3]]'))
  add('additional_data', 'pedersen_builtin with a triple', data('pedersen_builtin', '[[3, 0, 1]]'))
  add('additional_data', 'pedersen_builtin with a negative offset', data('pedersen_builtin', '[[3, -1]]'))
  add('additional_data', 'pedersen_builtin an object', data('pedersen_builtin', '{"3": 0}'))
  add('additional_data', 'ecdsa_builtin as signatures', data('ecdsa_builtin', '[[[3, 0], [1234, 5678]]]'))
  add(
    'additional_data',
    'ecdsa_builtin with a signature as a string',
    data('ecdsa_builtin', '[[[3, 0], ["1234", 5678]]]'),
  )
  add('additional_data', 'range_check_builtin null', data('range_check_builtin', 'null'))
  add('additional_data', 'range_check_builtin a number', data('range_check_builtin', '7'))

  // Builtins cairo-lang accepts by their name's form, declared consistently.
  const declared = (name: string) =>
    editText(
      meta((t) =>
        t
          .replace('"builtins": ["output"]', `"builtins": ["output", "${name}"]`)
          .replace(
            '"output": {"index": 2, "size": 2}}',
            `"output": {"index": 2, "size": 2}, "${name}": {"index": 3, "size": 0}}`,
          )
          .replace('"ret_fp_segment": {"index": 3,', '"ret_fp_segment": {"index": 4,')
          .replace('"ret_pc_segment": {"index": 4,', '"ret_pc_segment": {"index": 5,'),
      ),
      'execution_resources.json',
      (t) => t.replace('{"output_builtin": 2}', `{"output_builtin": 2, "${name}_builtin": 0}`),
    )
  add('builtins', 'an unknown lowercase builtin, declared everywhere', declared('fancy_2'))
  add('builtins', 'segment_arena, declared everywhere', declared('segment_arena'))
  add('builtins', 'an uppercase builtin, declared everywhere', declared('Fancy'))

  // JSON numbers and nesting as Python's json reads them.
  const digits = (n: number) => `1${'0'.repeat(n - 1)}`
  add(
    'json numbers',
    'an integer of 4,300 digits in version.json',
    version(`{"cairo_pie": "1.1", "n": ${digits(4300)}}`),
  )
  add(
    'json numbers',
    'an integer of 4,301 digits in version.json',
    version(`{"cairo_pie": "1.1", "n": ${digits(4301)}}`),
  )
  add(
    'json numbers',
    "an integer of 4,301 digits in a builtin's data",
    data('pedersen_builtin', `[[3, ${digits(4301)}]]`),
  )
  add('json numbers', 'an integer of 4,301 digits in an output attribute', pages('{}', `{"other": [${digits(4301)}]}`))
  add(
    'json numbers',
    'a float of 5,000 digits in version.json',
    version(`{"cairo_pie": "1.1", "n": 0.${'1'.repeat(5000)}}`),
  )
  add('json numbers', 'NaN in version.json', version('{"cairo_pie": "1.1", "n": NaN}'))
  add('json numbers', 'Infinity in an output attribute', pages('{}', '{"other": [Infinity]}'))
  add(
    'json numbers',
    '-Infinity as n_steps',
    resources((t) => t.replace('"n_steps": 73', '"n_steps": -Infinity')),
  )
  add(
    'json numbers',
    'NaN as a program word',
    meta((t) => t.replace(/"data": \[(\d+), 1, /, '"data": [$1, NaN, ')),
  )
  add(
    'json numbers',
    'version.json nested 300 deep',
    version(`{"cairo_pie": "1.1", "n": ${'['.repeat(300)}${']'.repeat(300)}}`),
  )
  add(
    'json numbers',
    'version.json nested 600 deep',
    version(`{"cairo_pie": "1.1", "n": ${'['.repeat(600)}${']'.repeat(600)}}`),
  )
  add(
    'json numbers',
    "a builtin's data nested 200 deep",
    data('pedersen_builtin', `${'['.repeat(200)}${']'.repeat(200)}`),
  )

  // The container: structures readers read differently (issue 40).
  for (const [name, zip] of containerMutants(zipFiles(base))) add('zip', name, zip)
  return out
}

function entryNamed(model: ZipModel, name: string): ModelEntry {
  const entry = model.entries.find((e) => Buffer.from(e.centralName).toString('latin1') === name)
  if (!entry) throw new Error(`mutant: no entry ${name}`)
  return entry
}

function withData(entry: ModelEntry, plain: Uint8Array): ModelEntry {
  const body = new Uint8Array(zlib.deflateRawSync(plain))
  const crc = zlib.crc32(plain)
  return {
    ...entry,
    data: body,
    local: { ...entry.local, crc, csize: body.length, usize: plain.length },
    central: { ...entry.central, crc, csize: body.length, usize: plain.length },
  }
}

/** The container cases, built from the example's zip. */
function containerMutants(zip: Uint8Array): [string, Uint8Array][] {
  const base = parseZip(zip)
  const out: [string, Uint8Array][] = []
  const make = (name: string, change: (m: ZipModel) => void, after?: (bytes: Uint8Array) => Uint8Array) => {
    const model = cloneModel(base)
    change(model)
    const bytes = Uint8Array.from(writeZip(model).bytes)
    out.push([name, after ? after(bytes) : bytes])
  }
  const metadata = Buffer.from(zlib.inflateRawSync(entryNamed(base, 'metadata.json').data)).toString('latin1')
  const second = (text: string) => (m: ZipModel) => {
    // A second metadata.json in a record past the end record's count: Python reads it (and opens it, the last copy), the zip crate does not.
    m.entries.push(withData(entryNamed(m, 'metadata.json'), Buffer.from(text, 'latin1')))
    m.pinned.add('entries').add('entriesOnDisk')
    m.end.entries = m.records.length
    m.end.entriesOnDisk = m.records.length
    m.records.push(m.entries.length - 1)
  }
  make(
    'a second metadata.json (another program word) in a record beyond the count',
    second(metadata.replace(/"data": \[(\d+)/, (_, w: string) => `"data": [${BigInt(w) + 1n}`)),
  )
  make('a second metadata.json (not JSON) in a record beyond the count', second(metadata.slice(0, 50)))
  make('the directory declares more bytes than its records', (m) => {
    // Ten bytes more, taken from what precedes the directory: Python reads on into the end record.
    m.pinned.add('size').add('offset')
    const directory = m.records.reduce(
      (sum, i) =>
        sum + 46 + m.entries[i]!.centralName.length + m.entries[i]!.centralExtra.length + m.entries[i]!.comment.length,
      0,
    )
    const entries = m.entries.reduce(
      (sum, e) => sum + 30 + e.localName.length + e.localExtra.length + e.data.length + e.descriptor.length,
      0,
    )
    m.end.size = directory + 10
    m.end.offset = entries - 10
  })
  make('an extra field declaring more bytes than it holds', (m) => {
    const e = entryNamed(m, 'execution_resources.json')
    e.centralExtra = Uint8Array.from([0x55, 0x54, 9, 0, 3, 1, 2, 3, 4])
  })
  make('"version needed to extract" 6.4', (m) => {
    const e = entryNamed(m, 'additional_data.json')
    e.central.version = 64
    e.local.version = 64
  })
  for (const [bit, what] of [
    [5, 'patched data'],
    [6, 'strong encryption'],
    [13, 'an encrypted directory'],
  ] as const) {
    make(`flag bit ${bit} (${what})`, (m) => {
      const e = entryNamed(m, 'version.json')
      e.central.flags! |= 1 << bit
      e.local.flags! |= 1 << bit
    })
  }
  make("an archive comment holding the end record's signature", (m) => {
    m.comment = Uint8Array.from([0x6e, 0x6f, 0x74, 0x65, 0x50, 0x4b, 5, 6, 0x21])
  })
  make('bytes after the end record', (m) => {
    m.suffix = Uint8Array.from([1, 2, 3, 4, 5, 6, 7])
  })
  make('the end record counts more entries than the directory holds', (m) => {
    m.pinned.add('entries').add('entriesOnDisk')
    m.end.entries = m.records.length + 1
    m.end.entriesOnDisk = m.records.length + 1
  })
  for (const [what, extra] of [
    ['past', '  '],
    ['short of', ''],
  ] as const) {
    make(`additional_data.json inflating ${what} its declared size`, (m) => {
      const e = entryNamed(m, 'additional_data.json')
      const plain = zlib.inflateRawSync(e.data)
      const changed = what === 'past' ? Buffer.concat([plain, Buffer.from(extra)]) : plain.subarray(0, plain.length - 2)
      const body = new Uint8Array(zlib.deflateRawSync(changed))
      // The declared size and CRC are the first bytes' (Python reads those and is content).
      const kept = what === 'past' ? plain : changed
      const crc = zlib.crc32(kept)
      Object.assign(e, { data: body })
      for (const fields of [e.local, e.central])
        Object.assign(fields, { crc, csize: body.length, usize: what === 'past' ? plain.length : plain.length })
    })
  }
  make('non-zero disk numbers in the end record', (m) => {
    m.end.disk = 1
    m.end.diskWithDirectory = 1
  })
  make(`the zip after a stub starting with "PK" (offsets from the zip's start)`, (m) => {
    m.prefix = Uint8Array.from([0x50, 0x4b, 0x53, 0x54, 0x55, 0x42])
    let at = 0
    for (const entry of m.entries) {
      entry.pinnedOffset = true
      entry.central.offset = at
      at += 30 + entry.localName.length + entry.localExtra.length + entry.data.length + entry.descriptor.length
    }
    m.pinned.add('offset')
    m.end.offset = at
  })
  make("memory.bin's data overlapping the next entry's header (Python 3.11.8 and later refuse it)", (m) => {
    const e = entryNamed(m, 'memory.bin')
    e.central.csize! += 30
  })
  return out
}
