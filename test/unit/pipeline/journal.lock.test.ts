import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { JournalFileError, readRegular } from '../../../src/pipeline/journal/files.ts'
import {
  currentOwner,
  describeOwner,
  type JournalOwner,
  markWaiting,
  ownerStatus,
  parseOwner,
  readLock,
  sameProcess,
  takeLock,
  waitingKeys,
} from '../../../src/pipeline/journal/lock.ts'

// The file system calls a test steers (a race, an error no real folder gives); each passes through
// to node's own unless a test sets `steer`.
const steer = vi.hoisted(() => ({
  link: undefined as ((from: string, to: string) => Promise<void>) | undefined,
  rename: undefined as ((from: string, to: string) => Promise<void>) | undefined,
  open: undefined as ((path: string, flags: number) => Promise<never>) | undefined,
}))
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>()
  return {
    ...real,
    link: (from: string, to: string) => (steer.link ?? real.link)(from, to),
    rename: (from: string, to: string) => (steer.rename ?? real.rename)(from, to),
    open: (path: string, flags: number) => (steer.open ? steer.open(path, flags) : real.open(path, flags)),
  }
})

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'journal-lock-'))
})
afterEach(async () => {
  steer.link = undefined
  steer.rename = undefined
  steer.open = undefined
  vi.useRealTimers()
  await rm(dir, { recursive: true, force: true })
})

/** Field 22 of /proc/<pid>/stat, read here independently of the module (Linux, where the suite runs). */
const startOf = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return text.slice(text.lastIndexOf(')') + 2).split(' ')[19]
}
const elsewhere = `not-${hostname()}`
const lockText = (owner: Partial<JournalOwner>) =>
  JSON.stringify({ pid: 1, host: elsewhere, since: Date.now(), ...owner })

describe('readRegular: a journal file read safely', () => {
  it('a regular file: its text; none: undefined', async () => {
    const path = join(dir, 'entry.json')
    await writeFile(path, '{"version":1} é')
    expect(await readRegular(path)).toBe('{"version":1} é')
    expect(await readRegular(join(dir, 'missing.json'))).toBeUndefined()
  })

  it('each read closes its file, refused or not (a batch reads an entry and a lock per PIE)', async () => {
    const path = join(dir, 'entry.json')
    await writeFile(path, 'text')
    await mkdir(join(dir, 'folder'))
    const open = async () => (await readdir('/proc/self/fd')).length
    const before = await open()
    for (let round = 0; round < 20; round++) {
      await readRegular(path)
      await readRegular(join(dir, 'folder')).catch(() => {})
    }
    expect(await open()).toBe(before)
  })

  it('a symlink, even to a regular file of ours, is refused naming it; the file behind it is never read', async () => {
    const target = join(dir, 'target.json')
    await writeFile(target, 'planted')
    const path = join(dir, 'entry.json')
    await symlink(target, path)
    const error = await readRegular(path).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(JournalFileError)
    expect((error as JournalFileError).name).toBe('JournalFileError')
    expect((error as JournalFileError).shortMessage).toBe(
      `The submission journal file ${path} is a symbolic link, not a regular file: refused, nothing was sent. Remove it if you did not put it there.`,
    )
    expect((error as JournalFileError).input).toBe('PROVING_JOURNAL_DIR')
    expect((error as JournalFileError).nextStep).toEqual({ kind: 'clear-journal' })
  })

  it('a device or a socket is refused naming its kind (a socket is not taken for a missing file)', async () => {
    await expect(readRegular('/dev/null')).rejects.toMatchObject({
      shortMessage: expect.stringMatching(
        /^The submission journal file \/dev\/null is a device or other special file, not a regular file/,
      ),
    })
    const path = join(dir, 'lock')
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(path, resolve))
    try {
      await expect(readRegular(path)).rejects.toMatchObject({
        name: 'JournalFileError',
        shortMessage: expect.stringMatching(
          new RegExp(`^The submission journal file ${path} is a socket, not a regular file`),
        ),
      })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('a folder problem (a path through a file, a name too long) is passed on as it is, not called a planted file', async () => {
    const file = join(dir, 'file')
    await writeFile(file, '')
    const through = await readRegular(join(file, 'entry.json')).catch((caught: unknown) => caught)
    expect(through).not.toBeInstanceOf(JournalFileError)
    expect((through as NodeJS.ErrnoException).code).toBe('ENOTDIR')
    const long = await readRegular(join(dir, 'x'.repeat(300))).catch((caught: unknown) => caught)
    expect((long as NodeJS.ErrnoException).code).toBe('ENAMETOOLONG')
    // Too many files open: the journal file is fine, the error is passed on.
    const path = join(dir, 'entry.json')
    await writeFile(path, '')
    steer.open = async () => {
      throw Object.assign(new Error('open EMFILE'), { code: 'EMFILE' })
    }
    await expect(readRegular(path)).rejects.toMatchObject({ code: 'EMFILE' })
    steer.open = undefined
    // A lock's reader: a folder problem is no lock; a planted file is refused.
    expect(await readLock(join(file, 'key.lock'))).toBeUndefined()
    await mkdir(join(dir, 'key.lock'))
    await expect(readLock(join(dir, 'key.lock'))).rejects.toBeInstanceOf(JournalFileError)
  })
})

describe('owners', () => {
  it('this process: its pid, host and kernel start time, the same object every call', async () => {
    const before = Date.now()
    const me = await currentOwner()
    expect(me).toMatchObject({ pid: process.pid, host: hostname(), processStart: startOf(process.pid) })
    expect(me.since).toBeLessThanOrEqual(Date.now())
    expect(await currentOwner()).toBe(me)
    expect(before).toBeGreaterThan(0)
  })

  it('an owner that cannot be checked is alive for an hour, to the millisecond, then expired', async () => {
    const now = Date.parse('2026-03-01T12:00:00Z')
    const far = { pid: 1, host: elsewhere }
    expect(await ownerStatus({ ...far, since: now - 3_600_000 }, now)).toBe('alive')
    expect(await ownerStatus({ ...far, since: now - 3_600_001 }, now)).toBe('expired')
    expect(await ownerStatus({ ...far, since: now - 59 * 60_000 }, now)).toBe('alive')
    const child = spawn(process.execPath, ['-e', '0'])
    await new Promise((resolve) => child.on('close', resolve))
    expect(await ownerStatus({ pid: child.pid!, host: hostname(), since: now }, now)).toBe('dead')
    expect(await ownerStatus({ pid: process.pid, host: hostname(), processStart: '1', since: now }, now)).toBe('dead')
    expect(
      await ownerStatus(
        { pid: process.pid, host: hostname(), processStart: startOf(process.pid), since: now - 3_600_001 },
        now,
      ),
    ).toBe('alive')
    // A live local pid without a start time (macOS) is judged by age alone.
    expect(await ownerStatus({ pid: process.pid, host: hostname(), since: now - 3_600_000 }, now)).toBe('alive')
    expect(await ownerStatus({ pid: process.pid, host: hostname(), since: now - 3_600_001 }, now)).toBe('expired')
  })

  it('a local pid whose start time cannot be read (gone from /proc) is judged by age, not called dead', async () => {
    const now = Date.now()
    const kill = vi.spyOn(process, 'kill').mockImplementation(() => true)
    try {
      // A pid above any pid_max: no /proc entry, but kill says it lives.
      const owner = { pid: 2 ** 30, host: hostname(), processStart: '12345', since: now }
      expect(await ownerStatus(owner, now)).toBe('alive')
      expect(await ownerStatus({ ...owner, since: now - 3_600_001 }, now)).toBe('expired')
    } finally {
      kill.mockRestore()
    }
  })

  it('named by pid, host and the time it took the lock', () => {
    expect(describeOwner({ pid: 42, host: 'ci-runner', since: Date.parse('2026-03-01T12:00:00Z') })).toBe(
      'pid 42 on ci-runner, since 2026-03-01T12:00:00.000Z',
    )
  })

  it('the same process only when pid, host and start time all match', () => {
    const a = { pid: 7, host: 'h', processStart: '100', since: 1 }
    expect(sameProcess(a, { ...a, since: 2 })).toBe(true)
    expect(sameProcess(a, { ...a, pid: 8 })).toBe(false)
    expect(sameProcess(a, { ...a, host: 'g' })).toBe(false)
    expect(sameProcess(a, { ...a, processStart: '101' })).toBe(false)
    expect(sameProcess(a, { ...a, processStart: undefined })).toBe(false)
  })

  it('a lock names an owner only with a numeric pid and a host', () => {
    expect(parseOwner('{"pid":3,"host":"h","since":5}')).toEqual({ pid: 3, host: 'h', since: 5 })
    for (const text of [
      '',
      'not json',
      'null',
      '7',
      '{"pid":3}',
      '{"host":"h"}',
      '{"pid":"3","host":"h"}',
      '{"pid":3,"host":4}',
    ]) {
      expect(parseOwner(text), text).toBeUndefined()
    }
  })
})

describe('takeLock', () => {
  it('taken whole, 0600, naming this process; nothing else left; released once, only while still ours', async () => {
    const path = join(dir, 'key.lock')
    const lock = await takeLock(path)
    expect(lock.taken).toBe(true)
    expect(await readdir(dir)).toEqual(['key.lock'])
    expect((await stat(path)).mode & 0o777).toBe(0o600)
    const owner = parseOwner(await readFile(path, 'utf8'))
    expect(owner).toMatchObject({ pid: process.pid, host: hostname(), processStart: startOf(process.pid) })
    expect(await ownerStatus(owner!)).toBe('alive')
    const again = await takeLock(path)
    expect(again).toEqual({ taken: false, owner })
    expect(await readdir(dir)).toEqual(['key.lock'])
    if (lock.taken) await lock.release()
    expect(await readdir(dir)).toEqual([])
  })

  it('a second release never removes a lock taken since, even one with the very same text', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.parse('2026-03-01T12:00:00Z') })
    const path = join(dir, 'key.lock')
    const first = await takeLock(path)
    const text = await readFile(path, 'utf8')
    if (first.taken) await first.release()
    const second = await takeLock(path)
    expect(second.taken).toBe(true)
    expect(await readFile(path, 'utf8')).toBe(text)
    if (first.taken) await first.release()
    expect(await readFile(path, 'utf8')).toBe(text)
    if (second.taken) await second.release()
    expect(await readdir(dir)).toEqual([])
  })

  it('a release after the lock was removed, or made unreadable, does nothing and does not throw', async () => {
    const path = join(dir, 'key.lock')
    const lock = await takeLock(path)
    await rm(path)
    await mkdir(path)
    if (lock.taken) await expect(lock.release()).resolves.toBeUndefined()
    expect((await stat(path)).isDirectory()).toBe(true)
  })

  it("a dead owner's lock is taken over silently; an expired one saying so; a live one is left as it was", async () => {
    const path = join(dir, 'key.lock')
    const warnings: string[] = []
    const logger = { info: () => {}, warn: (text: string) => warnings.push(text), debug: () => {} } as never
    await writeFile(path, lockText({ pid: process.pid, host: hostname(), processStart: '1' }))
    const dead = await takeLock(path, logger)
    expect(dead.taken).toBe(true)
    expect(warnings).toEqual([])
    expect(parseOwner(await readFile(path, 'utf8'))?.pid).toBe(process.pid)
    if (dead.taken) await dead.release()

    const since = Date.now() - 3_600_001
    await writeFile(path, lockText({ host: 'ci-runner', since }))
    const expired = await takeLock(path, logger)
    expect(expired.taken).toBe(true)
    expect(warnings).toEqual([
      `The lock ${path} of pid 1 on ci-runner, since ${new Date(since).toISOString()} (another host, or no start time: it cannot be checked) is older than any upload takes (60 minutes): taken over.`,
    ])
    if (expired.taken) await expired.release()

    const live = lockText({ host: 'ci-runner' })
    await writeFile(path, live)
    expect(await takeLock(path, logger)).toMatchObject({ taken: false, owner: { pid: 1, host: 'ci-runner' } })
    expect(await readFile(path, 'utf8')).toBe(live)
    expect(await readdir(dir)).toEqual(['key.lock'])
  })

  it('an expired lock is taken over without a logger too', async () => {
    const path = join(dir, 'key.lock')
    await writeFile(path, lockText({ since: Date.now() - 3_600_001 }))
    expect((await takeLock(path)).taken).toBe(true)
  })

  it('a stale lock replaced by a live run while it was being moved aside is put back, and that run named', async () => {
    const path = join(dir, 'key.lock')
    await writeFile(path, lockText({ pid: process.pid, host: hostname(), processStart: '1' }))
    const live = lockText({ host: 'ci-runner' })
    const { rename } = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
    steer.rename = async (from, to) => {
      steer.rename = undefined
      // Another run removed the stale lock and took its own just before this one moved it.
      await rm(from)
      await writeFile(from, live)
      await rename(from, to)
    }
    expect(await takeLock(path)).toMatchObject({ taken: false, owner: { pid: 1, host: 'ci-runner' } })
    expect(await readFile(path, 'utf8')).toBe(live)
    expect(await readdir(dir)).toEqual(['key.lock'])
  })

  it('a stale lock another run already moved aside: taken on the next try, nothing left behind', async () => {
    const path = join(dir, 'key.lock')
    await writeFile(path, lockText({ pid: process.pid, host: hostname(), processStart: '1' }))
    steer.rename = async (from) => {
      steer.rename = undefined
      await rm(from)
      throw Object.assign(new Error('rename ENOENT'), { code: 'ENOENT' })
    }
    const lock = await takeLock(path)
    expect(lock.taken).toBe(true)
    expect(await readdir(dir)).toEqual(['key.lock'])
  })

  it('a lock that vanishes between the failed link and the read is tried again', async () => {
    const path = join(dir, 'key.lock')
    await writeFile(path, lockText({ host: 'ci-runner' }))
    const { link } = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
    let links = 0
    steer.link = async (from, to) => {
      links++
      try {
        await link(from, to)
      } finally {
        // The owner lets go just after this run's link failed.
        if (links === 1) await rm(to)
      }
    }
    const renames: string[] = []
    steer.rename = async (from) => {
      renames.push(from)
    }
    const lock = await takeLock(path)
    expect(lock.taken).toBe(true)
    expect(links).toBe(2)
    expect(renames).toEqual([])
    expect(await readdir(dir)).toEqual(['key.lock'])
  })

  it('a link that fails otherwise (a file system without hard links) is thrown, leaving no temporary file', async () => {
    const path = join(dir, 'key.lock')
    steer.link = async () => {
      throw Object.assign(new Error('link EPERM'), { code: 'EPERM' })
    }
    await expect(takeLock(path)).rejects.toMatchObject({ code: 'EPERM' })
    expect(await readdir(dir)).toEqual([])
  })

  it("whatever stands at the lock's path, taking the lock ends: taken, its live holder named, or refused", async () => {
    const path = join(dir, 'key.lock')
    const failing = (code: string) => async (target: string) => {
      if (target !== path) return undefined
      throw Object.assign(new Error(`open ${code}`), { code })
    }
    const kinds: { name: string; make: () => Promise<void | (() => Promise<void>)>; open?: string; ends: string }[] = [
      { name: 'nothing', make: async () => {}, ends: 'taken' },
      { name: "a live run's lock", make: () => writeFile(path, lockText({ host: 'ci-runner' })), ends: 'held' },
      {
        name: "a dead run's lock",
        make: () => writeFile(path, lockText({ host: hostname(), processStart: '1' })),
        ends: 'taken',
      },
      { name: 'a lock naming no owner', make: () => writeFile(path, 'not json'), ends: 'taken' },
      { name: 'a folder', make: () => mkdir(path), ends: 'refused' },
      { name: 'a symbolic link', make: () => symlink(join(dir, 'elsewhere'), path), ends: 'refused' },
      { name: 'a named pipe', make: () => mkfifo(path), ends: 'refused' },
      { name: 'a socket', make: () => listenOn(path), ends: 'refused' },
      { name: 'a lock it may not read', make: () => writeFile(path, 'x'), open: 'EACCES', ends: 'refused' },
      { name: 'a lock the disk cannot give', make: () => writeFile(path, 'x'), open: 'EIO', ends: 'refused' },
    ]
    for (const kind of kinds) {
      await rm(path, { recursive: true, force: true })
      const undo = await kind.make()
      let links = 0
      const real = await vi.importActual<typeof import('node:fs/promises')>('node:fs/promises')
      steer.link = async (from, to) => {
        // Bounded: a lock read as absent while it stands would be linked at forever.
        if (++links > 20) throw new Error(`${kind.name}: tried ${links} times`)
        return real.link(from, to)
      }
      steer.open = kind.open
        ? ((async (target: string, flags: number) =>
            (await failing(kind.open!)(target)) ?? real.open(target, flags)) as never)
        : undefined
      const ended = await takeLock(path).then(
        async (lock) => {
          if (lock.taken) await lock.release()
          return lock.taken ? 'taken' : 'held'
        },
        (error: unknown) => (error instanceof JournalFileError ? 'refused' : `threw ${String(error)}`),
      )
      steer.open = undefined
      expect(ended, kind.name).toBe(kind.ends)
      await undo?.()
    }
  })

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

describe('waiting marks', () => {
  it('one 0600 mark per waiting run, each its own; the keys read back; a mark goes when its run stops waiting', async () => {
    const unmarkA = await markWaiting(dir, 'aa')
    const unmarkA2 = await markWaiting(dir, 'aa')
    const unmarkB = await markWaiting(dir, 'bb')
    const names = await readdir(dir)
    expect(names).toHaveLength(3)
    for (const name of names) {
      expect(name).toMatch(new RegExp(`^(aa|bb)\\.waiting\\.${process.pid}\\.[0-9a-f-]{36}$`))
      expect((await stat(join(dir, name))).mode & 0o777).toBe(0o600)
    }
    expect(await waitingKeys(dir)).toEqual(new Set(['aa', 'bb']))
    await unmarkA()
    expect(await waitingKeys(dir)).toEqual(new Set(['aa', 'bb']))
    await unmarkA2()
    await unmarkB()
    await unmarkB()
    expect(await waitingKeys(dir)).toEqual(new Set())
  })

  it('entries, locks and a name that starts with the mark are no waiting key; a folder that cannot be listed has none', async () => {
    await writeFile(join(dir, 'aa.json'), '')
    await writeFile(join(dir, 'aa.lock'), '')
    await writeFile(join(dir, '.waiting.1'), '')
    await writeFile(join(dir, 'bbwaiting.1'), '')
    expect(await waitingKeys(dir)).toEqual(new Set())
    expect(await waitingKeys(join(dir, 'missing'))).toEqual(new Set())
  })

  it('calls made during a listing share the next one, begun after them; a later call lists again', async () => {
    const first = waitingKeys(dir)
    await markWaiting(dir, 'aa')
    const second = waitingKeys(dir)
    const third = waitingKeys(dir)
    expect(third).toBe(second)
    expect(second).not.toBe(first)
    // The second listing began after the mark was made, whatever the first one saw.
    expect(await second).toEqual(new Set(['aa']))
    await first
    await markWaiting(dir, 'bb')
    const later = waitingKeys(dir)
    expect(later).not.toBe(second)
    expect(await later).toEqual(new Set(['aa', 'bb']))
    // Another folder has listings of its own.
    const other = join(dir, 'other')
    await mkdir(other)
    expect(await waitingKeys(other)).toEqual(new Set())
  })
})

/** A named pipe at `path` (mkfifo(1): node has no call for it). */
function mkfifo(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('mkfifo', [path], { stdio: 'ignore' })
    child.on('error', reject)
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo exited ${code}`))))
  })
}

/** A socket listening at `path`; returns how to close it. */
async function listenOn(path: string): Promise<() => Promise<void>> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(path, resolve))
  return () => new Promise<void>((resolve) => server.close(() => resolve()))
}
