/**
 * What legitimate zip writers produce stays valid (issue 40): the example PIE's files written by
 * Python's zipfile (as cairo-lang writes them: a ZIP64 field on memory.bin's small local header;
 * writestr; streamed to a pipe, with data descriptors), Info-ZIP `zip` (to a file, to a pipe with
 * data descriptors, `-fz` with ZIP64 markers in the directory), libzip's `ziptool` (DEFLATE level
 * bits) and Rust's zip crate 0.6 with `large_file`, as cairo-vm's writer sets it (ZIP64 markers and
 * fields in every small local header; test/interop/data/, written once from the example, see
 * FIXTURES.md). Each must validate, and `validate` must read every file's bytes as written.
 * Info-ZIP stores what does not shrink (version.json), which cairo-lang refuses: its zips hold
 * the four other files. A writer that is not installed is skipped, saying why (under
 * PROVING_REQUIRE_SYSTEM_TOOLS=1, as .ci/run installs them, a failure).
 */
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { validatePie } from '../../src/pie/index.ts'
import { openPie } from '../../src/pie/read/index.ts'
import { EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { execFileAsync, readZipFiles, removeTempDirs, tempDir, writeDir } from '../helpers/pie-fixtures.ts'

afterAll(removeTempDirs)

const NAMES = ['metadata.json', 'memory.bin', 'additional_data.json', 'execution_resources.json', 'version.json']
const RUST_ZIP = fileURLToPath(new URL('./data/rust-zip-0.6-large-file.zip', import.meta.url))

const has = (tool: string) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

const PYTHON = `
import io, sys, zipfile
src, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]
names = ${JSON.stringify(NAMES)}
read = lambda n: open(src + "/" + n, "rb").read()
class Pipe(io.RawIOBase):
    def __init__(self, f): self.f = f
    def writable(self): return True
    def write(self, b): return self.f.write(b)
    def seekable(self): return False
with open(out, "wb") as f:
    with zipfile.ZipFile(Pipe(f) if mode == "pipe" else f, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for n in names:
            if mode == "writestr":
                zf.writestr(n, read(n))
            else:
                with zf.open(n, "w", force_zip64=(n == "memory.bin")) as fp:
                    fp.write(read(n))
`

type Writer = { name: string; tool: string; files: string[]; write: (dir: string, out: string) => Promise<unknown> }

const FOUR = NAMES.slice(0, 4)
const sh = (command: string, cwd: string) => execFileAsync('sh', ['-c', command], { cwd })

const WRITERS: Writer[] = [
  {
    name: "Python's zipfile as cairo-lang writes (force_zip64 on memory.bin)",
    tool: 'python3',
    files: NAMES,
    write: (dir, out) => execFileAsync('python3', ['-c', PYTHON, dir, out, 'cairo-lang']),
  },
  {
    name: "Python's zipfile, writestr",
    tool: 'python3',
    files: NAMES,
    write: (dir, out) => execFileAsync('python3', ['-c', PYTHON, dir, out, 'writestr']),
  },
  {
    name: "Python's zipfile streaming to a pipe (data descriptors, a ZIP64 one)",
    tool: 'python3',
    files: NAMES,
    write: (dir, out) => execFileAsync('python3', ['-c', PYTHON, dir, out, 'pipe']),
  },
  {
    name: 'Info-ZIP zip to a file',
    tool: 'zip',
    files: FOUR,
    write: (dir, out) => sh(`zip -q -X '${out}' ${FOUR.join(' ')}`, dir),
  },
  {
    name: 'Info-ZIP zip to a pipe (data descriptors)',
    tool: 'zip',
    files: FOUR,
    write: (dir, out) => sh(`zip -q - ${FOUR.join(' ')} | cat > '${out}'`, dir),
  },
  {
    name: 'Info-ZIP zip -fz (ZIP64 fields on small entries)',
    tool: 'zip',
    files: FOUR,
    write: (dir, out) => sh(`zip -q -fz '${out}' ${FOUR.join(' ')}`, dir),
  },
  {
    name: "libzip's ziptool",
    tool: 'ziptool',
    files: NAMES,
    write: (dir, out) =>
      execFileAsync('ziptool', [
        '-n',
        out,
        ...NAMES.flatMap((n, i) => [
          'add_file',
          n,
          join(dir, n),
          '0',
          '0',
          'set_file_compression',
          String(i),
          'deflate',
          '0',
        ]),
      ]),
  },
]

async function entriesOf(path: string): Promise<Map<string, string>> {
  const source = await openPie(path)
  try {
    const out = new Map<string, string>()
    for (const { name } of source.entries) {
      const hash = createHash('sha256')
      for await (const chunk of source.open(name)) hash.update(chunk)
      out.set(name, hash.digest('hex'))
    }
    return out
  } finally {
    await source.close()
  }
}

describe('zips legitimate writers write stay valid, read as written', async () => {
  const files = await readZipFiles(EXAMPLE_PIE)
  const sha = (name: string) => createHash('sha256').update(files.get(name)!).digest('hex')

  for (const writer of WRITERS) {
    if (!has(writer.tool)) {
      const why = `${writer.tool} is not installed (Debian's ${writer.tool === 'ziptool' ? 'ziptool' : writer.tool} package)`
      if (process.env.PROVING_REQUIRE_SYSTEM_TOOLS === '1')
        it(`${writer.name}: has ${writer.tool}`, () =>
          expect.fail(`${why}, and PROVING_REQUIRE_SYSTEM_TOOLS=1 requires it`))
      else {
        console.warn(`${writer.name}: skipped: ${why}`)
        it.skip(`${writer.name}: skipped: ${why}`, () => {})
      }
      continue
    }
    it(writer.name, async () => {
      const work = await tempDir('writers-')
      const dir = await writeDir(join(work, 'pie'), files)
      const out = join(work, 'out.zip')
      await writer.write(dir, out)
      const result = await validatePie(out)
      expect(result.problems).toEqual([])
      expect(Object.fromEntries(await entriesOf(out))).toEqual(
        Object.fromEntries(writer.files.map((name) => [name, sha(name)])),
      )
    })
  }

  it("Rust's zip crate 0.6 with large_file, as cairo-vm's writer sets it (ZIP64 markers in every local header)", async () => {
    const result = await validatePie(RUST_ZIP)
    expect(result.problems).toEqual([])
    expect(Object.fromEntries(await entriesOf(RUST_ZIP))).toEqual(
      Object.fromEntries(NAMES.map((name) => [name, sha(name)])),
    )
  })
})
