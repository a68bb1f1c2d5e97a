import { mkdtemp, readdir, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { JournalFileError, readRegular } from '../../../src/pipeline/journal/files.ts'
import { takeLock } from '../../../src/pipeline/journal/lock.ts'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-lock-'))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

describe('readRegular: a journal file read safely', () => {
  it('a device or a socket is refused naming its kind (a socket is not taken for a missing file)', async () => {
    await expect(readRegular('/dev/null')).rejects.toMatchObject({
      shortMessage: expect.stringMatching(/^The submission journal file \/dev\/null is a device or other special file, not a regular file/),
    })
    const path = join(dir, 'lock')
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(path, resolve))
    try {
      await expect(readRegular(path)).rejects.toMatchObject({
        name: 'JournalFileError',
        shortMessage: expect.stringMatching(new RegExp(`^The submission journal file ${path} is a socket, not a regular file`)),
      })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})

describe('takeLock', () => {
  it('a lock that is a socket is refused naming it, not tried forever', async () => {
    const path = join(dir, 'key.lock')
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(path, resolve))
    try {
      await expect(takeLock(path)).rejects.toBeInstanceOf(JournalFileError)
      expect(await readdir(dir)).toEqual(['key.lock'])
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
