import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  ANY_PROOF,
  evaluateGate,
  type ExpectedResult,
  expectResult,
  type GateRecord,
} from '../../../src/pipeline/gate.ts'

/**
 * The prover a record names decides which fact an L2 verification registers: Stone's Integrity
 * fact, Stwo's bridged SHARP fact (production.md, "Where facts are registered"). A record that
 * named its prover "stоne" (a Cyrillic о) with no Integrity fact passed an L2 proof on the SHARP
 * fact alone: the name was lowercased and compared, and a name not known accepted either fact.
 *
 * The rule, from which the oracle below is written: a prover the record names is compared as a
 * known name (stone, stwo, stwoHerodotus: interface.md and production.md), case folded and
 * nothing else; any other name, a lookalike included, or a value that is not text, is a refusal
 * naming it; an absent prover (null or left out: records L and D carry none) keeps the rule of
 * before, either fact. Where the prover decides nothing (L1, PROOF_GENERATION), it is not read.
 *
 * PROVING_FC_SEED and PROVING_FC_RUNS replay or explore further than the fixed run.
 */
const SEED = Number(process.env.PROVING_FC_SEED ?? 20261203)
const RUNS = Number(process.env.PROVING_FC_RUNS ?? 3000)

/** The provers the documents name, as they spell them, and the fact an L2 verification with each registers. */
const KNOWN = [
  { name: 'stone', fact: 'integrityFactHash' },
  { name: 'stwo', fact: 'sharpFactHash' },
  { name: 'stwoHerodotus', fact: 'sharpFactHash' },
] as const

/** Characters that pass for a letter of a known name: other scripts, fullwidth, compatibility forms. */
const CONFUSABLE: Record<string, string[]> = {
  s: ['\u0455', '\uff53', '\u017f', '\u0282'],
  t: ['\u0442', '\uff54', '\u01ab'],
  o: ['\u043e', '\u03bf', '\u0585', '\uff4f', '\u0ce6', '0'],
  n: ['\u0578', '\u057c', '\uff4e'],
  e: ['\u0435', '\u04bd', '\uff45'],
  w: ['\u051d', '\u0461', '\uff57'],
  h: ['\u04bb', '\uff48'],
  r: ['\u0433', '\uff52'],
  d: ['\u0501', '\uff44'],
  u: ['\u057d', '\u03c5', '\uff55'],
  H: ['\u041d', '\u0397', '\uff28'],
}
/** Characters a name may carry unseen, or that a looser comparison would drop: blanks, joiners, marks. */
const INVISIBLE = [' ', '\u00a0', '\u200b', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u0301', '\t', '\u202e']

/** A known name with each ASCII letter in either case. */
const knownInAnyCase = fc
  .tuple(fc.constantFrom(...KNOWN), fc.array(fc.boolean(), { minLength: 13, maxLength: 13 }))
  .map(([known, upper]) =>
    [...known.name].map((letter, index) => (upper[index] ? letter.toUpperCase() : letter.toLowerCase())).join(''),
  )

/** A known name, in any case, with one letter swapped for a confusable, an unseen character put in, or an ASCII near miss. */
const lookalike = fc.oneof(
  fc.tuple(knownInAnyCase, fc.nat(), fc.nat()).chain(([name, at, pick]) => {
    const letters = [...name]
    const swappable = letters
      .map((letter, index) => [letter, index] as const)
      .filter(([letter]) => CONFUSABLE[letter] ?? CONFUSABLE[letter.toLowerCase()])
    const [letter, index] = swappable[at % swappable.length]!
    const choices = CONFUSABLE[letter] ?? CONFUSABLE[letter.toLowerCase()]!
    letters[index] = choices[pick % choices.length]!
    return fc.constant(letters.join(''))
  }),
  fc.tuple(knownInAnyCase, fc.constantFrom(...INVISIBLE), fc.nat()).map(([name, char, at]) => {
    const index = at % (name.length + 1)
    return name.slice(0, index) + char + name.slice(index)
  }),
  fc.constantFrom(
    'stwo_v2',
    'stwo-herodotus',
    'stwo herodotus',
    'stones',
    'stwostone',
    'nostwo',
    'st0ne',
    'stwoHerodotu',
    'stoneHerodotus',
    '',
  ),
)
/** Other names: any text (a known name drawn by chance is judged as known by the oracle too). */
const otherName = fc.string({ maxLength: 30 })
const notText = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.constant(['stone']),
  fc.double(),
)
/** The prover field: absent (left out or null), known in any case, a lookalike, another name, another type. */
const prover = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  fc.constant(null),
  { weight: 3, arbitrary: knownInAnyCase },
  { weight: 4, arbitrary: lookalike },
  otherName,
  notText,
)

/** What was asked: an L2 verification (the prover decides its fact), or kinds where it decides nothing. */
const expected = fc.constantFrom<ExpectedResult>(
  expectResult('PROOF_VERIFICATION_ON_L2'),
  ANY_PROOF,
  expectResult('PROOF_VERIFICATION_ON_L1'),
  expectResult('PROOF_GENERATION'),
)

const caseArbitrary = fc.record({
  prover,
  expected,
  /** The record's own `result`: the L2 verification, or none (null claims nothing). */
  result: fc.constantFrom('PROOF_VERIFICATION_ON_L2', null),
  sharp: fc.boolean(),
  integrity: fc.boolean(),
})
type Case = typeof caseArbitrary extends fc.Arbitrary<infer T> ? T : never

function recordOf(c: Case): GateRecord {
  const record: Record<string, unknown> = {
    status: 'DONE',
    result: c.expected.kinds.length === 1 ? null : c.result,
    isFactMocked: false,
    programHash: '0x4f028ea2f2568d9b71509641f65cd3879482a371ab2a18d20ca7528d960dd45',
    sharpFactHash: c.sharp ? '0x5a1' : null,
    integrityFactHash: c.integrity ? '0x1e9' : undefined,
  }
  if (c.prover !== undefined) record.sharpProver = c.prover
  return record as GateRecord
}

/** The rule: which known prover the record names, case folded and nothing else (ASCII letters only fold). */
function knownProver(value: unknown): (typeof KNOWN)[number] | undefined {
  if (typeof value !== 'string') return undefined
  const folded = value.replace(/[A-Z]/g, (letter) => letter.toLowerCase())
  return KNOWN.find((known) => known.name.toLowerCase() === folded)
}

/** The oracle: whether the record passes, and whether the prover is refused. */
function oracle(c: Case): { passes: boolean; proverRefused: boolean } {
  const kind = c.expected.kinds.length === 1 ? c.expected.kinds[0] : (c.result ?? undefined)
  const either = c.sharp || c.integrity
  if (kind !== 'PROOF_VERIFICATION_ON_L2')
    return { passes: kind === 'PROOF_VERIFICATION_ON_L1' ? c.sharp : either, proverRefused: false }
  if (c.prover === undefined || c.prover === null) return { passes: either, proverRefused: false }
  const known = knownProver(c.prover)
  if (!known) return { passes: false, proverRefused: true }
  return { passes: known.fact === 'sharpFactHash' ? c.sharp : c.integrity, proverRefused: false }
}

/** The name as a refusal must show it: quoted, every character outside printable ASCII a \u escape (a lookalike shows as what it is). */
function shownAs(name: string): string {
  const escaped = [...name.slice(0, 80)]
    .map((char) =>
      [...char]
        .map((unit) =>
          /^[\x20-\x7e]$/.test(unit)
            ? unit === '"' || unit === '\\'
              ? `\\${unit}`
              : unit
            : `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`,
        )
        .join(''),
    )
    .join('')
  return `"${escaped}"`
}

describe('the prover a record names, as a property (names x facts)', () => {
  it('is a known name in any letter case or a refusal naming it; an absent one keeps the rule of either fact', () => {
    let refused = 0
    let passedKnown = 0
    fc.assert(
      fc.property(caseArbitrary, (c) => {
        const refusals = evaluateGate(recordOf(c), undefined, { allowMockedFact: false, expected: c.expected })
        const want = oracle(c)
        const passes = refusals.length === 0
        if (passes !== want.passes)
          throw new Error(
            `the gate ${passes ? 'passed' : 'refused'}, the rule says otherwise: ${JSON.stringify(refusals)}`,
          )
        const named = refusals.filter((refusal) => refusal.kind === 'unknown-prover')
        if ((named.length === 1) !== want.proverRefused)
          throw new Error(
            `the prover ${want.proverRefused ? 'should' : 'should not'} be refused: ${JSON.stringify(refusals)}`,
          )
        if (want.proverRefused) {
          refused++
          const message = named[0]!.message
          // Named as sent, as data: printable ASCII only (the lookalike's letters escaped), one line.
          const shown = typeof c.prover === 'string' ? shownAs(c.prover) : undefined
          if (shown !== undefined && !message.includes(shown))
            throw new Error(`the refusal does not name ${shown}: ${message}`)
          if (/[^\x20-\x7e…]/.test(message))
            throw new Error(`the refusal carries a character outside printable ASCII: ${JSON.stringify(message)}`)
        }
        if (passes && knownProver(c.prover)) passedKnown++
      }),
      { numRuns: RUNS, seed: SEED },
    )
    // Both sides of the line are searched: refusals of a name, and known names passing.
    expect(refused).toBeGreaterThan(RUNS / 20)
    expect(passedKnown).toBeGreaterThan(RUNS / 50)
  })

  it('a lookalike of a known name never passes for it, the SHARP fact alone standing in', () => {
    fc.assert(
      fc.property(lookalike, (name) => {
        if (knownProver(name)) return
        const record: GateRecord = {
          status: 'DONE',
          result: 'PROOF_VERIFICATION_ON_L2',
          isFactMocked: false,
          programHash: '0x1',
          sharpFactHash: '0x5a1',
          integrityFactHash: null,
          sharpProver: name,
        }
        const refusals = evaluateGate(record, undefined, {
          allowMockedFact: false,
          expected: expectResult('PROOF_VERIFICATION_ON_L2'),
        })
        if (!refusals.some((refusal) => refusal.kind === 'unknown-prover'))
          throw new Error(`${JSON.stringify(name)} passed for a known prover: ${JSON.stringify(refusals)}`)
      }),
      { numRuns: Math.ceil(RUNS / 3), seed: SEED + 1 },
    )
  })
})
