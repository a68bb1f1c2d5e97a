/**
 * Real PIEs whose facts or program hashes other projects publish in their tests, read in place
 * from ../shared/fixtures/pie (never copied into the repository):
 * - fib-madara-orchestrator.zip: madara-alliance/madara, orchestrator/src/tests/artifacts/fibonacci.zip
 *   at e67432177 (sha256 57211719…ee68d); orchestrator/src/worker/utils/fact_info.rs
 *   (test_fact_info_local) asserts its SHARP fact.
 * - sequencer-10-transfers.zip: starkware-libs/sequencer,
 *   crates/starknet_transaction_prover/resources/cairo_pie_10_transfers.zip at 60161ba75 (sha256
 *   838484a9…00288; 1.2 MB, 191,408 steps, all eleven builtins, output pages); the prover's test
 *   (src/proving/prover_test.rs) expects resources/proof_facts_10_transfers.json, which is the
 *   bootloader's output for it: [1, len(output) + 2, program hash (Blake), ...output].
 * A file not there yet is reported skipped, saying so; with no ../shared at all the whole suite
 * is skipped, saying why.
 */
import { existsSync } from 'node:fs'
import { expect, it } from 'vitest'
import { inspectPie, toHex, validatePie } from '../../src/pie/index.ts'
import { describeInterop, fixturePath } from '../helpers/pie-fixtures.ts'

function itWithFixture(name: string, title: string, body: (path: string) => Promise<void>, timeout?: number) {
  const path = fixturePath(name)
  if (existsSync(path)) it(title, () => body(path), timeout)
  else it.skip(`${title} (skipped: ../shared/fixtures/pie/${name} is not there yet; see this file's header for its origin)`, () => {})
}

const MADARA_FIB_FACT = '0xca15503f02f8406b599cb220879e842394f5cf2cef753f3ee430647b5981b782'
const SEQUENCER_PROGRAM_HASH = '0x602b02cff498684fae3d66016137978fdad45a5036878a57257689d4f3f6ccb'
/** The first words of the published proof facts after the bootloader's header, and the last. */
const SEQUENCER_OUTPUT_FIRST = ['0x6904e06f4a70738eac413125c14e1afe9fc30b4771ec076e76f08f40ed158d1', '0x2d3aa15f313d3259539b38a504a84890bd0684d66af2e2fe756f09a0c5cef62', '0x7d1']
const SEQUENCER_OUTPUT_LAST = '0x1537eb833fc9c1c52c8b5e4989ccc67abb00c091e37'

describeInterop('PIEs with facts and program hashes published by other projects', () => {
  itWithFixture('fib-madara-orchestrator.zip', "madara's fibonacci PIE: valid, and inspect gives the orchestrator's SHARP fact", async (path) => {
    expect((await validatePie(path)).problems).toEqual([])
    expect((await inspectPie(path)).sharpFactHash).toBe(toHex(BigInt(MADARA_FIB_FACT)))
  })

  itWithFixture(
    'sequencer-10-transfers.zip',
    "the sequencer's 10-transfer Starknet OS PIE: valid, its Blake program hash and output are the published proof facts",
    async (path) => {
      expect((await validatePie(path)).problems).toEqual([])
      const inspection = await inspectPie(path, { sha256: false })
      expect(inspection.programHashes.blake).toBe(SEQUENCER_PROGRAM_HASH)
      expect(inspection.output).toHaveLength(0x20 - 2)
      expect(inspection.output.slice(0, 3)).toEqual(SEQUENCER_OUTPUT_FIRST)
      expect(inspection.output.at(-1)).toBe(SEQUENCER_OUTPUT_LAST)
      expect(inspection.factTopology).toEqual({ treeStructure: [2, 1, 0, 2], pageSizes: [12, 18] })
    },
    60_000,
  )
})
