/**
 * Packing a PIE directory into the canonical pie.zip: exactly the PIE files, in cairo-lang's
 * order, each DEFLATE-compressed from its bytes as they are (JSON is never re-serialised), with
 * fixed timestamps and attributes, so one directory always gives the same zip (for a given
 * zlib, i.e. Node version). Large files are compressed in 4 MiB blocks on a worker pool and
 * written in order with a bounded number of blocks in flight, so memory stays flat whatever
 * the input size.
 *
 * The zip is written front to back, never patched (a large entry's CRC and sizes follow its
 * data in a data descriptor, see zip-writer.ts), so it is hashed as it is written and its bytes
 * can be handed on as they are produced (`taps.output`, e.g. to an upload); each file's bytes
 * are handed on as they are read (`taps.input`, e.g. to the validation), so a directory is read
 * once. The output is written to a temporary file beside `out` and renamed at the end: `out`
 * is either the complete zip or untouched, also when aborted or refused by `beforeRename`.
 */
import { createHash, randomBytes } from 'node:crypto'
import { open, rename, stat, unlink, type FileHandle } from 'node:fs/promises'
import { availableParallelism } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { AbortedError, InvalidInputError } from '../../core/errors.ts'
import type { PieEntryName } from '../shared/index.ts'
import { listPieDir, type PieDirFile } from '../read/index.ts'
import { crc32Combine } from './crc32.ts'
import { createBlockCompressor, type BlockCompressor, type CompressedBlock } from './deflate-pool.ts'
import { centralHeader, dataDescriptor, endRecords, localHeader, needsZip64, type CentralEntry } from './zip-writer.ts'

/** How {@link packPie} writes the zip. */
export type PackPieOptions = {
  /** Stops the packing (an AbortedError; nothing is left at `out`). */
  signal?: AbortSignal
  /** DEFLATE level, 1 (default: fastest, ~4% larger than 6 for a third of the CPU) to 9. */
  level?: number
  /** Bytes per independently compressed block (default 4 MiB). Changes the output bytes. */
  blockSize?: number
  /** Worker threads (default: `availableParallelism()`, at most 8); inputs up to two blocks run inline. */
  workers?: number
  /** Write ZIP64 records for every entry even when nothing needs them (for tests). */
  forceZip64?: boolean
  /**
   * Awaited once the zip is complete, before it is renamed into place: a rejection (e.g. the
   * validation of the directory, run alongside the packing, found problems) removes the
   * temporary file and leaves `out` as it was.
   */
  beforeRename?: () => Promise<void>
  /** Where the bytes read and written go as well, in order (see PackTaps). */
  taps?: PackTaps
}

/**
 * Observers of one pack. Each is awaited before the packer goes on. The input bytes are valid
 * only until then (they live in buffers the packer reuses): copy what you keep. The output
 * bytes are the observer's to keep (fresh buffers, never written again).
 */
export type PackTaps = {
  /** Each PIE file's bytes as they are read, in order; `chunk` null once the file is read. */
  input?: (name: PieEntryName, chunk: Uint8Array | null) => void | Promise<void>
  /** The zip's bytes as they are written, in order, from the first to the last; they may be kept. */
  output?: (chunk: Uint8Array) => void | Promise<void>
}

/** One file of a packed pie.zip: its name, sizes and CRC-32. */
export type PackedEntry = { name: string; size: number; compressedSize: number; crc32: number }

/** The pie.zip {@link packPie} wrote: its path, SHA-256, size and entries. */
export type PackPieResult = {
  path: string
  /** SHA-256 of the zip, 64 lowercase hex digits. */
  sha256: string
  sizeBytes: number
  entries: PackedEntry[]
}

export const DEFAULT_BLOCK_SIZE = 4 * 1024 * 1024
// Up to this many blocks' worth of input, worker start-up costs more than it saves.
const INLINE_MAX_BLOCKS = 2
// Blocks in flight per worker: one compressing, the others read or being written, so a worker
// never waits on the main thread's I/O. Each costs a block of input plus its output.
const SLOTS_PER_WORKER = 3
// More workers than this would only add memory.
const MAX_WORKERS = 8
// Entries up to this many blocks keep their compressed blocks in memory until their CRC and
// sizes are known, and get them in their local header; larger ones are written as they are
// compressed, with a data descriptor. Decided from the file's size, so the bytes never depend
// on where they go.
const HEADER_FIRST_BLOCKS = 4
// Those large entries are deflated with zlib's memLevel 9 (its default is 8): ~13% less CPU at
// level 1 for output no larger, at 128 KiB more per stream. The small ones keep the default, so
// the zips of small PIEs are the bytes they always were.
const LARGE_ENTRY_MEM_LEVEL = 9

type Settings = Required<Omit<PackPieOptions, 'signal' | 'beforeRename' | 'taps'>> & {
  signal: AbortSignal | undefined
  taps: PackTaps
}

function settings(options: PackPieOptions): Settings {
  const level = options.level ?? 1
  if (!Number.isInteger(level) || level < 0 || level > 9) {
    throw new InvalidInputError(`DEFLATE level must be an integer from 0 to 9, got ${level}`, { input: 'level' })
  }
  const blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE
  if (!Number.isInteger(blockSize) || blockSize < 64 * 1024) {
    throw new InvalidInputError(`block size must be an integer of at least 64 KiB, got ${blockSize}`, {
      input: 'blockSize',
    })
  }
  return {
    level,
    blockSize,
    workers: Math.max(1, Math.min(MAX_WORKERS, options.workers ?? availableParallelism())),
    forceZip64: options.forceZip64 ?? false,
    signal: options.signal,
    taps: options.taps ?? {},
  }
}

/** Where the zip goes, front to back: a file, an upload, a hash. */
type Sink = {
  position: number
  write(bytes: Uint8Array): Promise<void>
}

function checkAbort(signal: AbortSignal | undefined) {
  if (signal?.aborted) throw new AbortedError('Packing the PIE was aborted', { cause: signal.reason })
}

async function pieFiles(dir: string): Promise<PieDirFile[]> {
  let listing
  try {
    listing = await listPieDir(dir)
  } catch (error) {
    throw new InvalidInputError(`Cannot read the PIE directory ${dir}`, { cause: error })
  }
  if (listing.problems.length) {
    const count = listing.problems.length
    throw new InvalidInputError(`Cannot pack ${dir}: not a PIE directory (${count} problem${count === 1 ? '' : 's'})`, {
      metaMessages: listing.problems,
    })
  }
  return listing.files
}

/**
 * Streams one file through the compressor's slots, handing compressed blocks to `emit` in
 * order (each the caller's to keep). At most `slots` blocks are in flight.
 */
async function compressFile(
  file: PieDirFile,
  compressor: BlockCompressor,
  s: Settings,
  emit: (data: Uint8Array) => Promise<void>,
  memLevel?: number,
): Promise<{ crc32: number; compressedSize: number }> {
  const signal = s.signal
  const tap = s.taps.input
  const handle = await open(file.path, 'r')
  const free = Array.from({ length: compressor.slots }, (_, slot) => slot)
  const queue: { slot: number; length: number; block: Promise<CompressedBlock> }[] = []
  let crc = 0
  let compressedSize = 0
  let position = 0
  let started = false
  try {
    while (!started || position < file.size || queue.length) {
      checkAbort(signal)
      while ((!started || position < file.size) && free.length) {
        started = true
        const slot = free.shift()!
        const length = Math.min(compressor.blockSize, file.size - position)
        const input = compressor.input(slot)
        let done = 0
        while (done < length) {
          const { bytesRead } = await handle.read(input, done, length - done, position + done)
          if (bytesRead === 0) throw new InvalidInputError(`${file.name} shrank while it was being packed`)
          done += bytesRead
        }
        position += length
        queue.push({ slot, length, block: compressor.compress(slot, length, position === file.size, memLevel) })
        // The worker reads the slot too; it is reused only once its block has been emitted.
        if (tap) await tap(file.name, input.subarray(0, length))
      }
      const head = queue.shift()!
      const block = await head.block
      crc = crc32Combine(crc, block.crc32, head.length)
      compressedSize += block.data.length
      await emit(block.data)
      free.push(head.slot)
    }
    const after = await handle.stat()
    if (after.size !== file.size) throw new InvalidInputError(`${file.name} changed size while it was being packed`)
    if (tap) await tap(file.name, null)
  } finally {
    // Let blocks still on the workers settle so no rejection goes unhandled.
    await Promise.allSettled(queue.map((entry) => entry.block))
    await handle.close()
  }
  return { crc32: crc, compressedSize }
}

async function writeZip(files: PieDirFile[], sink: Sink, s: Settings): Promise<PackedEntry[]> {
  const totalBytes = files.reduce((sum, file) => sum + file.size, 0)
  const workers = totalBytes <= INLINE_MAX_BLOCKS * s.blockSize ? 0 : s.workers
  const slots = Math.max(2, SLOTS_PER_WORKER * workers)
  // With an output tap, the zip's bytes are handed on to be kept: the workers hand over buffers of their own.
  const compressor = createBlockCompressor({
    workers,
    level: s.level,
    blockSize: s.blockSize,
    slots,
    ownOutput: s.taps.output !== undefined,
  })
  const central: CentralEntry[] = []
  try {
    for (const file of files) {
      checkAbort(s.signal)
      const zip64 = s.forceZip64 || needsZip64(file.size, s.blockSize)
      const offset = sink.position
      const descriptor = file.size > HEADER_FIRST_BLOCKS * s.blockSize
      const header = { name: file.name, method: 8, uncompressedSize: file.size, zip64, descriptor }
      let result: { crc32: number; compressedSize: number }
      if (descriptor) {
        await sink.write(localHeader({ ...header, crc32: 0, compressedSize: 0 }))
        result = await compressFile(file, compressor, s, (data) => sink.write(data), LARGE_ENTRY_MEM_LEVEL)
        await sink.write(dataDescriptor({ ...header, ...result }))
      } else {
        const blocks: Uint8Array[] = []
        // A block in a shared slot is copied: the slot is reused before the header goes out.
        result = await compressFile(
          file,
          compressor,
          s,
          async (data) => void blocks.push(data.buffer instanceof SharedArrayBuffer ? data.slice() : data),
        )
        await sink.write(localHeader({ ...header, ...result }))
        for (const block of blocks) await sink.write(block)
      }
      central.push({ ...header, ...result, localHeaderOffset: offset })
    }
  } finally {
    await compressor.close()
  }
  const centralDirectoryOffset = sink.position
  for (const entry of central) await sink.write(centralHeader(entry, s.forceZip64))
  await sink.write(
    endRecords({
      entryCount: central.length,
      centralDirectoryOffset,
      centralDirectorySize: sink.position - centralDirectoryOffset,
      anyZip64: central.some((entry) => entry.zip64 || entry.localHeaderOffset >= 0xffffffff),
      forceZip64: s.forceZip64,
    }),
  )
  return central.map((entry) => ({
    name: entry.name,
    size: entry.uncompressedSize,
    compressedSize: entry.compressedSize,
    crc32: entry.crc32,
  }))
}

/** Writes to the file, hashes, and hands the bytes to the output tap, in that order. */
function fileSink(handle: FileHandle, hash: ReturnType<typeof createHash>, tap: PackTaps['output']): Sink {
  const sink: Sink = {
    position: 0,
    async write(bytes) {
      let done = 0
      while (done < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, done, bytes.length - done, sink.position + done)
        done += bytesWritten
      }
      sink.position += bytes.length
      hash.update(bytes)
      if (tap) await tap(bytes)
    },
  }
  return sink
}

/**
 * Packs the PIE directory `dir` into the canonical pie.zip at `out`: the PIE's files in
 * cairo-lang's order, DEFLATE, nothing of the machine or the time, so the same directory gives the
 * same bytes (and the same SHA-256). The PIE is validated as it is read; an invalid one leaves no
 * file at `out`.
 *
 * @param dir The PIE directory.
 * @param out The zip's path (replaced only once the new one is complete).
 * @param options The compression level, block size, workers and signal.
 * @returns `{ path, sha256, sizeBytes, entries }`.
 * @throws {InvalidPieError} When the directory is not a valid PIE (every problem listed).
 * @throws {InvalidInputError} When `dir` cannot be read or `out` cannot be written.
 * @throws {AbortedError} When `signal` aborts.
 * @example
 * ```ts
 * import { packPie } from 'proving-kit'
 *
 * const { sha256, sizeBytes } = await packPie('build/pie', 'build/pie.zip')
 * ```
 */
export async function packPie(dir: string, out: string, options: PackPieOptions = {}): Promise<PackPieResult> {
  const s = settings(options)
  checkAbort(s.signal)
  const files = await pieFiles(dir)
  const outInfo = await stat(out).catch(() => undefined)
  if (outInfo?.isDirectory()) throw new InvalidInputError(`Output ${out} is a directory; give the zip's file name`)
  const temp = join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`)
  const handle = await open(temp, 'wx').catch((error: NodeJS.ErrnoException) => {
    throw new InvalidInputError(
      `Cannot write ${out}: ${error.code === 'ENOENT' ? 'its folder does not exist' : error.message}`,
      {
        cause: error,
      },
    )
  })
  let closed = false
  try {
    const hash = createHash('sha256')
    const sink = fileSink(handle, hash, s.taps.output)
    const entries = await writeZip(files, sink, s)
    await handle.close()
    closed = true
    checkAbort(s.signal)
    const sha256 = hash.digest('hex')
    const size = sink.position
    await options.beforeRename?.()
    checkAbort(s.signal)
    await rename(temp, out)
    return { path: out, sha256, sizeBytes: size, entries }
  } catch (error) {
    if (!closed) await handle.close().catch(() => {})
    await unlink(temp).catch(() => {})
    throw error
  }
}

/**
 * The SHA-256, size and entries of the zip {@link packPie} would write for `dir`, without writing it.
 *
 * @param dir The PIE directory.
 * @param options As for `packPie` (the level and block size change the bytes).
 * @returns `{ sha256, sizeBytes, entries }`.
 * @throws {InvalidInputError} When `dir` cannot be read.
 * @example
 * ```ts
 * import { canonicalZipDigest } from 'proving-kit'
 *
 * const { sha256 } = await canonicalZipDigest('build/pie')
 * ```
 */
export async function canonicalZipDigest(
  dir: string,
  options: PackPieOptions = {},
): Promise<{ sha256: string; sizeBytes: number; entries: PackedEntry[] }> {
  const s = settings(options)
  const files = await pieFiles(dir)
  const hash = createHash('sha256')
  const sink: Sink = {
    position: 0,
    async write(bytes) {
      hash.update(bytes)
      sink.position += bytes.length
    },
  }
  const entries = await writeZip(files, sink, s)
  return { sha256: hash.digest('hex'), sizeBytes: sink.position, entries }
}
