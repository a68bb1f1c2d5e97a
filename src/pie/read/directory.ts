/**
 * A PIE directory: the PIE's files unzipped, nothing else. Listing it finds the files and every
 * way it departs from that (missing, extra, symlinked or non-regular entries), so the packer
 * can refuse it with a message naming the entry and the validator can report the same lines.
 */
import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import {
  ENTRY_SIZE_LIMITS,
  PIE_ENTRY_ORDER,
  REQUIRED_ENTRIES,
  isPieEntryName,
  type PieEntryName,
} from '../shared/index.ts'

export type PieDirFile = { name: PieEntryName; path: string; size: number }

export type PieDirListing = {
  /** The PIE files present, in canonical order. */
  files: PieDirFile[]
  problems: string[]
}

export async function listPieDir(dir: string): Promise<PieDirListing> {
  const problems: string[] = []
  const label = `${dir.replace(/\/+$/, '')}/`
  const names = (await readdir(dir)).sort()
  const present = new Map<PieEntryName, PieDirFile>()
  for (const name of names) {
    const path = join(dir, name)
    const info = await lstat(path)
    if (!isPieEntryName(name)) {
      const what = info.isDirectory() ? 'folder' : 'file'
      problems.push(`${label}: extra ${what} "${name}"; a PIE holds only ${PIE_ENTRY_ORDER.join(', ')}`)
      continue
    }
    if (info.isSymbolicLink()) {
      problems.push(`${label}: "${name}" is a symbolic link; PIE files must be regular files`)
      continue
    }
    if (!info.isFile()) {
      problems.push(`${label}: "${name}" is not a regular file`)
      continue
    }
    if (info.size >= ENTRY_SIZE_LIMITS[name]) {
      problems.push(`${label}: "${name}" is ${info.size} bytes; cairo-lang accepts under ${ENTRY_SIZE_LIMITS[name]}`)
    }
    present.set(name, { name, path, size: info.size })
  }
  for (const name of REQUIRED_ENTRIES) {
    if (!present.has(name) && !names.includes(name)) problems.push(`${label}: missing required file "${name}"`)
  }
  const files = PIE_ENTRY_ORDER.flatMap((name) => present.get(name) ?? [])
  return { files, problems }
}
