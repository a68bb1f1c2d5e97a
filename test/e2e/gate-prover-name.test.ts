import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { run as runMain } from '../../src/action/actions/main.ts'
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.ts'
import { runCli } from '../helpers/cli.ts'
import { EXAMPLE_PIE } from '../helpers/example-pie.ts'
import { control, fakeIO } from '../helpers/run-action.ts'

/**
 * The prover a record names decides which fact an L2 verification registers. A DONE record
 * naming its prover "stоne" (a Cyrillic о) with no Integrity fact passed `proving prove --wait`
 * and the root action on the SHARP fact alone. Now a name that is not a known prover's (case
 * aside) is refused in both hosts, named with its letters escaped ("st\u043ene"), as data in
 * every medium: the terminal, the step's failure and the job summary. The emulator makes the
 * record say it (a next-query plan's `record`, which records L and D then carry).
 */
const API_KEY = 'pk_e2e_PROVER_0c5e7a19'
let emulator: RunningEmulator
const env = () => ({ PROVING_BASE_URL: emulator.url, PROVING_API_KEY: API_KEY, PROVING_REUSE: 'never' })
const service = () => ({ 'api-key': API_KEY, 'base-url': emulator.url, reuse: 'never' })

const LOOKALIKE = 'st\u043ene'
const REFUSAL =
  'The record names its prover "st\\u043ene", not a prover this version knows (stone, stwo, stwoHerodotus, in any letter case)'

beforeAll(async () => {
  emulator = await startEmulator({ timing: { receivedMs: 0, stepMs: 20 }, apiKeys: [API_KEY] })
})
afterAll(async () => {
  await emulator.close()
})
afterEach(async () => {
  const { nextQueries } = (await control(emulator.url, 'GET', 'state')) as { nextQueries: unknown[] }
  expect(nextQueries).toEqual([])
})

/** The next query submitted ends DONE at once, its record naming `sharpProver` with no Integrity fact. */
async function nextQueryNames(sharpProver: string): Promise<void> {
  await control(emulator.url, 'POST', 'next-query', {
    outcome: 'done',
    record: { sharpProver, integrityFactHash: null },
  })
}

describe('a record naming a lookalike prover, with the SHARP fact alone', () => {
  it('proving prove --wait refuses it (exit 1), naming the prover escaped; `STONE` is Stone, and asks for its fact', async () => {
    await nextQueryNames(LOOKALIKE)
    const refused = await runCli(['prove', EXAMPLE_PIE, '--wait'], { env: env() })
    expect(refused.code, refused.stderr).toBe(1)
    expect(refused.stderr).toContain(
      `proving: gate refused: ${REFUSAL}: which fact binds the output (Stone's Integrity, Stwo's SHARP) cannot be told.`,
    )
    expect(refused.stdout + refused.stderr).not.toContain(LOOKALIKE)

    // With --json the refusal is a note of the one `{ "error": … }` object on stderr.
    await nextQueryNames(LOOKALIKE)
    const json = await runCli(['prove', EXAMPLE_PIE, '--wait', '--json'], { env: env() })
    expect(json.code).toBe(1)
    expect(json.stderr).toContain(JSON.stringify(REFUSAL).slice(1, -1))

    await nextQueryNames('STONE')
    const known = await runCli(['prove', EXAMPLE_PIE, '--wait'], { env: env() })
    expect(known.code, known.stderr).toBe(1)
    expect(known.stderr).toContain(
      'gate refused: The service reported no integrityFactHash (null) for a DONE PROOF_VERIFICATION_ON_L2 (STONE) result',
    )
    expect(known.stderr).not.toContain('not a prover this version knows')
  })

  it('the root action fails the step naming it, in the failure and the summary, with what to do', async () => {
    await nextQueryNames(LOOKALIKE)
    const io = fakeIO({ pie: EXAMPLE_PIE, ...service() })
    await runMain(io)
    expect(io.failed).toContain(REFUSAL)
    expect(io.outputs.status).toBe('DONE')
    // The summary is Markdown: the backslash of the escape is itself escaped, so it shows as sent.
    expect(io.summary).toContain(REFUSAL.replace('\\u043e', '\\\\u043e'))
    expect(io.summary).toContain('names a prover this version does not know (not stone, stwo or stwoHerodotus)')
    expect(io.summary + io.failed).not.toContain(LOOKALIKE)
  })

  it('a known prover with its fact passes: Stwo on the SHARP fact', async () => {
    await nextQueryNames('Stwo')
    const passed = await runCli(['prove', EXAMPLE_PIE, '--wait'], { env: env() })
    expect(passed.code, passed.stderr).toBe(0)
  })
})
