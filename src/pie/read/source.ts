/**
 * One way to read a PIE whatever its container: a pie.zip on disk, a zip's bytes in memory, or
 * a PIE directory. Opening checks the container itself (zip entries as cairo-lang wants them,
 * or the directory's files) and records what is wrong as problem lines; the PIE files that are
 * present can then be streamed by name.
 */
import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { basename } from 'node:path'
import { InvalidInputError } from '../../core/errors.ts'
import { ENTRY_SIZE_LIMITS, PIE_ENTRY_ORDER, REQUIRED_ENTRIES, isPieEntryName, type PieEntryName } from '../shared/index.ts'
import { listPieDir } from './directory.ts'
import {
  FLAG_ENCRYPTED,
  ZipFormatError,
  bytesSource,
  openFileSource,
  readZipDirectory,
  readZipEntry,
  type ByteSource,
  type ZipEntry,
} from './zip.ts'

/** A path to a pie.zip or a PIE directory, or a zip's bytes. */
export type PieInput = string | Uint8Array

export type PieEntrySummary = {
  name: PieEntryName
  size: number
  /** Zip only. */
  compressedSize?: number
  method?: number
}

export type PieSource = {
  kind: 'zip' | 'directory'
  /** How problem lines name the container: the zip's file name, or the directory with a slash. */
  label: string
  path: string | undefined
  /** What is wrong with the container itself. */
  problems: string[]
  entries: PieEntrySummary[]
  has(name: PieEntryName): boolean
  /** The file's bytes in chunks; zip data is inflated and its CRC checked (ZipFormatError). */
  open(name: PieEntryName): AsyncIterable<Uint8Array>
  close(): Promise<void>
}

const COMPRESSION_NAMES: Record<number, string> = { 0: 'stored', 8: 'DEFLATE', 9: 'DEFLATE64', 12: 'bzip2', 14: 'LZMA', 93: 'zstd' }

export async function openPie(input: PieInput): Promise<PieSource> {
  if (typeof input !== 'string') return openZip(bytesSource(input), 'pie.zip', undefined)
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    throw new InvalidInputError(`Cannot read the PIE at ${input}: ${error.code === 'ENOENT' ? 'no such file or directory' : error.message}`, {
      cause: error,
    })
  })
  if (info.isDirectory()) return openDirectory(input)
  const source = await openFileSource(input)
  return openZip(source, basename(input), input)
}

async function openZip(source: ByteSource, label: string, path: string | undefined): Promise<PieSource> {
  const problems: string[] = []
  const found = new Map<PieEntryName, ZipEntry>()
  const head = await source.read(0, 4)
  if (head[0] !== 0x50 || head[1] !== 0x4b) {
    const shown = [...head].map((b) => b.toString(16).padStart(2, '0')).join(' ')
    problems.push(`${label}: does not start with "PK" (first bytes ${shown || 'none: empty file'}); not a zip file`)
  }
  let entries: ZipEntry[] = []
  try {
    entries = (await readZipDirectory(source)).entries
  } catch (error) {
    if (!(error instanceof ZipFormatError)) throw error
    problems.push(`${label}: ${error.message}`)
  }
  for (const entry of entries) {
    const name = entry.name
    if (name.startsWith('__MACOSX/') || name.split('/').some((part) => part.startsWith('._'))) {
      problems.push(`${label}: entry "${name}" is macOS metadata (__MACOSX/ or ._ file); not allowed in a PIE`)
      continue
    }
    if (entry.isDirectory) {
      problems.push(`${label}: entry "${name}" is a folder; a PIE's files must sit at the root with no folders`)
      continue
    }
    if (name.includes('/') || name.includes('\\')) {
      const leaf = name.split(/[/\\]/).pop() ?? ''
      const hint = isPieEntryName(leaf) ? `; "${leaf}" must sit at the root, not inside a folder` : ''
      problems.push(`${label}: entry "${name}" is inside a folder${hint}`)
      continue
    }
    if (!isPieEntryName(name)) {
      problems.push(`${label}: extra entry "${name}"; a PIE holds only ${PIE_ENTRY_ORDER.join(', ')}`)
      continue
    }
    if (found.has(name)) {
      problems.push(`${label}: entry "${name}" appears more than once`)
      continue
    }
    if (entry.method !== 8) {
      const method = COMPRESSION_NAMES[entry.method] ?? 'unknown'
      problems.push(`${label}: entry "${name}" uses compression method ${entry.method} (${method}); cairo-lang requires DEFLATE (method 8)`)
    }
    if (entry.flags & FLAG_ENCRYPTED) problems.push(`${label}: entry "${name}" is encrypted`)
    if (entry.uncompressedSize >= ENTRY_SIZE_LIMITS[name]) {
      problems.push(`${label}: entry "${name}" is ${entry.uncompressedSize} bytes; cairo-lang accepts under ${ENTRY_SIZE_LIMITS[name]}`)
    }
    found.set(name, entry)
  }
  if (entries.length || !problems.length) {
    for (const name of REQUIRED_ENTRIES) if (!found.has(name)) problems.push(`${label}: missing required entry "${name}"`)
  }
  return {
    kind: 'zip',
    label,
    path,
    problems,
    entries: PIE_ENTRY_ORDER.flatMap((name) => {
      const entry = found.get(name)
      return entry ? [{ name, size: entry.uncompressedSize, compressedSize: entry.compressedSize, method: entry.method }] : []
    }),
    has: (name) => found.has(name),
    open(name) {
      const entry = found.get(name)
      if (!entry) throw new Error(`no entry ${name}`)
      return readZipEntry(source, entry)
    },
    close: () => source.close(),
  }
}

async function openDirectory(dir: string): Promise<PieSource> {
  const listing = await listPieDir(dir)
  const files = new Map(listing.files.map((file) => [file.name, file]))
  return {
    kind: 'directory',
    label: `${dir.replace(/\/+$/, '')}/`,
    path: dir,
    problems: listing.problems,
    entries: listing.files.map((file) => ({ name: file.name, size: file.size })),
    has: (name) => files.has(name),
    open(name) {
      const file = files.get(name)
      if (!file) throw new Error(`no file ${name}`)
      return createReadStream(file.path, { highWaterMark: 1024 * 1024 })
    },
    close: async () => {},
  }
}
