/**
 * The container fuzzer (issue 40): real PIE zips mutated in every header field, count, size,
 * offset, flag and extra field of their local headers, directory, end record and ZIP64 records
 * (test/helpers/zip-fuzz.ts), each judged by the references and by `validate` and `inspect`:
 * - cairo-lang v0.14.0.1 (../shared/oracle: Python's zipfile, then `CairoPie.from_file` and
 *   `run_validity_checks`);
 * - Python's zipfile alone, as cairo-lang opens the zip (each name's last copy read whole): the
 *   oracle's Python 3.11.7 and every other Python here (Debian's 3.11, 3.12, 3.13: 3.11.8 and
 *   later refuse overlapping entries that 3.11.7 reads).
 * - where built (scripts/zip-crate-reader), cairo-vm's reader: Rust's zip crate 0.6 as
 *   `CairoPie::from_zip_archive` opens a PIE.
 * The properties: `validate` accepts nothing cairo-lang refuses, nor anything one of the Pythons'
 * zipfile (or the zip crate) refuses; where it accepts, every one of them reads the same bytes for
 * every entry as `validate` does, and `inspect`'s program hash is cairo-lang's; a refusal says "cairo-lang
 * refuses it" only when cairo-lang does. The numbers go to the console. PROVING_ZIP_FUZZ_CASES
 * sets how many cases (300 by default; the deep run 5,000), PROVING_ZIP_FUZZ_SEED the seed.
 * Skipped, saying why, where the oracle or ../shared is absent.
 */
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterAll, beforeAll, expect, it } from 'vitest'
import zlib from 'node:zlib'
import { inspectPie, validatePie, type PieValidationResult } from '../../src/pie/index.ts'
import { centralHeader, endRecords, localHeader } from '../../src/pie/pack/zip-writer.ts'
import { openPie } from '../../src/pie/read/index.ts'
import {
  ORACLE_VENV,
  askOracle,
  describeOracle,
  otherPythons,
  zipfileReadings,
  type OracleVerdict,
  type ZipfileReading,
} from '../helpers/oracle.ts'
import { fixturePath, readZipFiles, removeTempDirs, tempDir } from '../helpers/pie-fixtures.ts'
import { EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { planArbitrary, zipCase, type Plan } from '../helpers/zip-fuzz.ts'
import { parseZipFile, type ZipModel } from '../helpers/zip-model.ts'

afterAll(removeTempDirs)

/** cairo-vm's zip reader, where built (scripts/zip-crate-reader/README.md). */
const ZIP_CRATE =
  process.env.PROVING_ZIP_CRATE_READER ??
  fileURLToPath(new URL('../../scripts/zip-crate-reader/target/release/zip-crate-reader', import.meta.url))
const HAS_ZIP_CRATE = existsSync(ZIP_CRATE)

/** Each zip as the zip crate reads it: each PIE file's "length:crc32", or its error. */
function zipCrateReadings(paths: string[]): Promise<ZipfileReading[]> {
  return new Promise((resolve, reject) => {
    const child = execFile(ZIP_CRATE, { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) => {
      if (error) return reject(error)
      resolve(
        stdout
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as ZipfileReading),
      )
    })
    child.stdin!.end(`${paths.join('\n')}\n`)
  })
}

const CASES = Number(process.env.PROVING_ZIP_FUZZ_CASES ?? 300)
const SEED = Number(process.env.PROVING_ZIP_FUZZ_SEED ?? 40)

type Case = {
  name: string
  zip: string
  ours?: PieValidationResult
  /** Each entry's SHA-256 as validate read it, and inspect's Pedersen program hash (valid cases). */
  bytes?: Record<string, string>
  /** Each entry's "length:crc32" as validate read it (valid cases), and as the zip crate read it. */
  crcs?: Record<string, string>
  crate?: ZipfileReading
  pedersen?: string
  theirs?: OracleVerdict
  readings: { python: string; reading: ZipfileReading }[]
}

const cases: Case[] = []
let pythons: { python: string; version: string }[] = []
let seconds = 0
/** Seconds spent making the cases, judging them here, and in the references. */
let phases: number[] = []

/** The files as the packer's forceZip64 writes them: ZIP64 fields on every entry, ZIP64 end records. */
function forcedZip64(files: Map<string, Uint8Array>): Uint8Array {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let position = 0
  for (const [name, data] of files) {
    const body = zlib.deflateRawSync(data)
    const header = {
      name,
      method: 8,
      crc32: zlib.crc32(data),
      compressedSize: body.length,
      uncompressedSize: data.length,
      zip64: true,
    }
    const local = localHeader(header)
    central.push(centralHeader({ ...header, localHeaderOffset: position }, true))
    parts.push(local, body)
    position += local.length + body.length
  }
  const size = central.reduce((sum, part) => sum + part.length, 0)
  parts.push(
    ...central,
    endRecords({
      entryCount: files.size,
      centralDirectoryOffset: position,
      centralDirectorySize: size,
      anyZip64: true,
      forceZip64: true,
    }),
  )
  return Buffer.concat(parts)
}

async function ourBytes(path: string): Promise<{ sha256: Record<string, string>; crcs: Record<string, string> }> {
  const source = await openPie(path)
  try {
    const sha256: Record<string, string> = {}
    const crcs: Record<string, string> = {}
    for (const { name } of source.entries) {
      const hash = createHash('sha256')
      let crc = 0
      let length = 0
      for await (const chunk of source.open(name)) {
        hash.update(chunk)
        crc = zlib.crc32(chunk, crc)
        length += chunk.length
      }
      sha256[name] = hash.digest('hex')
      crcs[name] = `${length}:${(crc >>> 0).toString(16).padStart(8, '0')}`
    }
    return { sha256, crcs }
  } finally {
    await source.close()
  }
}

describeOracle('the zip container, fuzzed: validate against Python zipfile and cairo-lang', () => {
  beforeAll(async () => {
    const started = performance.now()
    const work = await tempDir('zip-fuzz-')
    const zip64 = join(work, 'forced-zip64.zip')
    await writeFile(zip64, forcedZip64(await readZipFiles(EXAMPLE_PIE)))
    const bases: { name: string; model: ZipModel }[] = []
    for (const [name, path] of [
      ['the example', EXAMPLE_PIE],
      ['the example, forced ZIP64', zip64],
      ['cairo-lang (ZIP64 field on memory.bin)', fixturePath('fib-cairo-lang-writer.zip')],
      ['cairo-lang', fixturePath('fib-cairo-lang-writer-2.zip')],
      ['cairo-vm', fixturePath('fib-cairo-vm-writer.zip')],
    ] as const) {
      bases.push({ name, model: await parseZipFile(path) })
    }
    const plans = fc.sample(planArbitrary(bases.length), { numRuns: CASES, seed: SEED }) as Plan[]
    for (const [i, plan] of plans.entries()) {
      const made = zipCase(bases, plan)
      const zip = join(work, `case-${i}.zip`)
      await writeFile(zip, made.zip)
      cases.push({ name: made.name, zip, readings: [] })
    }
    const generated = performance.now()
    for (const c of cases) {
      c.ours = await validatePie(c.zip)
      if (!c.ours.valid) continue
      ;({ sha256: c.bytes, crcs: c.crcs } = await ourBytes(c.zip))
      c.pedersen = (await inspectPie(c.zip, { sha256: false })).programHashes.pedersen
    }
    const judged = performance.now()
    const paths = cases.map((c) => c.zip)
    pythons = [{ python: join(ORACLE_VENV, 'bin', 'python'), version: "the oracle's" }, ...otherPythons()]
    const crate = HAS_ZIP_CRATE ? zipCrateReadings(paths) : Promise.resolve([])
    const [{ verdicts }, crateReadings, ...readings] = await Promise.all([
      askOracle(paths, [], { pedersenOnly: true }),
      crate,
      ...pythons.map(({ python }) => zipfileReadings(paths, { python, workers: 1 })),
    ])
    for (const [i, c] of cases.entries()) {
      c.theirs = verdicts[i]
      c.crate = crateReadings[i]
      c.readings = pythons.map(({ version }, k) => ({ python: version, reading: readings[k]![i]! }))
    }
    seconds = (performance.now() - started) / 1000
    phases = [generated - started, judged - generated, performance.now() - judged].map((ms) => ms / 1000)
    console.log(report())
    if (process.env.PROVING_ORACLE_RECORD)
      await writeFile(process.env.PROVING_ORACLE_RECORD, JSON.stringify(cases, null, 1))
  }, 1_800_000)

  it('judges every case, a good share of them valid (so the bytes are compared)', () => {
    expect(cases.length).toBe(CASES)
    for (const c of cases) {
      expect(c.theirs?.crash, c.name).toBeUndefined()
      for (const { reading } of c.readings) expect(reading.crash, c.name).toBeUndefined()
    }
    expect(cases.filter((c) => c.ours!.valid).length).toBeGreaterThan(CASES / 20)
  })

  it('passes no zip that cairo-lang refuses', () => {
    expect(cases.filter((c) => c.ours!.valid && !c.theirs!.valid).map((c) => `${c.name}: ${c.theirs!.error}`)).toEqual(
      [],
    )
  })

  it("passes no zip that any Python's zipfile refuses, and reads every entry's bytes as each of them does", () => {
    const differ: string[] = []
    for (const c of cases.filter((c) => c.ours!.valid)) {
      for (const { python, reading } of c.readings) {
        if (reading.error) differ.push(`${c.name}: Python ${python} refuses it: ${reading.error}`)
        else
          expect({ name: c.name, python, entries: reading.entries }).toEqual({ name: c.name, python, entries: c.bytes })
      }
    }
    expect(differ).toEqual([])
  })

  const crateCheck = "passes no zip cairo-vm's zip crate refuses, and reads every entry as it does"
  if (HAS_ZIP_CRATE) {
    it(crateCheck, () => {
      for (const c of cases.filter((c) => c.ours!.valid))
        expect({ name: c.name, crate: c.crate }).toEqual({ name: c.name, crate: { entries: c.crcs } })
    })
  } else {
    const why = `skipped: ${ZIP_CRATE} is not built (scripts/zip-crate-reader/README.md)`
    console.warn(`${crateCheck}: ${why}`)
    it.skip(`${crateCheck}: ${why}`, () => {})
  }

  it("computes cairo-lang's program hash where both accept", () => {
    for (const c of cases.filter((c) => c.ours!.valid && c.theirs!.valid))
      expect(BigInt(c.pedersen!), c.name).toBe(BigInt(c.theirs!.hashes!.pedersen!))
  })

  it('says cairo-lang refuses a zip only when it does, and says so whenever it does', () => {
    const falseBlame = cases
      .filter((c) => !c.ours!.valid && c.theirs!.valid)
      .flatMap((c) => c.ours!.refusals.filter((r) => r.reason === 'cairo-lang').map((r) => `${c.name}: ${r.problem}`))
    expect(falseBlame).toEqual([])
    const unsaid = cases
      .filter((c) => !c.ours!.valid && !c.theirs!.valid && !c.ours!.refusals.some((r) => r.reason === 'cairo-lang'))
      .map((c) => `${c.name}: cairo-lang says ${c.theirs!.error}; we say ${c.ours!.problems.join(' | ')}`)
    expect(unsaid).toEqual([])
  })
})

function report(): string {
  const valid = cases.filter((c) => c.ours!.valid)
  const agree = cases.filter((c) => c.ours!.valid === c.theirs!.valid)
  const stricter = cases.filter((c) => !c.ours!.valid && c.theirs!.valid)
  const reasons = new Map<string, number>()
  for (const c of stricter)
    for (const reason of new Set(c.ours!.refusals.map((r) => r.reason)))
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
  const crateDiffers = HAS_ZIP_CRATE
    ? cases.filter((c) => {
        const python = c.readings[0]!.reading
        if (python.error || c.crate!.error) return Boolean(python.error) !== Boolean(c.crate!.error)
        return false
      }).length
    : undefined
  const otherRefusals = pythons
    .slice(1)
    .map(
      ({ version }) =>
        `${version}: ${cases.filter((c) => c.readings.find((r) => r.python === version)?.reading.error && !c.readings[0]!.reading.error).length}`,
    )
  return [
    `The container fuzzer (seed ${SEED}): ${cases.length} cases, judged by cairo-lang and by the zipfile of Python ${pythons.map((p) => p.version).join(', ')} in ${seconds.toFixed(1)} s (making them ${phases[0]!.toFixed(1)}, validate and inspect ${phases[1]!.toFixed(1)}, the references ${phases[2]!.toFixed(1)}):`,
    `  ${agree.length} verdicts agree with cairo-lang (${agree.filter((c) => c.ours!.valid).length} valid, ${agree.filter((c) => !c.ours!.valid).length} refused); ${cases.filter((c) => c.ours!.valid && !c.theirs!.valid).length} passed that cairo-lang refuses; ${valid.length} valid, their bytes compared with every Python's`,
    `  ${stricter.length} refused that cairo-lang loads, by reason: ${[...reasons].map(([r, n]) => `${r} ${n}`).join(', ') || 'none'}`,
    `  zips the oracle's zipfile reads that another Python's refuses: ${otherRefusals.join(', ') || 'no other Python here'}`,
    `  cairo-vm's zip crate: ${crateDiffers === undefined ? 'not built here (scripts/zip-crate-reader)' : `${crateDiffers} zips one of it and the oracle's zipfile refuses and the other reads`}`,
    ...stricter.slice(0, 12).map((c) => `  - ${c.name}: ${c.ours!.problems[0]}`),
  ].join('\n')
}
