/**
 * The Starknet OS PIE of Sepolia block 924016 (../shared/fixtures/pie/snos-sepolia-924016.zip,
 * written by cairo-vm for the madara orchestrator): a PIE of the shape production proves every
 * day, with all eleven builtins, an extra segment and output pages under a gps_fact_topology.
 * The orchestrator's own test (orchestrator/src/worker/utils/fact_info.rs, test_fact_info_local)
 * asserts its SHARP fact; we must give the same one. Read in place from ../shared; skipped, saying
 * why, when ../shared is absent.
 */
import { readFile } from 'node:fs/promises'
import { afterAll, expect, it } from 'vitest'
import { computeSharpFact, inspectPie, toHex, validatePie } from '../../src/pie/index.ts'
import { runCli } from '../helpers/cli.ts'
import { describeInterop, fixturePath, removeTempDirs, unzipFixture } from '../helpers/pie-fixtures.ts'

afterAll(removeTempDirs)

const SNOS = 'snos-sepolia-924016.zip'
/** Asserted by madara-alliance/madara's orchestrator (fact_info.rs, test_fact_info_local) at e67432177. */
const PUBLISHED_SHARP_FACT = '0x033144ad6b132b1012f15e50aa53de1ed91b3b1af729014c3f1c00b702f972ea'
const ALL_BUILTINS = [
  'output',
  'pedersen',
  'range_check',
  'ecdsa',
  'bitwise',
  'ec_op',
  'keccak',
  'poseidon',
  'range_check96',
  'add_mod',
  'mul_mod',
]

describeInterop('the Starknet OS PIE of Sepolia block 924016 (cairo-vm, madara orchestrator)', () => {
  it("validates, as a zip, as bytes and as a directory: its pointers past segment 15's recorded size are what cairo-lang and cairo-vm accept", async () => {
    const zip = await validatePie(fixturePath(SNOS))
    expect(zip).toMatchObject({ valid: true, problems: [] })
    expect(zip.summary).toMatchObject({
      nSteps: 15135,
      builtins: ALL_BUILTINS,
      outputSize: 23,
      programSize: 15318,
      memoryCells: 29858,
    })
    expect(zip.summary.segments.at(-1)).toEqual({ name: 'extra_0', index: 15, size: 557 })
    expect((await validatePie(await readFile(fixturePath(SNOS)))).valid).toBe(true)
    const dir = await validatePie(await unzipFixture(SNOS))
    expect(dir).toMatchObject({ valid: true, problems: [] })
  })

  it("inspect gives the orchestrator's published SHARP fact, built from the fact topology of the output pages", async () => {
    const inspection = await inspectPie(fixturePath(SNOS))
    expect(inspection.factTopology).toEqual({ treeStructure: [2, 1, 0, 2], pageSizes: [12, 11] })
    expect(inspection.output).toHaveLength(23)
    expect(inspection.sharpFactHash).toBe(toHex(BigInt(PUBLISHED_SHARP_FACT)))
    // cairo-vm's compute_program_hash_chain (bootloader version 0, builtins in the chain) is our
    // Pedersen hash; keep-starknet-strange/piltover publishes this one as the Starknet OS's program
    // hash (src/piltover_input.cairo at 27ba1fc0, the bootloader output in its test).
    expect(inspection.programHash).toBe('0x6228ae335151708cc9290c9940dc17f14f870056c1ae919af238e247d500ad4')
    // The pages matter: one flat page (keccak of the whole output) is another fact.
    const flat = computeSharpFact(BigInt(inspection.programHash), inspection.output.map(BigInt))
    expect(toHex(flat)).not.toBe(inspection.sharpFactHash)
  })

  it('`proving validate` exits 0 and `proving inspect --json` prints the published fact', async () => {
    const validated = await runCli(['validate', fixturePath(SNOS)])
    expect(validated.code, validated.stderr).toBe(0)
    expect(validated.stdout).toMatch(/valid Cairo PIE \(15135 steps/)
    const inspected = await runCli(['inspect', fixturePath(SNOS), '--json'])
    expect(inspected.code, inspected.stderr).toBe(0)
    expect(BigInt(JSON.parse(inspected.stdout).sharpFactHash)).toBe(BigInt(PUBLISHED_SHARP_FACT))
  })
})
