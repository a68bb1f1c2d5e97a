/**
 * Helpers for the PIE tests: where the shared fixtures are (read in place, never copied into
 * the repository), unzipping them into temporary directories, building zips with arbitrary
 * entries and methods (to corrupt the container), and editing memory.bin cell by cell.
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, it } from 'vitest'
import zlib from 'node:zlib'
import { bytesSource, readZipEntry } from '../../src/pie/read/zip.ts'
import { readZipDirectory } from '../../src/pie/read/zip-directory.ts'
import { centralHeader, endRecords, localHeader } from '../../src/pie/pack/zip-writer.ts'
import { CELL_SIZE, writeCell } from '../../src/pie/validate/memory.ts'

export const execFileAsync = promisify(execFile)

/**
 * The shared fixtures, beside the repository (../shared/fixtures from its root), or where
 * PROVING_TEST_FIXTURES points (to run the suite against another copy, or none): only the interop
 * suite (test/interop/) reads them.
 */
export const FIXTURES = process.env.PROVING_TEST_FIXTURES
  ? join(resolve(process.env.PROVING_TEST_FIXTURES), '/')
  : fileURLToPath(new URL('../../../shared/fixtures/', import.meta.url))
/** Whether ../shared/fixtures is there (on the development machines and in CI; not on a plain clone). */
export const SHARED_FIXTURES_PRESENT = existsSync(join(FIXTURES, 'pie'))
/** Why the interop suite is skipped when it is. */
export const INTEROP_SKIP_REASON = `skipped: ${join(FIXTURES, 'pie')} is absent. It holds public PIEs written by cairo-lang and cairo-vm, never copied into the repository: test/interop/FIXTURES.md lists each file, where it comes from and its SHA-256; put them in ../shared/fixtures beside the repository, or point PROVING_TEST_FIXTURES at a folder holding pie/ and programs/.`

/**
 * A describe() of the interop suite: runs when ../shared/fixtures is present, else reports one
 * skipped test whose name says why.
 */
export function describeInterop(name: string, body: () => void): void {
  if (SHARED_FIXTURES_PRESENT) describe(name, body)
  else {
    // The skipped test's name holds the reason, but the console reporter shows only a count of
    // skipped tests: this line puts the reason on the console of `npm test` too (once per file).
    if (!announced) console.warn(`The interop suite is ${INTEROP_SKIP_REASON}`)
    announced = true
    describe(name, () => it.skip(INTEROP_SKIP_REASON, () => {}))
  }
}
let announced = false

/** The committed example PIE's files (examples/fib/pie.zip), for building variants of it. */
export async function exampleFiles(): Promise<Map<string, Uint8Array | string>> {
  return new Map<string, Uint8Array | string>(
    await readZipFiles(fileURLToPath(new URL('../../examples/fib/pie.zip', import.meta.url))),
  )
}

/** The committed example unzipped into a fresh temporary directory. */
export async function unzipExample(): Promise<string> {
  return writeDir(await tempDir(), await exampleFiles())
}
export const PIE_FIXTURES = [
  'fib-cairo-lang-writer.zip',
  'fib-cairo-lang-writer-2.zip',
  'fib-cairo-vm-writer.zip',
] as const
export const fixturePath = (name: string) => join(FIXTURES, 'pie', name)
export const FIBONACCI_COMPILED = join(FIXTURES, 'programs', 'fibonacci_compiled.json')

const temps: string[] = []

export async function tempDir(prefix = 'pie-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}

export async function removeTempDirs(): Promise<void> {
  await Promise.all(temps.splice(0).map((dir) => rm(dir, { recursive: true, force: true })))
}

/** The entries of a packed PIE, in the order packPie writes them. */
export const PIE_ENTRY_ORDER = [
  'metadata.json',
  'memory.bin',
  'additional_data.json',
  'execution_resources.json',
  'version.json',
]

/** The chunks of a stream (a zip entry's bytes), joined. */
export async function collect(iterable: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = []
  for await (const chunk of iterable) chunks.push(chunk)
  return Buffer.concat(chunks)
}

/** Every entry of a zip, by name, in directory order. */
export async function readZipFiles(zip: Uint8Array | string): Promise<Map<string, Uint8Array>> {
  const bytes = typeof zip === 'string' ? await readFile(zip) : zip
  const source = bytesSource(bytes)
  const files = new Map<string, Uint8Array>()
  for (const entry of (await readZipDirectory(source)).entries)
    files.set(entry.name, await collect(readZipEntry(source, entry)))
  return files
}

/** Python's zipfile: every entry's method, size and bytes (hex). */
export async function pythonRead(
  path: string,
): Promise<{ name: string; method: number; size: number; data: string }[]> {
  const script = `
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
print(json.dumps([{"name": i.filename, "method": i.compress_type, "size": i.file_size, "data": z.read(i.filename).hex()} for i in z.infolist()]))
`
  const { stdout } = await execFileAsync('python3', ['-c', script, path])
  return JSON.parse(stdout) as { name: string; method: number; size: number; data: string }[]
}

/** Python's zipfile, after its own CRC check of every entry: name, method, date and SHA-256 of each. */
export async function pythonEntries(
  path: string,
): Promise<{ name: string; method: number; date: number[]; sha256: string }[]> {
  const script = `
import hashlib, json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
print(json.dumps([{"name": i.filename, "method": i.compress_type, "date": list(i.date_time), "sha256": hashlib.sha256(z.read(i.filename)).hexdigest()} for i in z.infolist()]))
`
  const { stdout } = await execFileAsync('python3', ['-c', script, path])
  return JSON.parse(stdout) as { name: string; method: number; date: number[]; sha256: string }[]
}

export async function writeDir(dir: string, files: Map<string, Uint8Array | string>): Promise<string> {
  await mkdir(dir, { recursive: true })
  for (const [name, data] of files) await writeFile(join(dir, name), data)
  return dir
}

/** A fixture unzipped into a fresh temporary directory. */
export async function unzipFixture(name: string = PIE_FIXTURES[0]): Promise<string> {
  return writeDir(await tempDir(), await readZipFiles(fixturePath(name)))
}

export type ZipSpecEntry = { name: string; data: Uint8Array | string; method?: number }

/** A zip with exactly these entries (any names, stored or deflated), for corrupting PIEs. */
export function buildZip(entries: ZipSpecEntry[]): Uint8Array {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let position = 0
  for (const entry of entries) {
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data) : entry.data
    const method = entry.method ?? 8
    const body = method === 8 ? zlib.deflateRawSync(data) : data
    const header = {
      name: entry.name,
      method,
      crc32: zlib.crc32(data),
      compressedSize: body.length,
      uncompressedSize: data.length,
      zip64: false,
    }
    const local = localHeader(header)
    central.push(centralHeader({ ...header, localHeaderOffset: position }))
    parts.push(local, body)
    position += local.length + body.length
  }
  const cdSize = central.reduce((sum, part) => sum + part.length, 0)
  parts.push(
    ...central,
    endRecords({
      entryCount: entries.length,
      centralDirectoryOffset: position,
      centralDirectorySize: cdSize,
      anyZip64: false,
    }),
  )
  return Buffer.concat(parts)
}

export function zipOf(files: Map<string, Uint8Array | string>): Uint8Array {
  return buildZip([...files].map(([name, data]) => ({ name, data })))
}

export type Cell = { segment: number; offset: number; value: bigint | { segment: number; offset: number } }

export function decodeCells(memory: Uint8Array): Cell[] {
  const view = new DataView(memory.buffer, memory.byteOffset, memory.byteLength)
  const cells: Cell[] = []
  for (let at = 0; at + CELL_SIZE <= memory.length; at += CELL_SIZE) {
    const address = view.getBigUint64(at, true) - (1n << 63n)
    let value = 0n
    for (let k = 3; k >= 0; k--) value = (value << 64n) | view.getBigUint64(at + 8 + 8 * k, true)
    const pointer = value >> 255n === 1n
    const raw = pointer ? value - (1n << 255n) : value
    cells.push({
      segment: Number(address >> 47n),
      offset: Number(address & ((1n << 47n) - 1n)),
      value: pointer ? { segment: Number(raw >> 47n), offset: Number(raw & ((1n << 47n) - 1n)) } : value,
    })
  }
  return cells
}

export function encodeCells(cells: Cell[]): Uint8Array {
  const out = new Uint8Array(cells.length * CELL_SIZE)
  const view = new DataView(out.buffer)
  for (const [i, cell] of cells.entries()) writeCell(view, i * CELL_SIZE, cell.segment, cell.offset, cell.value)
  return out
}

export const text = (data: Uint8Array | string | undefined) =>
  typeof data === 'string' ? data : Buffer.from(data ?? new Uint8Array()).toString('utf8')
