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
 * - madara-aggregator-index-1.zip, madara-aggregator-index-2.zip: madara-alliance/madara,
 *   orchestrator/src/tests/artifacts/index_{1,2}_aggregator_14_1.zip at 24085d540 (sha256
 *   f217c1da…fb475 and 94007bed…5d998; ~1 MB, ~150,000 steps; Paradex testnet aggregator runs);
 *   fact_info.rs (test_fact_info_remote) asserts the fact the orchestrator registers for each:
 *   the SHARP formula over the part of the output that filter_output_from_program_output keeps
 *   (the aggregator also outputs its inputs), with the PIE's Pedersen program hash.
 * A file not there yet is reported skipped, saying so; with no ../shared at all the whole suite
 * is skipped, saying why.
 */
import { existsSync } from 'node:fs'
import { expect, it } from 'vitest'
import { computeSharpFact, inspectPie, toHex, validatePie } from '../../src/pie/index.ts'
import { describeInterop, fixturePath } from '../helpers/pie-fixtures.ts'

function itWithFixture(name: string, title: string, body: (path: string) => Promise<void>, timeout?: number) {
  const path = fixturePath(name)
  if (existsSync(path)) it(title, () => body(path), timeout)
  else
    it.skip(`${title} (skipped: ../shared/fixtures/pie/${name} is not there yet; see this file's header for its origin)`, () => {})
}

const MADARA_FIB_FACT = '0xca15503f02f8406b599cb220879e842394f5cf2cef753f3ee430647b5981b782'
const SEQUENCER_PROGRAM_HASH = '0x602b02cff498684fae3d66016137978fdad45a5036878a57257689d4f3f6ccb'
/** The first words of the published proof facts after the bootloader's header, and the last. */
const SEQUENCER_OUTPUT_FIRST = [
  '0x6904e06f4a70738eac413125c14e1afe9fc30b4771ec076e76f08f40ed158d1',
  '0x2d3aa15f313d3259539b38a504a84890bd0684d66af2e2fe756f09a0c5cef62',
  '0x7d1',
]
const SEQUENCER_OUTPUT_LAST = '0x1537eb833fc9c1c52c8b5e4989ccc67abb00c091e37'

/**
 * The orchestrator's filter_output_from_program_output (fact_info.rs), written from its
 * description: the aggregator's output starts with its inputs (a block count, then each block's
 * data, its size first); then comes the OS output, kept up to the end of its messages. In it,
 * the word at N_BLOBS_OFFSET (11) counts the blobs, then 2 * 2 words per blob, then the messages
 * to L1 and from L1, each list preceded by its length.
 */
function aggregatorOutput(output: readonly bigint[]): bigint[] {
  const N_BLOBS_OFFSET = 11
  let start = 1
  for (let block = 0; block < Number(output[0]); block++) start += Number(output[start])
  const messages = start + N_BLOBS_OFFSET + Number(output[start + N_BLOBS_OFFSET]) * 2 * 2 + 1
  const toL1 = Number(output[messages])
  const end = messages + toL1 + 1 + Number(output[messages + toL1 + 1])
  return output.slice(start, end + 1)
}

const MADARA_AGGREGATOR_FACTS = {
  'madara-aggregator-index-1.zip': '0x33e3f396ba1ff4214ea52123d74dae13dbdc75991af79c92eccaae10924fdac5',
  'madara-aggregator-index-2.zip': '0x29f1f10babbf18361fe4a813bccc294b3c3beda3f0448507b2491e10e500b8ea',
}

describeInterop('PIEs with facts and program hashes published by other projects', () => {
  itWithFixture(
    'fib-madara-orchestrator.zip',
    "madara's fibonacci PIE: valid, and inspect gives the orchestrator's SHARP fact",
    async (path) => {
      expect((await validatePie(path)).problems).toEqual([])
      expect((await inspectPie(path)).sharpFactHash).toBe(toHex(BigInt(MADARA_FIB_FACT)))
    },
  )

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

  for (const [name, fact] of Object.entries(MADARA_AGGREGATOR_FACTS)) {
    itWithFixture(
      name,
      `${name}: valid, and the orchestrator's aggregator fact from our Pedersen program hash`,
      async (path) => {
        expect((await validatePie(path)).problems).toEqual([])
        const inspection = await inspectPie(path, { sha256: false })
        const output = aggregatorOutput(inspection.output.map(BigInt))
        expect(toHex(computeSharpFact(BigInt(inspection.programHash), output))).toBe(toHex(BigInt(fact)))
      },
      120_000,
    )
  }
})
