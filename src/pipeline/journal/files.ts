/**
 * Reading a journal file safely: a regular file only, never opened in a way that could block or
 * follow a planted link (the journal's one way to read its entries and locks).
 */
import { constants, type Stats } from 'node:fs'
import { lstat, open } from 'node:fs/promises'
import { InvalidInputError } from '../../core/errors.ts'

/**
 * The text of a journal file, undefined when there is none. Opened without following a symlink
 * and without blocking (a FIFO would hold the read forever), then refused unless it is a regular
 * file: a lock or entry planted as a link or a pipe never steers a run.
 */
export async function readRegular(path: string): Promise<string | undefined> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return undefined
    // O_NOFOLLOW on a symlink: ELOOP (Linux, macOS), EMLINK (FreeBSD).
    if (code === 'ELOOP' || code === 'EMLINK') throw notRegular(path, 'a symbolic link')
    // open(2) of a socket (or of a device with nothing behind it): ENXIO. Refused like the rest,
    // not passed on as a read error a lock's reader takes for no lock (then tries it forever).
    if (code === 'ENXIO') throw notRegular(path, kindOf(await lstat(path)))
    throw error
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw notRegular(path, kindOf(info))
    return await handle.readFile('utf8')
  } finally {
    await handle.close()
  }
}

function kindOf(info: Stats): string {
  if (info.isDirectory()) return 'a folder'
  if (info.isFIFO()) return 'a named pipe (FIFO)'
  if (info.isSocket()) return 'a socket'
  // Stryker disable next-line all: never reached (O_NOFOLLOW refuses a link before fstat, and ENXIO is no link's answer); kept in case either changes
  if (info.isSymbolicLink()) return 'a symbolic link'
  return 'a device or other special file'
}

/** A journal file that is not a regular file: refused, naming it (nothing was sent). */
export class JournalFileError extends InvalidInputError {
  override name = 'JournalFileError'
}

function notRegular(path: string, kind: string): JournalFileError {
  return new JournalFileError(
    `The submission journal file ${path} is ${kind}, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
    { input: 'PROVING_JOURNAL_DIR', nextStep: { kind: 'clear-journal' } },
  )
}
