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
import {
  ENTRY_SIZE_LIMITS,
  PIE_ENTRY_ORDER,
  REQUIRED_ENTRIES,
  isPieEntryName,
  type PieEntryName,
} from '../shared/index.ts'
import { listPieDir } from './directory.ts'
import {
  ZipFormatError,
  bytesSource,
  openFileSource,
  readZipEntry,
  type ByteSource,
  type ZipEntry,
  type ZipReason,
} from './zip.ts'
import { readZipDirectory } from './zip-directory.ts'
import { checkZipLayout } from './zip-layout.ts'

/** A path to a pie.zip or a PIE directory, or a zip's bytes. */
export type PieInput = string | Uint8Array

export type PieEntrySummary = {
  name: PieEntryName
  size: number
  /** Zip only. */
  compressedSize?: number
  method?: number
}

/**
 * One problem of the container and who refuses it: `cairo-lang` (its `from_file`, through Python's
 * zipfile), or `ambiguous-container` (readers of the zip or of the directory could take different
 * bytes from it).
 */
export type ContainerProblem = { line: string; reason: ZipReason }

export type PieSource = {
  kind: 'zip' | 'directory'
  /** How problem lines name the container: the zip's file name, or the directory with a slash. */
  label: string
  path: string | undefined
  /** What is wrong with the container itself. */
  problems: ContainerProblem[]
  entries: PieEntrySummary[]
  has(name: PieEntryName): boolean
  /** The file's bytes in chunks; zip data is inflated and its CRC checked (ZipFormatError). */
  open(name: PieEntryName): AsyncIterable<Uint8Array>
  close(): Promise<void>
}

const COMPRESSION_NAMES: Record<number, string> = {
  0: 'stored',
  8: 'DEFLATE',
  9: 'DEFLATE64',
  12: 'bzip2',
  14: 'LZMA',
  93: 'zstd',
}

export async function openPie(input: PieInput): Promise<PieSource> {
  if (typeof input !== 'string') return openZip(bytesSource(input), 'pie.zip', undefined)
  const info = await stat(input).catch((error: NodeJS.ErrnoException) => {
    throw new InvalidInputError(
      `Cannot read the PIE at ${input}: ${error.code === 'ENOENT' ? 'no such file or directory' : error.message}`,
      {
        cause: error,
      },
    )
  })
  if (info.isDirectory()) return openDirectory(input)
  const source = await openFileSource(input)
  return openZip(source, basename(input), input)
}

async function openZip(source: ByteSource, label: string, path: string | undefined): Promise<PieSource> {
  const problems: ContainerProblem[] = []
  const refuse = (line: string, reason: ZipReason = 'cairo-lang') =>
    problems.push({ line: `${label}: ${line}`, reason })
  // The copy of each name Python's zipfile opens: the last (its NameToInfo).
  const found = new Map<PieEntryName, ZipEntry>()
  const head = await source.read(0, 4)
  if (head[0] !== 0x50 || head[1] !== 0x4b) {
    const shown = [...head].map((b) => b.toString(16).padStart(2, '0')).join(' ')
    refuse(`does not start with "PK" (first bytes ${shown || 'none: empty file'}); not a zip file`)
  }
  let entries: ZipEntry[] = []
  let read = false
  try {
    const directory = await readZipDirectory(source)
    entries = directory.entries
    read = true
    for (const line of await checkZipLayout(source, directory)) refuse(line, 'ambiguous-container')
  } catch (error) {
    if (!(error instanceof ZipFormatError)) throw error
    refuse(error.message, error.reason)
  }
  const seen = new Set<string>()
  for (const entry of entries) {
    const name = entry.name
    if (seen.has(name)) {
      // Python and the zip crate open the last copy; unzip, browsers and archive viewers show the first.
      refuse(
        `entry "${name}" appears more than once (Python's zipfile and cairo-vm's zip crate read the last copy, other tools the first)`,
        'ambiguous-container',
      )
      continue
    }
    seen.add(name)
  }
  for (const entry of entries) {
    const name = entry.name
    // cairo-lang's verify_zip_format requires DEFLATE of every entry, and exactly the PIE's names.
    if (entry.method !== 8) {
      const method = COMPRESSION_NAMES[entry.method] ?? 'unknown'
      refuse(
        `entry "${name}" uses compression method ${entry.method} (${method}); cairo-lang requires DEFLATE (method 8)`,
      )
    }
    if (name.startsWith('__MACOSX/') || name.split('/').some((part) => part.startsWith('._'))) {
      refuse(`entry "${name}" is macOS metadata (__MACOSX/ or ._ file); not allowed in a PIE`)
    } else if (entry.isDirectory) {
      refuse(`entry "${name}" is a folder; a PIE's files must sit at the root with no folders`)
    } else if (name.includes('/') || name.includes('\\')) {
      const leaf = name.split(/[/\\]/).pop() ?? ''
      const hint = isPieEntryName(leaf) ? `; "${leaf}" must sit at the root, not inside a folder` : ''
      refuse(`entry "${name}" is inside a folder${hint}`)
    } else if (!isPieEntryName(name)) {
      refuse(`extra entry ${JSON.stringify(name)}; a PIE holds only ${PIE_ENTRY_ORDER.join(', ')}`)
    } else {
      found.set(name, entry)
    }
  }
  for (const [name, entry] of found) {
    if (entry.uncompressedSize >= ENTRY_SIZE_LIMITS[name])
      refuse(`entry "${name}" is ${entry.uncompressedSize} bytes; cairo-lang accepts under ${ENTRY_SIZE_LIMITS[name]}`)
  }
  // (A zip whose directory cannot be read at all has said so: nothing is missing from it.)
  if (read) {
    for (const name of REQUIRED_ENTRIES) if (!found.has(name)) refuse(`missing required entry "${name}"`)
  }
  return {
    kind: 'zip',
    label,
    path,
    problems,
    entries: PIE_ENTRY_ORDER.flatMap((name) => {
      const entry = found.get(name)
      return entry
        ? [{ name, size: entry.uncompressedSize, compressedSize: entry.compressedSize, method: entry.method }]
        : []
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
    // A link or a special file: what the zip would hold depends on what it points to.
    problems: listing.problems.map((line) => ({
      line,
      reason: /symbolic link|not a regular file/.test(line) ? 'ambiguous-container' : 'cairo-lang',
    })),
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
