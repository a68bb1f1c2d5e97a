/**
 * The differential test (issue 33): cairo-lang v0.14.0.1 itself (../shared/oracle, run from its
 * own source) judges every PIE `validate` judges: the shared fixtures (real PIEs written by
 * cairo-lang, cairo-vm, madara's orchestrator and the Starknet sequencer), generated PIEs of
 * both shapes and two sizes, and the mutants of test/helpers/pie-mutants.ts. Compared:
 * - validity: no PIE passes `validate` that cairo-lang refuses; where cairo-lang loads one the
 *   project refuses, no refusal claims cairo-lang refuses it (its reason is cairo-vm, ambiguous,
 *   ambiguous-container, unprovable or budget, docs/pie-validation.md); where cairo-lang refuses, one refusal says so;
 * - where both accept: the Pedersen, Poseidon and Blake program hashes, the SHARP fact, and the
 *   `pack` round trip (cairo-lang loads the packed zip `==` to the original, and it passes
 *   run_validity_checks).
 * The numbers (PIEs judged, agreements, each deviation and its reason) go to the console.
 * Runs where ../shared/oracle and its Python environment (scripts/oracle-env.sh) are; else it
 * reports itself skipped, saying why (a failure under PROVING_REQUIRE_SYSTEM_TOOLS=1, in CI).
 */
import { readdirSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import {
  generatePie,
  inspectPie,
  packPie,
  PIE_SHAPES,
  validatePie,
  type PieValidationResult,
} from '../../src/pie/index.ts'
import {
  askOracle,
  describeOracle,
  oracleCpuSeconds,
  type OracleEquality,
  type OracleVerdict,
} from '../helpers/oracle.ts'
import {
  exampleFiles,
  fixturePath,
  FIXTURES,
  readZipFiles,
  removeTempDirs,
  tempDir,
  writeDir,
} from '../helpers/pie-fixtures.ts'
import { pieMutants } from '../helpers/pie-mutants.ts'

afterAll(removeTempDirs)

/**
 * Programs above this many words get validity and the pack round trip, not hashes: the oracle's
 * pure-Python Pedersen and Poseidon take 12 CPU seconds for the 15,000-word Starknet OS and 30
 * for the 3,145-word aggregator, which the suite's time budget does not allow
 * (PROVING_ORACLE_FULL=1 hashes every program; the project's hashes and facts of those PIEs are
 * checked against the values their writers publish in published-pies.test.ts and snos-pie.test.ts).
 */
const MAX_HASHED_WORDS = process.env.PROVING_ORACLE_FULL === '1' ? undefined : 1_000
/** And PIEs above this many memory cells no pack round trip (cairo-lang loads both copies: seconds each). */
const MAX_COMPARED_CELLS = process.env.PROVING_ORACLE_FULL === '1' ? Number.POSITIVE_INFINITY : 50_000

type Case = {
  name: string
  kind: 'fixture' | 'generated' | 'mutant'
  zip: string
  ours?: PieValidationResult
  theirs?: OracleVerdict
  hashes?: { pedersen: string; poseidon: string; blake: string; fact: string }
  packed?: string
  equality?: OracleEquality
}

const cases: Case[] = []
const timings = { ours: 0, oursCpu: 0, oracle: 0 }

describeOracle('cairo-lang judges what validate, inspect and pack say', () => {
  beforeAll(async () => {
    const work = await tempDir('oracle-')
    for (const name of readdirSync(join(FIXTURES, 'pie'))
      .filter((n) => n.endsWith('.zip'))
      .sort()) {
      cases.push({ name, kind: 'fixture', zip: fixturePath(name) })
    }
    for (const shape of PIE_SHAPES) {
      for (const memoryBytes of [32 * 1024, 512 * 1024]) {
        const dir = join(work, `gen-${shape}-${memoryBytes}`)
        await generatePie({ outDir: dir, memoryBytes, seed: 33, shape })
        const zip = `${dir}.zip`
        await packPie(dir, zip)
        cases.push({ name: `generated ${shape}, ${memoryBytes} bytes of memory`, kind: 'generated', zip })
      }
    }
    for (const [i, mutant] of pieMutants(await exampleFiles()).entries()) {
      const zip = join(work, `mutant-${i}.zip`)
      await writeFile(zip, mutant.zip)
      cases.push({ name: `${mutant.area}: ${mutant.name}`, kind: 'mutant', zip })
    }

    const started = performance.now()
    const cpu = process.cpuUsage()
    for (const c of cases) {
      c.ours = await validatePie(c.zip)
      if (!c.ours.valid) continue
      // The pack round trip: the zip unzipped, packed again by packPie.
      const dir = await writeDir(join(work, `unpacked-${cases.indexOf(c)}`), await readZipFiles(c.zip))
      c.packed = join(work, `packed-${cases.indexOf(c)}.zip`)
      await packPie(dir, c.packed)
      const words = c.ours.summary.programSize ?? 0
      if (MAX_HASHED_WORDS !== undefined && words > MAX_HASHED_WORDS) continue
      const inspection = await inspectPie(c.zip, { sha256: false })
      c.hashes = {
        pedersen: inspection.programHashes.pedersen,
        poseidon: inspection.programHashes.poseidon,
        blake: inspection.programHashes.blake,
        fact: inspection.sharpFactHash,
      }
    }

    timings.ours = performance.now() - started
    const used = process.cpuUsage(cpu)
    timings.oursCpu = (used.user + used.system) / 1000
    const asking = performance.now()
    const packedCases = cases.filter((c) => c.packed && c.ours!.summary.memoryCells <= MAX_COMPARED_CELLS)
    const { verdicts, equalities } = await askOracle(
      cases.map((c) => c.zip),
      packedCases.map((c) => [c.zip, c.packed!]),
      { maxWords: MAX_HASHED_WORDS },
    )
    for (const [i, verdict] of verdicts.entries()) cases[i]!.theirs = verdict
    for (const [i, equality] of equalities.entries()) packedCases[i]!.equality = equality
    timings.oracle = performance.now() - asking
    console.log(report())
    // The whole record, to read a deviation in full.
    if (process.env.PROVING_ORACLE_RECORD)
      await writeFile(process.env.PROVING_ORACLE_RECORD, JSON.stringify(cases, null, 1))
  }, 600_000)

  it('judges at least 100 mutants, every fixture, and generated PIEs of both shapes', () => {
    expect(cases.filter((c) => c.kind === 'mutant').length).toBeGreaterThanOrEqual(100)
    expect(cases.filter((c) => c.kind === 'fixture').length).toBeGreaterThanOrEqual(8)
    expect(cases.filter((c) => c.kind === 'generated').length).toBe(4)
    for (const c of cases) expect(c.theirs?.crash, c.name).toBeUndefined()
  })

  it('passes no PIE that cairo-lang refuses', () => {
    const passedRefused = cases
      .filter((c) => c.ours!.valid && !c.theirs!.valid)
      .map((c) => `${c.name}: ${c.theirs!.error}`)
    expect(passedRefused).toEqual([])
  })

  it('says cairo-lang refuses a PIE only when it does, and says so whenever it does', () => {
    const falseBlame = cases
      .filter((c) => !c.ours!.valid && c.theirs!.valid)
      .flatMap((c) => c.ours!.refusals.filter((r) => r.reason === 'cairo-lang').map((r) => `${c.name}: ${r.problem}`))
    expect(falseBlame).toEqual([])
    const unsaid = cases
      .filter((c) => !c.ours!.valid && !c.theirs!.valid && !c.ours!.refusals.some((r) => r.reason === 'cairo-lang'))
      .map((c) => `${c.name}: cairo-lang says ${c.theirs!.error}; we say ${c.ours!.problems.join(' | ')}`)
    expect(unsaid).toEqual([])
  })

  it('refuses what cairo-lang loads only for a reason written down: cairo-vm, ambiguous, ambiguous-container, unprovable or budget', () => {
    for (const c of cases.filter((c) => !c.ours!.valid && c.theirs!.valid)) {
      expect(c.ours!.refusals.length, c.name).toBeGreaterThan(0)
      for (const r of c.ours!.refusals)
        expect(
          ['cairo-vm', 'ambiguous', 'ambiguous-container', 'unprovable', 'budget'],
          `${c.name}: ${r.problem}`,
        ).toContain(r.reason)
    }
  })

  it('computes the program hashes and the SHARP fact cairo-lang computes, where both accept the PIE', () => {
    const both = cases.filter((c) => c.ours!.valid && c.theirs!.valid && c.hashes)
    expect(both.length).toBeGreaterThanOrEqual(20)
    for (const c of both) {
      const theirs = c.theirs!.hashes!
      expect({ name: c.name, pedersen: BigInt(c.hashes!.pedersen), fact: BigInt(c.hashes!.fact) }).toEqual({
        name: c.name,
        pedersen: BigInt(theirs.pedersen!),
        fact: BigInt(c.theirs!.fact!),
      })
      if (theirs.poseidon!.startsWith('0x')) expect(BigInt(c.hashes!.poseidon), c.name).toBe(BigInt(theirs.poseidon!))
      // compute_program_hash_chain(..., encode_blake2s_input=True, little_endian_for_blake2s=False):
      // the encoding of the Blake program hash the Starknet sequencer publishes (published-pies.test.ts).
      expect(BigInt(c.hashes!.blake), c.name).toBe(BigInt(theirs.blake_encoded_be!))
    }
  })

  it('packs every PIE both accept into a zip cairo-lang loads as the same PIE, and finds valid', () => {
    const packed = cases.filter((c) => c.equality && c.theirs!.valid)
    expect(packed.length).toBeGreaterThanOrEqual(20)
    for (const c of packed)
      expect({ name: c.name, ...c.equality }).toMatchObject({ name: c.name, equal: true, packed_valid: true })
  })
})

/** The numbers: PIEs judged, agreements, and each deviation with its reasons. */
function report(): string {
  const agree = cases.filter((c) => c.ours!.valid === c.theirs!.valid)
  const stricter = cases.filter((c) => !c.ours!.valid && c.theirs!.valid)
  const laxer = cases.filter((c) => c.ours!.valid && !c.theirs!.valid)
  const lines = [
    `The oracle judged ${cases.length} PIEs (${cases.filter((c) => c.kind === 'fixture').length} fixtures, ${cases.filter((c) => c.kind === 'generated').length} generated, ${cases.filter((c) => c.kind === 'mutant').length} mutants):`,
    `  ${agree.length} verdicts agree (${agree.filter((c) => c.ours!.valid).length} valid, ${agree.filter((c) => !c.ours!.valid).length} refused); ${laxer.length} passed that cairo-lang refuses; ${stricter.length} refused that cairo-lang loads:`,
    ...stricter.map(
      (c) => `  - ${c.name}: ${[...new Set(c.ours!.refusals.map((r) => r.reason))].join(', ')}: ${c.ours!.problems[0]}`,
    ),
    ...laxer.map((c) => `  ! ${c.name}: cairo-lang says ${c.theirs!.error}`),
    `  hashes and facts compared on ${cases.filter((c) => c.hashes && c.theirs!.valid).length}, pack round trips on ${cases.filter((c) => c.equality && c.theirs!.valid).length}`,
    `  seconds (wall, then CPU): validate, inspect and pack ${(timings.ours / 1000).toFixed(1)}, ${(timings.oursCpu / 1000).toFixed(1)}; cairo-lang judging and comparing packed copies ${(timings.oracle / 1000).toFixed(1)}, ${oracleCpuSeconds().toFixed(1)} in two processes`,
    ...cases
      .filter((c) => (c.theirs!.seconds ?? 0) > 2)
      .map((c) => `  (cairo-lang took ${c.theirs!.seconds} s on ${c.name})`),
  ]
  return lines.join('\n')
}
